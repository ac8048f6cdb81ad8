/* The shim in front of a fake cuBLAS, loaded the way PyTorch loads the real
 * one (dlopen RTLD_LOCAL), and the other ways the shim must find it. Each
 * test runs in a child process: the shim resolves its library once per
 * process, and writes its log at exit. The child checks what it can see and
 * exits non-zero on the first failure; the parent then reads the log. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
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
#include <cublasLt.h>
#include <cublas_api.h>

#include "fake/fake.h"

/* ---- in the child ------------------------------------------------------ */

#define CHECK(cond)                                                         \
  do {                                                                      \
    if (!(cond)) {                                                          \
      fprintf(stderr, "%s:%d: child check failed: %s\n", __FILE__, __LINE__, #cond); \
      _exit(1);                                                             \
    }                                                                       \
  } while (0)

#include "support/entry_calls.h"

static char path_buf[4096];

static const char *fake_path(const char *name)
{
  snprintf(path_buf, sizeof path_buf, "%s/%s", getenv("GS_FAKE_DIR"), name);
  return path_buf;
}

/* Where the SIGTERM tests' application handler leaves its marks (made
 * once, before any fork, so the handler itself only opens it). */
static char marker_path[4200];
static const char *fake_path_static_marker(void)
{
  if (!marker_path[0]) snprintf(marker_path, sizeof marker_path, "%s/handler-calls.txt", getenv("GS_FAKE_DIR"));
  return marker_path;
}

static char *read_file(const char *path);

static void *shim_sym(const libs *L, const char *name);

/* The shim first, global, as LD_PRELOAD puts it; then the fakes. Entry
 * points are looked up in the shim. */
static libs load(int fake_mode)
{
  libs L;
  memset(&L, 0, sizeof L);
  L.sym = shim_sym;
  L.shim = dlopen(getenv("GS_SHIM"), RTLD_NOW | RTLD_GLOBAL);
  if (!L.shim) fprintf(stderr, "%s\n", dlerror());
  CHECK(L.shim);
  if (fake_mode < 0) return L;
  L.blas = dlopen(fake_path("libcublas.so.13"), RTLD_NOW | fake_mode);
  CHECK(L.blas);
  L.lt = dlopen(fake_path("libcublasLt.so.13"), RTLD_NOW | fake_mode);
  CHECK(L.lt);
  *(void **)&L.blas_last = dlsym(L.blas, "fake_last");
  *(void **)&L.lt_last = dlsym(L.lt, "fake_last");
  *(void **)&L.blas_count = dlsym(L.blas, "fake_count");
  *(void **)&L.lt_count = dlsym(L.lt, "fake_count");
  *(void **)&L.blas_status = dlsym(L.blas, "fake_set_status");
  *(void **)&L.lt_status = dlsym(L.lt, "fake_set_status");
  CHECK(L.blas_last && L.lt_last && L.blas_count && L.lt_count && L.blas_status && L.lt_status);
  return L;
}

static void *shim_sym(const libs *L, const char *name)
{
  void *f = dlsym(L->shim, name);
  CHECK(f);
  return f;
}

static void lt_desc_set(const libs *L, cublasLtMatmulDesc_t d, int attr, const void *v, size_t size)
{
  cublasStatus_t (*desc_set)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void *, size_t);
  *(void **)&desc_set = dlsym(L->lt, "cublasLtMatmulDescSetAttribute");
  CHECK(desc_set && !desc_set(d, (cublasLtMatmulDescAttributes_t)attr, v, size));
}

static void lt_layout_set(const libs *L, cublasLtMatrixLayout_t l, int attr, const void *v, size_t size)
{
  cublasStatus_t (*set)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, const void *, size_t);
  *(void **)&set = dlsym(L->lt, "cublasLtMatrixLayoutSetAttribute");
  CHECK(set && !set(l, (cublasLtMatrixLayoutAttribute_t)attr, v, size));
}

/* ---- in the parent ----------------------------------------------------- */

typedef void (*child_fn)(void);

static char log_dir[256];

static void set_log_env(void)
{
  char path[512];
  snprintf(path, sizeof path, "%s/gemmshim.%%p.csv", log_dir);
  setenv("GEMMSHIM_LOG", path, 1);
}

/* Run fn in a child with the given environment additions ("NAME=value",
 * NULL-terminated); returns the child's pid after checking it succeeded. */
static pid_t run_child(child_fn fn, const char *const *env)
{
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* CMocka's handlers would resume its test loop inside the child */
    int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) signal(sigs[i], SIG_DFL);
    for (const char *const *e = env; e && *e; e++) putenv((char *)*e);
    fn();
    exit(0);  /* exit, not _exit: the shim writes its log at exit */
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  return pid;
}

/* The log a child wrote, or NULL when there is none. */
static char *read_log(pid_t pid)
{
  char path[512];
  snprintf(path, sizeof path, "%s/gemmshim.%ld.csv", log_dir, (long)pid);
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  unlink(path);
  return buf;
}

