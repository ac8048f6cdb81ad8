/* Running gemmshim-bench for gemmshim tune (tune_bench.h). */
#include "tune_bench.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define BENCH_NAME "gemmshim-bench"


static int executable(const char *p)
{
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

int tb_find(tb_bench *b, const char *named, const char *beside, char err[TN_ERR_LEN])
{
  const char *how = "--bench";
  if (!named || !named[0]) {
    named = getenv("GEMMSHIM_BENCH");
    how = "$GEMMSHIM_BENCH";
  }
  if (named && named[0]) {
    if (!executable(named)) return tn_say(err, "%s %s: not an executable file", how, named);
    if (!realpath(named, b->path)) return tn_say(err, "%s %s: %s", how, named, strerror(errno));
    return 0;
  }
  if (!beside[0])
    return tn_say(err, "cannot find " BENCH_NAME "; name it with --bench PATH or GEMMSHIM_BENCH=PATH");
  char cand[PATH_MAX + 32];
  snprintf(cand, sizeof cand, "%s/" BENCH_NAME, beside);
  if (executable(cand) && realpath(cand, b->path)) return 0;
  return tn_say(err, "cannot find " BENCH_NAME " (looked for %s); name it with --bench PATH or "
                     "GEMMSHIM_BENCH=PATH", cand);
}

int tb_start(tb_bench *b, char err[TN_ERR_LEN])
{
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !tmp[0]) tmp = "/tmp";
  if (snprintf(b->tmpdir, sizeof b->tmpdir, "%s/gemmshim-tune.XXXXXX", tmp) >= (int)sizeof b->tmpdir)
    return tn_say(err, "TMPDIR %s: the name is too long", tmp);
  if (!mkdtemp(b->tmpdir)) {
    int e = errno;
    b->tmpdir[0] = '\0';
    return tn_say(err, "cannot make a folder in %s: %s", tmp, strerror(e));
  }
  return 0;
}

static void tmp_path(const tb_bench *b, const char *name, char out[PATH_MAX + 64])
{
  snprintf(out, PATH_MAX + 64, "%s/%s", b->tmpdir, name);
}

void tb_done(tb_bench *b)
{
  if (!b->tmpdir[0]) return;
  static const char *const names[] = { "shape.txt", "out.csv", "stdout.txt", "stderr.txt" };
  char p[PATH_MAX + 64];
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    tmp_path(b, names[i], p);
    unlink(p);
  }
  rmdir(b->tmpdir);
  b->tmpdir[0] = '\0';
}

/* Runs the bench with argv (argv[0] is replaced by its path), stdout and
 * stderr into the folder's files. Returns the exit status, 128 + N for
 * signal N, or -1 (err) when it could not run. */
static int run_bench(tb_bench *b, char **argv, char err[TN_ERR_LEN])
{
  char out[PATH_MAX + 64], errf[PATH_MAX + 64];
  tmp_path(b, "stdout.txt", out);
  tmp_path(b, "stderr.txt", errf);
  argv[0] = b->path;
  if (b->interrupted && *b->interrupted) return 128 + (int)*b->interrupted;   /* no new run */
  pid_t pid = fork();
  if (pid < 0) return tn_say(err, "cannot start %s: %s", b->path, strerror(errno));
  if (pid == 0) {
    int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(127);
    close(o);
    close(e);
    execv(b->path, argv);
    _exit(127);
  }
  int ws = 0, sent = 0;
  for (;;) {
    pid_t w = waitpid(pid, &ws, 0);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return tn_say(err, "waiting for %s: %s", b->path, strerror(errno));
    /* a signal for us: the bench stops too (the terminal's Ctrl-C reaches
     * it by its process group; one sent to us alone does not) */
    if (b->interrupted && *b->interrupted && !sent) {
      kill(pid, SIGINT);
      sent = 1;
    }
  }
  if (WIFEXITED(ws)) return WEXITSTATUS(ws);
  return WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : -1;
}

/* The file's text (at most len - 1 bytes), "" when it cannot be read. */
static void slurp(const tb_bench *b, const char *name, char *buf, size_t len)
{
  char p[PATH_MAX + 64];
  tmp_path(b, name, p);
  buf[0] = '\0';
  FILE *f = fopen(p, "r");
  if (!f) return;
  size_t n = fread(buf, 1, len - 1, f);
  buf[n] = '\0';
  fclose(f);
}

/* The last non-empty line of a text, without its newline. */
static void last_line(const char *text, char *out, size_t len)
{
  const char *end = text + strlen(text);
  while (end > text && (end[-1] == '\n' || end[-1] == '\r')) end--;
  const char *start = end;
  while (start > text && start[-1] != '\n') start--;
  snprintf(out, len, "%.*s", (int)(end - start), start);
}

