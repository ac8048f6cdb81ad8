/* GPU check: the FP32 SIMT kernel, reached through the shim's cuBLAS entry
 * points, against an FP64 reference (cuBLAS DGEMM) and cuBLAS SGEMM.
 * Built a second time with GS_CHECK_F32_TC as check_f32_tc: the same
 * battery for the FP32 tensor-core kernel (3xTF32, opt-in, all four
 * layouts), plus who may opt in and the Inf/NaN pattern per layout.
 *
 * This program is linked with the shim's own objects, so its calls to
 * cublasSgemm_v2 & co. are the shim's wrappers (the real cuBLAS is found
 * through RTLD_NEXT), and it reads the shim's counters to prove that our
 * kernel, not cuBLAS, served each call. GEMMSHIM_FORCE is set: the check is
 * about correctness across the kernel's whole class, whatever its speed.
 * Exits 77 without a GPU. */
#define _GNU_SOURCE
#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../dispatch/config.h"
#include "../../dispatch/route.h"
#include "gpu_check.h"
#include "../../dispatch/tally.h"

#ifdef GS_CHECK_F32_TC
#define KERNEL "gemm_f32_3xtf32"
#define CHECK_NAME "check_f32_tc"
/* k in multiples of 32 */
#define K_STEP 32
#else
#define KERNEL "sgemm_simt"
#define CHECK_NAME "check_sgemm"
#define K_STEP 16
#endif

static int failures, checks;


/* The real cuBLAS, bypassing the shim: the references. */
static cublasStatus_t (*real_sgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const float *, const float *, int, const float *, int,
                                    const float *, float *, int);