static int count_lines(const char *s)
{
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

static void child_every_entry_local(void)
{
  libs L = load(RTLD_LOCAL);
  every_entry_point(&L);
}

static void test_every_entry_point_rtld_local(void **state)
{
  (void)state;
  set_log_env();
  pid_t pid = run_child(child_every_entry_local, NULL);
  char *log = read_log(pid);
  assert_non_null(log);
  /* version, header, one row per entry point (each called twice, same shape) */
  assert_int_equal(count_lines(log), 2 + 9);
  assert_non_null(strstr(log, ",cublasSgemm_v2,f32,f32,f32,-,TN,-,11,12,13,1,cublas,"));
  assert_non_null(strstr(log, ",cublasGemmStridedBatchedEx,bf16,bf16,bf16,32f,NT,-,71,72,73,3,cublas,batched,2,-1,gemm_batched,"));
  assert_non_null(strstr(log, ",cublasLtMatmul,f32,f32,f32,32f,TN,default,128,256,64,1,cublas,"));
}

static void child_every_entry_global(void)
{
  libs L = load(RTLD_GLOBAL);
  every_entry_point(&L);
}

static void test_every_entry_point_rtld_global(void **state)
{
  (void)state;
  unsetenv("GEMMSHIM_LOG");
  run_child(child_every_entry_global, NULL);
}

/* GEMMSHIM_CUBLAS_LIB names the copy: nothing loaded beforehand. */
static void child_explicit_path(void)
{
  libs L = load(-1);
  float one = 1.0f;
  sgemm_fn f = (sgemm_fn)shim_sym(&L, "cublasSgemm_v2");
  /* a handle made by the copy the shim is told to use */
  void *named = dlopen(getenv("GEMMSHIM_CUBLAS_LIB"), RTLD_NOW | RTLD_LOCAL);
  CHECK(named);
  L.blas = named;
  CHECK(f(make_handle(&L), CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, P(2), 1, P(3), 1, &one,
          P(4), 1) == CUBLAS_STATUS_SUCCESS);
  void *blas = dlopen(fake_path("libcublas.so.13"), RTLD_NOW | RTLD_NOLOAD);
  CHECK(blas);
  fake_count_fn count = (fake_count_fn)dlsym(blas, "fake_count");
  CHECK(count && count("cublasSgemm_v2") == 1);
}

static void test_explicit_library_path(void **state)
{
  (void)state;
  unsetenv("GEMMSHIM_LOG");
  static char env[4200];
  snprintf(env, sizeof env, "GEMMSHIM_CUBLAS_LIB=%s/libcublas.so.13", getenv("GS_FAKE_DIR"));
  const char *e[] = { env, NULL };
  run_child(child_explicit_path, e);
}

static void child_missing(void)
{
  libs L = load(-1);
  float one = 1.0f;
  sgemm_fn f = (sgemm_fn)shim_sym(&L, "cublasSgemm_v2");
  ltmatmul_fn lt = (ltmatmul_fn)shim_sym(&L, "cublasLtMatmul");
  for (int i = 0; i < 2; i++) {
    CHECK(f(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, NULL, 1, NULL, 1, &one, NULL, 1) ==
          CUBLAS_STATUS_NOT_INITIALIZED);
    CHECK(lt(NULL, NULL, &one, NULL, NULL, NULL, NULL, &one, NULL, NULL, NULL, NULL, NULL, NULL,
             0, NULL) == CUBLAS_STATUS_NOT_INITIALIZED);
  }
}

static void test_missing_library_is_not_initialized(void **state)
{
  (void)state;
  unsetenv("GEMMSHIM_LOG");
  const char *e[] = { "GEMMSHIM_CUBLAS_LIB=/nonexistent/libcublas.so.13",
                      "GEMMSHIM_CUBLASLT_LIB=/nonexistent/libcublasLt.so.13", NULL };
  run_child(child_missing, e);
}

/* libcublas calls cublasLtMatmul from inside cublasGemmEx: that call must
 * reach the real (fake) Lt, unrouted and uncounted. */
static void child_nested(void)
{
  libs L = load(RTLD_LOCAL);
  cublasHandle_t h = make_handle(&L);
  float one = 1.0f;
  gemmex_fn f = (gemmex_fn)shim_sym(&L, "cublasGemmEx");
  CHECK(f(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, P(1), CUDA_R_32F, 8, P(2), CUDA_R_32F, 8,
          &one, P(3), CUDA_R_32F, 8, CUBLAS_COMPUTE_32F, (cublasGemmAlgo_t)FAKE_ALGO_NESTED_LT) ==
        CUBLAS_STATUS_SUCCESS);
  CHECK(L.lt_count("cublasLtMatmul") == 1);
  CHECK(L.blas_count("cublasGemmEx") == 1);
}

static void test_nested_lt_call_passes_through(void **state)
{
  (void)state;
  set_log_env();
  pid_t pid = run_child(child_nested, NULL);
  char *log = read_log(pid);
  assert_non_null(log);
  assert_int_equal(count_lines(log), 3);
  assert_non_null(strstr(log, ",cublasGemmEx,f32,f32,f32,32f,NN,-,8,8,8,1,cublas,not_tuned,1,-1,"));
  assert_null(strstr(log, "cublasLtMatmul"));
}

#define N_THREADS 16
static pthread_barrier_t barrier;
static sgemm_fn threaded_sgemm;
static cublasHandle_t threaded_handle;

static void *first_call(void *arg)
{
  (void)arg;
  float one = 1.0f;
  pthread_barrier_wait(&barrier);
  return (void *)(intptr_t)threaded_sgemm(threaded_handle, CUBLAS_OP_N, CUBLAS_OP_N, 128, 128,
                                          128, &one, P(1), 128, P(2), 128, &one, P(3), 128);
}

static void child_threads(void)
{
  libs L = load(RTLD_LOCAL);
  threaded_handle = make_handle(&L);
  threaded_sgemm = (sgemm_fn)shim_sym(&L, "cublasSgemm_v2");
  L.blas_status(CUBLAS_STATUS_ARCH_MISMATCH);
  pthread_t t[N_THREADS];
  pthread_barrier_init(&barrier, NULL, N_THREADS);
  for (int i = 0; i < N_THREADS; i++) CHECK(!pthread_create(&t[i], NULL, first_call, NULL));
  for (int i = 0; i < N_THREADS; i++) {
    void *ret;
    CHECK(!pthread_join(t[i], &ret));
    CHECK((intptr_t)ret == CUBLAS_STATUS_ARCH_MISMATCH);
  }
  CHECK(L.blas_count("cublasSgemm_v2") == N_THREADS);
}

static void test_sixteen_threads_first_call(void **state)
{
  (void)state;
  set_log_env();
  pid_t pid = run_child(child_threads, NULL);
  char *log = read_log(pid);
  assert_non_null(log);
  assert_int_equal(count_lines(log), 3);
  assert_non_null(strstr(log, ",cublasSgemm_v2,f32,f32,f32,-,NN,-,128,128,128,1,cublas,not_tuned,16,-1,"));
}

static void child_disabled(void)
{
  libs L = load(RTLD_LOCAL);
  every_entry_point(&L);
}

static void test_disable_is_pure_pass_through(void **state)
{
  (void)state;
  set_log_env();
  const char *e[] = { "GEMMSHIM_DISABLE=1", NULL };
  pid_t pid = run_child(child_disabled, e);
  assert_null(read_log(pid));   /* no descriptor, so nothing counted */
}

static void child_no_calls(void) { load(RTLD_LOCAL); }

static void test_no_gemm_no_log(void **state)
{
  (void)state;
  set_log_env();
  pid_t pid = run_child(child_no_calls, NULL);
  assert_null(read_log(pid));
}

/* Routing reasons as the log reports them, with GEMMSHIM_FORCE=1 so that
 * calls in a kernel's class get past the (empty) win table to the checks
 * that read the handle and the cuBLASLt descriptors. The fake handle's
 * stream is no GPU stream: calls that pass every check end at no_gpu. */
static void child_reasons(void)
{
  libs L = load(RTLD_LOCAL);
  cublasHandle_t h = make_handle(&L);
  float one = 1.0f;
  sgemm_fn s = (sgemm_fn)shim_sym(&L, "cublasSgemm_v2");
  ltmatmul_fn lt = (ltmatmul_fn)shim_sym(&L, "cublasLtMatmul");
  cublasStatus_t (*set_math)(cublasHandle_t, cublasMath_t);
  *(void **)&set_math = dlsym(L.blas, "cublasSetMathMode");
  /* in class: every check passes up to the GPU */
  CHECK(!s(h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, P(1), 256, P(2), 256, &one, P(3), 256));
  /* invalid: lda < m */
  CHECK(!s(h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, P(1), 100, P(2), 256, &one, P(3), 256));
  /* misaligned pointer */
  CHECK(!s(h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, (void *)0x10004, 256, P(2), 256, &one, P(3), 256));
  /* TF32 math (with PyTorch's extra bit) stays cuBLAS's */
  set_math(h, (cublasMath_t)(CUBLAS_TF32_TENSOR_OP_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
  CHECK(!s(h, CUBLAS_OP_T, CUBLAS_OP_N, 256, 256, 256, &one, P(1), 256, P(2), 256, &one, P(3), 256));
  /* PEDANTIC with the same bit is strict FP32: in class */
  set_math(h, (cublasMath_t)(CUBLAS_PEDANTIC_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
  CHECK(!s(h, CUBLAS_OP_N, CUBLAS_OP_T, 256, 256, 256, &one, P(1), 256, P(2), 256, &one, P(3), 256));

  lt_objs o = make_lt(&L, CUDA_R_32F, 128, 128, 128, 1, 0);
  uint32_t relu = CUBLASLT_EPILOGUE_RELU;
  lt_desc_set(&L, o.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &relu, sizeof relu);
  CHECK(!lt(NULL, o.desc, &one, P(1), o.a, P(2), o.b, &one, P(3), o.c, P(4), o.d, NULL, NULL, 0, NULL));
  lt_objs r = make_lt(&L, CUDA_R_32F, 128, 128, 256, 1, 0);
  int32_t row = CUBLASLT_ORDER_ROW;
  lt_layout_set(&L, r.c, CUBLASLT_MATRIX_LAYOUT_ORDER, &row, sizeof row);
  CHECK(!lt(NULL, r.desc, &one, P(1), r.a, P(2), r.b, &one, P(3), r.c, P(4), r.d, NULL, NULL, 0, NULL));
  lt_objs b = make_lt(&L, CUDA_R_32F, 128, 128, 512, 1, 0);
  uint32_t bias = CUBLASLT_EPILOGUE_BIAS;
  void *bias_ptr = P(5);
  lt_desc_set(&L, b.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &bias, sizeof bias);
  lt_desc_set(&L, b.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr, sizeof bias_ptr);
  CHECK(!lt(NULL, b.desc, &one, P(1), b.a, P(2), b.b, &one, P(3), b.c, P(4), b.d, NULL, NULL, 0, NULL));
  int32_t vec = CUBLASLT_POINTER_MODE_DEVICE_VECTOR;
  lt_desc_set(&L, b.desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &vec, sizeof vec);
  CHECK(!lt(NULL, b.desc, &one, P(1), b.a, P(2), b.b, &one, P(3), b.c, P(4), b.d, NULL, NULL, 0, NULL));
}

static void test_reasons_in_log(void **state)
{
  (void)state;
  set_log_env();
  const char *e[] = { "GEMMSHIM_FORCE=1", NULL };
  pid_t pid = run_child(child_reasons, e);
  char *log = read_log(pid);
  assert_non_null(log);
  assert_non_null(strstr(log, ",NN,-,256,256,256,1,cublas,no_gpu,1,-1,"));
  assert_non_null(strstr(log, ",NN,-,256,256,256,1,cublas,bad_args,1,-1,"));
  assert_non_null(strstr(log, ",NN,-,256,256,256,1,cublas,alignment,1,-1,"));
  assert_non_null(strstr(log, ",TN,-,256,256,256,1,cublas,math_mode,1,-1,"));
  assert_non_null(strstr(log, ",NT,-,256,256,256,1,cublas,no_gpu,1,-1,"));
  assert_non_null(strstr(log, ",cublasLtMatmul,f32,f32,f32,32f,TN,relu,128,128,128,1,cublas,epilogue,1,-1,"));
  assert_non_null(strstr(log, ",cublasLtMatmul,f32,f32,f32,32f,TN,default,128,128,256,1,cublas,lt_attribute,1,-1,"));
  assert_non_null(strstr(log, ",cublasLtMatmul,f32,f32,f32,32f,TN,bias,128,128,512,1,cublas,no_gpu,1,-1,"));
  assert_non_null(strstr(log, ",cublasLtMatmul,f32,f32,f32,32f,TN,bias,128,128,512,1,cublas,pointer_mode,1,-1,"));
}

/* The shim remembers what it read from a descriptor by the descriptor's
 * bytes: the same objects, changed between calls, must be read again. */
static void child_lt_reuse(void)
{
  libs L = load(RTLD_LOCAL);
  float one = 1.0f;
  ltmatmul_fn lt = (ltmatmul_fn)shim_sym(&L, "cublasLtMatmul");
  lt_objs o = make_lt(&L, CUDA_R_32F, 128, 128, 128, 1, 0);
  for (int i = 0; i < 2; i++)   /* in class: both reach the GPU check */
    CHECK(!lt(NULL, o.desc, &one, P(1), o.a, P(2), o.b, &one, P(3), o.c, P(4), o.d, NULL, NULL, 0, NULL));
  uint32_t relu = CUBLASLT_EPILOGUE_RELU;
  lt_desc_set(&L, o.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &relu, sizeof relu);
  CHECK(!lt(NULL, o.desc, &one, P(1), o.a, P(2), o.b, &one, P(3), o.c, P(4), o.d, NULL, NULL, 0, NULL));
  uint32_t dflt = CUBLASLT_EPILOGUE_DEFAULT, mode = 1;
  lt_desc_set(&L, o.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &dflt, sizeof dflt);
  lt_layout_set(&L, o.b, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &mode, sizeof mode);
  CHECK(!lt(NULL, o.desc, &one, P(1), o.a, P(2), o.b, &one, P(3), o.c, P(4), o.d, NULL, NULL, 0, NULL));
  mode = 0;
  lt_layout_set(&L, o.b, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &mode, sizeof mode);
  int64_t ld = 130;
  lt_layout_set(&L, o.d, CUBLASLT_MATRIX_LAYOUT_LD, &ld, sizeof ld);
  CHECK(!lt(NULL, o.desc, &one, P(1), o.a, P(2), o.b, &one, P(3), o.c, P(4), o.d, NULL, NULL, 0, NULL));
}

static void test_lt_descriptor_changes_are_seen(void **state)
{
  (void)state;
  set_log_env();
  const char *e[] = { "GEMMSHIM_FORCE=1", NULL };
  pid_t pid = run_child(child_lt_reuse, e);
  char *log = read_log(pid);
  assert_non_null(log);
  print_message("%s", log);
  assert_non_null(strstr(log, ",TN,default,128,128,128,1,cublas,no_gpu,2,-1,"));
  assert_non_null(strstr(log, ",TN,relu,128,128,128,1,cublas,epilogue,1,-1,"));
  assert_non_null(strstr(log, ",TN,default,128,128,128,1,cublas,lt_attribute,1,-1,"));
  /* ldd 130 floats is not a 16-byte multiple */
  assert_non_null(strstr(log, ",TN,default,128,128,128,1,cublas,alignment,1,-1,"));
}

/* Every attribute id 0..63, set on its own to a value other than its
 * default, on a call that is otherwise in a kernel's class: unless the
 * router reads and decides on that attribute itself, the call forwards
 * with lt_attribute. So an attribute the shim does not know (a newer
 * cuBLAS's; cuBLAS 12's ATOMIC_SYNC counters, 27..30) is never served. Each
 * id gets its own k, so its row in the log says what became of it. */
static const int lt_handled_ids[] = { CUBLASLT_MATMUL_DESC_COMPUTE_TYPE,
                                      CUBLASLT_MATMUL_DESC_SCALE_TYPE,
                                      CUBLASLT_MATMUL_DESC_POINTER_MODE,
                                      CUBLASLT_MATMUL_DESC_TRANSA,
                                      CUBLASLT_MATMUL_DESC_TRANSB,
                                      CUBLASLT_MATMUL_DESC_EPILOGUE,
                                      CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                      CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET,
                                      CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE };

static int lt_id_handled(int id)
{
  for (size_t i = 0; i < sizeof lt_handled_ids / sizeof *lt_handled_ids; i++)
    if (lt_handled_ids[i] == id) return 1;
  return 0;
}

static void child_every_attribute(void)
{
  libs L = load(RTLD_LOCAL);
  float one = 1.0f;
  ltmatmul_fn lt = (ltmatmul_fn)shim_sym(&L, "cublasLtMatmul");
  cublasStatus_t (*get)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void *, size_t, size_t *);
  *(void **)&get = dlsym(L.lt, "cublasLtMatmulDescGetAttribute");
  CHECK(get);
  for (int id = 0; id < 64; id++) {
    lt_objs o = make_lt(&L, CUDA_R_32F, 128, 128, 32 * (id + 1), 1, 0);
    unsigned char v[8];
    size_t size = 0, w;
    CHECK(!get(o.desc, (cublasLtMatmulDescAttributes_t)id, NULL, 0, &size) && size <= sizeof v);
    CHECK(!get(o.desc, (cublasLtMatmulDescAttributes_t)id, v, size, &w));
    v[0] ^= 1;
    lt_desc_set(&L, o.desc, id, v, size);
    lt(NULL, o.desc, &one, P(1), o.a, P(2), o.b, &one, P(3), o.c, P(4), o.d, NULL, NULL, 0, NULL);
  }
  /* the layouts' attributes past their construction values */
  static const struct { int attr, layout; } lay_cases[] = {
    { CUBLASLT_MATRIX_LAYOUT_ORDER, 3 }, { CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, 0 },
    { CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, 2 }, { CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 1 },
    { CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 0 },
  };
  for (int i = 0; i < 5; i++) {
    lt_objs o = make_lt(&L, CUDA_R_32F, 256, 128, 32 * (i + 1), 1, 0);
    cublasLtMatrixLayout_t lays[4] = { o.a, o.b, o.c, o.d };
    int64_t v64 = 4096;
    int32_t v32 = lay_cases[i].attr == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT ? 2 : 1;
    int wide = lay_cases[i].attr == CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET ||
               lay_cases[i].attr == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET;
    lt_layout_set(&L, lays[lay_cases[i].layout], lay_cases[i].attr, wide ? (void *)&v64 : (void *)&v32,
                  wide ? 8 : 4);
    lt(NULL, o.desc, &one, P(1), o.a, P(2), o.b, &one, P(3), o.c, P(4), o.d, NULL, NULL, 0, NULL);
  }
}

static void test_every_unhandled_lt_attribute_forwards(void **state)
{
  (void)state;
  set_log_env();
  const char *e[] = { "GEMMSHIM_FORCE=1", NULL };
  pid_t pid = run_child(child_every_attribute, e);
  char *log = read_log(pid);
  assert_non_null(log);
  for (int id = 0; id < 64; id++) {
    char row[96];
    snprintf(row, sizeof row, ",128,128,%d,1,cublas,lt_attribute,", 32 * (id + 1));
    int forwarded = strstr(log, row) != NULL;
    if (forwarded == lt_id_handled(id))
      print_message("descriptor attribute %d: %s\n", id,
                    forwarded ? "forwarded with lt_attribute, yet the router handles it"
                              : "not forwarded with lt_attribute");
    assert_int_equal(forwarded, !lt_id_handled(id));
  }
  for (int i = 0; i < 5; i++) {
    char row[96];
    snprintf(row, sizeof row, ",256,128,%d,1,cublas,lt_attribute,", 32 * (i + 1));
    /* the batch stride of one matrix means nothing: the only one served */
    assert_int_equal(strstr(log, row) != NULL, i != 4);
  }
  snprintf(log, 64, "%s", "");
}

static void child_route_off(void)
{
  libs L = load(RTLD_LOCAL);
  cublasHandle_t h = make_handle(&L);
  float one = 1.0f;
  sgemm_fn s = (sgemm_fn)shim_sym(&L, "cublasSgemm_v2");
  CHECK(!s(h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, P(1), 256, P(2), 256, &one, P(3), 256));
}

static void test_route_off_observes_only(void **state)
{
  (void)state;
  set_log_env();
  const char *e[] = { "GEMMSHIM_ROUTE=0", NULL };
  pid_t pid = run_child(child_route_off, e);
  char *log = read_log(pid);
  assert_non_null(log);
  /* a record to replay: leading dimensions, alignment classes, and the
   * handle's pointer and math mode, read for the log though routing is off */
  assert_non_null(strstr(log, "cublas,routing_off,1,-1,gemm,256,256,256,256,0,0,0,0,"
                              "16,16,16,16,16,16,16,16,host,0,-,-,-,-,-,-,-,-\n"));
  const char *head = "# gemmshim log v4\npid,entry,a_type,b_type,c_type,compute,layout,epilogue,"
                     "m,n,k,batch,route,reason,count,device,entry_class,lda,ldb,ldc,ldd,";
  assert_true(!strncmp(log, head, strlen(head)));
}

/* ---- the shim's bookkeeping (issue 16) ------------------------------------ */

/* Run fn in a child; returns its raw wait status (the child may die by a
 * signal or exit non-zero on purpose). */
static int run_child_status(child_fn fn, const char *const *env, pid_t *pid_out)
{
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM };
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) signal(sigs[i], SIG_DFL);
    for (const char *const *e = env; e && *e; e++) putenv((char *)*e);
    fn();
    exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  *pid_out = pid;
  return status;
}

/* Rows of a log for the given k (the tests give each purpose its own k),
 * summed over every row of the file, and how many headers it has. */
static long rows_with_k(const char *log, int k, int *headers)
{
  long total = 0;
  *headers = 0;
  char want[32];
  snprintf(want, sizeof want, ",128,128,%d,1,", k);
  for (const char *line = log; line && *line;) {
    const char *end = strchr(line, '\n');
    if (!strncmp(line, "pid,", 4)) (*headers)++;
    const char *hit = strstr(line, want);
    if (hit && (!end || hit < end)) {
      /* count is the 15th field */
      const char *f = line;
      for (int i = 0; i < 14 && f; i++) f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL;
      if (f) total += strtol(f, NULL, 10);
    }
    line = end ? end + 1 : NULL;
  }
  return total;
}

static void sgemm_calls(const libs *L, int k, int calls)
{
  cublasHandle_t h = make_handle(L);
  float one = 1.0f;
  sgemm_fn f = (sgemm_fn)shim_sym(L, "cublasSgemm_v2");
  for (int i = 0; i < calls; i++)
    CHECK(!f(h, CUBLAS_OP_N, CUBLAS_OP_N, 128, 128, k, &one, P(1), 128, P(2), k, &one, P(3), 128));
}

/* One short-lived thread per request, each making a cuBLASLt call: the
 * per-thread descriptor cache must go with the thread. */
static libs churn_libs;
static void *one_lt_call(void *arg)
{
  (void)arg;
  float one = 1.0f;
  ltmatmul_fn lt = (ltmatmul_fn)shim_sym(&churn_libs, "cublasLtMatmul");
  lt_objs o = make_lt(&churn_libs, CUDA_R_32F, 128, 128, 64, 1, 0);
  lt(NULL, o.desc, &one, P(1), o.a, P(2), o.b, &one, P(3), o.c, P(4), o.d, NULL, NULL, 0, NULL);
  /* the test's own objects go too: only the shim's part is measured */
  cublasStatus_t (*desc_destroy)(cublasLtMatmulDesc_t);
  cublasStatus_t (*lay_destroy)(cublasLtMatrixLayout_t);
  *(void **)&desc_destroy = dlsym(churn_libs.lt, "cublasLtMatmulDescDestroy");
  *(void **)&lay_destroy = dlsym(churn_libs.lt, "cublasLtMatrixLayoutDestroy");
  desc_destroy(o.desc);
  lay_destroy(o.a); lay_destroy(o.b); lay_destroy(o.c); lay_destroy(o.d);
  return NULL;
}

static void churn(int threads)
{
  for (int i = 0; i < threads; i++) {
    pthread_t t;
    CHECK(!pthread_create(&t, NULL, one_lt_call, NULL));
    CHECK(!pthread_join(t, NULL));
  }
}

static void child_thread_churn(void)
{
  churn_libs = load(RTLD_LOCAL);
  churn(200);   /* warm: thread stacks and arenas reach their steady state */
  size_t before = mallinfo2().uordblks;
  churn(4000);
  size_t after = mallinfo2().uordblks;
  fprintf(stderr, "heap in use: %zu -> %zu bytes over 4000 threads\n", before, after);
  /* the cache is ~11 kB a thread: 46 MB if it leaked */
  CHECK(after < before + (1u << 20));
}

static void test_thread_churn_frees_each_threads_descriptor_cache(void **state)
{
  (void)state;
  unsetenv("GEMMSHIM_LOG");
  run_child(child_thread_churn, NULL);
}

/* A forked child writes its own %p log with its own rows; the parent's log
 * holds only the parent's. */
static void child_forks(void)
{
  libs L = load(RTLD_LOCAL);
  sgemm_calls(&L, 16, 3);            /* before the fork: the parent's */
  fflush(NULL);
  pid_t kid = fork();
  CHECK(kid >= 0);
  if (kid == 0) {
    sgemm_calls(&L, 32, 5);          /* the child's own */
    char path[64];
    snprintf(path, sizeof path, "%ld", (long)getpid());
    exit(0);
  }
  sgemm_calls(&L, 48, 7);
  int st;
  CHECK(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
  FILE *f = fopen(fake_path("kid.pid"), "w");   /* for the parent test to find it */
  CHECK(f);
  fprintf(f, "%ld\n", (long)kid);
  fclose(f);
}

static void test_forked_child_writes_its_own_log(void **state)
{
  (void)state;
  set_log_env();
  pid_t pid = run_child(child_forks, NULL);
  FILE *f = fopen(fake_path("kid.pid"), "r");
  assert_non_null(f);
  long kid = 0;
  assert_int_equal(fscanf(f, "%ld", &kid), 1);
  fclose(f);
  unlink(fake_path("kid.pid"));
  int headers;
  char *parent = read_log(pid);
  assert_non_null(parent);
  static char parent_copy[1 << 16];
  snprintf(parent_copy, sizeof parent_copy, "%s", parent);
  assert_int_equal(rows_with_k(parent_copy, 16, &headers), 3);
  assert_int_equal(headers, 1);
  assert_int_equal(rows_with_k(parent_copy, 48, &headers), 7);
  assert_int_equal(rows_with_k(parent_copy, 32, &headers), 0);   /* not the child's */
  char *child = read_log((pid_t)kid);
  assert_non_null(child);
  assert_int_equal(rows_with_k(child, 32, &headers), 5);
  assert_int_equal(headers, 1);
  assert_int_equal(rows_with_k(child, 16, &headers), 0);         /* nor the parent's */
}

/* SIGTERM: the log is written once, and the process ends as it would have
 * without the shim. */
static void child_sigterm_default(void)
{
  libs L = load(RTLD_LOCAL);
  sgemm_calls(&L, 16, 4);
  raise(SIGTERM);
  _exit(5);   /* not reached: SIGTERM's default action ends the process */
}

static void test_sigterm_writes_the_log_and_still_kills(void **state)
{
  (void)state;
  set_log_env();
  pid_t pid;
  int st = run_child_status(child_sigterm_default, NULL, &pid);
  assert_true(WIFSIGNALED(st));
  assert_int_equal(WTERMSIG(st), SIGTERM);
  char *log = read_log(pid);
  assert_non_null(log);
  int headers;
  assert_int_equal(rows_with_k(log, 16, &headers), 4);
  assert_int_equal(headers, 1);
}

static volatile sig_atomic_t app_handler_calls;
static void app_handler_exits(int sig)
{
  (void)sig;
  app_handler_calls++;
  /* a marker the parent counts: one line per call of this handler */
  int fd = open(fake_path_static_marker(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) { if (write(fd, "h\n", 2) < 0) {} close(fd); }
  exit(3);
}

static void child_sigterm_app_exits(void)
{
  signal(SIGTERM, app_handler_exits);   /* before the first GEMM */
  libs L = load(RTLD_LOCAL);
  sgemm_calls(&L, 16, 6);
  raise(SIGTERM);
  _exit(5);
}

static void test_sigterm_chains_to_the_apps_handler_once(void **state)
{
  (void)state;
  set_log_env();
  unlink(fake_path_static_marker());
  pid_t pid;
  int st = run_child_status(child_sigterm_app_exits, NULL, &pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 3);    /* the app's handler ran and exited */
  char *marker = read_file(fake_path_static_marker());
  assert_non_null(marker);
  assert_string_equal(marker, "h\n");     /* once */
  unlink(fake_path_static_marker());
  char *log = read_log(pid);
  assert_non_null(log);
  int headers;
  assert_int_equal(rows_with_k(log, 16, &headers), 6);   /* written once, not again by exit() */
  assert_int_equal(headers, 1);
}

static void app_handler_returns(int sig)
{
  (void)sig;
  app_handler_calls++;
}

/* The app survives SIGTERM (its handler returns) and goes on calling: the
 * rows written at the signal are not written again, the later calls are
 * written at exit. */
static void child_sigterm_survived(void)
{
  signal(SIGTERM, app_handler_returns);
  libs L = load(RTLD_LOCAL);
  sgemm_calls(&L, 16, 2);
  raise(SIGTERM);
  CHECK(app_handler_calls == 1);
  sgemm_calls(&L, 16, 3);
  sgemm_calls(&L, 32, 1);
}

static void test_sigterm_survived_counts_every_call_once(void **state)
{
  (void)state;
  set_log_env();
  pid_t pid = run_child(child_sigterm_survived, NULL);
  char *log = read_log(pid);
  assert_non_null(log);
  int headers;
  assert_int_equal(rows_with_k(log, 16, &headers), 5);
  assert_int_equal(headers, 1);
  assert_int_equal(rows_with_k(log, 32, &headers), 1);
}

/* SIGTERM while another thread is inside a GEMM call: no deadlock, the log
 * holds what was counted, the process dies by the signal. */
static libs slow_libs;
static void *slow_call(void *arg)
{
  (void)arg;
  float one = 1.0f;
  gemmex_fn f = (gemmex_fn)shim_sym(&slow_libs, "cublasGemmEx");
  cublasHandle_t h = make_handle(&slow_libs);
  for (;;)
    f(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, P(1), CUDA_R_32F, 8, P(2), CUDA_R_32F, 8, &one,
      P(3), CUDA_R_32F, 8, CUBLAS_COMPUTE_32F, (cublasGemmAlgo_t)FAKE_ALGO_SLOW);
  return NULL;
}

static void child_sigterm_during_call(void)
{
  slow_libs = load(RTLD_LOCAL);
  sgemm_calls(&slow_libs, 16, 9);
  pthread_t t;
  CHECK(!pthread_create(&t, NULL, slow_call, NULL));
  usleep(100000);   /* the other thread is inside the fake's 300 ms call */
  kill(getpid(), SIGTERM);
  for (;;) pause();
}

static void test_sigterm_during_a_call_on_another_thread(void **state)
{
  (void)state;
  set_log_env();
  pid_t pid;
  alarm(20);   /* a deadlock fails the test instead of hanging it */
  int st = run_child_status(child_sigterm_during_call, NULL, &pid);
  alarm(0);
  assert_true(WIFSIGNALED(st));
  assert_int_equal(WTERMSIG(st), SIGTERM);
  char *log = read_log(pid);
  assert_non_null(log);
  int headers;
  assert_int_equal(rows_with_k(log, 16, &headers), 9);
  assert_int_equal(headers, 1);
}

static void child_quick_exit(void)
{
  libs L = load(RTLD_LOCAL);
  sgemm_calls(&L, 16, 2);
  quick_exit(4);
}

static void test_quick_exit_writes_the_log(void **state)
{
  (void)state;
  set_log_env();
  pid_t pid;
  int st = run_child_status(child_quick_exit, NULL, &pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 4);
  char *log = read_log(pid);
  assert_non_null(log);
  int headers;
  assert_int_equal(rows_with_k(log, 16, &headers), 2);
}

/* A program that ignores SIGTERM keeps ignoring it. */
static void child_sigterm_ignored(void)
{
  signal(SIGTERM, SIG_IGN);
  libs L = load(RTLD_LOCAL);
  sgemm_calls(&L, 16, 1);
  raise(SIGTERM);
  struct sigaction now;
  sigaction(SIGTERM, NULL, &now);
  CHECK(now.sa_handler == SIG_IGN);
}

static void test_ignored_sigterm_stays_ignored(void **state)
{
  (void)state;
  set_log_env();
  pid_t pid = run_child(child_sigterm_ignored, NULL);
  char *log = read_log(pid);
  assert_non_null(log);
}

/* stderr of the child, captured to a file the parent reads. */
static char err_path[512];

static void capture_stderr(void)
{
  if (!freopen(err_path, "w", stderr)) _exit(3);
  setvbuf(stderr, NULL, _IONBF, 0);
}

static char *read_file(const char *path)
{
  static char buf[8192];
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static void child_verbose(void)
{
  capture_stderr();
  libs L = load(RTLD_LOCAL);
  cublasHandle_t h = make_handle(&L);
  float one = 1.0f;
  sgemm_fn s = (sgemm_fn)shim_sym(&L, "cublasSgemm_v2");
  for (int i = 0; i < 3; i++)
    CHECK(!s(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, P(1), 8, P(2), 8, &one, P(3), 8));
}

static void test_verbose_names_the_library_once(void **state)
{
  (void)state;
  unsetenv("GEMMSHIM_LOG");
  snprintf(err_path, sizeof err_path, "%s/stderr.txt", log_dir);
  const char *e[] = { "GEMMSHIM_VERBOSE=1", NULL };
  run_child(child_verbose, e);
  char *err = read_file(err_path);
  assert_non_null(err);
  char expect[4200];
  snprintf(expect, sizeof expect, "gemmshim: using libcublas version 13.99.0 at %s/libcublas.so.13\n",
           getenv("GS_FAKE_DIR"));
  assert_non_null(strstr(err, expect));
  assert_null(strstr(strstr(err, expect) + 1, "gemmshim: using libcublas "));
  unlink(err_path);
}

/* Two different copies of libcublas loaded RTLD_LOCAL (a program with its
 * own and a framework's): warn once, name both, use one for every call. */
static void child_two_copies(void)
{
  capture_stderr();
  libs L = load(RTLD_LOCAL);
  char other[4200];
  snprintf(other, sizeof other, "%s/copy/libcublas.so.13", getenv("GS_FAKE_DIR"));
  void *second = dlopen(other, RTLD_NOW | RTLD_LOCAL);
  CHECK(second && second != L.blas);
  fake_count_fn second_count = (fake_count_fn)dlsym(second, "fake_count");
  CHECK(second_count);
  cublasHandle_t h = make_handle(&L);
  float one = 1.0f;
  sgemm_fn s = (sgemm_fn)shim_sym(&L, "cublasSgemm_v2");
  for (int i = 0; i < 2; i++)
    CHECK(!s(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, P(1), 8, P(2), 8, &one, P(3), 8));
  /* every call went to one copy */
  CHECK(L.blas_count("cublasSgemm_v2") + second_count("cublasSgemm_v2") == 2);
  CHECK(L.blas_count("cublasSgemm_v2") == 0 || second_count("cublasSgemm_v2") == 0);
}

static void test_two_copies_warn_once(void **state)
{
  (void)state;
  unsetenv("GEMMSHIM_LOG");
  snprintf(err_path, sizeof err_path, "%s/stderr.txt", log_dir);
  run_child(child_two_copies, NULL);
  char *err = read_file(err_path);
  assert_non_null(err);
  const char *w = strstr(err, "different copies of libcublas are loaded");
  assert_non_null(w);
  assert_non_null(strstr(err, "/copy/libcublas.so.13"));
  assert_non_null(strstr(err, "GEMMSHIM_CUBLAS_LIB"));
  assert_null(strstr(w + 1, "different copies of libcublas are loaded"));
  unlink(err_path);
}

/* GEMMSHIM_NVTX=1: a range per call, through a stand-in NVTX tool. */
static void child_nvtx(void)
{
  libs L = load(RTLD_LOCAL);
  cublasHandle_t h = make_handle(&L);
  float one = 1.0f;
  sgemm_fn s = (sgemm_fn)shim_sym(&L, "cublasSgemm_v2");
  sgemmsb_fn sb = (sgemmsb_fn)shim_sym(&L, "cublasSgemmStridedBatched");
  CHECK(!s(h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 128, 64, &one, P(1), 256, P(2), 64, &one, P(3), 256));
  CHECK(!s(h, CUBLAS_OP_T, CUBLAS_OP_N, 256, 128, 64, &one, P(1), 10, P(2), 64, &one, P(3), 256));
  CHECK(!sb(h, CUBLAS_OP_N, CUBLAS_OP_T, 32, 16, 8, &one, P(4), 32, 512, P(5), 16, 128, &one, P(6),
            32, 512, 7));
}

static char nvtx_record[300];

static char *run_nvtx_child(int on)
{
  snprintf(nvtx_record, sizeof nvtx_record, "%s/nvtx.txt", log_dir);
  unlink(nvtx_record);
  char inject[600], record[400];
  snprintf(inject, sizeof inject, "NVTX_INJECTION64_PATH=%s/../support/libnvtx_recorder.so",
           getenv("GS_FAKE_DIR"));
  snprintf(record, sizeof record, "GS_NVTX_RECORD=%s", nvtx_record);
  const char *e[] = { inject, record, on ? "GEMMSHIM_NVTX=1" : "GEMMSHIM_NVTX=0", NULL };
  unsetenv("GEMMSHIM_LOG");
  run_child(child_nvtx, e);
  return read_file(nvtx_record);
}

static int count_prefixed(const char *text, const char *prefix)
{
  int n = 0;
  for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
    if (!strncmp(p, prefix, strlen(prefix))) n++;
  return n;
}

static void test_nvtx_ranges(void **state)
{
  (void)state;
  char *rec = run_nvtx_child(1);
  assert_non_null(rec);
  assert_non_null(strstr(rec, "domain gemmshim\n"));
  assert_non_null(strstr(rec, "category 1 routed\n"));
  assert_non_null(strstr(rec, "category 3 bad_args\n"));
  assert_int_equal(count_prefixed(rec, "push "), 3);
  assert_int_equal(count_prefixed(rec, "pop"), 3);
  /* each range closed before the next opens (one call at a time) */
  const char *first = strstr(rec, "push ");
  assert_non_null(first);
  assert_true(strstr(first, "pop") < strstr(first + 1, "push "));
  assert_non_null(strstr(rec, " cublasSgemm_v2 f32 NN 256x128x64 -> cublas ("));
  assert_non_null(strstr(rec, "push 3 cublasSgemm_v2 f32 TN 256x128x64 -> cublas (bad_args)\n"));
  assert_non_null(strstr(rec, " cublasSgemmStridedBatched f32 NT 32x16x8 x7 -> cublas ("));
  /* off: NVTX is never called, so no tool is even loaded */
  assert_null(run_nvtx_child(0));
}

int main(void)
{
  if (!getenv("GS_SHIM") || !getenv("GS_FAKE_DIR")) {
    fprintf(stderr, "test_forward: run through make check (GS_SHIM, GS_FAKE_DIR unset)\n");
    return 1;
  }
  snprintf(log_dir, sizeof log_dir, "/tmp/gemmshim-test.%ld", (long)getpid());
  mkdir(log_dir, 0700);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_every_entry_point_rtld_local),
    cmocka_unit_test(test_every_entry_point_rtld_global),
    cmocka_unit_test(test_explicit_library_path),
    cmocka_unit_test(test_missing_library_is_not_initialized),
    cmocka_unit_test(test_nested_lt_call_passes_through),
    cmocka_unit_test(test_sixteen_threads_first_call),
    cmocka_unit_test(test_disable_is_pure_pass_through),
    cmocka_unit_test(test_no_gemm_no_log),
    cmocka_unit_test(test_reasons_in_log),
    cmocka_unit_test(test_route_off_observes_only),
    cmocka_unit_test(test_lt_descriptor_changes_are_seen),
    cmocka_unit_test(test_every_unhandled_lt_attribute_forwards),
    cmocka_unit_test(test_thread_churn_frees_each_threads_descriptor_cache),
    cmocka_unit_test(test_forked_child_writes_its_own_log),
    cmocka_unit_test(test_sigterm_writes_the_log_and_still_kills),
    cmocka_unit_test(test_sigterm_chains_to_the_apps_handler_once),
    cmocka_unit_test(test_sigterm_survived_counts_every_call_once),
    cmocka_unit_test(test_sigterm_during_a_call_on_another_thread),
    cmocka_unit_test(test_quick_exit_writes_the_log),
    cmocka_unit_test(test_ignored_sigterm_stays_ignored),
    cmocka_unit_test(test_verbose_names_the_library_once),
    cmocka_unit_test(test_two_copies_warn_once),
    cmocka_unit_test(test_nvtx_ranges),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  rmdir(log_dir);
  return rc;
}