static char *dev_arg(const tb_bench *b, char buf[16])
{
  snprintf(buf, 16, "%d", b->device);
  return buf;
}

int tb_identity(tb_bench *b, char *validators, size_t len, char uuid[64],
                char cublas_path[PATH_MAX], char err[TN_ERR_LEN])
{
  cublas_path[0] = '\0';
  char dev[16];
  char *argv[] = { NULL, "--identity", "--device", dev_arg(b, dev), NULL };
  int st = run_bench(b, argv, err);
  if (st < 0) return -1;
  static char text[16384];
  if (st != 0) {
    char line[512];
    slurp(b, "stderr.txt", text, sizeof text);
    last_line(text, line, sizeof line);
    return tn_say(err, "%s --identity: %s", b->path, line[0] ? line : "failed");
  }
  slurp(b, "stdout.txt", text, sizeof text);
  size_t used = 0;
  validators[0] = '\0';
  uuid[0] = '\0';
  for (char *p = text; *p;) {
    size_t l = strcspn(p, "\n");
    if (!strncmp(p, "Validator,", 10)) {
      if (used + l + 2 > len) return tn_say(err, "%s --identity: too many validators", b->path);
      memcpy(validators + used, p, l);
      used += l;
      validators[used++] = '\n';
      validators[used] = '\0';
    } else if (!strncmp(p, "device_uuid,", 12)) {
      snprintf(uuid, 64, "%.*s", (int)(l - 12), p + 12);
    } else if (!strncmp(p, "cublas_path,", 12)) {
      snprintf(cublas_path, PATH_MAX, "%.*s", (int)(l - 12), p + 12);
    }
    p += l + (p[l] == '\n');
  }
  if (!used) return tn_say(err, "%s --identity: no validators in its answer", b->path);
  return 0;
}

int tb_kernels(tb_bench *b, tn_kernel **out, size_t *n, char err[TN_ERR_LEN])
{
  char *argv[] = { NULL, "--list-csv", NULL };
  int st = run_bench(b, argv, err);
  if (st < 0) return -1;
  if (st != 0) return tn_say(err, "%s --list-csv: exit status %d", b->path, st);
  static char text[16384];
  slurp(b, "stdout.txt", text, sizeof text);
  *out = NULL;
  *n = 0;
  size_t cap = 0;
  int first = 1;
  for (char *p = text; *p;) {
    size_t l = strcspn(p, "\n");
    char line[256];
    snprintf(line, sizeof line, "%.*s", (int)l, p);
    p += l + (p[l] == '\n');
    if (first) {
      first = 0;
      if (strcmp(line, "kernel,dtype,opt_in"))
        return tn_say(err, "%s --list-csv: the header is '%s', not kernel,dtype,opt_in (a bench of "
                        "another build?)", b->path, line);
      continue;
    }
    char *comma = strchr(line, ','), *comma2 = comma ? strchr(comma + 1, ',') : NULL;
    if (!comma2 || !comma2[1] || !strchr("012", comma2[1]) || comma2[2])
      return tn_say(err, "%s --list-csv: '%s' is not kernel,dtype,opt_in", b->path, line);
    *comma = '\0';
    *comma2 = '\0';
    if (*n == cap) {
      cap = cap ? 2 * cap : 8;
      tn_kernel *k = realloc(*out, cap * sizeof *k);
      if (!k) return tn_say(err, "out of memory");
      *out = k;
    }
    memset(&(*out)[*n], 0, sizeof **out);   /* algo: "" (a kernel, not a cuBLASLt algorithm) */
    snprintf((*out)[*n].name, sizeof (*out)[*n].name, "%.63s", line);
    snprintf((*out)[*n].dtype, sizeof (*out)[*n].dtype, "%.15s", comma + 1);
    (*out)[*n].opt_in = comma2[1] - '0';   /* 0, TN_OPT_IN_TC or TN_OPT_IN_TC_FAST */
    (*n)++;
  }
  return 0;
}

/* Field i of a CSV line (no quoting in the bench's CSV). */
static int field(const char *line, int i, char *out, size_t len)
{
  for (; i > 0; i--) {
    line = strchr(line, ',');
    if (!line) return -1;
    line++;
  }
  size_t l = strcspn(line, ",\r\n");
  snprintf(out, len, "%.*s", (int)l, line);
  return 0;
}

static int column(const char *header, const char *name)
{
  char f[64];
  for (int i = 0; field(header, i, f, sizeof f) == 0; i++)
    if (!strcmp(f, name)) return i;
  return -1;
}