static cublasStatus_t (*real_dgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const double *, const double *, int, const double *, int,
                                    const double *, double *, int);

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float frand(void)
{
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(rng >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

typedef struct problem {
  int ta, tb;
  int64_t m, n, k, lda, ldb, ldc;
  float *A, *B, *C;        /* device */
  float *hA, *hB, *hC0;    /* host copies of the inputs */
} problem;

static int64_t rows_a(const problem *p) { return p->ta ? p->k : p->m; }
static int64_t cols_a(const problem *p) { return p->ta ? p->m : p->k; }
static int64_t rows_b(const problem *p) { return p->tb ? p->n : p->k; }
static int64_t cols_b(const problem *p) { return p->tb ? p->k : p->n; }

static float *dev_fill(float *host, size_t n)
{
  float *d;
  CU(cudaMalloc((void **)&d, n * sizeof *d));
  CU(cudaMemcpy(d, host, n * sizeof *d, cudaMemcpyHostToDevice));
  return d;
}

static problem make(int ta, int tb, int64_t m, int64_t n, int64_t k, int64_t pad)
{
  problem p = { ta, tb, m, n, k, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL };
  p.lda = rows_a(&p) + pad;
  p.ldb = rows_b(&p) + pad;
  p.ldc = m + pad;
  size_t na = (size_t)(p.lda * cols_a(&p)), nb = (size_t)(p.ldb * cols_b(&p)),
         nc = (size_t)(p.ldc * n);
  p.hA = malloc(na * 4); p.hB = malloc(nb * 4); p.hC0 = malloc(nc * 4);
  for (size_t i = 0; i < na; i++) p.hA[i] = frand();
  for (size_t i = 0; i < nb; i++) p.hB[i] = frand();
  for (size_t i = 0; i < nc; i++) p.hC0[i] = frand();
  p.A = dev_fill(p.hA, na); p.B = dev_fill(p.hB, nb); p.C = dev_fill(p.hC0, nc);
  return p;
}

static void release(problem *p)
{
  cudaFree(p->A); cudaFree(p->B); cudaFree(p->C);
  free(p->hA); free(p->hB); free(p->hC0);
}

static void reset_c(const problem *p, float beta)
{
  size_t nc = (size_t)(p->ldc * p->n);
  if (beta == 0.0f) {   /* beta == 0: C must not be read, so NaN must not leak */
    CU(cudaMemset(p->C, 0xff, nc * 4));
  } else {
    CU(cudaMemcpy(p->C, p->hC0, nc * 4, cudaMemcpyHostToDevice));
  }
}

/* Relative Frobenius error of out (device, ldc) against the FP64 result. */
static double rel_err(const problem *p, const float *out_dev, const double *ref)
{
  size_t nc = (size_t)(p->ldc * p->n);
  float *h = malloc(nc * 4);
  CU(cudaMemcpy(h, out_dev, nc * 4, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (int64_t j = 0; j < p->n; j++)
    for (int64_t i = 0; i < p->m; i++) {
      double r = ref[i + j * p->m], d = (double)h[i + j * p->ldc] - r;
      num += d * d;
      den += r * r;
    }
  /* the padding rows below m must be untouched */
  for (int64_t j = 0; j < p->n; j++)
    for (int64_t i = p->m; i < p->ldc; i++)
      if (memcmp(&h[i + j * p->ldc], &p->hC0[i + j * p->ldc], 4) != 0 &&
          !isnan(h[i + j * p->ldc])) {
        free(h);
        return INFINITY;
      }
  free(h);
  return sqrt(num / (den > 0 ? den : 1));
}

/* FP64 reference: D = alpha op(A) op(B) + beta C (+ bias), column-major m x n. */
static double *reference(cublasHandle_t h, const problem *p, double alpha, double beta,
                         const float *bias)
{
  size_t na = (size_t)(p->lda * cols_a(p)), nb = (size_t)(p->ldb * cols_b(p));
  double *a = malloc(na * 8), *b = malloc(nb * 8), *c = malloc((size_t)(p->m * p->n) * 8);
  for (size_t i = 0; i < na; i++) a[i] = p->hA[i];
  for (size_t i = 0; i < nb; i++) b[i] = p->hB[i];
  for (int64_t j = 0; j < p->n; j++)
    for (int64_t i = 0; i < p->m; i++)
      c[i + j * p->m] = beta != 0 ? p->hC0[i + j * p->ldc] : 0.0;
  double *da, *db, *dc;
  CU(cudaMalloc((void **)&da, na * 8)); CU(cudaMalloc((void **)&db, nb * 8));
  CU(cudaMalloc((void **)&dc, (size_t)(p->m * p->n) * 8));
  CU(cudaMemcpy(da, a, na * 8, cudaMemcpyHostToDevice));
  CU(cudaMemcpy(db, b, nb * 8, cudaMemcpyHostToDevice));
  CU(cudaMemcpy(dc, c, (size_t)(p->m * p->n) * 8, cudaMemcpyHostToDevice));
  CB(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_HOST));
  CB(real_dgemm(h, p->ta ? CUBLAS_OP_T : CUBLAS_OP_N, p->tb ? CUBLAS_OP_T : CUBLAS_OP_N, (int)p->m,
                (int)p->n, (int)p->k, &alpha, da, (int)p->lda, db, (int)p->ldb, &beta, dc, (int)p->m));
  CU(cudaMemcpy(c, dc, (size_t)(p->m * p->n) * 8, cudaMemcpyDeviceToHost));
  if (bias)
    for (int64_t j = 0; j < p->n; j++)
      for (int64_t i = 0; i < p->m; i++) c[i + j * p->m] += bias[i];
  cudaFree(da); cudaFree(db); cudaFree(dc);
  free(a); free(b);
  return c;
}

static uint64_t served(void) { return gs_tally_count(KERNEL, GS_R_ROUTED); }

static void verdict(const char *what, int ok, double ours, double theirs)
{
  checks++;
  if (!ok) failures++;
  printf("%-4s %-58s ours %.3e  cublas %.3e\n", ok ? "ok" : "FAIL", what, ours, theirs);
}

/* Our error may be at most 2x cuBLAS's against FP64 (with a floor for the
 * case where both are at FP32 rounding level). */
static int within(double ours, double theirs)
{
  return isfinite(ours) && ours <= 2.0 * theirs + 1e-7;
}

/* One Sgemm through the shim and one through the real cuBLAS, both against
 * FP64; asserts the shim's counter moved. */
static void check_sgemm(cublasHandle_t h, problem *p, float alpha, float beta, int device_scalars,
                        const char *label)
{
  double *ref = reference(h, p, alpha, beta, NULL);
  float *scal = NULL;
  const float *pa = &alpha, *pb = &beta;
  if (device_scalars) {
    float hs[2] = { alpha, beta };
    CU(cudaMalloc((void **)&scal, 8));
    CU(cudaMemcpy(scal, hs, 8, cudaMemcpyHostToDevice));
    pa = scal; pb = scal + 1;
    CB(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_DEVICE));
  }
  cudaStream_t s;
  CB(cublasGetStream_v2(h, &s));
  reset_c(p, beta);
  uint64_t before = served();
  CB(cublasSgemm_v2(h, p->ta ? CUBLAS_OP_T : CUBLAS_OP_N, p->tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                    (int)p->m, (int)p->n, (int)p->k, pa, p->A, (int)p->lda, p->B, (int)p->ldb, pb,
                    p->C, (int)p->ldc));
  CU(cudaStreamSynchronize(s));
  int was_ours = served() == before + 1;
  double ours = rel_err(p, p->C, ref);
  reset_c(p, beta);
  CB(real_sgemm(h, p->ta ? CUBLAS_OP_T : CUBLAS_OP_N, p->tb ? CUBLAS_OP_T : CUBLAS_OP_N, (int)p->m,
                (int)p->n, (int)p->k, pa, p->A, (int)p->lda, p->B, (int)p->ldb, pb, p->C,
                (int)p->ldc));
  CU(cudaStreamSynchronize(s));
  double theirs = rel_err(p, p->C, ref);
  if (device_scalars) {
    CB(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_HOST));
    cudaFree(scal);
  }
  char what[160];
  snprintf(what, sizeof what, "%s %c%c %ldx%ldx%ld a=%g b=%g%s%s", label, p->ta ? 'T' : 'N',
           p->tb ? 'T' : 'N', (long)p->m, (long)p->n, (long)p->k, alpha, beta,
           device_scalars ? " dev-scalars" : "", was_ours ? "" : " (NOT served by " KERNEL ")");
  verdict(what, was_ours && within(ours, theirs), ours, theirs);
  free(ref);
}

/* A kernel's first call per layout, epilogue and launcher path on a
 * context is its self-check: cuBLAS serves it while ours is compared beside
 * it, and the next call of the class reads the verdict. Make those calls
 * first; the battery's calls then show that they passed. */
static void lt_bias(cublasHandle_t h);

static void first_use(cublasHandle_t h)
{
  uint64_t passed = gs_tally_count("cublas", GS_R_SELFCHECK);
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) {
      problem p = make(ta, tb, 256, 256, 256, 0);
      float alpha = 1.0f, beta = 0.0f;
      CB(cublasSgemm_v2(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, 256,
                        256, 256, &alpha, p.A, 256, p.B, 256, &beta, p.C, 256));
      CU(cudaDeviceSynchronize());
      release(&p);
    }
  verdict("first use: 4 layouts self-checked",
          gs_tally_count("cublas", GS_R_SELFCHECK) == passed + 4 &&
              gs_tally_count("cublas", GS_R_SELFCHECK_FAILED) == 0,
          0, 0);
}

