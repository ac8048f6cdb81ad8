/* GPU check: every kernel of the table (dispatch/variants.h), reached
 * through the shim's cuBLAS entry points, on the contract cases written
 * once here: each layout it takes with alpha/beta variants, beta == 0 over
 * a NaN-poisoned C, device scalars, the cuBLASLt BIAS epilogue with D apart
 * from C and D on C, sub-matrix views, a created stream, graph capture and
 * replay, eight threads with their own handles, bit-identical reruns,
 * Inf/NaN and overflowing inputs (cuBLAS's pattern), an operand over 2^31
 * bytes, and the calls it must leave to cuBLAS (tails, misalignment, a
 * layout it lacks) coming back as cuBLAS gives them. First of all, the
 * process's first GEMM is made inside a global-mode stream capture.
 *
 * What a kernel takes and how accurate it must be are its table entry's
 * data: its class (types, layouts, multiples, alignment, epilogues) and
 * err_vs_cublas / err_floor (its error against an FP64 reference at most
 * that multiple of cuBLAS's error on the same call). The check is linked
 * with the shim's objects: its cuBLAS calls are the shim's wrappers (the
 * real cuBLAS is reached through RTLD_NEXT), and the shim's counters prove
 * that our kernel, not cuBLAS, served each call. GEMMSHIM_FORCE names the
 * kernel under check, so its whole class is routed whatever its speed.
 *   GS_CHECK_KERNELS=a,b  only these kernels (table names)
 *   GS_CHECK_QUICK=1      no operand over 2^31 bytes (e.g. under
 *                         compute-sanitizer)
 * Exits 77 without a GPU, or when no kernel of the table runs on it. */
#define _GNU_SOURCE
#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <library_types.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../dispatch/config.h"
#include "../../dispatch/route.h"
#include "../../dispatch/routes.h"
#include "../../dispatch/tally.h"
#include "../../dispatch/variants.h"
#include "gpu_check.h"

static int failures, checks;

static void verdict(const char *kernel, const char *what, int ok, double ours, double theirs)
{
  checks++;
  if (!ok) failures++;
  printf("%-4s %-26s %-64s ours %.3e  cublas %.3e\n", ok ? "ok" : "FAIL", kernel, what, ours,
         theirs);
  fflush(stdout);
}

/* ---- the real cuBLAS, past the shim: the references ---------------------- */
static sgemm_fn real_sgemm;
static dgemm_fn real_dgemm;
static gemmex_fn real_gemmex;
static ltmatmul_fn real_lt;

/* ---- values in the kernel's data type --------------------------------------
 * Host copies hold floats whose values the data type represents exactly, so
 * the FP64 reference sees what the GPU sees. */
static size_t esize(int type) { return type == CUDA_R_16BF ? 2 : 4; }

static uint16_t to_bf16(float f)
{
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);   /* quiet NaN */
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);                     /* to nearest even */
}

