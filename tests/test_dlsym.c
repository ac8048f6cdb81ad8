/* Lookups by dlsym/dlvsym under LD_PRELOAD of the shim (issue 22). Each
 * scenario runs in a fresh process, this program exec'd again with
 * "--scenario NAME", with or without the shim preloaded: the shim is only
 * in front of libc's dlsym when preloaded. A scenario prints what it saw
 * and exits non-zero on the first failed check. Where the shim must change
 * nothing (the pseudo-handles, errors), the transcript under the shim must
 * equal the one without it, byte for byte. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <cublas_api.h>

#include "../interpose/dl_real.h"
#include "fake/fake.h"

/* ---- in the scenario process ------------------------------------------- */

#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      fprintf(stderr, "%s:%d: scenario check failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

#include "support/entry_calls.h"

extern void *gsdl_early_default, *gsdl_early_handle;

static void *open_or_die(const char *dir_env, const char *name, int flags)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", getenv(dir_env), name);
  void *h = dlopen(path, flags);
  if (!h) fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
  CHECK(h);
  return h;
}

static void *fake_lib(const char *name) { return open_or_die("GS_FAKE_DIR", name, RTLD_NOW | RTLD_LOCAL); }
static void *dl_lib(const char *name) { return open_or_die("GS_DL_DIR", name, RTLD_NOW | RTLD_LOCAL); }
static void *soname_lib(const char *soname)
{
  void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  CHECK(h);
  return h;
}

/* The shim's own export of NAME (NULL when the shim is not loaded). */
static void *shim_export(const char *name)
{
  void *shim = dlopen(getenv("GS_SHIM"), RTLD_NOW | RTLD_NOLOAD);
  return shim ? dlsym(shim, name) : NULL;
}

static const char *object_of(const void *p)
{
  Dl_info info;
  if (!p || !dladdr(p, &info) || !info.dli_fname) return "(none)";
  const char *base = strrchr(info.dli_fname, '/');
  return base ? base + 1 : info.dli_fname;
}

static void say_error(const char *what)
{
  const char *e = dlerror();
  printf("%s: dlerror %s\n", what, e ? e : "(null)");
}

extern void *gsdl_next(void), *gsdl_vnext(const char *);

/* RTLD_NEXT and RTLD_DEFAULT from a library that is not the program: the
 * answers depend on glibc seeing that library as the caller. */
static void scenario_pseudo(void)
{
  char (*probe)(void);
  *(void **)&probe = gsdl_next();
  CHECK(probe && probe() == 'N');
  printf("RTLD_NEXT from the library: gs_dl_probe of %s\n", object_of((void *)probe));
  *(void **)&probe = gsdl_vnext("GSDL_1");
  CHECK(probe && probe() == 'N');
  printf("dlvsym RTLD_NEXT GSDL_1: %s\n", object_of((void *)probe));
  CHECK(gsdl_vnext("GSDL_9") == NULL);
  say_error("dlvsym RTLD_NEXT GSDL_9");
  /* from the program: the first definition after it is the library's */
  *(void **)&probe = dlsym(RTLD_NEXT, "gs_dl_probe");
  CHECK(probe && probe() == 'C');

  void *local = dl_lib("libgsdl_local.so");
  void *(*def)(void), *(*vdef)(const char *);
  *(void **)&def = dlsym(local, "gsdl_default");
  *(void **)&vdef = dlsym(local, "gsdl_vdefault");
  CHECK(def && vdef);
  void *only = def();
  CHECK(only != NULL);
  printf("RTLD_DEFAULT from the RTLD_LOCAL library: %s\n", object_of(only));
  CHECK(vdef("GSDL_1") == only);
  CHECK(vdef("GSDL_9") == NULL);
  say_error("dlvsym RTLD_DEFAULT GSDL_9");
  /* from the program itself: not in its scope */
  CHECK(dlsym(RTLD_DEFAULT, "gs_dl_only_here") == NULL);
  say_error("RTLD_DEFAULT from the program");
  CHECK(dlsym(RTLD_NEXT, "gs_dl_only_here") == NULL);
  say_error("RTLD_NEXT from the program");
  void *v = dlvsym(RTLD_DEFAULT, "dlopen", "GLIBC_2.34");
  printf("dlvsym dlopen GLIBC_2.34: %s\n", v ? object_of(v) : "(none)");
  say_error("after dlvsym dlopen");
}