static void battery(cublasHandle_t h)
{
  const float alphas[] = { 1.0f, -0.5f, 2.0f }, betas[] = { 0.0f, 1.0f, 0.3f };
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) {
      problem p = make(ta, tb, 256, 384, 160, 0);
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) check_sgemm(h, &p, alphas[a], betas[b], 0, "layouts");
      check_sgemm(h, &p, 1.5f, 0.0f, 1, "layouts");
      check_sgemm(h, &p, -1.0f, 0.7f, 1, "layouts");
      release(&p);
      /* sub-matrix views; a grid large enough that cuBLAS does not split K
       * (split-K makes it 2-4x more accurate than any one-pass kernel) */
      problem q = make(ta, tb, 1024, 1024, 512, 12);
      check_sgemm(h, &q, 1.0f, 0.5f, 0, "sub-view ld+12");
      release(&q);
    }
}

/* A call outside the class (tails) is forwarded, and cuBLAS's answer comes
 * back unchanged. */
static void forwarded_tail(cublasHandle_t h)
{
  problem p = make(0, 0, 200, 130, 40, 0);
  float alpha = 1, beta = 0;
  reset_c(&p, 0);
  uint64_t before = served(), fwd = gs_tally_count("cublas", GS_R_SIZE_CLASS);
  CB(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 200, 130, 40, &alpha, p.A, 200, p.B, 40, &beta,
                    p.C, 200));
  CU(cudaDeviceSynchronize());
  int ok = served() == before && gs_tally_count("cublas", GS_R_SIZE_CLASS) == fwd + 1;
  verdict("tail 200x130x40 forwarded (size_class)", ok, 0, 0);
  release(&p);
}