int tb_parse_csv_row(const char *header, const char *row, tn_sample *out)
{
  static const char *const names[] = { "ours_us", "cublas_us", "ratio", "ours_err",
                                       "cublas_err", "sm_mhz" };
  double v[6];
  for (int i = 0; i < 6; i++) {
    char f[64], *end;
    int c = column(header, names[i]);
    if (c < 0 || field(row, c, f, sizeof f)) return -1;
    errno = 0;
    v[i] = strtod(f, &end);
    if (!f[0] || *end || errno || !isfinite(v[i])) return -1;
  }
  if (!(v[0] > 0) || !(v[1] > 0) || !(v[2] > 0)) return -1;   /* times and ratio */
  out->ours_us = v[0], out->cublas_us = v[1], out->ratio = v[2];
  out->ours_err = v[3], out->cublas_err = v[4], out->sm_mhz = (int)v[5];
  /* how ours launched: a bench without the column is older than this
   * tune, and may have launched with PDL without saying so */
  char launch[16] = "";
  int c = column(header, "launch");
  if (c < 0) return -2;
  if (field(row, c, launch, sizeof launch) || (strcmp(launch, "pdl") && strcmp(launch, "plain")))
    return -1;
  out->pdl = !strcmp(launch, "pdl");
  return 0;
}

/* One run of the bench on k's shape: kernel against cuBLAS (or cuBLAS
 * against itself with self), in the call's math mode, extra arguments
 * after. Its exit status in *st, its CSV's header and data rows (in
 * csv, one a line) read back. -1 (err) when it cannot be run. */
static int bench_run(tb_bench *b, const tn_key *k, const char *kernel, int self,
                     char *const *extra, int *st, char header[2048], char *rows, size_t rows_len,
                     char err[TN_ERR_LEN])
{
  char shape[PATH_MAX + 64], csv[PATH_MAX + 64];
  tmp_path(b, "shape.txt", shape);
  tmp_path(b, "out.csv", csv);
  FILE *f = fopen(shape, "w");
  if (!f) return tn_say(err, "cannot write %s: %s", shape, strerror(errno));
  /* the batched entry (even of one item) or a batch in cuBLASLt's
   * layouts: the bench's fifth field */
  if (!strcmp(k->entry, "gemm_batched") || k->batch != 1)
    fprintf(f, "%lld %lld %lld %s %lld\n", k->m, k->n, k->k, k->layout, k->batch);
  else
    fprintf(f, "%lld %lld %lld %s\n", k->m, k->n, k->k, k->layout);
  if (fclose(f)) return tn_say(err, "cannot write %s: %s", shape, strerror(errno));
  unlink(csv);
  char dev[16], iters[16], preheat[16];
  snprintf(iters, sizeof iters, "%d", b->iters);
  snprintf(preheat, sizeof preheat, "%d", b->preheat_ms);
  char *argv[32];
  int n = 0;
  argv[n++] = NULL;
  argv[n++] = "--kernel";
  argv[n++] = (char *)kernel;
  argv[n++] = "--shapes";
  argv[n++] = shape;
  argv[n++] = "--csv";
  argv[n++] = csv;
  argv[n++] = "--iters";
  argv[n++] = iters;
  argv[n++] = "--preheat-ms";
  argv[n++] = preheat;
  argv[n++] = "--device";
  argv[n++] = dev_arg(b, dev);
  char math[24];
  if (self) argv[n++] = "--self";
  /* each call after a producer kernel, as in a program: a kernel launched
   * with programmatic dependent launch (the decode kernels) would overlap
   * its own previous call back to back, which no program's call does */
  argv[n++] = "--after-producer";
  /* a 16-bit call in the math mode it was made in (FP32 calls are measured
   * only in the default mode: tn_measurable) */
  if (k->math_mode >= 0 && strcmp(k->a_type, "f32")) {
    snprintf(math, sizeof math, "%lld", k->math_mode);
    argv[n++] = "--math-mode";
    argv[n++] = math;
  }
  /* a cuBLASLt call: made as the program made it (tn_measurable), with
   * the most workspace its calls gave; the route's algorithms fit the
   * least */
  char ws[32], route_ws[32];
  if (!strcmp(k->entry, "lt")) {
    snprintf(ws, sizeof ws, "%lld", k->workspace_max);
    argv[n++] = "--lt-call";
    argv[n++] = ws;
    argv[n++] = "--epilogue";
    argv[n++] = (char *)k->epilogue;
    if (k->workspace < k->workspace_max) {
      snprintf(route_ws, sizeof route_ws, "%lld", k->workspace);
      argv[n++] = "--lt-route-workspace";
      argv[n++] = route_ws;
    }
  }
  for (int i = 0; extra && extra[i] && n < 31; i++) argv[n++] = extra[i];
  argv[n] = NULL;
  *st = run_bench(b, argv, err);
  if (*st < 0) return -1;
  /* the CSV: comment lines, the header, one row per measurement */
  static char csvtext[65536];
  header[0] = '\0';
  rows[0] = '\0';
  size_t used = 0;
  FILE *c = fopen(csv, "r");
  if (c) {
    size_t got = fread(csvtext, 1, sizeof csvtext - 1, c);
    csvtext[got] = '\0';
    fclose(c);
    for (char *p = csvtext; *p;) {
      size_t l = strcspn(p, "\n");
      if (p[0] != '#' && l) {
        if (!header[0]) snprintf(header, 2048, "%.*s", (int)l, p);
        else if (used + l + 2 < rows_len) used += (size_t)snprintf(rows + used, rows_len - used, "%.*s\n", (int)l, p);
      }
      p += l + (p[l] == '\n');
    }
  }
  return 0;
}

