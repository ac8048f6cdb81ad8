/* gemmshim: the command. `record` and `run` start a program under
 * libgemmshim.so with the environment set for it and, when it ends, say
 * what the shim logged (run_summary.c); `report` is gemmshim-report.
 * Usage and behaviour: doc/gemmshim.1. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run_summary.h"

#include "../dispatch/config.h"
#include "../dispatch/tally.h"   /* the log's version line, its other-format suffix */
#include "report.h"
#include "tune.h"
#include "tune_bench.h"

#ifndef GS_LIBDIR
#define GS_LIBDIR "/usr/local/lib"   /* Makefile.am passes $(libdir) */
#endif
#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define LIB_NAME "libgemmshim.so"
#define DEFAULT_RECORD "./gemmshim-record.csv"

/* Exit statuses of our own, as shells have them. */
enum { EXIT_USAGE = 2, EXIT_CANNOT_RUN = 126, EXIT_NOT_FOUND = 127 };

static int verbose;
static const char *lib_opt;   /* --lib */

static void usage(FILE *out)
{
  fputs("usage: gemmshim [--verbose] [--lib PATH] COMMAND [ARGS]\n"
        "       gemmshim --help | --version\n"
        "commands:\n"
        "  record [-o FILE] [--] CMD [ARGS]     run CMD under the shim with routing off and\n"
        "                                       log its GEMM calls into FILE\n"
        "                                       (default " DEFAULT_RECORD ")\n"
        "  run [--table TABLE] [--] CMD [ARGS]  run CMD under the shim (with this route table);\n"
        "                                       at its exit, say who served its GEMM FLOPs\n"
        "  tune [-o TABLE] [--shapes FILE] [--budget SECONDS] [--resume] [LOG...]\n"
        "                                       time our kernels against cuBLAS on this GPU\n"
        "                                       for the calls of LOG (gemmshim record) or\n"
        "                                       FILE; write the winners as a route table\n"
        "                                       (gemmshim tune --help)\n"
        "  report [ARGS]                        gemmshim-report (gemmshim report --help)\n"
        "options:\n"
        "  --verbose    say which " LIB_NAME " is used and what is set for CMD\n"
        "  --lib PATH   use this " LIB_NAME " (else $GEMMSHIM_LIB, the build tree,\n"
        "               " GS_LIBDIR ")\n"
        "  --help       this text\n"
        "  --version    the version\n"
        "exit status: CMD's (128+N when signal N ended it); 2 bad usage or input;\n"
        "126 CMD cannot be executed; 127 CMD not found\n"
        "more: man gemmshim, man 7 gemmshim\n",
        out);
}

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("gemmshim: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return EXIT_USAGE;
}

/* ---- the command line ------------------------------------------------- */

/* Does argv[*i] name the option lng (or -shrt, when shrt)? Then its value
 * ("--x=V", "--x V", "-cV", "-c V") goes to *val and *i moves past it:
 * returns 1, or -1 (said) when the value is missing; 0 for another word. */
static int option_value(int argc, char **argv, int *i, const char *lng, char shrt,
                        const char **val)
{
  const char *a = argv[*i];
  size_t n = strlen(lng);
  if (!strncmp(a, lng, n) && a[n] == '=') {
    *val = a + n + 1;
    return 1;
  }
  int is_short = shrt && a[0] == '-' && a[1] == shrt;
  if (is_short && a[2]) {
    *val = a + 2;
    return 1;
  }
  if (!is_short && strcmp(a, lng)) return 0;
  if (*i + 1 >= argc) {
    fail("%s needs a value", lng);
    return -1;
  }
  *val = argv[++*i];
  return 1;
}

/* The options every command takes (also before the command). Returns 1
 * when argv[*i] was one, 0 when not, -1 on an error (said). */
static int common_option(int argc, char **argv, int *i)
{
  if (!strcmp(argv[*i], "--verbose")) {
    verbose = 1;
    return 1;
  }
  return option_value(argc, argv, i, "--lib", 0, &lib_opt);
}

/* What run or record was given. */
typedef struct cmd_args {
  const char *name;     /* "run" or "record" */
  const char *value;    /* --table or -o */
  char **cmd;           /* NULL-terminated */
} cmd_args;

static void command_usage(FILE *out, const char *name)
{
  if (!strcmp(name, "run"))
    fputs("usage: gemmshim [OPTIONS] run [--table TABLE] [--] CMD [ARGS]\n", out);
  else
    fputs("usage: gemmshim [OPTIONS] record [-o FILE] [--] CMD [ARGS]\n", out);
}

/* The options of run or record, then CMD: after "--", or from the first
 * word that is not an option. Returns 0, or an exit status. */