/* TF32 math mode stays cuBLAS's. */
static void forwarded_tf32(cublasHandle_t h)
{
  problem p = make(1, 0, 256, 256, 256, 0);
  float alpha = 1, beta = 0;
  CB(cublasSetMathMode(h, (cublasMath_t)(CUBLAS_TF32_TENSOR_OP_MATH |
                                         CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
  uint64_t before = served();
  CB(cublasSgemm_v2(h, CUBLAS_OP_T, CUBLAS_OP_N, 256, 256, 256, &alpha, p.A, 256, p.B, 256, &beta,
                    p.C, 256));
  CU(cudaDeviceSynchronize());
  CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  verdict("TF32 math mode forwarded", served() == before, 0, 0);
  release(&p);
}

/* GemmEx FP32 (CuPy's way) and Sgemm_v2_64. */
static void other_entries(cublasHandle_t h)
{
  problem p = make(1, 0, 384, 256, 512, 4);
  float alpha = 0.75f, beta = 0.25f;
  double *ref = reference(h, &p, alpha, beta, NULL);
  reset_c(&p, beta);
  uint64_t before = served();
  CB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 384, 256, 512, &alpha, p.A, CUDA_R_32F, (int)p.lda,
                  p.B, CUDA_R_32F, (int)p.ldb, &beta, p.C, CUDA_R_32F, (int)p.ldc,
                  CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT));
  CU(cudaDeviceSynchronize());
  double e1 = rel_err(&p, p.C, ref);
#ifdef GS_CHECK_F32_TC
  /* PEDANTIC always stays strict FP32 */
  verdict("cublasGemmEx f32 PEDANTIC TN: not this kernel",
          served() == before && within(e1, 1e-6), e1, 0);
#else
  verdict("cublasGemmEx f32 PEDANTIC TN", served() == before + 1 && within(e1, 1e-6), e1, 0);
#endif
  reset_c(&p, beta);
  before = served();
  CB(cublasSgemm_v2_64(h, CUBLAS_OP_T, CUBLAS_OP_N, 384, 256, 512, &alpha, p.A, p.lda, p.B, p.ldb,
                       &beta, p.C, p.ldc));
  CU(cudaDeviceSynchronize());
  double e2 = rel_err(&p, p.C, ref);
  verdict("cublasSgemm_v2_64 TN", served() == before + 1 && within(e2, 1e-6), e2, 0);
  free(ref);
  release(&p);
}

/* cuBLASLt FP32 with the BIAS epilogue (nn.Linear), D separate from C. */
static void lt_bias(cublasHandle_t h)
{
  cublasLtHandle_t lt;
  CB(cublasLtCreate(&lt));
  problem p = make(1, 0, 512, 256, 384, 0);
  float alpha = 1.0f, beta = 0.0f;
  float *hbias = malloc(512 * 4);
  for (int i = 0; i < 512; i++) hbias[i] = frand();
  float *bias = dev_fill(hbias, 512), *D;
  CU(cudaMalloc((void **)&D, (size_t)(512 * 256) * 4));
  CU(cudaMemset(D, 0xff, (size_t)(512 * 256) * 4));
  double *ref = reference(h, &p, alpha, beta, hbias);
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc;
  CB(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  int32_t ta = CUBLAS_OP_T;
  uint32_t epi = CUBLASLT_EPILOGUE_BIAS;
  CB(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CB(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  CB(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  CB(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, 384, 512, 384));
  CB(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, 384, 256, 384));
  CB(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, 512, 256, 512));
  reset_c(&p, 0);  /* beta = 0: C is NaN and must not leak */
  /* the first TN + bias call is the epilogue's self-check */
  uint64_t checked = gs_tally_count("cublas", GS_R_SELFCHECK);
  CB(cublasLtMatmul(lt, desc, &alpha, p.A, la, p.B, lb, &beta, p.C, lc, D, lc, NULL, NULL, 0, 0));
  CU(cudaDeviceSynchronize());
  verdict("cublasLtMatmul TN BIAS: first use self-checked",
          gs_tally_count("cublas", GS_R_SELFCHECK) == checked + 1, 0, 0);
  CU(cudaMemset(D, 0xff, (size_t)(512 * 256) * 4));
  uint64_t before = served();
  CB(cublasLtMatmul(lt, desc, &alpha, p.A, la, p.B, lb, &beta, p.C, lc, D, lc, NULL, NULL, 0, 0));
  CU(cudaDeviceSynchronize());
  problem view = p;
  view.ldc = 512;
  double e = rel_err(&view, D, ref);
  verdict("cublasLtMatmul f32 TN BIAS", served() == before + 1 && within(e, 1e-6), e, 0);
  cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(lt);
  cudaFree(bias); cudaFree(D);
  free(hbias); free(ref);
  release(&p);
}

/* Capture into a graph on a non-default stream, replay, compare. */
static void graph_capture(cublasHandle_t h)
{
#ifdef GS_CHECK_F32_TC
  const int ta = 1, tb = 0;
#else
  const int ta = 0, tb = 1;
#endif
  problem p = make(ta, tb, 256, 256, 256, 0);
  float alpha = 1.0f, beta = 0.0f;
  double *ref = reference(h, &p, alpha, beta, NULL);
  cudaStream_t s;
  CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CB(cublasSetStream_v2(h, s));
  reset_c(&p, 0);
  cudaGraph_t g;
  cudaGraphExec_t ge;
  uint64_t before = served();
  CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CB(cublasSgemm_v2(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, 256, 256,
                    256, &alpha, p.A, 256, p.B, 256, &beta, p.C, 256));
  CU(cudaStreamEndCapture(s, &g));
  CU(cudaGraphInstantiate(&ge, g, 0));
  CU(cudaGraphLaunch(ge, s));
  CU(cudaStreamSynchronize(s));
  double e = rel_err(&p, p.C, ref);
  verdict("graph capture + replay, non-default stream", served() == before + 1 && within(e, 1e-6), e, 0);
  CB(cublasSetStream_v2(h, 0));
  cudaGraphExecDestroy(ge); cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  free(ref);
  release(&p);
}

/* 8 host threads, each with its own handle and stream. */
typedef struct thread_job { problem p; double *ref; double err; int ok; } thread_job;

static void *thread_main(void *arg)
{
  thread_job *j = arg;
  cublasHandle_t h;
  cudaStream_t s;
  CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CB(cublasCreate_v2(&h));
  CB(cublasSetStream_v2(h, s));
  float alpha = 1.0f, beta = 0.0f;
  for (int i = 0; i < 20; i++)
    CB(cublasSgemm_v2(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)j->p.m, (int)j->p.n, (int)j->p.k, &alpha,
                      j->p.A, (int)j->p.lda, j->p.B, (int)j->p.ldb, &beta, j->p.C, (int)j->p.ldc));
  CU(cudaStreamSynchronize(s));
  j->err = rel_err(&j->p, j->p.C, j->ref);
  j->ok = within(j->err, 1e-6);
  cublasDestroy_v2(h);
  cudaStreamDestroy(s);
  return NULL;
}

static void threads(cublasHandle_t h)
{
  enum { T = 8 };
  thread_job jobs[T];
  pthread_t t[T];
  for (int i = 0; i < T; i++) {
    jobs[i].p = make(1, 0, 128 * (1 + i % 3), 256, 128 + K_STEP * i, 0);
    jobs[i].ref = reference(h, &jobs[i].p, 1.0, 0.0, NULL);
  }
  uint64_t before = served();
  for (int i = 0; i < T; i++) pthread_create(&t[i], NULL, thread_main, &jobs[i]);
  int ok = 1;
  double worst = 0;
  for (int i = 0; i < T; i++) {
    pthread_join(t[i], NULL);
    ok &= jobs[i].ok;
    if (jobs[i].err > worst) worst = jobs[i].err;
    free(jobs[i].ref);
    release(&jobs[i].p);
  }
  verdict("8 threads x 20 calls, own handles and streams", ok && served() == before + T * 20, worst, 0);
}

/* A over 2^31 bytes: 64-bit index math. Checked on sampled columns. */
static void huge(cublasHandle_t h)
{
  const int64_t m = 32768, n = 128, k = 16512;   /* A: 2.16 GB */
  if (getenv("GS_CHECK_QUICK")) {   /* e.g. under compute-sanitizer */
    printf("skip A > 2^31 bytes (GS_CHECK_QUICK)\n");
    return;
  }
  float *A, *B, *C;
  size_t na = (size_t)(m * k);
  if (cudaMalloc((void **)&A, na * 4) != cudaSuccess) {
    verdict("A > 2^31 bytes (skipped: no memory)", 1, 0, 0);
    return;
  }
  CU(cudaMalloc((void **)&B, (size_t)(k * n) * 4));
  CU(cudaMalloc((void **)&C, (size_t)(m * n) * 4));
  /* A[i, l] = ((i + 3 l) mod 7) - 3, B[l, j] = ((l + j) mod 5) - 2: exact in FP32 */
  float *hA = malloc(na * 4), *hB = malloc((size_t)(k * n) * 4);
#ifdef GS_CHECK_F32_TC
  /* TN: A stored k x m */
#define A_AT(i, l) hA[(l) + (i) * k]
  const cublasOperation_t op_a = CUBLAS_OP_T;
  const int lda = (int)k;
#else
#define A_AT(i, l) hA[(i) + (l) * m]
  const cublasOperation_t op_a = CUBLAS_OP_N;
  const int lda = (int)m;
#endif
  for (int64_t l = 0; l < k; l++)
    for (int64_t i = 0; i < m; i++) A_AT(i, l) = (float)((i + 3 * l) % 7 - 3);
  for (int64_t j = 0; j < n; j++)
    for (int64_t l = 0; l < k; l++) hB[l + j * k] = (float)((l + j) % 5 - 2);
  CU(cudaMemcpy(A, hA, na * 4, cudaMemcpyHostToDevice));
  CU(cudaMemcpy(B, hB, (size_t)(k * n) * 4, cudaMemcpyHostToDevice));
  float alpha = 1.0f, beta = 0.0f;
  /* the first call of a launcher path no smaller call took (the SIMT
   * kernel's wide tile) is that path's self-check: cuBLAS's */
  CB(cublasSgemm_v2(h, op_a, CUBLAS_OP_N, (int)m, (int)n, (int)k, &alpha, A, lda, B, (int)k, &beta,
                    C, (int)m));
  CU(cudaDeviceSynchronize());
  uint64_t before = served();
  CB(cublasSgemm_v2(h, op_a, CUBLAS_OP_N, (int)m, (int)n, (int)k, &alpha, A, lda, B, (int)k, &beta,
                    C, (int)m));
  CU(cudaDeviceSynchronize());
  float *hC = malloc((size_t)(m * n) * 4);
  CU(cudaMemcpy(hC, C, (size_t)(m * n) * 4, cudaMemcpyDeviceToHost));
  int ok = served() == before + 1;
  const int64_t rows[] = { 0, 1, m / 2 + 5, m - 1 }, cols[] = { 0, 77, n - 1 };
  for (size_t a = 0; a < 4; a++)
    for (size_t b = 0; b < 3; b++) {
      int64_t i = rows[a], j = cols[b];
      double r = 0;
      for (int64_t l = 0; l < k; l++) r += (double)A_AT(i, l) * hB[l + j * k];
      ok &= fabs(hC[i + j * m] - r) <= 1e-6 * (fabs(r) + 1);   /* integers: exact */
    }
  verdict("A of 2.16 GB (64-bit index math), exact integer data", ok, 0, 0);
  free(hA); free(hB); free(hC);
  cudaFree(A); cudaFree(B); cudaFree(C);
}

#ifdef GS_CHECK_F32_TC
/* k = 48 is outside this kernel's class (k % 32) and inside the strict
 * SIMT kernel's (k % 16): the call goes there, not to cuBLAS. */
static void out_of_class_stays_strict(cublasHandle_t h)
{
  problem p = make(0, 0, 256, 256, 48, 0);
  float alpha = 1, beta = 0;
  /* first_use's calls all went to this kernel, so this is sgemm_simt's first
   * NN call: its self-check (the caller gets cuBLAS's result). Count the next. */
  CB(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 48, &alpha, p.A, 256, p.B, 48, &beta,
                    p.C, 256));
  CU(cudaDeviceSynchronize());   /* the check's verdict is read by the next call */
  uint64_t before = served(), simt = gs_tally_count("sgemm_simt", GS_R_ROUTED);
  CB(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 48, &alpha, p.A, 256, p.B, 48, &beta,
                    p.C, 256));
  CU(cudaDeviceSynchronize());
  verdict("NN k = 48: served by sgemm_simt, not this kernel",
          served() == before && gs_tally_count("sgemm_simt", GS_R_ROUTED) == simt + 1, 0, 0);
  release(&p);
}