/* What a run that gave no row, or failed, means for out. 1 when said. */
static int run_failed(tb_bench *b, int st, tn_sample *out)
{
  static char errtext[16384];
  char line[512];
  slurp(b, "stderr.txt", errtext, sizeof errtext);
  if (st >= 128) {
    out->outcome = TN_FAILED;
    snprintf(out->why, sizeof out->why, "the bench ended by signal %d", st - 128);
    return 1;
  }
  if (st == 2 || st == 127) {
    last_line(errtext, line, sizeof line);
    out->outcome = TN_FAILED;
    snprintf(out->why, sizeof out->why, "bench: %.140s", line[0] ? line : "exit status 2");
    return 1;
  }
  return 0;
}

int tb_measure(void *ctx, const tn_key *k, const char *kernel, int self, int pass,
               tn_sample *out, char err[TN_ERR_LEN])
{
  tb_bench *b = ctx;
  memset(out, 0, sizeof *out);
  out->sm_mhz = -1;
  (void)pass;
  int st;
  static char rows[16384];
  char header[2048];
  if (bench_run(b, k, kernel, self, NULL, &st, header, rows, sizeof rows, err)) return -1;
  if (run_failed(b, st, out)) return 0;
  static char text[65536], errtext[16384];
  char line[512], row[2048];
  slurp(b, "stdout.txt", text, sizeof text);
  slurp(b, "stderr.txt", errtext, sizeof errtext);
  /* the last row: one shape, one row */
  row[0] = '\0';
  for (char *p = rows; *p;) {
    size_t l = strcspn(p, "\n");
    snprintf(row, sizeof row, "%.*s", (int)l, p);
    p += l + (p[l] == '\n');
  }
  if (!row[0]) {
    const char *o = strstr(text, "outside the kernel's class: ");
    if (strstr(text, "cuBLASLt has no algorithm for the call")) {
      out->outcome = TN_OUTSIDE;   /* cuBLAS cannot make it here: no side is timed */
      snprintf(out->why, sizeof out->why, "cuBLASLt has no algorithm for the call");
    } else if (o) {
      o += strlen("outside the kernel's class: ");
      out->outcome = TN_OUTSIDE;
      snprintf(out->why, sizeof out->why, "outside its class: %.*s", (int)strcspn(o, " \n"), o);
    } else if (strstr(text, "launcher refused")) {
      out->outcome = TN_WRONG;
      snprintf(out->why, sizeof out->why, "its launcher refused a call its class takes");
    } else {
      last_line(errtext[0] ? errtext : text, line, sizeof line);
      out->outcome = TN_FAILED;
      snprintf(out->why, sizeof out->why, "no measurement (exit status %d): %.100s", st, line);
    }
    return 0;
  }
  int parsed = tb_parse_csv_row(header, row, out);
  if (parsed) {
    out->outcome = TN_FAILED;
    snprintf(out->why, sizeof out->why, "%s",
             parsed == -2 ? "the bench's CSV has no column launch: a gemmshim-bench older than "
                            "this gemmshim (use the one built with it)"
                          : "the bench's CSV row cannot be read");
    return 0;
  }
  if (st != 0 && st != 1) {
    out->outcome = TN_FAILED;
    snprintf(out->why, sizeof out->why, "the bench's exit status %d", st);
    return 0;
  }
  if (st == 1) {
    out->outcome = TN_WRONG;
    snprintf(out->why, sizeof out->why, "error %.3e above its bound (cuBLAS %.3e)", out->ours_err,
             out->cublas_err);
    return 0;
  }
  out->outcome = TN_MEASURED;
  return 0;
}