/* dlerror() after every kind of failure and success, on the shim's own path
 * (entry-point names) and beside it. */
static void scenario_errors(void)
{
  void *m = soname_lib("libm.so.6");
  void *next = dl_lib("libgsdl_next.so");
  CHECK(dlsym(m, "gs_no_such_symbol") == NULL);
  say_error("missing plain name");
  say_error("dlerror again");
  CHECK(dlsym(m, "cublasLtMatmul") == NULL);
  say_error("missing entry-point name");
  CHECK(dlvsym(m, "cublasSgemm_v2", "GSDL_1") == NULL);
  say_error("missing versioned entry-point name");
  CHECK(dlsym(m, "gs_no_such_symbol") == NULL);
  CHECK(dlsym(next, "cublasGemmEx") != NULL);
  say_error("entry-point name found after an unread error");
  CHECK(dlsym(m, "cublasGemmEx") == NULL);
  CHECK(dlsym(m, "cos") != NULL);
  say_error("plain name found after an unread error");
  CHECK(dlvsym(next, "cublasGemmEx", "GSDL_9") == NULL);
  say_error("entry point, wrong version");
  CHECK(dlsym(NULL, "gs_no_such_symbol") == NULL);
  say_error("RTLD_DEFAULT missing");
}


/* An entry point as the program's own dlsym on the fake's handle finds it
 * (under the shim: the shim's export). */
static void *fake_handle_sym(const libs *L, const char *name)
{
  void *f = dlsym(strncmp(name, "cublasLt", 8) ? L->blas : L->lt, name);
  CHECK(f && f == shim_export(name));
  return f;
}

/* A real handle to cuBLAS: the nine entry points come back as the shim's
 * exports, and a call through one reaches the shim (and its log) and then
 * the fake. Other names, and another library's function of an entry
 * point's name, come back as they are. */
static void scenario_handle(void)
{
  void *blas = fake_lib("libcublas.so.13");
  void *lt = fake_lib("libcublasLt.so.13");
  void *next = dl_lib("libgsdl_next.so");
  static const char *const names[] = { "cublasSgemm_v2", "cublasSgemm_v2_64", "cublasGemmEx",
                                       "cublasGemmEx_64", "cublasSgemmStridedBatched",
                                       "cublasSgemmStridedBatched_64", "cublasGemmStridedBatchedEx",
                                       "cublasGemmStridedBatchedEx_64" };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    void *p = dlsym(blas, names[i]);
    CHECK(p && p == shim_export(names[i]));
  }
  /* libcublas's scope holds libcublasLt: both handles give the export */
  CHECK(dlsym(lt, "cublasLtMatmul") == shim_export("cublasLtMatmul"));
  CHECK(dlsym(blas, "cublasLtMatmul") == shim_export("cublasLtMatmul"));
  CHECK(!strcmp(object_of(dlsym(lt, "cublasLtCreate")), "libcublasLt.so.13"));
  CHECK(!strcmp(object_of(dlsym(blas, "cublasCreate_v2")), "libcublas.so.13"));
  int (*other)(void);
  *(void **)&other = dlsym(next, "cublasGemmEx");
  CHECK(other && other() == 77);
  *(void **)&other = dlvsym(next, "cublasGemmEx", "GSDL_1");
  CHECK(other && other() == 77);

  /* all nine, through the pointers dlsym gave, every argument and status
   * checked at the fake (each called twice; the log counts them) */
  libs L;
  memset(&L, 0, sizeof L);
  L.blas = blas;
  L.lt = lt;
  L.sym = fake_handle_sym;
  *(void **)&L.blas_last = dlsym(blas, "fake_last");
  *(void **)&L.lt_last = dlsym(lt, "fake_last");
  *(void **)&L.blas_status = dlsym(blas, "fake_set_status");
  *(void **)&L.lt_status = dlsym(lt, "fake_set_status");
  CHECK(L.blas_last && L.lt_last && L.blas_status && L.lt_status);
  every_entry_point(&L);
  printf("the nine entry points, called through the handles' pointers, reached the fake\n");
}

