/* gemmshim-overhead: what the shim adds to a forwarded call, per entry
 * point, measured on the CPU against the fake cuBLAS of the tests.
 *
 *   gemmshim-overhead SHIM FAKE_DIR [THREADS] [CALLS]
 *
 * With GS_REAL_LT=1 the cuBLASLt side is the real libcublasLt.so.13 (its
 * descriptor getters are what the shim pays for; no GPU is needed: the
 * call itself fails at once on a NULL handle, directly and through the
 * shim alike).
 *
 * Each entry point is called CALLS times per thread, directly (the fake's
 * own symbol) and through the shim, interleaved in rounds; the difference
 * of the medians is the added time. Shapes are in the SGEMM class but not
 * a measured win, so every call walks the whole routing decision (handle
 * state read, alignment, win table) before it forwards; cuBLASLt calls
 * read their descriptor attributes. Run it with GEMMSHIM_LOG set and unset,
 * and GEMMSHIM_DISABLE=1 for the pass-through floor. */
#define _GNU_SOURCE
#include <cublasLt.h>
#include <cublas_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 15

typedef cublasStatus_t (*sgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                   int, const float *, const float *, int, const float *, int,
                                   const float *, float *, int);
typedef cublasStatus_t (*gemmex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                    int, int, const void *, const void *, cudaDataType, int,
                                    const void *, cudaDataType, int, const void *, void *,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*sgemmsb_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                     int, int, const float *, const float *, int, long long,
                                     const float *, int, long long, const float *, float *, int,
                                     long long, int);
typedef cublasStatus_t (*ltmatmul_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                      const void *, cublasLtMatrixLayout_t, const void *,
                                      cublasLtMatrixLayout_t, const void *, const void *,
                                      cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                      const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);

typedef struct api {
  sgemm_fn sgemm;
  gemmex_fn gemmex;
  sgemmsb_fn sgemmsb;
  ltmatmul_fn lt;
} api;

static api direct, shimmed;
static cublasHandle_t handle;
/* Each thread has its own cuBLASLt descriptor and layout, as a program's
 * threads do (sharing one would measure cache-line traffic between them). */
static __thread cublasLtMatmulDesc_t desc;
static __thread cublasLtMatrixLayout_t lay;
static cublasStatus_t (*desc_create)(cublasLtMatmulDesc_t *, cublasComputeType_t, cudaDataType_t);
static cublasStatus_t (*layout_create)(cublasLtMatrixLayout_t *, cudaDataType, uint64_t, uint64_t,
                                       int64_t);
static long calls = 200000;
static float one = 1.0f;
static void *const A = (void *)0x100000, *const B = (void *)0x200000, *const C = (void *)0x300000;

enum { E_SGEMM, E_GEMMEX, E_GEMMEX_BF16, E_SGEMMSB, E_LT, E_COUNT };
static const char *const names[E_COUNT] = { "cublasSgemm_v2", "cublasGemmEx", "cublasGemmEx (bf16)",
                                            "cublasSgemmStridedBatched", "cublasLtMatmul" };

