#include "config.h"

#include <ctype.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

int gs_parse_bool(const char *s)
{
  static const char *const yes[] = { "1", "true", "yes", "on" };
  static const char *const no[] = { "0", "false", "no", "off" };
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
    if (!strcasecmp(s, yes[i])) return 1;
  for (size_t i = 0; i < sizeof no / sizeof *no; i++)
    if (!strcasecmp(s, no[i])) return 0;
  return -1;
}

static int read_bool(gs_getenv_fn get, const char *name, int dflt, FILE *warn,
                     int *bad)
{
  const char *s = get(name);
  if (!s || !*s) return dflt;
  int v = gs_parse_bool(s);
  if (v < 0) {
    if (warn)
      fprintf(warn, "gemmshim: %s=\"%s\" is not a boolean (use 1 or 0); using %d\n",
              name, s, dflt);
    (*bad)++;
    return dflt;
  }
  return v;
}

/* A count such as GEMMSHIM_AB=N, within [lo, hi]. */
static long read_long(gs_getenv_fn get, const char *name, long dflt, long lo, long hi,
                      FILE *warn, int *bad)
{
  const char *s = get(name);
  if (!s || !*s) return dflt;
  char *end;
  long v = strtol(s, &end, 10);
  if (*end || v < lo || v > hi) {
    if (warn)
      fprintf(warn, "gemmshim: %s=\"%s\" is not a whole number in [%ld, %ld]; using %ld\n",
              name, s, lo, hi, dflt);
    (*bad)++;
    return dflt;
  }
  return v;
}

static void read_path(gs_getenv_fn get, const char *name, char *out,
                      FILE *warn, int *bad)
{
  out[0] = '\0';
  const char *s = get(name);
  if (!s || !*s) return;
  if (strlen(s) >= GS_PATH_MAX) {
    if (warn) fprintf(warn, "gemmshim: %s is longer than %d bytes; ignored\n", name, GS_PATH_MAX - 1);
    (*bad)++;
    return;
  }
  strcpy(out, s);
}

/* A name part of a file name may hold: letters, digits, '.', '_', '-'. */
static int name_safe(const char *s)
{
  if (!s || !*s) return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '.' && *s != '_' && *s != '-') return 0;
  return 1;
}

void gs_path_tokens_read(gs_path_tokens *t, gs_getenv_fn get)
{
  memset(t, 0, sizeof *t);
  t->pid = (long)getpid();
  const char *rank = get("RANK");
  if (!rank || !*rank) rank = get("LOCAL_RANK");
  if (name_safe(rank) && strlen(rank) < sizeof t->rank) snprintf(t->rank, sizeof t->rank, "%s", rank);
  char host[256];
  if (gethostname(host, sizeof host) == 0) {
    host[sizeof host - 1] = '\0';
    if (name_safe(host) && strlen(host) < sizeof t->host)
      snprintf(t->host, sizeof t->host, "%s", host);
  }
  if (!t->host[0]) snprintf(t->host, sizeof t->host, "unknown-host");
}

/* No stdio: a forked child expands the path again (gs_config_after_fork). */
static size_t put_long(char *out, long v)
{
  char digits[24];
  size_t n = 0, len = 0;
  unsigned long u = v < 0 ? 0ul - (unsigned long)v : (unsigned long)v;
  do digits[n++] = (char)('0' + u % 10); while ((u /= 10) != 0);
  if (v < 0) out[len++] = '-';
  while (n) out[len++] = digits[--n];
  out[len] = '\0';
  return len;
}

int gs_expand_path(const char *tmpl, const gs_path_tokens *t, char *out, size_t out_size)
{
  size_t o = 0;
  for (const char *p = tmpl; *p; p++) {
    char num[32];
    const char *piece = p;
    size_t len = 1;
    if (p[0] == '%' && p[1]) {
      switch (p[1]) {
      case 'p': case 'i': len = put_long(num, t->pid); piece = num; p++; break;
      case 'r':
        if (t->rank[0]) { piece = t->rank; len = strlen(piece); }
        else { len = put_long(num, t->pid); piece = num; }
        p++;
        break;
      case 'h': piece = t->host; len = strlen(piece); p++; break;
      case '%': piece = "%"; p++; break;
      default: break;   /* another %: kept as it is */
      }
    }
    if (o + len >= out_size) {
      if (out_size) out[0] = '\0';
      return -1;
    }
    memcpy(out + o, piece, len);
    o += len;
  }
  if (o >= out_size) return -1;
  out[o] = '\0';
  return 0;
}