/* GEMMSHIM_DISABLE=1: every lookup answers as without the shim. */
static void scenario_disabled(void)
{
  void *blas = fake_lib("libcublas.so.13");
  void *lt = fake_lib("libcublasLt.so.13");
  CHECK(!strcmp(object_of(dlsym(blas, "cublasGemmEx")), "libcublas.so.13"));
  CHECK(!strcmp(object_of(dlsym(lt, "cublasLtMatmul")), "libcublasLt.so.13"));
  printf("disabled: handles give cuBLAS's own functions\n");
}

/* dlsym from a constructor that runs before the program's main. */
static void scenario_early(void)
{
  CHECK(gsdl_early_default == shim_export("cublasGemmEx"));
  CHECK(gsdl_early_handle && gsdl_early_handle == shim_export("cublasGemmEx"));
  printf("early lookups give the shim's exports\n");
}

/* Another namespace has its own copies: nothing there is the function the
 * shim forwards to, so nothing is replaced. */
static void scenario_dlmopen(void)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/libgsdl_next.so", getenv("GS_DL_DIR"));
  void *ns = dlmopen(LM_ID_NEWLM, path, RTLD_NOW);
  if (!ns) fprintf(stderr, "dlmopen: %s\n", dlerror());
  CHECK(ns);
  int (*other)(void);
  *(void **)&other = dlsym(ns, "cublasGemmEx");
  CHECK(other && other() == 77);
  CHECK((void *)other != shim_export("cublasGemmEx"));
  char (*probe)(void);
  *(void **)&probe = dlvsym(ns, "gs_dl_probe", "GSDL_1");
  CHECK(probe && probe() == 'N');
  printf("dlmopen namespace: its own functions\n");
}

/* A lookup from a constructor, under the loader lock, while another
 * thread's first GEMM call is searching for cuBLAS (and waits for that
 * lock): it must end (the alarm turns a hang into a failure). */
extern volatile int gsdl_plug_started;

typedef cublasStatus_t (*lt_any_fn)(void *, void *, const void *, const void *, void *,
                                    const void *, void *, const void *, const void *, void *,
                                    void *, void *, const void *, void *, size_t, void *);

static lt_any_fn first_lt;

/* (looked up before: dlsym itself waits for the loader lock) */
static void *first_lt_call(void *arg)
{
  (void)arg;
  while (!gsdl_plug_started) usleep(1000);
  usleep(50000);
  first_lt(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  return NULL;
}

static void scenario_loader_lock(void)
{
  alarm(30);
  void *lt = fake_lib("libcublasLt.so.13");
  (void)lt;
  *(void **)&first_lt = dlsym(RTLD_DEFAULT, "cublasLtMatmul");
  CHECK(first_lt);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, first_lt_call, NULL) == 0);
  void *plug = dl_lib("libgsdl_plug.so");
  pthread_join(t, NULL);
  void **found = dlsym(plug, "gsdl_plug_found");
  CHECK(found && *found);
  printf("the constructor's lookup ended\n");
}

/* Many threads looking up at once, from the first lookup on. */
#define LOOKUP_THREADS 16
static pthread_barrier_t lookup_start;
static void *lookup_blas, *lookup_lt, *lookup_next;

/* What each thread's first lookups returned, checked after the join: a
 * lookup of the shim's own export before the barrier would bind cuBLAS
 * and the race would be gone. */
static void *first_seen[64][2];