static int parse_command(int argc, char **argv, int i, cmd_args *a)
{
  int run = !strcmp(a->name, "run");
  for (; i < argc; i++) {
    const char *w = argv[i];
    if (!strcmp(w, "--")) { i++; break; }
    if (w[0] != '-' || !w[1]) break;
    if (!strcmp(w, "--help") || !strcmp(w, "-h")) {
      command_usage(stdout, a->name);
      exit(0);
    }
    int r = run ? option_value(argc, argv, &i, "--table", 't', &a->value)
                : option_value(argc, argv, &i, "--output", 'o', &a->value);
    if (r == 0) r = common_option(argc, argv, &i);
    if (r < 0) return EXIT_USAGE;
    if (r == 0) {
      fail("%s: unknown option '%s'", a->name, w);
      command_usage(stderr, a->name);
      return EXIT_USAGE;
    }
  }
  if (i >= argc) {
    fail("%s: no command given", a->name);
    command_usage(stderr, a->name);
    return EXIT_USAGE;
  }
  a->cmd = argv + i;
  return 0;
}

/* ---- paths ------------------------------------------------------------ */

/* path made absolute against the current directory: CMD's processes may
 * change directory before they write the log or read the table. */
static int absolute(const char *path, char out[PATH_MAX])
{
  char cwd[PATH_MAX];
  int n;
  if (path[0] == '/') n = snprintf(out, PATH_MAX, "%s", path);
  else if (!getcwd(cwd, sizeof cwd)) return -1;
  else n = snprintf(out, PATH_MAX, "%s/%s", cwd, path);
  if (n < 0 || n >= PATH_MAX) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}