static int fclass(float x) { return isnan(x) ? 3 : isinf(x) ? (x > 0 ? 1 : 2) : 0; }

/* Element (i, l) of op(A) and (l, j) of op(B), on the host copies. */
static float *a_at(const problem *p, int64_t i, int64_t l)
{
  return p->ta ? &p->hA[l + i * p->lda] : &p->hA[i + l * p->lda];
}
static float *b_at(const problem *p, int64_t l, int64_t j)
{
  return p->tb ? &p->hB[j + l * p->ldb] : &p->hB[l + j * p->ldb];
}

/* Inf and NaN in A and B: D has SGEMM's Inf/NaN pattern, and its finite
 * part agrees with SGEMM's. */
static void non_finite(cublasHandle_t h, int ta, int tb)
{
  const int m = 256, n = 256, k = 512;
  problem p = make(ta, tb, m, n, k, 0);
  for (int c = 0; c < 40; c++) {
    int i = (c * 37) % m, l = (c * 101) % k;
    *a_at(&p, i, l) = c % 3 == 0 ? INFINITY : c % 3 == 1 ? -INFINITY : NAN;
  }
  *b_at(&p, 5, 7) = INFINITY;
  *b_at(&p, 9, 200) = 0.0f;   /* Inf * 0 where a column of A meets it */
  CU(cudaMemcpy(p.A, p.hA, (size_t)(k * m) * 4, cudaMemcpyHostToDevice));
  CU(cudaMemcpy(p.B, p.hB, (size_t)(k * n) * 4, cudaMemcpyHostToDevice));
  const cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  float alpha = 1, beta = 0;
  float *ours = malloc((size_t)(m * n) * 4), *theirs = malloc((size_t)(m * n) * 4);
  reset_c(&p, 0);
  uint64_t before = served();
  CB(cublasSgemm_v2(h, oa, ob, m, n, k, &alpha, p.A, (int)p.lda, p.B, (int)p.ldb, &beta, p.C, m));
  CU(cudaDeviceSynchronize());
  CU(cudaMemcpy(ours, p.C, (size_t)(m * n) * 4, cudaMemcpyDeviceToHost));
  reset_c(&p, 0);
  CB(real_sgemm(h, oa, ob, m, n, k, &alpha, p.A, (int)p.lda, p.B, (int)p.ldb, &beta, p.C, m));
  CU(cudaDeviceSynchronize());
  CU(cudaMemcpy(theirs, p.C, (size_t)(m * n) * 4, cudaMemcpyDeviceToHost));
  long mismatched = 0, nonfinite = 0;
  double num = 0, den = 0;
  for (int i = 0; i < m * n; i++) {
    nonfinite += fclass(theirs[i]) != 0;
    if (fclass(ours[i]) != fclass(theirs[i])) mismatched++;
    else if (!fclass(theirs[i])) {
      num += ((double)ours[i] - theirs[i]) * ((double)ours[i] - theirs[i]);
      den += (double)theirs[i] * theirs[i];
    }
  }
  double e = sqrt(num / (den > 0 ? den : 1));
  char what[120];
  snprintf(what, sizeof what, "%c%c Inf/NaN inputs: SGEMM's pattern (%ld non-finite, %ld differ)",
           ta ? 'T' : 'N', tb ? 'T' : 'N', nonfinite, mismatched);
  verdict(what, served() == before + 1 && nonfinite > 0 && mismatched == 0 && e < 1e-5, e, 0);
  free(ours); free(theirs);
  release(&p);
}