static void *lookup_worker(void *arg)
{
  void **seen = first_seen[(intptr_t)arg];
  pthread_barrier_wait(&lookup_start);
  seen[0] = dlsym(lookup_lt, "cublasLtMatmul");
  seen[1] = dlsym(lookup_blas, "cublasGemmEx");
  for (int i = 0; i < 200; i++) {
    CHECK(dlsym(lookup_lt, "cublasLtMatmul") == seen[0]);
    CHECK(dlsym(lookup_blas, "cublasGemmEx") == seen[1]);
    CHECK(dlsym(RTLD_DEFAULT, "cublasGemmEx") == seen[1]);
    CHECK(dlvsym(lookup_next, "gs_dl_probe", "GSDL_1") != NULL);
    char (*probe)(void);
    *(void **)&probe = gsdl_next();
    CHECK(probe && probe() == 'N');
  }
  return NULL;
}

static void scenario_threads(void)
{
  lookup_blas = fake_lib("libcublas.so.13");
  lookup_lt = fake_lib("libcublasLt.so.13");
  lookup_next = dl_lib("libgsdl_next.so");
  pthread_barrier_init(&lookup_start, NULL, LOOKUP_THREADS);
  pthread_t t[LOOKUP_THREADS];
  for (int i = 0; i < LOOKUP_THREADS; i++)
    CHECK(pthread_create(&t[i], NULL, lookup_worker, (void *)(intptr_t)i) == 0);
  for (int i = 0; i < LOOKUP_THREADS; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < LOOKUP_THREADS; i++) {
    CHECK(first_seen[i][0] == shim_export("cublasLtMatmul"));
    CHECK(first_seen[i][1] == shim_export("cublasGemmEx"));
  }
  printf("%d threads agree\n", LOOKUP_THREADS);
}

static const struct { const char *name; void (*fn)(void); } scenarios[] = {
  { "pseudo", scenario_pseudo },   { "errors", scenario_errors },
  { "handle", scenario_handle },   { "disabled", scenario_disabled },
  { "early", scenario_early },     { "dlmopen", scenario_dlmopen },
  { "threads", scenario_threads },  { "loader_lock", scenario_loader_lock },
};

/* ---- in the test process ------------------------------------------------ */

static char log_dir[512];