/* A path with its tokens expanded; tmpl keeps it as given. */
static void read_expanded(gs_getenv_fn get, const char *name, char *out, char *tmpl,
                          const gs_path_tokens *t, FILE *warn, int *bad)
{
  out[0] = '\0';
  read_path(get, name, tmpl, warn, bad);
  if (tmpl[0] && gs_expand_path(tmpl, t, out, GS_PATH_MAX) != 0) {
    if (warn) fprintf(warn, "gemmshim: %s is too long once its %% tokens are expanded; ignored\n", name);
    (*bad)++;
  }
}

int gs_config_parse(gs_config_t *cfg, gs_getenv_fn get, FILE *warn)
{
  int bad = 0;
  memset(cfg, 0, sizeof *cfg);
  cfg->disable = read_bool(get, "GEMMSHIM_DISABLE", 0, warn, &bad);
  cfg->route = read_bool(get, "GEMMSHIM_ROUTE", 1, warn, &bad);
  cfg->verbose = read_bool(get, "GEMMSHIM_VERBOSE", 0, warn, &bad);
  cfg->nvtx = read_bool(get, "GEMMSHIM_NVTX", 0, warn, &bad);
  cfg->pdl = read_bool(get, "GEMMSHIM_PDL", 1, warn, &bad);
  /* a boolean, or the name of the one kernel to force */
  const char *force = get("GEMMSHIM_FORCE");
  if (force && *force && gs_parse_bool(force) < 0) {
    static const char name_chars[] = "abcdefghijklmnopqrstuvwxyz0123456789_";
    if (strlen(force) >= sizeof cfg->force_kernel || strspn(force, name_chars) != strlen(force)) {
      if (warn)
        fprintf(warn, "gemmshim: GEMMSHIM_FORCE=\"%s\" is neither a boolean nor a kernel name; using 0\n",
                force);
      bad++;
    } else {
      cfg->force = 1;
      strcpy(cfg->force_kernel, force);
    }
  } else {
    cfg->force = read_bool(get, "GEMMSHIM_FORCE", 0, warn, &bad);
  }
  cfg->ab_every = read_long(get, "GEMMSHIM_AB", 0, 0, 1L << 30, warn, &bad);
  cfg->time_every = read_long(get, "GEMMSHIM_TIME", 0, 0, 1L << 30, warn, &bad);
  cfg->ab_scratch_mb = read_long(get, "GEMMSHIM_AB_SCRATCH_MB", GS_AB_SCRATCH_MB_DEFAULT, 1,
                                 1L << 20, warn, &bad);
  cfg->scratch_keep_mb = read_long(get, "GEMMSHIM_SCRATCH_KEEP_MB", 0, 0, 1L << 20, warn, &bad);
  const char *mode = get("GEMMSHIM_AB_MODE");
  if (mode && *mode && strcmp(mode, "use") && strcmp(mode, "shadow")) {
    if (warn) fprintf(warn, "gemmshim: GEMMSHIM_AB_MODE=\"%s\" is not use or shadow; using use\n", mode);
    bad++;
  } else {
    cfg->ab_shadow = mode && !strcmp(mode, "shadow");
  }
  const char *fp32 = get("GEMMSHIM_FP32");
  if (fp32 && *fp32 && strcmp(fp32, "tc") && strcmp(fp32, "tc-fast") && strcmp(fp32, "strict")) {
    if (warn)
      fprintf(warn, "gemmshim: GEMMSHIM_FP32=\"%s\" is not tc, tc-fast or strict; using strict\n",
              fp32);
    bad++;
  } else {
    cfg->fp32_tc = fp32 && !strcmp(fp32, "tc");
    cfg->fp32_tc_fast = fp32 && !strcmp(fp32, "tc-fast");
  }
  /* cuBLAS's variable, read as cuBLAS reads it (a number); not ours to
   * complain about. */
  const char *emu = get("CUBLAS_EMULATE_SINGLE_PRECISION");
  cfg->emulate_single = emu && atoi(emu) == 1;
  gs_path_tokens_read(&cfg->tokens, get);
  read_expanded(get, "GEMMSHIM_LOG", cfg->log_path, cfg->log_template, &cfg->tokens, warn, &bad);
  read_expanded(get, "GEMMSHIM_AB_LOG", cfg->ab_log_path, cfg->ab_log_template, &cfg->tokens,
                warn, &bad);
  if (cfg->ab_every && !cfg->ab_log_path[0] && warn)
    fprintf(warn, "gemmshim: GEMMSHIM_AB is set without GEMMSHIM_AB_LOG: comparisons run, "
                  "only the summary log (GEMMSHIM_LOG) will count them\n");
  if (cfg->time_every && !cfg->log_path[0] && warn)
    fprintf(warn, "gemmshim: GEMMSHIM_TIME is set without GEMMSHIM_LOG: nothing will be timed\n");
  const char *brk = get("GEMMSHIM_TEST_BREAK");
  if (brk) snprintf(cfg->test_break, sizeof cfg->test_break, "%s", brk);
  read_path(get, "GEMMSHIM_CUBLAS_LIB", cfg->cublas_lib, warn, &bad);
  read_path(get, "GEMMSHIM_CUBLASLT_LIB", cfg->cublaslt_lib, warn, &bad);
  read_path(get, "GEMMSHIM_TABLE", cfg->table_path, warn, &bad);
  read_path(get, "GEMMSHIM_CACHE_DIR", cfg->cache_dir, warn, &bad);
  if (!cfg->cache_dir[0]) gs_xdg_cache_dir(get, cfg->cache_dir, GS_PATH_MAX);
  return bad;
}