/* Field `name` of a row, by the header ("" when absent). */
static void named_field(const char *header, const char *row, const char *name, char *out,
                        size_t len)
{
  int c = column(header, name);
  out[0] = '\0';
  if (c >= 0) field(row, c, out, len);
}

int tb_measure_lt(void *ctx, const tn_key *k, int pass, const tn_lt_cand *given, size_t n_given,
                  tn_lt_cand *out, size_t max, size_t *n_out, char err[TN_ERR_LEN])
{
  tb_bench *b = ctx;
  *n_out = 0;
  char top[16], algos[PATH_MAX + 64];
  char *extra[8];
  int n = 0;
  extra[n++] = "--dtype";
  extra[n++] = (char *)k->a_type;
  if (given) {
    tmp_path(b, "algos.txt", algos);
    FILE *f = fopen(algos, "w");
    if (!f) return tn_say(err, "cannot write %s: %s", algos, strerror(errno));
    for (size_t i = 0; i < n_given; i++) fprintf(f, "%s\n", given[i].algo);
    if (fclose(f)) return tn_say(err, "cannot write %s: %s", algos, strerror(errno));
    extra[n++] = "--lt-algos";
    extra[n++] = algos;
  } else {
    snprintf(top, sizeof top, "%zu", max);
    extra[n++] = "--lt-top";
    extra[n++] = top;
  }
  extra[n] = NULL;
  (void)pass;
  int st;
  static char rows[65536];
  char header[2048];
  if (bench_run(b, k, TN_LT_ROUTE, 0, extra, &st, header, rows, sizeof rows, err)) return -1;
  tn_sample failed;
  memset(&failed, 0, sizeof failed);
  if (run_failed(b, st, &failed) || (st != 0 && st != 1)) {
    if (failed.outcome != TN_FAILED) {
      failed.outcome = TN_FAILED;
      snprintf(failed.why, sizeof failed.why, "the bench's exit status %d", st);
    }
    /* each algorithm given is not measured in this pass */
    for (size_t i = 0; given && i < n_given; i++) {
      out[i] = given[i];
      out[i].s = failed;
    }
    *n_out = given ? n_given : 0;
    return 0;
  }
  /* the rows measured, in the bench's order */
  size_t n_rows = 0;
  static tn_lt_cand measured[64];
  for (char *p = rows; *p && n_rows < 64;) {
    size_t l = strcspn(p, "\n");
    char row[2048], f[TN_ALGO_LEN];
    snprintf(row, sizeof row, "%.*s", (int)l, p);
    p += l + (p[l] == '\n');
    tn_lt_cand *c = &measured[n_rows];
    memset(c, 0, sizeof *c);
    named_field(header, row, "lt_algo", c->algo, sizeof c->algo);
    named_field(header, row, "lt_rank", f, sizeof f);
    c->rank = atoi(f);
    named_field(header, row, "lt_within_bound", f, sizeof f);
    if (!c->algo[0] || tb_parse_csv_row(header, row, &c->s)) {
      c->s.outcome = TN_FAILED;
      snprintf(c->s.why, sizeof c->s.why, "the bench's CSV row cannot be read");
    } else if (strcmp(f, "1")) {
      c->s.outcome = TN_WRONG;
      snprintf(c->s.why, sizeof c->s.why, "error %.3e above its bound (cuBLAS %.3e): %s",
               c->s.ours_err, c->s.cublas_err, c->algo);
    } else {
      c->s.outcome = TN_MEASURED;
      snprintf(c->s.why, sizeof c->s.why, "%s", c->algo);
    }
    n_rows++;
  }
  if (!given) {
    for (size_t i = 0; i < n_rows && *n_out < max; i++)
      if (measured[i].algo[0]) out[(*n_out)++] = measured[i];
    return 0;
  }
  /* the second pass: each algorithm given, found by its text */
  for (size_t i = 0; i < n_given; i++) {
    out[i] = given[i];
    out[i].s.outcome = TN_WRONG;
    out[i].s.sm_mhz = -1;
    snprintf(out[i].s.why, sizeof out[i].s.why, "not measured in this pass (cuBLASLt refused it): %s",
             given[i].algo);
    for (size_t j = 0; j < n_rows; j++)
      if (!strcmp(measured[j].algo, given[i].algo)) {
        out[i].s = measured[j].s;
        break;
      }
  }
  *n_out = n_given;
  return 0;
}