static double now_ns(void)
{
  struct timespec t;
  /* CPU time of this thread: with more threads than cores, wall time
   * would count the other threads' turns as ours. */
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

/* ns per call of one entry point through one api. 4000 = SGEMM class (a
 * multiple of 128) but outside every win rule. */
static double time_entry(const api *f, int e)
{
  double t0 = now_ns();
  for (long i = 0; i < calls; i++) {
    switch (e) {
    case E_SGEMM:
      f->sgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, 384, 384, 384, &one, A, 384, B, 384, &one, C, 384);
      break;
    case E_GEMMEX:
      f->gemmex(handle, CUBLAS_OP_T, CUBLAS_OP_N, 384, 384, 384, &one, A, CUDA_R_32F, 384, B,
                CUDA_R_32F, 384, &one, C, CUDA_R_32F, 384, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      break;
    case E_GEMMEX_BF16: /* in the class of BF16 kernels and the route cublaslt, routed by none */
      f->gemmex(handle, CUBLAS_OP_T, CUBLAS_OP_N, 384, 384, 384, &one, A, CUDA_R_16BF, 384, B,
                CUDA_R_16BF, 384, &one, C, CUDA_R_16BF, 384, CUBLAS_COMPUTE_32F,
                CUBLAS_GEMM_DEFAULT);
      break;
    case E_SGEMMSB:
      f->sgemmsb(handle, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, A, 64, 4096, B, 64, 4096,
                 &one, C, 64, 4096, 8);
      break;
    default:
      f->lt(NULL, desc, &one, A, lay, B, lay, &one, C, lay, C, lay, NULL, NULL, 0, NULL);
      break;
    }
  }
  return (now_ns() - t0) / (double)calls;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct result { double direct[E_COUNT], shim[E_COUNT]; } result;

static void *worker(void *arg)
{
  result *r = arg;
  desc_create(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  layout_create(&lay, CUDA_R_32F, 384, 384, 384);
  for (int e = 0; e < E_COUNT; e++) {
    double d[ROUNDS], s[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
      d[i] = time_entry(&direct, e);
      s[i] = time_entry(&shimmed, e);
    }
    qsort(d, ROUNDS, sizeof *d, cmp_double);
    qsort(s, ROUNDS, sizeof *s, cmp_double);
    r->direct[e] = d[ROUNDS / 2];
    r->shim[e] = s[ROUNDS / 2];
  }
  return NULL;
}

static void *need(void *h, const char *name)
{
  void *f = dlsym(h, name);
  if (!f) {
    fprintf(stderr, "gemmshim-overhead: %s not found\n", name);
    exit(1);
  }
  return f;
}

int main(int argc, char **argv)
{
  if (argc < 3) {
    fprintf(stderr, "usage: %s SHIM FAKE_DIR [THREADS] [CALLS]\n", argv[0]);
    return 2;
  }
  int threads = argc > 3 ? atoi(argv[3]) : 1;
  if (argc > 4) calls = atol(argv[4]);
  if (threads < 1 || threads > 256 || calls < 1) {
    fprintf(stderr, "gemmshim-overhead: bad THREADS or CALLS\n");
    return 2;
  }
  char path[4096];
  void *shim = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  snprintf(path, sizeof path, "%s/libcublas.so.13", argv[2]);
  void *blas = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  int real_lt = getenv("GS_REAL_LT") && atoi(getenv("GS_REAL_LT"));
  if (real_lt) {
    /* the shim must use the real copy, not the fake the fake cuBLAS loads */
    setenv("GEMMSHIM_CUBLASLT_LIB", "libcublasLt.so.13", 1);
    snprintf(path, sizeof path, "libcublasLt.so.13");
  } else {
    snprintf(path, sizeof path, "%s/libcublasLt.so.13", argv[2]);
  }
  void *lt = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!shim || !blas || !lt) {
    fprintf(stderr, "gemmshim-overhead: %s\n", dlerror());
    return 1;
  }
  ((void (*)(int))need(blas, "fake_set_quiet"))(1);
  if (!real_lt) ((void (*)(int))need(lt, "fake_set_quiet"))(1);
  ((cublasStatus_t(*)(cublasHandle_t *))need(blas, "cublasCreate_v2"))(&handle);
  *(void **)&desc_create = need(lt, "cublasLtMatmulDescCreate");
  *(void **)&layout_create = need(lt, "cublasLtMatrixLayoutCreate");
  *(void **)&direct.sgemm = need(blas, "cublasSgemm_v2");
  *(void **)&direct.gemmex = need(blas, "cublasGemmEx");
  *(void **)&direct.sgemmsb = need(blas, "cublasSgemmStridedBatched");
  *(void **)&direct.lt = need(lt, "cublasLtMatmul");
  *(void **)&shimmed.sgemm = need(shim, "cublasSgemm_v2");
  *(void **)&shimmed.gemmex = need(shim, "cublasGemmEx");
  *(void **)&shimmed.sgemmsb = need(shim, "cublasSgemmStridedBatched");
  *(void **)&shimmed.lt = need(shim, "cublasLtMatmul");

  pthread_t t[256];
  result *r = calloc((size_t)threads, sizeof *r);
  for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, &r[i]);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);

  const char *log = getenv("GEMMSHIM_LOG");
  const char *dis = getenv("GEMMSHIM_DISABLE");
  printf("# threads=%d calls=%ld rounds=%d log=%s disable=%s cublasLt=%s\n", threads, calls,
         ROUNDS, log && *log ? "on" : "off", dis && *dis ? dis : "0", real_lt ? "real" : "fake");
  printf("%-28s %10s %10s %10s\n", "entry", "direct_ns", "shim_ns", "added_ns");
  for (int e = 0; e < E_COUNT; e++) {
    double d = 0, s = 0, worst = 0;
    for (int i = 0; i < threads; i++) {
      d += r[i].direct[e];
      s += r[i].shim[e];
      if (r[i].shim[e] - r[i].direct[e] > worst) worst = r[i].shim[e] - r[i].direct[e];
    }
    printf("%-28s %10.1f %10.1f %10.1f", names[e], d / threads, s / threads, (s - d) / threads);
    if (threads > 1) printf("  (worst thread %.1f)", worst);
    printf("\n");
  }
  free(r);
  return 0;
}