/* Without GEMMSHIM_FP32=tc the kernel serves only programs that ask cuBLAS
 * for FP32 emulation; a plain call goes to the strict kernel. */
static void who_opts_in(cublasHandle_t h)
{
  unsetenv("GEMMSHIM_FP32");
  gs_config_reload();
  problem p = make(1, 0, 256, 384, 256, 0);
  float alpha = 1, beta = 0;
  double *ref = reference(h, &p, alpha, beta, NULL);
  uint64_t before = served(), simt = gs_tally_count("sgemm_simt", GS_R_ROUTED);
  reset_c(&p, 0);
  CB(cublasSgemm_v2(h, CUBLAS_OP_T, CUBLAS_OP_N, 256, 384, 256, &alpha, p.A, 256, p.B, 256, &beta,
                    p.C, 256));
  CU(cudaDeviceSynchronize());
  verdict("no opt-in: sgemm_simt, not this kernel",
          served() == before && gs_tally_count("sgemm_simt", GS_R_ROUTED) == simt + 1, 0, 0);
  CB(cublasSetMathMode(h, CUBLAS_FP32_EMULATED_BF16X9_MATH));
  reset_c(&p, 0);
  before = served();
  CB(cublasSgemm_v2(h, CUBLAS_OP_T, CUBLAS_OP_N, 256, 384, 256, &alpha, p.A, 256, p.B, 256, &beta,
                    p.C, 256));
  CU(cudaDeviceSynchronize());
  double e = rel_err(&p, p.C, ref);
  verdict("math mode FP32_EMULATED_BF16X9: served", served() == before + 1 && within(e, 3e-7), e, 0);
  CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  reset_c(&p, 0);
  before = served();
  CB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 256, 384, 256, &alpha, p.A, CUDA_R_32F, 256, p.B,
                  CUDA_R_32F, 256, &beta, p.C, CUDA_R_32F, 256, CUBLAS_COMPUTE_32F_EMULATED_16BFX9,
                  CUBLAS_GEMM_DEFAULT));
  CU(cudaDeviceSynchronize());
  e = rel_err(&p, p.C, ref);
  verdict("GemmEx COMPUTE_32F_EMULATED_16BFX9: served", served() == before + 1 && within(e, 3e-7),
          e, 0);
  setenv("CUBLAS_EMULATE_SINGLE_PRECISION", "1", 1);
  gs_config_reload();
  reset_c(&p, 0);
  before = served();
  CB(cublasSgemm_v2(h, CUBLAS_OP_T, CUBLAS_OP_N, 256, 384, 256, &alpha, p.A, 256, p.B, 256, &beta,
                    p.C, 256));
  CU(cudaDeviceSynchronize());
  e = rel_err(&p, p.C, ref);
  verdict("CUBLAS_EMULATE_SINGLE_PRECISION=1: served", served() == before + 1 && within(e, 3e-7), e,
          0);
  unsetenv("CUBLAS_EMULATE_SINGLE_PRECISION");
  setenv("GEMMSHIM_FP32", "tc", 1);
  gs_config_reload();
  free(ref);
  release(&p);
}
#endif