static int readable_file(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

/* A shared object at all: the loader would otherwise skip a preload it
 * cannot use with a warning, and CMD would run without the shim. */
static int is_elf(const char *path)
{
  unsigned char magic[4];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t got = read(fd, magic, sizeof magic);
  close(fd);
  return got == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

/* The folder this program is in: 0, or -1 when /proc does not say. */
static int program_dir(char out[PATH_MAX])
{
  ssize_t len = readlink("/proc/self/exe", out, PATH_MAX - 1);
  if (len <= 0) return -1;
  out[len] = '\0';
  char *slash = strrchr(out, '/');
  if (!slash) return -1;
  *slash = '\0';
  return 0;
}

/* libgemmshim.so: --lib, else $GEMMSHIM_LIB, else beside this program in
 * the build tree (build/tools/gemmshim, build/libgemmshim.so), else the
 * installed one. A path the user named must work: no fallback then. */
static int find_lib(char out[PATH_MAX])
{
  const char *named = lib_opt ? lib_opt : getenv("GEMMSHIM_LIB");
  const char *how = lib_opt ? "--lib" : "$GEMMSHIM_LIB";
  if (named && named[0]) {
    if (!readable_file(named) || !realpath(named, out))
      return fail("%s %s: %s", how, named,
                  access(named, R_OK) ? strerror(errno) : "not a regular file");
    if (!is_elf(out)) return fail("%s %s: not a shared library (no ELF header)", how, named);
    if (verbose) fprintf(stderr, "gemmshim: library %s (%s)\n", out, how);
    return 0;
  }
  char candidates[3][PATH_MAX + 32];   /* a directory, then our name */
  size_t n = 0;
  char exe[PATH_MAX];
  if (program_dir(exe) == 0) {
    snprintf(candidates[n++], sizeof candidates[0], "%s/" LIB_NAME, exe);
    snprintf(candidates[n++], sizeof candidates[0], "%s/../" LIB_NAME, exe);
  }
  snprintf(candidates[n++], sizeof candidates[0], "%s/" LIB_NAME, GS_LIBDIR);
  for (size_t i = 0; i < n; i++)
    if (readable_file(candidates[i]) && realpath(candidates[i], out)) {
      if (verbose)
        fprintf(stderr, "gemmshim: library %s (%s)\n", out,
                i + 1 < n ? "the build tree" : "installed");
      return 0;
    }
  fputs("gemmshim: cannot find " LIB_NAME "; searched:", stderr);
  for (size_t i = 0; i < n; i++) fprintf(stderr, " %s", candidates[i]);
  fputs("\ngemmshim: name it with --lib PATH or GEMMSHIM_LIB=PATH\n", stderr);
  return EXIT_USAGE;
}

static int same_file(const char *a, const char *b)
{
  struct stat sa, sb;
  if (!strcmp(a, b)) return 1;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

/* ---- the environment -------------------------------------------------- */

static int set_env(const char *name, const char *value)
{
  if (setenv(name, value, 1)) return fail("cannot set %s: %s", name, strerror(errno));
  if (verbose) fprintf(stderr, "gemmshim: %s=%s\n", name, value);
  return 0;
}

/* LD_PRELOAD with the library first, the user's entries after it (ld.so
 * separates them with ':' or ' '). Left as it is when the library is
 * already first. */
static int set_preload(const char *lib)
{
  const char *old = getenv("LD_PRELOAD");
  const char *first = old ? old + strspn(old, ": ") : "";
  if (!first[0]) return set_env("LD_PRELOAD", lib);
  char head[PATH_MAX];
  size_t n = strcspn(first, ": ");
  if (n < sizeof head) {
    memcpy(head, first, n);
    head[n] = '\0';
    if (same_file(head, lib)) {
      if (verbose) fprintf(stderr, "gemmshim: LD_PRELOAD=%s (already first)\n", old);
      return 0;
    }
  }
  size_t len = strlen(lib) + 1 + strlen(old) + 1;
  char *value = malloc(len);
  if (!value) return fail("out of memory");
  snprintf(value, len, "%s:%s", lib, old);
  int rc = set_env("LD_PRELOAD", value);
  free(value);
  return rc;
}

/* GEMMSHIM_DISABLE makes the shim pass everything through, logging
 * nothing: then what we say at the end would be wrong, so say it now. */
static void warn_if_disabled(void)
{
  const char *v = getenv("GEMMSHIM_DISABLE");
  static const char *const on[] = { "1", "true", "yes", "on" };
  for (size_t i = 0; v && i < sizeof on / sizeof *on; i++)
    if (!strcasecmp(v, on[i])) {
      fprintf(stderr, "gemmshim: GEMMSHIM_DISABLE=%s: the shim passes every call through and "
                      "logs nothing\n", v);
      return;
    }
}

/* ---- running CMD ------------------------------------------------------ */

/* While CMD runs, gemmshim takes its signals synchronously (blocked, then
 * waited for with sigtimedwait): SIGTERM and SIGHUP are passed on to CMD
 * (torchrun's workers stop on SIGTERM, and the shim writes their logs
 * then); SIGINT and SIGQUIT too when someone sent them with kill, while
 * the terminal's reach CMD by its process group on their own. They stay
 * blocked until gemmshim has said its summary and removed its temporary
 * log (restore_signals). */
static sigset_t saved_mask;
static int cmd_signal;   /* the signal that ended CMD, 0 if none */

static void restore_signals(void) { sigprocmask(SIG_SETMASK, &saved_mask, NULL); }

/* Runs cmd; returns its status as a shell gives it (128+N for signal N).
 * *not_run is set when it could not be executed (said). */
static int run_child(char **cmd, int *not_run)
{
  static const int waited[] = { SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGCHLD };
  sigset_t wait_for;
  sigemptyset(&wait_for);
  for (size_t i = 0; i < sizeof waited / sizeof *waited; i++) sigaddset(&wait_for, waited[i]);
  *not_run = 0;
  /* a pipe that closes on exec: it carries errno back when exec fails */
  int pipefd[2];
  if (pipe(pipefd) || fcntl(pipefd[0], F_SETFD, FD_CLOEXEC) || fcntl(pipefd[1], F_SETFD, FD_CLOEXEC)) {
    *not_run = 1;
    fail("cannot start %s: %s", cmd[0], strerror(errno));
    return EXIT_CANNOT_RUN;
  }
  /* blocked from here, so every one is waited for below (one ignored by
   * whoever started us, as under nohup, is discarded as before, and CMD
   * inherits that) */
  sigprocmask(SIG_BLOCK, &wait_for, &saved_mask);
  /* SIGCHLD ignored by whoever started us would reap CMD unseen */
  struct sigaction dfl = { .sa_handler = SIG_DFL }, old_chld;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGCHLD, &dfl, &old_chld);
  pid_t pid = fork();
  if (pid == 0) {
    sigaction(SIGCHLD, &old_chld, NULL);
    sigprocmask(SIG_SETMASK, &saved_mask, NULL);
    close(pipefd[0]);
    execvp(cmd[0], cmd);
    int e = errno;
    (void)!write(pipefd[1], &e, sizeof e);
    _exit(EXIT_NOT_FOUND);
  }
  int fork_errno = errno;
  close(pipefd[1]);
  int status = 0;
  if (pid < 0) {
    *not_run = 1;
    fail("cannot start %s: %s", cmd[0], strerror(fork_errno));
    status = EXIT_CANNOT_RUN;
  } else {
    int e;
    ssize_t got;
    while ((got = read(pipefd[0], &e, sizeof e)) < 0 && errno == EINTR) {}
    int ws = 0;
    for (;;) {
      pid_t w = waitpid(pid, &ws, WNOHANG);
      if (w == pid || (w < 0 && errno != EINTR)) break;
      /* SIGCHLD wakes us at CMD's end; the timeout is only a safety net */
      struct timespec tick = { 1, 0 };
      siginfo_t si;
      int sig = sigtimedwait(&wait_for, &si, &tick);
      int sent = sig > 0 && (si.si_code == SI_USER || si.si_code == SI_QUEUE);
      if (sig == SIGTERM || sig == SIGHUP || ((sig == SIGINT || sig == SIGQUIT) && sent))
        kill(pid, sig);
    }
    if (got == (ssize_t)sizeof e) {
      *not_run = 1;
      fail("%s: %s", cmd[0], strerror(e));
      status = e == ENOENT || e == ENOTDIR ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
    } else if (WIFEXITED(ws)) {
      status = WEXITSTATUS(ws);
    } else if (WIFSIGNALED(ws)) {
      status = 128 + WTERMSIG(ws);
      cmd_signal = WTERMSIG(ws);
    }
  }
  close(pipefd[0]);
  sigaction(SIGCHLD, &old_chld, NULL);
  return status;
}

/* After CMD: a log that cannot be read makes a successful run fail. */
static int bad_log(int status, const char *err)
{
  fprintf(stderr, "gemmshim: %s\n", err);
  return status ? status : EXIT_USAGE;
}

/* ---- record ----------------------------------------------------------- */

static int do_record(const cmd_args *a)
{
  const char *out = a->value ? a->value : DEFAULT_RECORD;
  char lib[PATH_MAX], path[PATH_MAX];
  if (!out[0]) return fail("record: -o needs a file name");
  /* the shim expands %p per process; record wants one file */
  if (strchr(out, '%')) return fail("record: %s: one file for every process: no '%%' in it", out);
  int rc = find_lib(lib);
  if (rc) return rc;
  if (absolute(out, path)) return fail("record: %s: %s", out, strerror(errno));
  /* emptied, so the shim writes the header and we count only this run */
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail("record: cannot create %s: %s", out, strerror(errno));
  close(fd);
  warn_if_disabled();
  if (set_preload(lib) || set_env("GEMMSHIM_ROUTE", "0") || set_env("GEMMSHIM_LOG", path))
    return EXIT_USAGE;
  int not_run;
  int status = run_child(a->cmd, &not_run);
  if (not_run) return status;
  rs_summary s;
  char err[RS_ERR_LEN];
  rs_init(&s);
  if (rs_load(&s, path, 0, err)) status = bad_log(status, err);
  else rs_write_record(&s, out, a->cmd[0], stderr);
  rs_free(&s);
  return status;
}

/* ---- run -------------------------------------------------------------- */

/* The route tables the time estimate reads: the one named (--table, or
 * GEMMSHIM_TABLE) for every GPU, else each GPU's cache file, as the
 * library finds them. */
#define MAX_GPUS 64
typedef struct tables {
  const gs_route_table *named;
  char cache_dir[PATH_MAX];   /* "" when there is none */
  struct { char uuid[64]; gs_route_table *t; } gpu[MAX_GPUS];
  size_t n_gpus;
} tables;

static const gs_route_table *table_for(const char *uuid, void *ctx)
{
  tables *ts = ctx;
  if (ts->named) return ts->named;
  if (!ts->cache_dir[0] || !uuid[0] || !strcmp(uuid, "-") || strchr(uuid, '/') ||
      strlen(uuid) >= sizeof ts->gpu[0].uuid)
    return NULL;
  for (size_t i = 0; i < ts->n_gpus; i++)
    if (!strcmp(ts->gpu[i].uuid, uuid)) return ts->gpu[i].t;
  if (ts->n_gpus == MAX_GPUS) return NULL;
  char path[PATH_MAX + 128];
  snprintf(path, sizeof path, "%s/routes-%s.csv", ts->cache_dir, uuid);
  /* silent: a table that is missing or bad gives no estimate, and the
   * library already said what was wrong with it */
  gs_route_table *t = gs_rt_load(path, NULL, 0, NULL);
  snprintf(ts->gpu[ts->n_gpus].uuid, sizeof ts->gpu[0].uuid, "%s", uuid);
  ts->gpu[ts->n_gpus++].t = t;
  return t;
}

static const char *plain_getenv(const char *name) { return getenv(name); }

/* The library's rule (dispatch/config.c). */
static void cache_dir(char out[PATH_MAX])
{
  const char *d = getenv("GEMMSHIM_CACHE_DIR");
  if (d && d[0]) snprintf(out, PATH_MAX, "%s", d);
  else gs_xdg_cache_dir(plain_getenv, out, PATH_MAX);
}

/* The table named with --table: it must be readable and well formed (a
 * malformed line is named FILE:LINE, and CMD does not run). Whether it
 * fits this GPU is the library's to say: only it knows the GPU. */
static int load_table(const char *name, char path[PATH_MAX], gs_route_table **out)
{
  if (absolute(name, path)) return fail("run: route table %s: %s", name, strerror(errno));
  struct stat st;
  if (stat(path, &st)) return fail("run: route table %s: %s", name, strerror(errno));
  if (S_ISDIR(st.st_mode)) return fail("run: route table %s: is a directory", name);
  if (access(path, R_OK)) return fail("run: route table %s: %s", name, strerror(errno));
  *out = gs_rt_load(path, NULL, 0, stderr);   /* says why it cannot be read */
  if (!*out) return EXIT_USAGE;
  if ((*out)->n_bad) {
    size_t bad = (*out)->n_bad;
    gs_rt_free(*out);
    *out = NULL;
    return fail("run: route table %s: %zu malformed line%s (above); fix or delete them", name,
                bad, bad == 1 ? "" : "s");
  }
  if (verbose)
    fprintf(stderr, "gemmshim: route table %s: %zu rows, %zu malformed lines\n", path,
            (*out)->n_rows, (*out)->n_bad);
  return 0;
}

/* The summary's log: a private temporary file, or the user's own. */
typedef struct run_log {
  char path[PATH_MAX];
  int temporary;
  int skipped;         /* the user's path has %-tokens: one file per process */
  long long skip;      /* bytes the user's log held before CMD */
} run_log;

/* Whether path is missing, empty, or starts with this version's line. */
static int holds_our_log_or_nothing(const char *path)
{
  static const char first[] = GS_LOG_VERSION "\n";
  char buf[sizeof first];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 1;
  ssize_t got = read(fd, buf, sizeof first - 1);
  close(fd);
  return got <= 0 || (got == (ssize_t)sizeof first - 1 && !memcmp(buf, first, (size_t)got));
}

static int prepare_log(run_log *l)
{
  const char *user = getenv("GEMMSHIM_LOG");
  memset(l, 0, sizeof *l);
  if (user && user[0]) {
    if (strchr(user, '%')) {
      l->skipped = 1;
      return 0;
    }
    /* absolute, so that CMD changing directory writes where we read */
    char abs[PATH_MAX];
    if (absolute(user, abs)) return fail("run: GEMMSHIM_LOG %s: %s", user, strerror(errno));
    /* an older shim's log there: the library writes PATH.v4 instead */
    const char *suffix = holds_our_log_or_nothing(abs) ? "" : GS_LOG_OTHER_FORMAT_SUFFIX;
    if (snprintf(l->path, sizeof l->path, "%s%s", abs, suffix) >= (int)sizeof l->path)
      return fail("run: GEMMSHIM_LOG %s: %s", user, strerror(ENAMETOOLONG));
    struct stat st;
    if (stat(l->path, &st) == 0) l->skip = (long long)st.st_size;
    return set_env("GEMMSHIM_LOG", abs);
  }
  /* the shim would expand a '%' in TMPDIR as a token */
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !tmp[0] || strchr(tmp, '%')) tmp = "/tmp";
  char dir[PATH_MAX];
  if (absolute(tmp, dir) ||
      snprintf(l->path, sizeof l->path, "%s/gemmshim-run.XXXXXX", dir) >= (int)sizeof l->path)
    return fail("run: TMPDIR %s: %s", tmp, strerror(ENAMETOOLONG));
  int fd = mkstemp(l->path);
  if (fd < 0) return fail("run: cannot create a log in %s: %s", dir, strerror(errno));
  close(fd);
  l->temporary = 1;
  return set_env("GEMMSHIM_LOG", l->path);
}

static int summarize(const run_log *l, gs_route_table *table, int status)
{
  if (l->skipped) {
    fprintf(stderr, "gemmshim: no summary: GEMMSHIM_LOG=%s has per-process tokens (%%)\n",
            getenv("GEMMSHIM_LOG"));
    return status;
  }
  tables *ts = calloc(1, sizeof *ts);
  if (!ts) return bad_log(status, "out of memory");
  gs_route_table *env_table = NULL;
  const char *env = getenv("GEMMSHIM_TABLE");
  if (table) ts->named = table;
  else if (env && env[0]) ts->named = env_table = gs_rt_load(env, NULL, 0, NULL);
  else cache_dir(ts->cache_dir);
  rs_summary s;
  char err[RS_ERR_LEN];
  rs_init(&s);
  s.table_for = table_for;
  s.table_ctx = ts;
  struct stat st;
  /* no file: no process of CMD made a GEMM call */
  if (!l->temporary && stat(l->path, &st) && errno == ENOENT) rs_write_run(&s, stderr);
  else if (rs_load(&s, l->path, l->skip, err)) status = bad_log(status, err);
  else rs_write_run(&s, stderr);
  rs_free(&s);
  gs_rt_free(env_table);
  for (size_t i = 0; i < ts->n_gpus; i++) gs_rt_free(ts->gpu[i].t);
  free(ts);
  return status;
}

static int do_run(const cmd_args *a)
{
  char lib[PATH_MAX], table_path[PATH_MAX];
  gs_route_table *table = NULL;
  run_log log;
  int rc = find_lib(lib);
  if (rc) return rc;
  if (a->value && !a->value[0]) return fail("run: --table needs a file name");
  if (a->value && (rc = load_table(a->value, table_path, &table))) return rc;
  /* an inherited relative GEMMSHIM_TABLE, made absolute: CMD may change
   * directory before its first GEMM, and the summary reads it here */
  const char *inherited = getenv("GEMMSHIM_TABLE");
  if (!a->value && inherited && inherited[0] && inherited[0] != '/') {
    if (absolute(inherited, table_path) || set_env("GEMMSHIM_TABLE", table_path))
      return fail("run: GEMMSHIM_TABLE %s: %s", inherited, strerror(errno));
  }
  warn_if_disabled();
  if (set_preload(lib) || (table && set_env("GEMMSHIM_TABLE", table_path)) ||
      prepare_log(&log)) {
    gs_rt_free(table);
    return EXIT_USAGE;
  }
  int not_run;
  int status = run_child(a->cmd, &not_run);
  if (!not_run) status = summarize(&log, table, status);
  if (log.temporary) unlink(log.path);
  gs_rt_free(table);
  return status;
}

/* ---- tune ------------------------------------------------------------- */

static void tune_usage(FILE *out)
{
  fputs("usage: gemmshim [OPTIONS] tune [-o TABLE] [--shapes FILE] [--device N]\n"
        "                [--budget SECONDS] [--resume] [--iters N] [--preheat-ms MS]\n"
        "                [--measurements CSV] [--bench PATH] [--fp32-tc | --fp32-tc-fast]\n"
        "                [LOG...]\n"
        "  Times, on this GPU, every distinct call of the logs (gemmshim record) and of\n"
        "  FILE (\"m n k layout dtype\" a line) that the bench can make exactly: cuBLAS\n"
        "  against itself (the noise), then each kernel of the call's data type, in two\n"
        "  passes; a kernel is routed where it is at max(1.02, 1 + noise) x cuBLAS or\n"
        "  better in both. The table is rewritten after every call.\n"
        "  -o TABLE         the route table (default: this GPU's file in the cache folder,\n"
        "                   where gemmshim run and the library find it)\n"
        "  --budget S       stop before a call that would take the run past S seconds\n"
        "  --resume         go on with TABLE (same GPU, driver and build)\n"
        "  --iters N        samples per side and pass (20); --preheat-ms MS cuBLAS alone\n"
        "                   before each measurement (1000), for the sustained clock\n"
        "  --measurements   every measurement as CSV (default: measurements-TABLE beside it)\n"
        "  --bench PATH     gemmshim-bench (else $GEMMSHIM_BENCH, else beside gemmshim)\n"
        "  --fp32-tc        also the kernels that serve only calls that opted in to FP32\n"
        "                   on the tensor cores (for programs run with GEMMSHIM_FP32=tc)\n"
        "  --fp32-tc-fast   the same for GEMMSHIM_FP32=tc-fast (3xTF32)\n",
        out);
}

static volatile sig_atomic_t tune_stop;
static void on_tune_signal(int sig) { tune_stop = sig; }

static double tune_now(void *ctx)
{
  (void)ctx;
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int tune_stopped(void *ctx)
{
  (void)ctx;
  return tune_stop != 0;
}

static void eta_text(double s, char *out, size_t len)
{
  if (s < 0) snprintf(out, len, "?");
  else if (s < 60) snprintf(out, len, "%.0fs", s);
  else if (s < 3600) snprintf(out, len, "%dm%02ds", (int)(s / 60), (int)s % 60);
  else snprintf(out, len, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
}

static int tune_tty;

static void tune_bar(size_t done, size_t total, double eta)
{
  if (!tune_tty) return;
  char e[32];
  eta_text(eta, e, sizeof e);
  const int width = 30;
  int fill = total ? (int)((double)width * (double)done / (double)total) : width;
  fputs("\r\033[K[", stderr);
  for (int i = 0; i < width; i++) fputc(i < fill ? '#' : '.', stderr);
  fprintf(stderr, "] %zu/%zu calls, ETA %s", done, total, e);
  fflush(stderr);
}

static void tune_progress(void *ctx, size_t done, size_t total, double eta, const char *line)
{
  (void)ctx;
  char e[32];
  eta_text(eta, e, sizeof e);
  if (tune_tty) fputs("\r\033[K", stderr);
  fprintf(stderr, "gemmshim: tune [%zu/%zu, ETA %s] %s\n", done, total, e, line);
  tune_bar(done, total, eta);
}

/* mkdir -p for the folder that will hold path */
static int make_parent(const char *path)
{
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return 0;
  *slash = '\0';
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(dir, 0755) && errno != EEXIST) return -1;
    *p = '/';
  }
  return mkdir(dir, 0755) && errno != EEXIST ? -1 : 0;
}

static int parse_count(const char *opt, const char *v, long lo, long hi, long *out)
{
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (!v[0] || *end || errno || x < lo || x > hi)
    return fail("tune: %s: expected a whole number from %ld to %ld, got '%s'", opt, lo, hi, v);
  *out = x;
  return 0;
}

static int do_tune(int argc, char **argv, int i)
{
  const char *table_opt = NULL, *shapes = NULL, *bench_opt = NULL, *csv_opt = NULL, *v;
  long device = 0, iters = 20, preheat = 1000;
  double budget = 0;
  int resume = 0, fp32_tc = 0;
  const char **logs = calloc((size_t)argc, sizeof *logs);
  size_t n_logs = 0;
  if (!logs) return fail("out of memory");
  int rc = 0;
  for (; i < argc && !rc; i++) {
    const char *w = argv[i];
    int r;
    if (!strcmp(w, "--help") || !strcmp(w, "-h")) {
      tune_usage(stdout);
      free(logs);
      return 0;
    }
    if (!strcmp(w, "--resume")) { resume = 1; continue; }
    if (!strcmp(w, "--fp32-tc")) { fp32_tc = TN_OPT_IN_TC; continue; }
    if (!strcmp(w, "--fp32-tc-fast")) { fp32_tc = TN_OPT_IN_TC_FAST; continue; }
    if (!strcmp(w, "--")) {
      for (i++; i < argc; i++) logs[n_logs++] = argv[i];
      break;
    }
    if ((r = option_value(argc, argv, &i, "--output", 'o', &table_opt))) { rc = r < 0; continue; }
    if ((r = option_value(argc, argv, &i, "--shapes", 0, &shapes))) { rc = r < 0; continue; }
    if ((r = option_value(argc, argv, &i, "--bench", 0, &bench_opt))) { rc = r < 0; continue; }
    if ((r = option_value(argc, argv, &i, "--measurements", 0, &csv_opt))) { rc = r < 0; continue; }
    if ((r = option_value(argc, argv, &i, "--device", 0, &v))) {
      rc = r < 0 || parse_count("--device", v, 0, 1023, &device);
      continue;
    }
    if ((r = option_value(argc, argv, &i, "--iters", 0, &v))) {
      rc = r < 0 || parse_count("--iters", v, 1, 100000, &iters);
      continue;
    }
    if ((r = option_value(argc, argv, &i, "--preheat-ms", 0, &v))) {
      rc = r < 0 || parse_count("--preheat-ms", v, 0, 600000, &preheat);
      continue;
    }
    if ((r = option_value(argc, argv, &i, "--budget", 0, &v))) {
      char *end;
      errno = 0;
      budget = r < 0 ? 0 : strtod(v, &end);
      if (r < 0) rc = 1;
      else if (!v[0] || *end || errno || !(budget > 0) || budget > 1e9)
        rc = fail("tune: --budget: expected seconds above 0, got '%s'", v) != 0;
      continue;
    }
    if ((r = common_option(argc, argv, &i))) { rc = r < 0; continue; }
    if (w[0] == '-' && w[1]) {
      fail("tune: unknown option '%s'", w);
      tune_usage(stderr);
      rc = 1;
      continue;
    }
    logs[n_logs++] = w;
  }
  if (rc) {
    free(logs);
    return EXIT_USAGE;
  }
  if (!n_logs && !shapes) {
    free(logs);
    fail("tune: nothing to tune: give a log of calls (gemmshim record) or --shapes FILE");
    tune_usage(stderr);
    return EXIT_USAGE;
  }
  if (table_opt && !table_opt[0]) {
    free(logs);
    return fail("tune: -o needs a file name");
  }

  /* the calls, before anything runs: a bad file is a usage error */
  tn_plan plan;
  tn_plan_init(&plan);
  char err[TN_ERR_LEN];
  for (size_t l = 0; l < n_logs && !rc; l++)
    if (tn_plan_add_log(&plan, logs[l], err)) rc = fail("tune: %s", err);
  if (!rc && shapes && tn_plan_add_shapes(&plan, shapes, err)) rc = fail("tune: %s", err);
  free(logs);
  for (size_t s = 0; !rc && s < plan.n_skipped; s++) {
    const tn_key *k = &plan.skipped[s];
    fprintf(stderr, "gemmshim: tune: not measured: %s %s %s %s %lldx%lldx%lld batch %lld: %s\n",
            k->entry, k->a_type, k->layout, k->epilogue, k->m, k->n, k->k, k->batch,
            plan.skip_why[s]);
  }
  if (!rc && !plan.n) rc = fail("tune: none of the calls given can be measured (above)");
  if (rc) {
    tn_plan_free(&plan);
    return EXIT_USAGE;
  }

  tb_bench b;
  memset(&b, 0, sizeof b);
  b.device = (int)device, b.iters = (int)iters, b.preheat_ms = (int)preheat;
  b.interrupted = &tune_stop;
  b.verbose = verbose;
  char validators[4096], uuid[64], cublas_path[PATH_MAX];
  tn_kernel *kernels = NULL;
  size_t n_kernels = 0;
  char table[PATH_MAX], csv[PATH_MAX];
  char here[PATH_MAX];
  if (program_dir(here)) here[0] = '\0';
  if (tb_find(&b, bench_opt, here, err) || tb_start(&b, err) ||
      tb_identity(&b, validators, sizeof validators, uuid, cublas_path, err) ||
      tb_kernels(&b, &kernels, &n_kernels, err)) {
    tb_done(&b);
    tn_plan_free(&plan);
    return fail("tune: %s", err);
  }
  if (verbose) fprintf(stderr, "gemmshim: bench %s\n%s", b.path, validators);
  if (table_opt) {
    if (absolute(table_opt, table)) rc = fail("tune: %s: %s", table_opt, strerror(errno));
  } else {
    char dir[PATH_MAX];
    cache_dir(dir);
    if (!dir[0] || !uuid[0] || !strcmp(uuid, "-"))
      rc = fail("tune: no cache folder or no GPU UUID for the default table: name one with -o");
    else if (snprintf(table, sizeof table, "%s/routes-%s.csv", dir, uuid) >= (int)sizeof table)
      rc = fail("tune: %s: %s", dir, strerror(ENAMETOOLONG));
  }
  if (!rc && csv_opt && absolute(csv_opt, csv)) rc = fail("tune: %s: %s", csv_opt, strerror(errno));
  if (!rc && !csv_opt) {
    const char *slash = strrchr(table, '/');
    int dl = (int)(slash - table);
    if (snprintf(csv, sizeof csv, "%.*s/measurements-%s", dl, table, slash + 1) >= (int)sizeof csv)
      rc = fail("tune: %s: %s", table, strerror(ENAMETOOLONG));
  }
  if (!rc && same_file(table, csv)) rc = fail("tune: the table and the measurements are one file");
  if (!rc && make_parent(table)) rc = fail("tune: cannot make the folder of %s: %s", table, strerror(errno));
  if (rc) {
    free(kernels);
    tb_done(&b);
    tn_plan_free(&plan);
    return EXIT_USAGE;
  }
  fprintf(stderr, "gemmshim: tune: %zu call%s to measure (%zu not measurable), %zu kernels; "
          "table %s\n", plan.n, plan.n == 1 ? "" : "s", plan.n_skipped, n_kernels, table);
  /* the table holds for programs that load the same cuBLAS (its validator) */
  const char *cv = strstr(validators, "Validator,cublas_version,");
  if (cv && cublas_path[0])
    fprintf(stderr, "gemmshim: tune: measured with cuBLAS %.*s (%s); a program that loads "
            "another cuBLAS will not use this table (LD_LIBRARY_PATH chooses the bench's)\n",
            (int)strcspn(cv + 25, "\n"), cv + 25, cublas_path);

  struct sigaction sa = { .sa_handler = on_tune_signal }, old_int, old_term;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  tune_tty = isatty(2);
  /* the bench reads GEMMSHIM_PDL as the library does (default on) */
  const char *pdl_env = getenv("GEMMSHIM_PDL");
  tn_run_opts o = { .table_path = table, .csv_path = csv, .validators = validators,
                    .budget_s = budget, .resume = resume, .opt_in = fp32_tc,
                    .no_pdl = pdl_env && gs_parse_bool(pdl_env) == 0 };
  tn_ops ops = { .measure = tb_measure, .measure_lt = tb_measure_lt, .now = tune_now, .stop = tune_stopped,
                 .progress = tune_progress, .ctx = &b };
  tn_run_result res;
  tune_bar(0, plan.n, -1);
  rc = tn_run(&plan, kernels, n_kernels, &o, &ops, &res, err);
  if (tune_tty) fputs("\r\033[K", stderr);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  free(kernels);
  tb_done(&b);
  tn_plan_free(&plan);
  if (rc) return fail("tune: %s", err);
  fprintf(stderr, "gemmshim: tune: %zu call%s measured, %zu kept from the table, %zu without a "
          "row (not measured), %zu left; %zu row%s routed to our kernels\n",
          res.tuned, res.tuned == 1 ? "" : "s", res.kept, res.failed, res.left, res.routed,
          res.routed == 1 ? "" : "s");
  struct stat tst;
  const int have_table = stat(table, &tst) == 0;
  if (res.stopped && have_table)
    fprintf(stderr, "gemmshim: tune: %s; what is finished is in the table: --resume goes on\n",
            res.stopped == 2 ? "stopped at the budget" : "interrupted");
  else if (res.stopped)
    fprintf(stderr, "gemmshim: tune: %s before any call was finished; no table\n",
            res.stopped == 2 ? "stopped at the budget" : "interrupted");
  if (have_table) fprintf(stderr, "gemmshim: tune: table %s, measurements %s\n", table, csv);
  if (res.stopped == 1) return 128 + (tune_stop ? tune_stop : SIGINT);
  return 0;
}

/* ---- main ------------------------------------------------------------- */

int main(int argc, char **argv)
{
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(argv[i], "--version")) {
      printf("gemmshim %s\n", PACKAGE_VERSION);
      return 0;
    }
    int r = common_option(argc, argv, &i);
    if (r < 0) return EXIT_USAGE;
    if (r == 0) {
      fail("unknown option '%s'", argv[i]);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (i >= argc) {
    fail("no command given (record, run, tune or report)");
    usage(stderr);
    return EXIT_USAGE;
  }
  const char *name = argv[i];
  if (!strcmp(name, "report")) {
    argv[i] = "gemmshim report";   /* getopt's messages name it */
    return report_main(argc - i, argv + i, "gemmshim report");
  }
  if (!strcmp(name, "tune")) return do_tune(argc, argv, i + 1);
  if (strcmp(name, "run") && strcmp(name, "record")) {
    fail("unknown command '%s' (record, run, tune or report)", name);
    usage(stderr);
    return EXIT_USAGE;
  }
  cmd_args a = { .name = name };
  int rc = parse_command(argc, argv, i + 1, &a);
  if (rc) return rc;
  sigprocmask(SIG_SETMASK, NULL, &saved_mask);
  rc = !strcmp(name, "run") ? do_run(&a) : do_record(&a);
  restore_signals();
  /* CMD ended by Ctrl-C: end the same way, so that a calling script stops
   * too, as it would have without gemmshim */
  if (cmd_signal == SIGINT) {
    fflush(stderr);
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
  }
  return rc;
}