/* Run a scenario with the shim preloaded or not; its stdout goes to out. */
static pid_t run_scenario(const char *name, int preload, const char *const *env, char *out,
                          size_t out_size, int *status)
{
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    if (preload) setenv("LD_PRELOAD", getenv("GS_SHIM"), 1);
    for (const char *const *e = env; e && *e; e++) putenv((char *)*e);
    execl("/proc/self/exe", "test_dlsym", "--scenario", name, (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  size_t n = 0;
  ssize_t r;
  while ((r = read(fds[0], out + n, out_size - 1 - n)) > 0) n += (size_t)r;
  out[n] = '\0';
  close(fds[0]);
  assert_int_equal(waitpid(pid, status, 0), pid);
  return pid;
}

static void expect_success(const char *name, int preload, const char *const *env, char *out,
                           size_t size, pid_t *pid_out)
{
  int status;
  pid_t pid = run_scenario(name, preload, env, out, size, &status);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail_msg("scenario %s (%s) failed; it printed:\n%s", name, preload ? "preloaded" : "plain", out);
  if (pid_out) *pid_out = pid;
}

/* Where the shim must change nothing, it changes nothing: with routing
 * on, and with GEMMSHIM_DISABLE=1. */
static void same_as_without_shim(const char *name)
{
  static char plain[1 << 14], shimmed[1 << 14];
  const char *disabled[] = { "GEMMSHIM_DISABLE=1", NULL };
  expect_success(name, 0, NULL, plain, sizeof plain, NULL);
  for (int d = 0; d < 2; d++) {
    expect_success(name, 1, d ? disabled : NULL, shimmed, sizeof shimmed, NULL);
    if (strcmp(plain, shimmed) != 0)
      fail_msg("scenario %s differs under the shim%s.\nwithout:\n%s\nwith:\n%s", name,
               d ? " with GEMMSHIM_DISABLE=1" : "", plain, shimmed);
  }
}

static void test_pseudo_handles_see_the_real_caller(void **state)
{
  (void)state;
  same_as_without_shim("pseudo");
}

static void test_dlerror_as_the_real_lookup_left_it(void **state)
{
  (void)state;
  same_as_without_shim("errors");
}

static void test_real_handle_gives_the_shims_exports(void **state)
{
  (void)state;
  static char out[1 << 14];
  char log_env[600];
  snprintf(log_env, sizeof log_env, "GEMMSHIM_LOG=%s/gemmshim.%%p.csv", log_dir);
  const char *env[] = { log_env, NULL };
  pid_t pid;
  expect_success("handle", 1, env, out, sizeof out, &pid);
  char path[700];
  snprintf(path, sizeof path, "%s/gemmshim.%ld.csv", log_dir, (long)pid);
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("the shim wrote no log at %s", path);
  static const char *const nine[] = { ",cublasSgemm_v2,", ",cublasSgemm_v2_64,", ",cublasGemmEx,",
                                       ",cublasGemmEx_64,", ",cublasSgemmStridedBatched,",
                                       ",cublasSgemmStridedBatched_64,",
                                       ",cublasGemmStridedBatchedEx,",
                                       ",cublasGemmStridedBatchedEx_64,", ",cublasLtMatmul," };
  int rows[9] = { 0 };
  char line[4096];
  while (fgets(line, sizeof line, f))
    for (int i = 0; i < 9; i++)
      if (strstr(line, nine[i])) rows[i]++;
  fclose(f);
  /* one row per entry point (its two calls have the same shape) */
  for (int i = 0; i < 9; i++)
    if (rows[i] != 1) fail_msg("the log has %d rows with %s (expected 1)", rows[i], nine[i]);
  /* without the shim, the handle's own functions (and the scenario's
   * checks of the exports fail) */
  int status;
  run_scenario("handle", 0, NULL, out, sizeof out, &status);
  assert_false(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_disable_changes_no_lookup(void **state)
{
  (void)state;
  static char out[1 << 12];
  const char *env[] = { "GEMMSHIM_DISABLE=1", NULL };
  expect_success("disabled", 1, env, out, sizeof out, NULL);
}

static void test_lookups_before_the_shim_starts(void **state)
{
  (void)state;
  static char out[1 << 12];
  const char *env[] = { "GSDL_EARLY=1", NULL };
  expect_success("early", 1, env, out, sizeof out, NULL);
}

static void test_dlmopen_namespaces_are_left_alone(void **state)
{
  (void)state;
  static char out[1 << 12];
  expect_success("dlmopen", 1, NULL, out, sizeof out, NULL);
}

static void test_lookup_under_the_loader_lock_ends(void **state)
{
  (void)state;
  static char out[1 << 12];
  expect_success("loader_lock", 1, NULL, out, sizeof out, NULL);
}

static void test_many_threads_first_lookups(void **state)
{
  (void)state;
  static char out[1 << 12];
  expect_success("threads", 1, NULL, out, sizeof out, NULL);
}

/* The lookup the shim finds libc's functions with, against libc's own
 * answers (this process has no shim in front of dlsym). */
static void test_elf_lookup_matches_libc(void **state)
{
  (void)state;
  assert_ptr_equal(gs_elf_lookup("libc.so", "dlsym", "GLIBC_2.34"),
                   dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.34"));
  assert_ptr_equal(gs_elf_lookup("libc.so", "dlvsym", "GLIBC_2.34"),
                   dlvsym(RTLD_DEFAULT, "dlvsym", "GLIBC_2.34"));
  assert_ptr_equal(gs_elf_lookup("libc.so", "dladdr", NULL), dlsym(RTLD_DEFAULT, "dladdr"));
#if defined(__x86_64__)
  assert_ptr_equal(gs_elf_lookup("libc.so", "dlsym", "GLIBC_2.2.5"),
                   dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.2.5"));
#endif
  assert_non_null(gs_real_dlsym());
  assert_ptr_equal((void *)gs_real_dlsym(), dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.34"));
  assert_ptr_equal((void *)gs_real_dlvsym(), dlvsym(RTLD_DEFAULT, "dlvsym", "GLIBC_2.34"));
  assert_null(gs_elf_lookup("libc.so", "gs_no_such_symbol", NULL));
  assert_null(gs_elf_lookup("libc.so", "dlsym", "GLIBC_9.9"));
  assert_null(gs_elf_lookup("libgs_no_such_object", "dlsym", NULL));
  /* versioned, through the caller library (GSDL_1) */
  char path[4096];
  snprintf(path, sizeof path, "%s/libgsdl_next.so", getenv("GS_DL_DIR"));
  void *next = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(next);
  assert_ptr_equal(gs_elf_lookup("libgsdl_next.so", "gs_dl_probe", "GSDL_1"),
                   dlsym(next, "gs_dl_probe"));
  assert_null(gs_elf_lookup("libgsdl_next.so", "gs_dl_probe", "GSDL_2"));
  dlclose(next);
  /* the same through the SysV hash table */
  snprintf(path, sizeof path, "%s/libgsdl_sysv.so", getenv("GS_DL_DIR"));
  void *sysv = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(sysv);
  assert_ptr_equal(gs_elf_lookup("libgsdl_sysv.so", "gs_dl_probe", "GSDL_1"), dlsym(sysv, "gs_dl_probe"));
  assert_ptr_equal(gs_elf_lookup("libgsdl_sysv.so", "cublasGemmEx", NULL), dlsym(sysv, "cublasGemmEx"));
  assert_null(gs_elf_lookup("libgsdl_sysv.so", "gs_no_such_symbol", NULL));
  dlclose(sysv);
}

/* The first lookups of libc's dlsym/dlvsym, raced: one address for all. */
#define RACE_THREADS 16
static pthread_barrier_t race_start;
static void *race_worker(void *out)
{
  pthread_barrier_wait(&race_start);
  ((void **)out)[0] = (void *)gs_real_dlsym();
  ((void **)out)[1] = (void *)gs_real_dlvsym();
  return NULL;
}

static void test_first_lookups_raced(void **state)
{
  (void)state;
  void *got[RACE_THREADS][2];
  pthread_t t[RACE_THREADS];
  pthread_barrier_init(&race_start, NULL, RACE_THREADS);
  for (int i = 0; i < RACE_THREADS; i++)
    assert_int_equal(pthread_create(&t[i], NULL, race_worker, got[i]), 0);
  for (int i = 0; i < RACE_THREADS; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&race_start);
  for (int i = 0; i < RACE_THREADS; i++) {
    assert_ptr_equal(got[i][0], dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.34"));
    assert_ptr_equal(got[i][1], dlvsym(RTLD_DEFAULT, "dlvsym", "GLIBC_2.34"));
  }
}

int main(int argc, char **argv)
{
  if (argc == 3 && !strcmp(argv[1], "--scenario")) {
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
      if (!strcmp(argv[2], scenarios[i].name)) {
        scenarios[i].fn();
        fflush(stdout);
        exit(0);   /* exit: the shim writes its log at exit */
      }
    fprintf(stderr, "no scenario %s\n", argv[2]);
    return 2;
  }
  snprintf(log_dir, sizeof log_dir, "%s/tests/dlsym-logs", getenv("GS_BUILDDIR"));
  mkdir(log_dir, 0755);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_first_lookups_raced),
    cmocka_unit_test(test_elf_lookup_matches_libc),
    cmocka_unit_test(test_pseudo_handles_see_the_real_caller),
    cmocka_unit_test(test_dlerror_as_the_real_lookup_left_it),
    cmocka_unit_test(test_real_handle_gives_the_shims_exports),
    cmocka_unit_test(test_disable_changes_no_lookup),
    cmocka_unit_test(test_lookups_before_the_shim_starts),
    cmocka_unit_test(test_dlmopen_namespaces_are_left_alone),
    cmocka_unit_test(test_many_threads_first_lookups),
    cmocka_unit_test(test_lookup_under_the_loader_lock_ends),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