int main(void)
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf(CHECK_NAME ": no CUDA GPU available\n");
    return 77;
  }
  setenv("GEMMSHIM_FORCE", "1", 1);
  unsetenv("CUBLAS_EMULATE_SINGLE_PRECISION");
#ifdef GS_CHECK_F32_TC
  setenv("GEMMSHIM_FP32", "tc", 1);
#else
  unsetenv("GEMMSHIM_FP32");
#endif
  *(void **)&real_sgemm = dlsym(RTLD_NEXT, "cublasSgemm_v2");
  *(void **)&real_dgemm = dlsym(RTLD_NEXT, "cublasDgemm_v2");
  if (!real_sgemm || !real_dgemm) {
    fprintf(stderr, CHECK_NAME ": the real cuBLAS is not reachable\n");
    return 1;
  }
  cublasHandle_t h;
  CB(cublasCreate_v2(&h));
  if (!gs_check_wait_loaded()) return 1;
  first_use(h);
  battery(h);
  forwarded_tail(h);
  forwarded_tf32(h);
  other_entries(h);
  lt_bias(h);
  graph_capture(h);
  threads(h);
  huge(h);
#ifdef GS_CHECK_F32_TC
  out_of_class_stays_strict(h);
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) non_finite(h, ta, tb);
  who_opts_in(h);
#endif
  cublasDestroy_v2(h);
  printf(CHECK_NAME ": %d passed, %d failed\n", checks - failures, failures);
  return failures ? 1 : 0;
}