void gs_xdg_cache_dir(gs_getenv_fn get, char *out, size_t size)
{
  /* $XDG_CACHE_HOME, else ~/.cache; without either, no cache */
  const char *xdg = get("XDG_CACHE_HOME"), *home = get("HOME");
  int n = xdg && xdg[0] ? snprintf(out, size, "%s/gemmshim", xdg)
          : home && home[0] ? snprintf(out, size, "%s/.cache/gemmshim", home)
                            : 0;
  if (n <= 0 || (size_t)n >= size) out[0] = '\0';
}

static gs_config_t process_config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static atomic_int config_ready;   /* the hot path's way past pthread_once */

static const char *plain_getenv(const char *name) { return getenv(name); }

static void config_init(void)
{
  gs_config_parse(&process_config, plain_getenv, stderr);
  atomic_store_explicit(&config_ready, 1, memory_order_release);
}

const gs_config_t *gs_config(void)
{
  if (!atomic_load_explicit(&config_ready, memory_order_acquire))
    pthread_once(&config_once, config_init);
  return &process_config;
}

void gs_config_reload(void)
{
  gs_config();
  gs_config_parse(&process_config, plain_getenv, stderr);
}

void gs_config_after_fork(void)
{
  if (!atomic_load_explicit(&config_ready, memory_order_acquire)) return;
  /* the same templates expanded again with the child's pid (its length
   * may differ: a path that no longer fits turns the log off); rank and
   * host are the parent's */
  gs_path_tokens *t = &process_config.tokens;
  t->pid = (long)getpid();
  if (process_config.log_template[0] &&
      gs_expand_path(process_config.log_template, t, process_config.log_path, GS_PATH_MAX) != 0)
    process_config.log_path[0] = '\0';
  if (process_config.ab_log_template[0] &&
      gs_expand_path(process_config.ab_log_template, t, process_config.ab_log_path,
                     GS_PATH_MAX) != 0)
    process_config.ab_log_path[0] = '\0';
}