static float from_bf16(uint16_t h)
{
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static float as_type(int type, float x) { return type == CUDA_R_16BF ? from_bf16(to_bf16(x)) : x; }

static void *to_bytes(int type, const float *h, size_t n)
{
  void *b = malloc(n * esize(type));
  if (type == CUDA_R_16BF)
    for (size_t i = 0; i < n; i++) ((uint16_t *)b)[i] = to_bf16(h[i]);
  else
    memcpy(b, h, n * 4);
  return b;
}

static void upload(int type, void *dev, const float *h, size_t n)
{
  void *b = to_bytes(type, h, n);
  CU(cudaMemcpy(dev, b, n * esize(type), cudaMemcpyHostToDevice));
  free(b);
}

/* n elements at dev into floats, and their bytes into raw (if not NULL). */
static float *download(int type, const void *dev, size_t n, unsigned char **raw)
{
  unsigned char *b = malloc(n * esize(type));
  float *h = malloc(n * 4);
  CU(cudaMemcpy(b, dev, n * esize(type), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++)
    h[i] = type == CUDA_R_16BF ? from_bf16(((uint16_t *)b)[i]) : ((float *)b)[i];
  if (raw) *raw = b; else free(b);
  return h;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float frand(void)   /* uniform in [-1, 1) */
{
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(rng >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

/* ---- a problem and a call ---------------------------------------------------- */
typedef struct problem {
  const gs_variant *v;
  int type;
  int ta, tb;
  int64_t m, n, k, lda, ldb, ldc;
  void *A, *B, *C, *D, *bias;     /* device; D has C's shape and ld */
  float *hA, *hB, *hC0, *hbias;   /* host values */
  unsigned char *image;           /* what reset last put in the output */
} problem;

static int64_t rows_a(const problem *p) { return p->ta ? p->k : p->m; }
static int64_t cols_a(const problem *p) { return p->ta ? p->m : p->k; }
static int64_t rows_b(const problem *p) { return p->tb ? p->n : p->k; }
static int64_t cols_b(const problem *p) { return p->tb ? p->k : p->n; }
static size_t n_a(const problem *p) { return (size_t)(p->lda * cols_a(p)); }
static size_t n_b(const problem *p) { return (size_t)(p->ldb * cols_b(p)); }
static size_t n_c(const problem *p) { return (size_t)(p->ldc * p->n); }

static void *dev_alloc(size_t bytes)
{
  void *d;
  CU(cudaMalloc(&d, bytes + 256));   /* room for a deliberately shifted pointer */
  return d;
}

static problem make(const gs_variant *v, int ta, int tb, int64_t m, int64_t n, int64_t k,
                    int64_t pad)
{
  problem p;
  memset(&p, 0, sizeof p);
  p.v = v; p.type = v->data_type;
  p.ta = ta; p.tb = tb; p.m = m; p.n = n; p.k = k;
  p.lda = rows_a(&p) + pad;
  p.ldb = rows_b(&p) + pad;
  p.ldc = m + pad;
  size_t es = esize(p.type);
  p.hA = malloc(n_a(&p) * 4); p.hB = malloc(n_b(&p) * 4); p.hC0 = malloc(n_c(&p) * 4);
  p.hbias = malloc((size_t)m * 4);
  for (size_t i = 0; i < n_a(&p); i++) p.hA[i] = as_type(p.type, frand());
  for (size_t i = 0; i < n_b(&p); i++) p.hB[i] = as_type(p.type, frand());
  for (size_t i = 0; i < n_c(&p); i++) p.hC0[i] = as_type(p.type, frand());
  for (int64_t i = 0; i < m; i++) p.hbias[i] = as_type(v->bias_type == CUDA_R_16BF ? CUDA_R_16BF : CUDA_R_32F, frand());
  p.A = dev_alloc(n_a(&p) * es); p.B = dev_alloc(n_b(&p) * es);
  p.C = dev_alloc(n_c(&p) * es); p.D = dev_alloc(n_c(&p) * es);
  p.bias = dev_alloc((size_t)m * esize(v->bias_type));
  upload(p.type, p.A, p.hA, n_a(&p));
  upload(p.type, p.B, p.hB, n_b(&p));
  upload(v->bias_type, p.bias, p.hbias, (size_t)m);
  p.image = malloc(n_c(&p) * es);
  return p;
}

static void release(problem *p)
{
  cudaFree(p->A); cudaFree(p->B); cudaFree(p->C); cudaFree(p->D); cudaFree(p->bias);
  free(p->hA); free(p->hB); free(p->hC0); free(p->hbias); free(p->image);
}

typedef struct spec {
  float alpha, beta;
  int dev_scalars;        /* alpha, beta in device memory (BLAS entries) */
  int lt;                 /* through cublasLtMatmul (else the BLAS entry) */
  int bias;               /* cuBLASLt EPILOGUE_BIAS */
  int d_is_c;             /* cuBLASLt: D is C */
  int a_shift;            /* A one element past its allocation's start */
  cudaStream_t stream;
} spec;

static void *out_of(const problem *p, const spec *s) { return s->lt && !s->d_is_c ? p->D : p->C; }

/* C as the call finds it (NaN for beta == 0: it must not be read), a D
 * apart from C NaN; the output's bytes are kept to check that padding rows
 * stay as they were. */
static void reset(problem *p, const spec *s)
{
  size_t bytes = n_c(p) * esize(p->type);
  if (s->beta == 0.0f) CU(cudaMemset(p->C, 0xff, bytes));
  else upload(p->type, p->C, p->hC0, n_c(p));
  if (s->lt && !s->d_is_c) CU(cudaMemset(p->D, 0xff, bytes));
  CU(cudaDeviceSynchronize());
  CU(cudaMemcpy(p->image, out_of(p, s), bytes, cudaMemcpyDeviceToHost));
}

static cublasOperation_t op(int t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; }

static cublasStatus_t call_lt(cublasLtHandle_t lt, problem *p, const spec *s, int via_shim,
                              const void *A)
{
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc;
  CB(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  int32_t ta = op(p->ta), tb = op(p->tb);
  CB(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CB(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  if (s->bias) {
    uint32_t epi = CUBLASLT_EPILOGUE_BIAS;
    CB(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    CB(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p->bias,
                                      sizeof p->bias));
  }
  CB(cublasLtMatrixLayoutCreate(&la, p->type, (uint64_t)rows_a(p), (uint64_t)cols_a(p), p->lda));
  CB(cublasLtMatrixLayoutCreate(&lb, p->type, (uint64_t)rows_b(p), (uint64_t)cols_b(p), p->ldb));
  CB(cublasLtMatrixLayoutCreate(&lc, p->type, (uint64_t)p->m, (uint64_t)p->n, p->ldc));
  void *d = out_of(p, s);
  cublasStatus_t st = (via_shim ? cublasLtMatmul : real_lt)(lt, desc, &s->alpha, A, la, p->B, lb,
                                                            &s->beta, p->C, lc, d, lc, NULL, NULL,
                                                            0, s->stream);
  cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);
  return st;
}

/* The call, through the shim or to the real cuBLAS: the BLAS entry of the
 * data type (Sgemm for FP32, GemmEx for BF16) or cuBLASLt. */
static cublasStatus_t call(cublasHandle_t h, cublasLtHandle_t lt, problem *p, const spec *s,
                           int via_shim)
{
  const void *A = (const char *)p->A + (s->a_shift ? esize(p->type) : 0);
  if (s->lt) return call_lt(lt, p, s, via_shim, A);
  CB(cublasSetStream_v2(h, s->stream));
  float *scal = NULL;
  const float *pa = &s->alpha, *pb = &s->beta;
  if (s->dev_scalars) {
    float hs[2] = { s->alpha, s->beta };
    CU(cudaMalloc((void **)&scal, sizeof hs));
    CU(cudaMemcpy(scal, hs, sizeof hs, cudaMemcpyHostToDevice));
    pa = scal; pb = scal + 1;
    CB(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_DEVICE));
  }
  cublasStatus_t st;
  if (p->type == CUDA_R_32F)
    st = (via_shim ? cublasSgemm_v2 : real_sgemm)(h, op(p->ta), op(p->tb), (int)p->m, (int)p->n,
                                                  (int)p->k, pa, A, (int)p->lda, p->B, (int)p->ldb,
                                                  pb, p->C, (int)p->ldc);
  else
    st = (via_shim ? cublasGemmEx : real_gemmex)(h, op(p->ta), op(p->tb), (int)p->m, (int)p->n,
                                                 (int)p->k, pa, A, p->type, (int)p->lda, p->B,
                                                 p->type, (int)p->ldb, pb, p->C, p->type,
                                                 (int)p->ldc, CUBLAS_COMPUTE_32F,
                                                 CUBLAS_GEMM_DEFAULT);
  if (s->dev_scalars) {
    CU(cudaStreamSynchronize(s->stream));
    CB(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_HOST));
    cudaFree(scal);
  }
  return st;
}

/* FP64 reference of the m x n result (ld m), from the host values. */
static double *reference(cublasHandle_t h, const problem *p, const spec *s)
{
  size_t na = n_a(p), nb = n_b(p), nm = (size_t)(p->m * p->n);
  double *a = malloc(na * 8), *b = malloc(nb * 8), *c = malloc(nm * 8);
  for (size_t i = 0; i < na; i++) a[i] = p->hA[i];
  for (size_t i = 0; i < nb; i++) b[i] = p->hB[i];
  for (int64_t j = 0; j < p->n; j++)
    for (int64_t i = 0; i < p->m; i++) c[i + j * p->m] = s->beta != 0 ? p->hC0[i + j * p->ldc] : 0.0;
  double *da, *db, *dc, alpha = s->alpha, beta = s->beta;
  CU(cudaMalloc((void **)&da, na * 8)); CU(cudaMalloc((void **)&db, nb * 8));
  CU(cudaMalloc((void **)&dc, nm * 8));
  CU(cudaMemcpy(da, a, na * 8, cudaMemcpyHostToDevice));
  CU(cudaMemcpy(db, b, nb * 8, cudaMemcpyHostToDevice));
  CU(cudaMemcpy(dc, c, nm * 8, cudaMemcpyHostToDevice));
  CB(cublasSetStream_v2(h, 0));
  CB(real_dgemm(h, op(p->ta), op(p->tb), (int)p->m, (int)p->n, (int)p->k, &alpha, da, (int)p->lda,
                db, (int)p->ldb, &beta, dc, (int)p->m));
  CU(cudaMemcpy(c, dc, nm * 8, cudaMemcpyDeviceToHost));
  if (s->bias)
    for (int64_t j = 0; j < p->n; j++)
      for (int64_t i = 0; i < p->m; i++) c[i + j * p->m] += p->hbias[i];
  cudaFree(da); cudaFree(db); cudaFree(dc);
  free(a); free(b);
  return c;
}

/* Relative Frobenius error of the output against ref; Inf if a padding
 * row below m changed. */
static double error_of(const problem *p, const spec *s, const double *ref)
{
  unsigned char *raw;
  float *h = download(p->type, out_of(p, s), n_c(p), &raw);
  size_t es = esize(p->type);
  double num = 0, den = 0;
  int padding_changed = 0;
  for (int64_t j = 0; j < p->n; j++) {
    for (int64_t i = 0; i < p->m; i++) {
      double r = ref[i + j * p->m], d = (double)h[i + j * p->ldc] - r;
      num += d * d;
      den += r * r;
    }
    size_t row0 = (size_t)(p->m + j * p->ldc) * es, len = (size_t)(p->ldc - p->m) * es;
    padding_changed |= memcmp(raw + row0, p->image + row0, len) != 0;
  }
  free(h); free(raw);
  if (padding_changed) return INFINITY;
  return sqrt(num / (den > 0 ? den : 1));
}

static uint64_t served(const gs_variant *v) { return gs_tally_count(v->name, GS_R_ROUTED); }
static uint64_t checking(void)
{
  return gs_tally_count("cublas", GS_R_SELFCHECK) + gs_tally_count("cublas", GS_R_CHECKING);
}

/* One call through the shim that v serves. A kernel's first call of a
 * class on a context is its self-check (cuBLAS serves it while ours is
 * compared beside it; the next call reads the verdict), so a call that
 * went to the check is made again once it is done. Returns whether the
 * last call was ours; the output is in place. */
static int call_ours(cublasHandle_t h, cublasLtHandle_t lt, problem *p, const spec *s)
{
  for (int attempt = 0; attempt < 3; attempt++) {
    reset(p, s);
    uint64_t ours = served(p->v), checks_before = checking();
    CB(call(h, lt, p, s, 1));
    CU(cudaDeviceSynchronize());
    if (served(p->v) == ours + 1) return 1;
    if (checking() == checks_before) return 0;
  }
  return 0;
}

static int within(const gs_variant *v, double ours, double theirs)
{
  return isfinite(ours) && ours <= v->err_vs_cublas * theirs + v->err_floor;
}

static const char *lay_name(int ta, int tb)
{
  static const char *n[4] = { "NN", "TN", "NT", "TT" };
  return n[ta + 2 * tb];
}

static void describe(char *out, size_t size, const problem *p, const spec *s, const char *label)
{
  snprintf(out, size, "%s %s %lldx%lldx%lld ld+%lld a=%g b=%g%s%s%s%s%s", label,
           lay_name(p->ta, p->tb), (long long)p->m, (long long)p->n, (long long)p->k,
           (long long)(p->ldc - p->m), s->alpha, s->beta, s->dev_scalars ? " dev-scalars" : "",
           s->lt ? " lt" : "", s->bias ? " bias" : "", s->d_is_c ? " D=C" : "",
           s->stream ? " stream" : "");
}

/* Ours through the shim and the real cuBLAS, both against FP64. */
static void check_call(cublasHandle_t h, cublasLtHandle_t lt, problem *p, const spec *s,
                       const char *label)
{
  double *ref = reference(h, p, s);
  int was_ours = call_ours(h, lt, p, s);
  double ours = error_of(p, s, ref);
  reset(p, s);
  CB(call(h, lt, p, s, 0));
  CU(cudaDeviceSynchronize());
  double theirs = error_of(p, s, ref);
  char what[200];
  describe(what, sizeof what, p, s, label);
  if (!was_ours) strncat(what, " (NOT SERVED)", sizeof what - strlen(what) - 1);
  verdict(p->v->name, what, was_ours && within(p->v, ours, theirs), ours, theirs);
  free(ref);
}

/* A call v must leave to cuBLAS: forwarded with reason `why`, and the
 * caller gets exactly the bytes the real cuBLAS gives. */
static void check_forwarded(cublasHandle_t h, cublasLtHandle_t lt, problem *p, const spec *s,
                            gs_reason why, const char *label)
{
  size_t bytes = n_c(p) * esize(p->type);
  reset(p, s);
  uint64_t ours = gs_tally_count(NULL, GS_R_ROUTED), fwd = gs_tally_count("cublas", why);
  CB(call(h, lt, p, s, 1));
  CU(cudaDeviceSynchronize());
  int ok = gs_tally_count(NULL, GS_R_ROUTED) == ours && gs_tally_count("cublas", why) == fwd + 1;
  unsigned char *x = malloc(bytes), *y = malloc(bytes);
  CU(cudaMemcpy(x, out_of(p, s), bytes, cudaMemcpyDeviceToHost));
  reset(p, s);
  CB(call(h, lt, p, s, 0));
  CU(cudaDeviceSynchronize());
  CU(cudaMemcpy(y, out_of(p, s), bytes, cudaMemcpyDeviceToHost));
  ok &= memcmp(x, y, bytes) == 0;
  char what[200], full[260];
  describe(what, sizeof what, p, s, label);
  snprintf(full, sizeof full, "%s: forwarded (%s), cuBLAS's bytes", what, gs_reason_name(why));
  verdict(p->v->name, full, ok, 0, 0);
  free(x); free(y);
}

/* ---- the cases --------------------------------------------------------------- */
static int takes(const gs_variant *v, int ta, int tb) { return (v->layouts >> (ta + 2 * tb)) & 1; }

/* The first layout of NN, TN, NT, TT that v takes (the table has one). */
static void first_layout(const gs_variant *v, int *ta, int *tb)
{
  int l = 0;
  while (l < 3 && !((v->layouts >> l) & 1)) l++;
  *ta = l & 1;
  *tb = l >> 1;
}

/* The base shape: a few tiles in each direction, several K-steps. */
static problem base(const gs_variant *v, int ta, int tb, int64_t pad)
{
  return make(v, ta, tb, 2 * v->m_mult, 3 * v->n_mult, 5 * v->k_mult, pad);
}

static void layouts_and_scalars(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v)
{
  const float alphas[] = { 1.0f, -0.5f, 2.0f }, betas[] = { 0.0f, 1.0f, 0.3f };
  for (int tb = 0; tb < 2; tb++)
    for (int ta = 0; ta < 2; ta++) {
      if (!takes(v, ta, tb)) continue;
      problem p = base(v, ta, tb, 0);
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
          spec s = { .alpha = alphas[a], .beta = betas[b] };
          check_call(h, lt, &p, &s, "layouts");
        }
      spec d1 = { .alpha = 1.5f, .beta = 0.0f, .dev_scalars = 1 };
      spec d2 = { .alpha = -1.0f, .beta = 0.7f, .dev_scalars = 1 };
      check_call(h, lt, &p, &d1, "device scalars");
      check_call(h, lt, &p, &d2, "device scalars");
      release(&p);
      /* sub-matrix views: every leading dimension padded, alignment kept;
       * big enough in m and n that cuBLAS does not split K */
      problem q = make(v, ta, tb, 8 * v->m_mult, 4 * v->n_mult, 8 * v->k_mult,
                       3 * (v->align_bytes / v->elem_bytes));
      spec sv = { .alpha = 1.0f, .beta = 0.5f };
      check_call(h, lt, &q, &sv, "sub-matrix view");
      release(&q);
    }
}

static void lt_epilogues(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v)
{
  int ta = 1, tb = 0;   /* TN, nn.Linear's layout, when the kernel takes it */
  if (!takes(v, ta, tb)) first_layout(v, &ta, &tb);
  problem p = base(v, ta, tb, 0);
  spec plain = { .alpha = 1.0f, .beta = 0.0f, .lt = 1 };
  check_call(h, lt, &p, &plain, "cuBLASLt, D apart, C NaN");
  spec on_c = { .alpha = 0.75f, .beta = 0.5f, .lt = 1, .d_is_c = 1 };
  check_call(h, lt, &p, &on_c, "cuBLASLt");
  if (v->epilogues & GS_EPI_BIAS) {
    spec bias = { .alpha = 1.0f, .beta = 0.0f, .lt = 1, .bias = 1 };
    check_call(h, lt, &p, &bias, "cuBLASLt, D apart, C NaN");
    spec bias_c = { .alpha = -1.0f, .beta = 0.25f, .lt = 1, .bias = 1, .d_is_c = 1 };
    check_call(h, lt, &p, &bias_c, "cuBLASLt");
  }
  release(&p);
}

/* A created (blocking) stream, then capture on a non-blocking one, with a
 * graph replayed twice: the same bytes each time. */
static void streams_and_capture(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v)
{
  int ta, tb;
  first_layout(v, &ta, &tb);
  problem p = base(v, ta, tb, 0);
  cudaStream_t blocking, s;
  CU(cudaStreamCreate(&blocking));
  CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  spec sb = { .alpha = 1.0f, .beta = 0.5f, .stream = blocking };
  check_call(h, lt, &p, &sb, "created stream");

  spec sc = { .alpha = 1.0f, .beta = 0.0f, .stream = s };
  double *ref = reference(h, &p, &sc);
  int warm = call_ours(h, lt, &p, &sc);   /* the class is checked before capture */
  reset(&p, &sc);
  uint64_t before = served(v);
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CB(cublasSetStream_v2(h, s));
  CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CB(call(h, lt, &p, &sc, 1));
  CU(cudaStreamEndCapture(s, &g));
  int captured_ours = served(v) == before + 1;
  CU(cudaGraphInstantiate(&ge, g, 0));
  CU(cudaGraphLaunch(ge, s));
  CU(cudaStreamSynchronize(s));
  double e = error_of(&p, &sc, ref);
  size_t bytes = n_c(&p) * esize(p.type);
  unsigned char *first = malloc(bytes), *second = malloc(bytes);
  CU(cudaMemcpy(first, p.C, bytes, cudaMemcpyDeviceToHost));
  CU(cudaGraphLaunch(ge, s));
  CU(cudaStreamSynchronize(s));
  CU(cudaMemcpy(second, p.C, bytes, cudaMemcpyDeviceToHost));
  reset(&p, &sc);
  CB(call(h, lt, &p, &sc, 0));
  CU(cudaDeviceSynchronize());
  double theirs = error_of(&p, &sc, ref);
  verdict(v->name, "graph capture (global mode), non-blocking stream, replayed twice",
          warm && captured_ours && within(v, e, theirs) && !memcmp(first, second, bytes), e,
          theirs);
  CB(cublasSetStream_v2(h, 0));
  cudaGraphExecDestroy(ge); cudaGraphDestroy(g);
  cudaStreamDestroy(s); cudaStreamDestroy(blocking);
  free(first); free(second); free(ref);
  release(&p);
}

/* The same call twice: the same bytes. */
static void reruns(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v)
{
  int ta, tb;
  first_layout(v, &ta, &tb);
  problem p = make(v, ta, tb, 4 * v->m_mult, 2 * v->n_mult, 16 * v->k_mult, 0);
  spec s = { .alpha = 1.0f, .beta = 0.5f };
  size_t bytes = n_c(&p) * esize(p.type);
  unsigned char *x = malloc(bytes), *y = malloc(bytes);
  int ok = call_ours(h, lt, &p, &s);
  CU(cudaMemcpy(x, p.C, bytes, cudaMemcpyDeviceToHost));
  ok &= call_ours(h, lt, &p, &s);
  CU(cudaMemcpy(y, p.C, bytes, cudaMemcpyDeviceToHost));
  verdict(v->name, "rerun: bit-identical", ok && !memcmp(x, y, bytes), 0, 0);
  free(x); free(y);
  release(&p);
}

/* 8 host threads, each with its own handle and stream, 20 calls each. */
typedef struct thread_job {
  problem p;
  double *ref;
  double err, cublas_err;
  int ok;
} thread_job;

static void *thread_main(void *arg)
{
  thread_job *j = arg;
  cublasHandle_t h;
  cudaStream_t s;
  CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CB(cublasCreate_v2(&h));
  spec sp = { .alpha = 1.0f, .beta = 0.0f, .stream = s };
  for (int i = 0; i < 20; i++) CB(call(h, NULL, &j->p, &sp, 1));
  CU(cudaStreamSynchronize(s));
  j->err = error_of(&j->p, &sp, j->ref);
  j->ok = within(j->p.v, j->err, j->cublas_err);
  cublasDestroy_v2(h);
  cudaStreamDestroy(s);
  return NULL;
}

static void threads(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v)
{
  enum { T = 8 };
  thread_job jobs[T];
  pthread_t t[T];
  int ta, tb;
  first_layout(v, &ta, &tb);
  spec s = { .alpha = 1.0f, .beta = 0.0f };
  int warm = 1;
  for (int i = 0; i < T; i++) {
    jobs[i].p = make(v, ta, tb, v->m_mult * (1 + i % 3), 2 * v->n_mult, v->k_mult * (4 + i), 0);
    jobs[i].ref = reference(h, &jobs[i].p, &s);
    reset(&jobs[i].p, &s);
    CB(call(h, lt, &jobs[i].p, &s, 0));
    CU(cudaDeviceSynchronize());
    jobs[i].cublas_err = error_of(&jobs[i].p, &s, jobs[i].ref);
    warm &= call_ours(h, lt, &jobs[i].p, &s);   /* every path checked first */
    reset(&jobs[i].p, &s);
  }
  uint64_t before = served(v);
  for (int i = 0; i < T; i++) pthread_create(&t[i], NULL, thread_main, &jobs[i]);
  int ok = warm;
  double worst = 0;
  for (int i = 0; i < T; i++) {
    pthread_join(t[i], NULL);
    ok &= jobs[i].ok;
    if (jobs[i].err > worst) worst = jobs[i].err;
    free(jobs[i].ref);
    release(&jobs[i].p);
  }
  verdict(v->name, "8 threads x 20 calls, own handles and streams",
          ok && served(v) == before + T * 20, worst, 0);
}

static int fclass(float x) { return isnan(x) ? 3 : isinf(x) ? (x > 0 ? 1 : 2) : 0; }
static float *a_at(problem *p, int64_t i, int64_t l)
{
  return p->ta ? &p->hA[l + i * p->lda] : &p->hA[i + l * p->lda];
}
static float *b_at(problem *p, int64_t l, int64_t j)
{
  return p->tb ? &p->hB[j + l * p->ldb] : &p->hB[l + j * p->ldb];
}

/* Inf, NaN, and values whose products overflow, in A and B: D has
 * cuBLAS's pattern of Inf and NaN, and its finite part agrees with
 * cuBLAS's to the self-check's bound. */
static void non_finite(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v, int ta, int tb)
{
  problem p = make(v, ta, tb, 2 * v->m_mult, 2 * v->n_mult, 8 * v->k_mult, 0);
  for (int c = 0; c < 40; c++) {
    int64_t i = (c * 37) % p.m, l = (c * 101) % p.k;
    *a_at(&p, i, l) = c % 3 == 0 ? INFINITY : c % 3 == 1 ? -INFINITY : NAN;
  }
  *b_at(&p, 5, 7) = INFINITY;
  *b_at(&p, 9, p.n - 1) = 0.0f;          /* Inf * 0 where a column of A meets it */
  *a_at(&p, 3, 11) = as_type(p.type, 3.0e38f);   /* overflows against B's 2 below: Inf */
  for (int64_t j = 0; j < p.n; j += 3) *b_at(&p, 11, j) = 2.0f;
  *a_at(&p, 6, 13) = as_type(p.type, -2.5e38f);   /* finite, far from the rest */
  upload(p.type, p.A, p.hA, n_a(&p));
  upload(p.type, p.B, p.hB, n_b(&p));
  spec s = { .alpha = 1.0f, .beta = 0.0f };
  size_t n = n_c(&p);
  int was_ours = call_ours(h, lt, &p, &s);
  float *ours = download(p.type, p.C, n, NULL);
  reset(&p, &s);
  CB(call(h, lt, &p, &s, 0));
  CU(cudaDeviceSynchronize());
  float *theirs = download(p.type, p.C, n, NULL);
  long mismatched = 0, nonfinite = 0;
  double num = 0, den = 0;
  for (int64_t j = 0; j < p.n; j++)
    for (int64_t i = 0; i < p.m; i++) {
      size_t x = (size_t)(i + j * p.ldc);
      nonfinite += fclass(theirs[x]) != 0;
      if (fclass(ours[x]) != fclass(theirs[x])) mismatched++;
      else if (!fclass(theirs[x])) {
        double d = (double)ours[x] - theirs[x];
        num += d * d;
        den += (double)theirs[x] * theirs[x];
      }
    }
  double e = sqrt(num / (den > 0 ? den : 1));
  char what[160];
  snprintf(what, sizeof what, "%s Inf/NaN/overflow: cuBLAS's pattern (%ld non-finite, %ld differ)",
           lay_name(ta, tb), nonfinite, mismatched);
  verdict(v->name, what, was_ours && nonfinite > 0 && mismatched == 0 && e <= v->selfcheck_tol, e, 0);
  free(ours); free(theirs);
  release(&p);
}

/* An operand over 2^31 bytes: 64-bit index math. Integer data, exact in
 * the data type and in FP32 sums; checked on sampled elements to the
 * output type's rounding. */
static void huge(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v)
{
  if (getenv("GS_CHECK_QUICK")) {
    printf("skip %s: an operand over 2^31 bytes (GS_CHECK_QUICK)\n", v->name);
    return;
  }
  int ta, tb;
  first_layout(v, &ta, &tb);
  const int64_t m = 32768, n = v->n_mult > 128 ? v->n_mult : 128;
  int64_t k = ((1ll << 31) / v->elem_bytes / m / v->k_mult + 1) * v->k_mult;
  problem p;
  memset(&p, 0, sizeof p);
  p.v = v; p.type = v->data_type; p.ta = ta; p.tb = tb; p.m = m; p.n = n; p.k = k;
  p.lda = rows_a(&p); p.ldb = rows_b(&p); p.ldc = m;
  size_t es = esize(p.type);
  if (cudaMalloc(&p.A, n_a(&p) * es) != cudaSuccess) {
    (void)cudaGetLastError();
    verdict(v->name, "operand over 2^31 bytes (no memory for it)", 0, 0, 0);
    return;
  }
  p.B = dev_alloc(n_b(&p) * es); p.C = dev_alloc(n_c(&p) * es);
  p.hA = malloc(n_a(&p) * 4); p.hB = malloc(n_b(&p) * 4);
  p.image = malloc(n_c(&p) * es);
  for (int64_t l = 0; l < k; l++)
    for (int64_t i = 0; i < m; i++) *a_at(&p, i, l) = (float)((i + 3 * l) % 7 - 3);
  for (int64_t j = 0; j < n; j++)
    for (int64_t l = 0; l < k; l++) *b_at(&p, l, j) = (float)((l + j) % 5 - 2);
  upload(p.type, p.A, p.hA, n_a(&p));
  upload(p.type, p.B, p.hB, n_b(&p));
  spec s = { .alpha = 1.0f, .beta = 0.0f };
  int ok = call_ours(h, lt, &p, &s);
  float *out = download(p.type, p.C, n_c(&p), NULL);
  const double unit = p.type == CUDA_R_16BF ? 0x1p-8 : 0x1p-23;
  const int64_t rows[] = { 0, 1, m / 2 + 5, m - 1 }, cols[] = { 0, 77 % n, n - 1 };
  for (size_t a = 0; a < 4; a++)
    for (size_t b = 0; b < 3; b++) {
      int64_t i = rows[a], j = cols[b];
      double r = 0;
      for (int64_t l = 0; l < k; l++) r += (double)*a_at(&p, i, l) * *b_at(&p, l, j);
      ok &= fabs(out[i + j * m] - r) <= unit * fabs(r) + 1e-6;
    }
  char what[120];
  snprintf(what, sizeof what, "%s A of %.2f GB (64-bit index math), integer data", lay_name(ta, tb),
           (double)(n_a(&p) * es) / 1e9);
  verdict(v->name, what, ok, 0, 0);
  free(out);
  release(&p);
}

/* What v must leave to cuBLAS: a tail, a misaligned A, a layout it lacks. */
static void refusals(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v)
{
  int ta, tb;
  first_layout(v, &ta, &tb);
  spec s = { .alpha = 1.0f, .beta = 0.5f };
  problem tail = make(v, ta, tb, 2 * v->m_mult - 8, 2 * v->n_mult, 2 * v->k_mult, 0);
  check_forwarded(h, lt, &tail, &s, GS_R_SIZE_CLASS, "tail");
  release(&tail);
  problem p = base(v, ta, tb, 0);
  spec shifted = { .alpha = 1.0f, .beta = 0.5f, .a_shift = 1 };
  check_forwarded(h, lt, &p, &shifted, GS_R_ALIGNMENT, "A one element off");
  release(&p);
  for (int l = 0; l < 4; l++)
    if (!((v->layouts >> l) & 1)) {
      problem q = base(v, l & 1, l >> 1, 0);
      check_forwarded(h, lt, &q, &s, GS_R_LAYOUT, "a layout it lacks");
      release(&q);
      break;
    }
}

/* The process's first GEMM, made inside a global-mode stream capture,
 * before any kernel of ours is loaded: the capture must survive whatever
 * the shim does then (it starts loading its kernels on a thread of its
 * own), and the graph must compute the product. */
static void first_call_captured(cublasHandle_t h, const gs_variant *v)
{
  int ta, tb;
  first_layout(v, &ta, &tb);
  problem p = base(v, ta, tb, 0);
  spec s = { .alpha = 1.0f, .beta = 0.0f };
  cudaStream_t st;
  CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  s.stream = st;
  reset(&p, &s);
  double *ref = reference(h, &p, &s);
  CB(cublasSetStream_v2(h, st));
  cudaGraph_t g = NULL;
  cudaGraphExec_t ge = NULL;
  CU(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
  cublasStatus_t cs = call(h, NULL, &p, &s, 1);
  cudaError_t end = cudaStreamEndCapture(st, &g);
  int ok = cs == CUBLAS_STATUS_SUCCESS && end == cudaSuccess && g;
  double e = INFINITY;
  if (ok) {
    CU(cudaGraphInstantiate(&ge, g, 0));
    CU(cudaGraphLaunch(ge, st));
    CU(cudaStreamSynchronize(st));
    e = error_of(&p, &s, ref);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
  } else {
    (void)cudaGetLastError();
  }
  CB(cublasSetStream_v2(h, 0));
  s.stream = 0;
  reset(&p, &s);
  CB(call(h, NULL, &p, &s, 0));
  CU(cudaDeviceSynchronize());
  double theirs = error_of(&p, &s, ref);
  char what[160];
  snprintf(what, sizeof what, "first GEMM of the process in a global-mode capture (cublas %d, end %s)",
           (int)cs, cudaGetErrorName(end));
  verdict(v->name, what, ok && within(v, e, theirs), e, theirs);
  cudaStreamDestroy(st);
  free(ref);
  release(&p);
}

static const gs_route_entry *route_of(const gs_variant *v)
{
  for (size_t i = 0; i < gs_n_routes; i++)
    if (gs_routes[i].kernel == v) return &gs_routes[i];
  return NULL;
}

static void set_env(const char *name, const char *value)
{
  if (value) setenv(name, value, 1); else unsetenv(name);
}

/* Route v's whole class to it: GEMMSHIM_FORCE names it, and a kernel the
 * policy gives only to calls that opted in gets the one opt-in the shim
 * has for it (GEMMSHIM_FP32=tc, math_rules.h). */
static void aim_at(const gs_variant *v)
{
  const gs_route_entry *r = route_of(v);
  set_env("GEMMSHIM_FORCE", v->name);
  set_env("GEMMSHIM_FP32", r && r->opted_in ? "tc" : NULL);
  set_env("CUBLAS_EMULATE_SINGLE_PRECISION", NULL);
  gs_config_reload();
}

static int wanted(const gs_variant *v)
{
  const char *only = getenv("GS_CHECK_KERNELS");
  if (!only || !only[0]) return 1;
  size_t len = strlen(v->name);
  for (const char *s = only; (s = strstr(s, v->name)); s += len)
    if ((s == only || s[-1] == ',') && (s[len] == ',' || s[len] == 0)) return 1;
  return 0;
}

int main(void)
{
  int n = 0, dev = 0;
  struct cudaDeviceProp prop;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("check_kernels: no CUDA GPU available\n");
    return 77;
  }
  CU(cudaGetDevice(&dev));
  CU(cudaGetDeviceProperties(&prop, dev));
  *(void **)&real_sgemm = dlsym(RTLD_NEXT, "cublasSgemm_v2");
  *(void **)&real_dgemm = dlsym(RTLD_NEXT, "cublasDgemm_v2");
  *(void **)&real_gemmex = dlsym(RTLD_NEXT, "cublasGemmEx");
  *(void **)&real_lt = dlsym(RTLD_NEXT, "cublasLtMatmul");
  if (!real_sgemm || !real_dgemm || !real_gemmex || !real_lt) {
    fprintf(stderr, "check_kernels: the real cuBLAS is not reachable\n");
    return 1;
  }
  const gs_variant *runs[64];
  size_t n_runs = 0;
  for (size_t i = 0; i < gs_n_variants && n_runs < 64; i++) {
    const gs_variant *v = gs_variants[i];
    if (!wanted(v)) continue;
    if (v->cc_major != prop.major || v->cc_minor != prop.minor) {
      printf("skip %s: built for sm_%d%d, this GPU is sm_%d%d\n", v->name, v->cc_major,
             v->cc_minor, prop.major, prop.minor);
      continue;
    }
    runs[n_runs++] = v;
  }
  if (!n_runs) {
    printf("check_kernels: no kernel of the table to check on this GPU\n");
    return 77;
  }
  cublasHandle_t h;
  cublasLtHandle_t lt;
  CB(cublasCreate_v2(&h));
  CB(cublasLtCreate(&lt));
  aim_at(runs[0]);
  first_call_captured(h, runs[0]);
  if (!gs_check_wait_loaded()) return 1;
  for (size_t i = 0; i < n_runs; i++) {
    const gs_variant *v = runs[i];
    uint64_t failed_checks = gs_tally_count("cublas", GS_R_SELFCHECK_FAILED);
    aim_at(v);
    printf("== %s\n", v->name);
    layouts_and_scalars(h, lt, v);
    lt_epilogues(h, lt, v);
    streams_and_capture(h, lt, v);
    reruns(h, lt, v);
    threads(h, lt, v);
    for (int l = 0; l < 4; l++)
      if ((v->layouts >> l) & 1) non_finite(h, lt, v, l & 1, l >> 1);
    refusals(h, lt, v);
    huge(h, lt, v);
    verdict(v->name, "no self-check failed",
            gs_tally_count("cublas", GS_R_SELFCHECK_FAILED) == failed_checks, 0, 0);
  }
  cublasLtDestroy(lt);
  cublasDestroy_v2(h);
  printf("check_kernels: %d passed, %d failed\n", checks - failures, failures);
  return failures ? 1 : 0;
}
