/* GPU check: every kernel of the table (dispatch/variants.h), reached
 * through the shim's cuBLAS entry points, on the contract cases written
 * once here: each layout it takes with alpha/beta variants, beta == 0 over
 * a NaN-poisoned C, device scalars, the cuBLASLt BIAS epilogue with D apart
 * from C and D on C, sub-matrix views, a created stream, graph capture and
 * replay, graphs replayed on two streams at once, eight threads with their
 * own handles, bit-identical reruns, Inf/NaN and overflowing inputs
 * (cuBLAS's pattern), an operand over 2^31 bytes, and the calls it must
 * leave to cuBLAS (tails, n over n_max, misalignment, a layout it lacks)
 * coming back as cuBLAS gives them. A kernel with an n_max is also run on
 * every n up to it, over every code path of its launcher; one that takes
 * every k on odd k and k off the vector width. First of all, the process's
 * first GEMM is made inside a global-mode stream capture.
 *
 * What a kernel takes and how accurate it must be are its table entry's
 * data: its class (types, layouts, multiples, n_max, alignment, epilogues)
 * and err_vs_cublas / err_floor (its error against an FP64 reference at
 * most that multiple of cuBLAS's error on the same call). Shapes are built
 * from the entry's multiples; an entry that takes every size gets natural
 * sizes with tails instead (m_unit, k_unit). The check is linked with the
 * shim's objects: its cuBLAS calls are the shim's wrappers (the real cuBLAS
 * is reached through RTLD_NEXT), and the shim's counters prove that our
 * kernel, not cuBLAS, served each call. GEMMSHIM_FORCE names the kernel
 * under check, so its whole class is routed whatever its speed.
 *   GS_CHECK_KERNELS=a,b  only these kernels (table names)
 *   GS_CHECK_QUICK=1      no operand over 2^31 bytes, and the every-n
 *                         sweep on powers of two and the n after each
 *                         (e.g. under compute-sanitizer)
 * Exits 77 without a GPU, or when no kernel of the table runs on it. */
#define _GNU_SOURCE
#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <library_types.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
 * FP32, BF16 or FP16. Host copies hold floats whose values the data type
 * represents exactly, so the FP64 reference sees what the GPU sees. */
static size_t esize(int type) { return type == CUDA_R_32F ? 4 : 2; }

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

/* To FP16, to nearest even: Inf from 65520 up, subnormals below 2^-14. */
static uint16_t to_f16(float f)
{
  uint32_t u;
  memcpy(&u, &f, 4);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t mag = u & 0x7fffffffu;
  if (mag > 0x7f800000u) return sign | 0x7e00u;      /* quiet NaN */
  if (mag >= 0x477ff000u) return sign | 0x7c00u;     /* 65520 and up: Inf */
  if (mag < 0x38800000u) {                           /* below 2^-14: units of 2^-24 */
    float a;
    memcpy(&a, &mag, 4);
    return sign | (uint16_t)rintf(a * 0x1p24f);     /* exact scaling, rint ties to even */
  }
  uint32_t r = mag - (112u << 23);                   /* exponent bias 127 -> 15 */
  return sign | (uint16_t)((r + 0xfffu + ((r >> 13) & 1u)) >> 13);
}

static float from_f16(uint16_t h)
{
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, mant = h & 0x3ffu, u;
  if (e == 0) {
    float f = ldexpf((float)mant, -24);
    return sign ? -f : f;
  }
  u = sign | (e == 31 ? 0x7f800000u | (mant << 13) : ((e + 112) << 23) | (mant << 13));
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static float as_type(int type, float x)
{
  return type == CUDA_R_16BF ? from_bf16(to_bf16(x)) : type == CUDA_R_16F ? from_f16(to_f16(x)) : x;
}

static void *to_bytes(int type, const float *h, size_t n)
{
  void *b = malloc(n * esize(type));
  if (type == CUDA_R_16BF)
    for (size_t i = 0; i < n; i++) ((uint16_t *)b)[i] = to_bf16(h[i]);
  else if (type == CUDA_R_16F)
    for (size_t i = 0; i < n; i++) ((uint16_t *)b)[i] = to_f16(h[i]);
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
    h[i] = type == CUDA_R_16BF  ? from_bf16(((uint16_t *)b)[i])
           : type == CUDA_R_16F ? from_f16(((uint16_t *)b)[i])
                                : ((float *)b)[i];
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

/* Leading dimensions are multiples of this many elements (the table's
 * alignment): a tail in m or k gets padding rows. */
static int64_t ld_align(const gs_variant *v) { return v->align_bytes / v->elem_bytes; }
/* ldc's: the output's own alignment where the entry has one */
static int64_t ldc_align(const gs_variant *v)
{
  return (v->out_align_bytes ? v->out_align_bytes : v->align_bytes) / v->elem_bytes;
}
static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/* A problem with random data in v's type and the leading dimensions given. */
static problem make_ld(const gs_variant *v, int ta, int tb, int64_t m, int64_t n, int64_t k,
                       int64_t lda, int64_t ldb, int64_t ldc)
{
  problem p;
  memset(&p, 0, sizeof p);
  p.v = v; p.type = v->data_type;
  p.ta = ta; p.tb = tb; p.m = m; p.n = n; p.k = k;
  p.lda = lda; p.ldb = ldb; p.ldc = ldc;
  size_t es = esize(p.type);
  p.hA = malloc(n_a(&p) * 4); p.hB = malloc(n_b(&p) * 4); p.hC0 = malloc(n_c(&p) * 4);
  p.hbias = malloc((size_t)m * 4);
  for (size_t i = 0; i < n_a(&p); i++) p.hA[i] = as_type(p.type, frand());
  for (size_t i = 0; i < n_b(&p); i++) p.hB[i] = as_type(p.type, frand());
  for (size_t i = 0; i < n_c(&p); i++) p.hC0[i] = as_type(p.type, frand());
  for (int64_t i = 0; i < m; i++) p.hbias[i] = as_type(v->bias_type, frand());
  p.A = dev_alloc(n_a(&p) * es); p.B = dev_alloc(n_b(&p) * es);
  p.C = dev_alloc(n_c(&p) * es); p.D = dev_alloc(n_c(&p) * es);
  p.bias = dev_alloc((size_t)m * esize(v->bias_type));
  upload(p.type, p.A, p.hA, n_a(&p));
  upload(p.type, p.B, p.hB, n_b(&p));
  upload(v->bias_type, p.bias, p.hbias, (size_t)m);
  p.image = malloc(n_c(&p) * es);
  return p;
}

/* Every leading dimension the rows plus pad, rounded up to the alignment
 * (ldc to the output's: m itself where it needs none). */
static problem make(const gs_variant *v, int ta, int tb, int64_t m, int64_t n, int64_t k,
                    int64_t pad)
{
  int64_t al = ld_align(v);
  return make_ld(v, ta, tb, m, n, k, round_up((ta ? k : m) + pad, al),
                 round_up((tb ? n : k) + pad, al), round_up(m + pad, ldc_align(v)));
}

/* The sizes the cases build their shapes from, per dimension: the kernel's
 * multiple where it tiles by one (the shapes the tiled kernels have always
 * been checked on); for a kernel that takes every size, a natural size
 * whose multiples mostly have tails (67: m off 8, 16 and 64; 261: k off 8
 * and 32), so that its shapes are not a few elements. */
static int64_t m_unit(const gs_variant *v) { return v->m_mult > 1 ? v->m_mult : 67; }
static int64_t k_unit(const gs_variant *v) { return v->k_mult > 1 ? v->k_mult : 261; }

/* n rounded up to the multiple, held to the largest n of the class. */
static int64_t n_in_class(const gs_variant *v, int64_t n)
{
  n = round_up(n, v->n_mult);
  return v->n_max && n > v->n_max ? v->n_max / v->n_mult * v->n_mult : n;
}

/* count n-units: n_mult, or 5 for a kernel that takes every n. */
static int64_t n_of(const gs_variant *v, int64_t count)
{
  return n_in_class(v, count * (v->n_mult > 1 ? v->n_mult : 5));
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

/* A kernel that needs scratch does not serve a call on a capturing stream
 * (dispatch/launch.c: the allocation would become a memory node of the
 * program's graph): such a call must reach cuBLAS with reason no_scratch.
 * Whether the capture cases expect that, and the count to watch. */
static int captures_forward(const gs_variant *v) { return v->scratch_bytes != NULL; }
static uint64_t captured_calls_seen(const gs_variant *v)
{
  return captures_forward(v) ? gs_tally_count("cublas", GS_R_NO_SCRATCH) : served(v);
}
static uint64_t checking(void)
{
  return gs_tally_count("cublas", GS_R_SELFCHECK) + gs_tally_count("cublas", GS_R_CHECKING);
}

/* One call through the shim that v serves. A kernel's first call of a
 * class on a context is its self-check (cuBLAS serves it while ours is
 * compared beside it; the next call reads the verdict), so a call that
 * went to the check is made again once it is done. Returns whether the
 * last call was ours; the output is in place. */
/* Why the last call that call_ours made went to cuBLAS (from the shim's
 * counters), for the message of a call that was not served. */
static const char *last_forward = "-";

static int call_ours(cublasHandle_t h, cublasLtHandle_t lt, problem *p, const spec *s)
{
  for (int attempt = 0; attempt < 3; attempt++) {
    reset(p, s);
    uint64_t ours = served(p->v), checks_before = checking();
    uint64_t before[GS_R_COUNT];
    for (int r = 0; r < GS_R_COUNT; r++) before[r] = gs_tally_count("cublas", (gs_reason)r);
    CB(call(h, lt, p, s, 1));
    CU(cudaDeviceSynchronize());
    if (served(p->v) == ours + 1) return 1;
    last_forward = "?";
    for (int r = 0; r < GS_R_COUNT; r++)
      if (gs_tally_count("cublas", (gs_reason)r) != before[r]) last_forward = gs_reason_name((gs_reason)r);
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

/* Ours through the shim and the real cuBLAS, both against the FP64
 * reference ref: whether ours served the call (the shim's counters); the
 * two errors in *ours, *theirs. */
static int measure(cublasHandle_t h, cublasLtHandle_t lt, problem *p, const spec *s,
                   const double *ref, double *ours, double *theirs)
{
  int was_ours = call_ours(h, lt, p, s);
  *ours = error_of(p, s, ref);
  reset(p, s);
  CB(call(h, lt, p, s, 0));
  CU(cudaDeviceSynchronize());
  *theirs = error_of(p, s, ref);
  return was_ours;
}

/* A verdict on one call: ours served it and is within the bound. */
static int check_call(cublasHandle_t h, cublasLtHandle_t lt, problem *p, const spec *s,
                      const char *label)
{
  double *ref = reference(h, p, s), ours, theirs;
  int was_ours = measure(h, lt, p, s, ref, &ours, &theirs);
  char what[200];
  describe(what, sizeof what, p, s, label);
  if (!was_ours) {
    char why[64];
    snprintf(why, sizeof why, " (NOT SERVED: %s)", last_forward);
    strncat(what, why, sizeof what - strlen(what) - 1);
  }
  int ok = was_ours && within(p->v, ours, theirs);
  verdict(p->v->name, what, ok, ours, theirs);
  free(ref);
  return ok;
}

/* A call v must leave to cuBLAS: forwarded with reason `why`, and the
 * caller gets exactly what the real cuBLAS gives: its status, and where
 * that is success its bytes (cuBLASLt refuses some of the calls the cases
 * make, e.g. BF16 with D alone off 16 bytes: then the shim must too). */
static void check_forwarded(cublasHandle_t h, cublasLtHandle_t lt, problem *p, const spec *s,
                            gs_reason why, const char *label)
{
  size_t bytes = n_c(p) * esize(p->type);
  reset(p, s);
  uint64_t ours = gs_tally_count(NULL, GS_R_ROUTED), fwd = gs_tally_count("cublas", why);
  cublasStatus_t via_shim = call(h, lt, p, s, 1);
  CU(cudaDeviceSynchronize());
  int ok = gs_tally_count(NULL, GS_R_ROUTED) == ours && gs_tally_count("cublas", why) == fwd + 1;
  unsigned char *x = malloc(bytes), *y = malloc(bytes);
  CU(cudaMemcpy(x, out_of(p, s), bytes, cudaMemcpyDeviceToHost));
  reset(p, s);
  cublasStatus_t real = call(h, lt, p, s, 0);
  CU(cudaDeviceSynchronize());
  CU(cudaMemcpy(y, out_of(p, s), bytes, cudaMemcpyDeviceToHost));
  ok &= via_shim == real && (real != CUBLAS_STATUS_SUCCESS || memcmp(x, y, bytes) == 0);
  char what[200], full[260], answer[40] = "cuBLAS's bytes";
  if (real != CUBLAS_STATUS_SUCCESS)
    snprintf(answer, sizeof answer, "cuBLAS's status %d", (int)real);
  describe(what, sizeof what, p, s, label);
  snprintf(full, sizeof full, "%s: forwarded (%s), %s", what, gs_reason_name(why), answer);
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
  return make(v, ta, tb, 2 * m_unit(v), n_of(v, 3), 5 * k_unit(v), pad);
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
      problem q = make(v, ta, tb, 8 * m_unit(v), n_of(v, 4), 8 * k_unit(v),
                       3 * (v->align_bytes / v->elem_bytes));
      spec sv = { .alpha = 1.0f, .beta = 0.5f };
      check_call(h, lt, &q, &sv, "sub-matrix view");
      release(&q);
    }
}

/* p through cuBLASLt: D apart (C NaN) and on C, with the BIAS epilogue
 * where v takes it; labels start with `prefix`. */
static void lt_cases(cublasHandle_t h, cublasLtHandle_t lt, problem *p, const char *prefix)
{
  char apart[80], on[80];
  snprintf(apart, sizeof apart, "%scuBLASLt, D apart, C NaN", prefix);
  snprintf(on, sizeof on, "%scuBLASLt", prefix);
  spec plain = { .alpha = 1.0f, .beta = 0.0f, .lt = 1 };
  check_call(h, lt, p, &plain, apart);
  spec on_c = { .alpha = 0.75f, .beta = 0.5f, .lt = 1, .d_is_c = 1 };
  check_call(h, lt, p, &on_c, on);
  if (p->v->epilogues & GS_EPI_BIAS) {
    spec bias = { .alpha = 1.0f, .beta = 0.0f, .lt = 1, .bias = 1 };
    check_call(h, lt, p, &bias, apart);
    spec bias_c = { .alpha = -1.0f, .beta = 0.25f, .lt = 1, .bias = 1, .d_is_c = 1 };
    check_call(h, lt, p, &bias_c, on);
  }
}

static void lt_epilogues(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v)
{
  int ta = 1, tb = 0;   /* TN, nn.Linear's layout, when the kernel takes it */
  if (!takes(v, ta, tb)) first_layout(v, &ta, &tb);
  problem p = base(v, ta, tb, 0);
  lt_cases(h, lt, &p, "");
  release(&p);
}

/* A created (blocking) stream, then capture on a non-blocking one, with a
 * graph replayed twice: the same bytes each time (served by ours, or by
 * cuBLAS for a kernel that needs scratch: captures_forward). */
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
  uint64_t before = captured_calls_seen(v), ours_before = served(v);
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CB(cublasSetStream_v2(h, s));
  CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CB(call(h, lt, &p, &sc, 1));
  CU(cudaStreamEndCapture(s, &g));
  int captured_ours = captured_calls_seen(v) == before + 1 &&
                      served(v) == ours_before + !captures_forward(v);
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
  verdict(v->name, captures_forward(v) ? "graph capture (global mode): to cuBLAS (no_scratch), "
                                         "replayed twice"
                                       : "graph capture (global mode), non-blocking stream, replayed twice",
          warm && captured_ours && within(v, e, theirs) && !memcmp(first, second, bytes), e,
          theirs);
  CB(cublasSetStream_v2(h, 0));
  cudaGraphExecDestroy(ge); cudaGraphDestroy(g);
  cudaStreamDestroy(s); cudaStreamDestroy(blocking);
  free(first); free(second); free(ref);
  release(&p);
}

/* p's call twice, served by ours: the same bytes (verdict `what`). */
static void rerun_identical(cublasHandle_t h, cublasLtHandle_t lt, problem *p, const char *what)
{
  spec s = { .alpha = 1.0f, .beta = 0.5f };
  size_t bytes = n_c(p) * esize(p->type);
  unsigned char *x = malloc(bytes), *y = malloc(bytes);
  int ok = call_ours(h, lt, p, &s);
  CU(cudaMemcpy(x, p->C, bytes, cudaMemcpyDeviceToHost));
  ok &= call_ours(h, lt, p, &s);
  CU(cudaMemcpy(y, p->C, bytes, cudaMemcpyDeviceToHost));
  verdict(p->v->name, what, ok && !memcmp(x, y, bytes), 0, 0);
  free(x); free(y);
}

/* The same call twice: the same bytes. */
static void reruns(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v)
{
  int ta, tb;
  first_layout(v, &ta, &tb);
  problem p = make(v, ta, tb, 4 * m_unit(v), n_of(v, 2), 16 * k_unit(v), 0);
  rerun_identical(h, lt, &p, "rerun: bit-identical");
  release(&p);
}

/* tests/gpu/late_producer.cu */
cudaError_t gs_check_late_write(void *dst, const void *src, size_t bytes, const int *go,
                                long long timeout_ns, cudaStream_t st);

/* A producer kernel right before the call that lets the next kernel be
 * scheduled at once (programmatic dependent launch) and writes op(B) only
 * when the host says so, 500 us after the call has returned (the shim
 * never waits on the GPU inside a call; a timeout of 1 s keeps a wrong
 * one from hanging the check): the call must give the bytes of a call
 * made with that B in place. A kernel launched with PDL that did not wait
 * for the previous kernel's memory would have read the old B by then
 * (dev/decode_pdl's control shows it does, on the device); a plain launch
 * waits anyway. */
static void after_late_producer(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v)
{
  int ta, tb;
  first_layout(v, &ta, &tb);
  problem p = base(v, ta, tb, 0);
  cudaStream_t st;
  CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  spec s = { .alpha = 1.0f, .beta = 0.0f, .stream = st };
  size_t bb = n_b(&p) * esize(p.type), cb = n_c(&p) * esize(p.type);
  float *hb2 = malloc(n_b(&p) * 4);
  for (size_t i = 0; i < n_b(&p); i++) hb2[i] = as_type(p.type, frand());
  void *b2 = dev_alloc(bb);
  upload(p.type, b2, hb2, n_b(&p));
  /* the wanted bytes: the call with the new B in place (the class is
   * checked by then) */
  CU(cudaMemcpy(p.B, b2, bb, cudaMemcpyDeviceToDevice));
  int ok = call_ours(h, lt, &p, &s);
  unsigned char *want = malloc(cb), *got = malloc(cb);
  CU(cudaMemcpy(want, out_of(&p, &s), cb, cudaMemcpyDeviceToHost));
  /* the old B back; the producer writes the new one late */
  upload(p.type, p.B, p.hB, n_b(&p));
  reset(&p, &s);
  uint64_t before = served(v);
  int *go = NULL, *go_dev = NULL;
  CU(cudaHostAlloc((void **)&go, sizeof *go, cudaHostAllocMapped));
  __atomic_store_n(go, 0, __ATOMIC_SEQ_CST);
  CU(cudaHostGetDevicePointer((void **)&go_dev, go, 0));
  CU(gs_check_late_write(p.B, b2, bb, go_dev, 1000000000LL, st));
  CB(call(h, lt, &p, &s, 1));
  usleep(500);
  __atomic_store_n(go, 1, __ATOMIC_SEQ_CST);
  CU(cudaStreamSynchronize(st));
  cudaFreeHost(go);
  ok &= served(v) == before + 1;
  CU(cudaMemcpy(got, out_of(&p, &s), cb, cudaMemcpyDeviceToHost));
  /* whether a kernel launched with PDL could have started early here (a
   * plain launch, or PDL off, checks stream order only) */
  int drv = 0;
  const int pdl = gs_config()->pdl && cudaDriverGetVersion(&drv) == cudaSuccess && drv >= 12030;
  verdict(v->name,
          pdl ? "after a producer that lets the call start at once and writes op(B) once the call "
                "has returned: the bytes of a call made after it"
              : "after a producer that writes op(B) late (PDL off or not in the driver: stream "
                "order only): the bytes of a call made after it",
          ok && !memcmp(want, got, cb), 0, 0);
  CB(cublasSetStream_v2(h, 0));
  cudaStreamDestroy(st);
  cudaFree(b2);
  free(hb2); free(want); free(got);
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
    jobs[i].p = make(v, ta, tb, m_unit(v) * (1 + i % 3), n_of(v, 2), k_unit(v) * (4 + i), 0);
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

/* The kind FP64's result r gives an FP32 output where it is decisive (0
 * finite, 1 +Inf, 2 -Inf, 3 NaN), or -1 within 2^-20 of FLT_MAX, where
 * the rounding of either may go both ways. */
static int fp64_kind(double r)
{
  if (isnan(r)) return 3;
  double a = fabs(r);
  if (a > (double)FLT_MAX * (1 + 0x1p-20)) return r > 0 ? 1 : 2;
  if (a >= (double)FLT_MAX * (1 - 0x1p-20)) return -1;
  return 0;
}

/* Inf, NaN, and values whose products overflow, in A and B: D has
 * cuBLAS's pattern of Inf and NaN (or, for a kernel whose entry says
 * nonfinite_as_fp64, the FP64 result's wherever that is decisive; then
 * the outputs where cuBLAS differs from FP64 are counted and shown), and
 * its finite part agrees with cuBLAS's to the self-check's bound. */
static void non_finite(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v, int ta, int tb)
{
  problem p = make(v, ta, tb, 2 * m_unit(v), n_of(v, 2), 8 * k_unit(v), 0);
  for (int c = 0; c < 40; c++) {
    int64_t i = (c * 37) % p.m, l = (c * 101) % p.k;
    *a_at(&p, i, l) = c % 3 == 0 ? INFINITY : c % 3 == 1 ? -INFINITY : NAN;
  }
  *b_at(&p, 5, 7) = INFINITY;
  *b_at(&p, 9, p.n - 1) = 0.0f;          /* Inf * 0 where a column of A meets it */
  /* FP32 and BF16 reach 3e38; FP16 gets the same fractions of its range */
  const float range = p.type == CUDA_R_16F ? 65504.0f / 3.4e38f : 1.0f;
  *a_at(&p, 3, 11) = as_type(p.type, 3.0e38f * range);   /* overflows against B's 2 below: Inf */
  for (int64_t j = 0; j < p.n; j += 3) *b_at(&p, 11, j) = 2.0f;
  *a_at(&p, 6, 13) = as_type(p.type, -2.5e38f * range);   /* finite, far from the rest */
  upload(p.type, p.A, p.hA, n_a(&p));
  upload(p.type, p.B, p.hB, n_b(&p));
  spec s = { .alpha = 1.0f, .beta = 0.0f };
  size_t n = n_c(&p);
  double *ref = v->nonfinite_as_fp64 ? reference(h, &p, &s) : NULL;
  int was_ours = call_ours(h, lt, &p, &s);
  float *ours = download(p.type, p.C, n, NULL);
  reset(&p, &s);
  CB(call(h, lt, &p, &s, 0));
  CU(cudaDeviceSynchronize());
  float *theirs = download(p.type, p.C, n, NULL);
  long mismatched = 0, nonfinite = 0, cublas_off = 0, shown = 0;
  double num = 0, den = 0;
  for (int64_t j = 0; j < p.n; j++)
    for (int64_t i = 0; i < p.m; i++) {
      size_t x = (size_t)(i + j * p.ldc);
      nonfinite += fclass(theirs[x]) != 0;
      int want = ref ? fp64_kind(ref[i + j * p.m]) : fclass(theirs[x]);
      if (ref && want >= 0 && fclass(theirs[x]) != want) cublas_off++;
      if (want >= 0 && fclass(ours[x]) != want) {
        mismatched++;
        if (shown++ < 8)
          printf("     D[%lld, %lld]: ours %a, cuBLAS %a%s%.17g\n", (long long)i, (long long)j,
                 ours[x], theirs[x], ref ? ", FP64 " : "", ref ? ref[i + j * p.m] : 0.0);
      } else if (!fclass(ours[x]) && !fclass(theirs[x])) {
        double d = (double)ours[x] - theirs[x];
        num += d * d;
        den += (double)theirs[x] * theirs[x];
      }
    }
  double e = sqrt(num / (den > 0 ? den : 1));
  char what[160];
  if (ref)
    snprintf(what, sizeof what,
             "%s Inf/NaN/overflow: FP64's pattern (%ld non-finite, %ld differ; cuBLAS off on %ld)",
             lay_name(ta, tb), nonfinite, mismatched, cublas_off);
  else
    snprintf(what, sizeof what, "%s Inf/NaN/overflow: cuBLAS's pattern (%ld non-finite, %ld differ)",
             lay_name(ta, tb), nonfinite, mismatched);
  free(ref);
  verdict(v->name, what, was_ours && nonfinite > 0 && mismatched == 0 && e <= v->selfcheck_tol, e, 0);
  free(ours); free(theirs);
  release(&p);
}

/* The integers of the huge case: x(r, c) = (c_row * r + c_col * c) % mod
 * - mod / 2 over an operand's row and column index. They are exact in every
 * data type, every sum of k of their products is an integer far below 2^24
 * (exact in FP32, in any order), and over 35 consecutive l the products of
 * a row of op(A) and a column of op(B) sum to 0 (7 and 5 are coprime), so a
 * result is below 35 * 6, exact in the output type too. */
typedef struct pattern { int64_t mod, c_row, c_col; } pattern;
static const pattern huge_a = { 7, 1, 3 };   /* op(A)(i, l) = (i + 3 l) % 7 - 3 */
static const pattern huge_b = { 5, 1, 1 };   /* op(B)(l, j) = (l + j) % 5 - 2 */

static int pattern_at(pattern t, int64_t row, int64_t col)
{
  return (int)((t.c_row * row + t.c_col * col) % t.mod - t.mod / 2);
}

/* An operand of t (stored transposed when trans) in the data type, rows x
 * cols with padding rows up to ld zero, written straight from the pattern:
 * no float copy of a 2 GB operand. */
static void *pattern_bytes(int type, pattern t, int trans, int64_t rows, int64_t cols, int64_t ld)
{
  if (trans) t = (pattern){ t.mod, t.c_col, t.c_row };
  uint32_t code[8];   /* the type's bytes of -mod/2 .. mod/2 */
  for (int x = 0; x < t.mod; x++) {
    float f = (float)(x - t.mod / 2);
    void *b = to_bytes(type, &f, 1);
    code[x] = esize(type) == 2 ? *(uint16_t *)b : *(uint32_t *)b;
    free(b);
  }
  size_t es = esize(type);
  unsigned char *out = calloc((size_t)(ld * cols), es);
  for (int64_t c = 0; c < cols; c++) {
    int64_t x = (t.c_col * c) % t.mod;   /* the residue at row 0, then stepped */
    size_t at = (size_t)(c * ld);
    for (int64_t r = 0; r < rows; r++, at++) {
      if (es == 2) ((uint16_t *)out)[at] = (uint16_t)code[x];
      else ((uint32_t *)out)[at] = code[x];
      x += t.c_row;   /* c_row < mod: no division per element of 2 GB */
      if (x >= t.mod) x -= t.mod;
    }
  }
  return out;
}

/* One call with an operand over 2^31 bytes: 64-bit index math. Integer
 * data; checked on sampled elements to the output type's rounding. */
static void huge_call(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v, int ta, int tb,
                      int64_t m, int64_t n, int64_t k, const char *label)
{
  problem p;
  memset(&p, 0, sizeof p);
  p.v = v; p.type = v->data_type; p.ta = ta; p.tb = tb; p.m = m; p.n = n; p.k = k;
  p.lda = round_up(rows_a(&p), ld_align(v)); p.ldb = round_up(rows_b(&p), ld_align(v));
  p.ldc = round_up(m, ld_align(v));
  size_t es = esize(p.type);
  if (cudaMalloc(&p.A, n_a(&p) * es) != cudaSuccess) {
    (void)cudaGetLastError();
    verdict(v->name, "operand over 2^31 bytes (no memory for it)", 0, 0, 0);
    return;
  }
  if (cudaMalloc(&p.B, n_b(&p) * es) != cudaSuccess) {
    (void)cudaGetLastError();
    cudaFree(p.A);
    verdict(v->name, "operand over 2^31 bytes (no memory for it)", 0, 0, 0);
    return;
  }
  p.C = dev_alloc(n_c(&p) * es);
  p.image = malloc(n_c(&p) * es);
  void *a = pattern_bytes(p.type, huge_a, ta, rows_a(&p), cols_a(&p), p.lda);
  CU(cudaMemcpy(p.A, a, n_a(&p) * es, cudaMemcpyHostToDevice));
  free(a);
  void *b = pattern_bytes(p.type, huge_b, tb, rows_b(&p), cols_b(&p), p.ldb);
  CU(cudaMemcpy(p.B, b, n_b(&p) * es, cudaMemcpyHostToDevice));
  free(b);
  spec s = { .alpha = 1.0f, .beta = 0.0f };
  int ok = call_ours(h, lt, &p, &s);
  float *out = download(p.type, p.C, n_c(&p), NULL);
  const double unit = p.type == CUDA_R_16BF ? 0x1p-8 : p.type == CUDA_R_16F ? 0x1p-11 : 0x1p-23;
  const int64_t rows[] = { 0, 1 % m, m > 12 ? m / 2 + 5 : m / 2, m - 1 }, cols[] = { 0, 77 % n, n - 1 };
  for (size_t x = 0; x < 4; x++)
    for (size_t y = 0; y < 3; y++) {
      int64_t i = rows[x], j = cols[y];
      double r = 0;
      for (int64_t l = 0; l < k; l++)
        r += (double)pattern_at(huge_a, i, l) * pattern_at(huge_b, l, j);
      ok &= fabs(out[i + j * p.ldc] - r) <= unit * fabs(r) + 1e-6;
    }
  char what[160];
  const int b_big = n_b(&p) > n_a(&p);
  snprintf(what, sizeof what, "%s %s%s of %.2f GB (64-bit index math), integer data",
           lay_name(ta, tb), label, b_big ? "B" : "A", (double)((b_big ? n_b(&p) : n_a(&p)) * es) / 1e9);
  verdict(v->name, what, ok, 0, 0);
  free(out);
  release(&p);
}

/* An operand over 2^31 bytes. For a kernel with an n_max (few tokens
 * against a weight) it is the weight, op(A): the output layer of a large
 * vocabulary (128256 rows, Llama 3's) with k just past 2^31 bytes (a tail
 * where k may have one), n = 8, in each layout; with few rows (m_max),
 * the weight as op(B), m = 8, in each layout of those. */
static void huge(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v)
{
  if (getenv("GS_CHECK_QUICK")) {
    printf("skip %s: an operand over 2^31 bytes (GS_CHECK_QUICK)\n", v->name);
    return;
  }
  int ta, tb;
  if (!v->n_max) {
    first_layout(v, &ta, &tb);
    const int64_t m = 32768, n = v->n_mult > 128 ? v->n_mult : 128;
    int64_t k = ((1ll << 31) / v->elem_bytes / m / v->k_mult + 1) * v->k_mult;
    huge_call(h, lt, v, ta, tb, m, n, k, "");
    return;
  }
  const int64_t m = round_up(128256, v->m_mult), n = n_in_class(v, 8);
  const int64_t k_step = round_up(256, v->k_mult);
  int64_t k = ((1ll << 31) / v->elem_bytes / m / k_step + 1) * k_step + (v->k_mult == 1 ? 3 : 0);
  char label[80];
  snprintf(label, sizeof label, "weight %lldx%lld, n %lld: ", (long long)m, (long long)k,
           (long long)n);
  for (int l = 0; l < 4; l++)
    if (takes(v, l & 1, l >> 1)) huge_call(h, lt, v, l & 1, l >> 1, m, n, k, label);
  if (!v->m_max) return;
  const int64_t few = v->m_max < 8 ? v->m_max : 8;
  snprintf(label, sizeof label, "few rows, weight %lldx%lld, m %lld: ", (long long)m, (long long)k,
           (long long)few);
  for (int l = 0; l < 4; l++)
    if ((v->layouts_few_rows >> l) & 1) huge_call(h, lt, v, l & 1, l >> 1, few, m, k, label);
}

/* The reason the shim records for a call outside v's class (a layout it
 * lacks, few rows over m_max): the furthest any kernel got (route.c), v
 * included (a layout it takes for few rows only gets as far as its size
 * class), and another kernel of the type that has the layout as far as
 * its size class. -1 when another kernel's class holds the call (then the
 * arguments do not say). */
static int lacking_layout_reason(const problem *p)
{
  gs_gemm g;
  memset(&g, 0, sizeof g);
  g.a_type = g.b_type = g.c_type = g.d_type = p->type;
  g.compute_type = p->type == CUDA_R_32F ? GS_NONE : CUBLAS_COMPUTE_32F;   /* Sgemm, GemmEx */
  g.trans_a = op(p->ta); g.trans_b = op(p->tb);
  g.m = p->m; g.n = p->n; g.k = p->k; g.batch = 1;
  gs_reason why = GS_R_LAYOUT;
  for (size_t i = 0; i < gs_n_variants; i++) {
    /* the route cublaslt's class says nothing where no row names it (route.c) */
    if (gs_variants[i]->runs_cublaslt) continue;
    gs_reason r = gs_variant_fits_args(gs_variants[i], &g);
    if (r == GS_R_ROUTED) return gs_variants[i] == p->v ? GS_R_ROUTED : -1;
    if (r > why) why = r;
  }
  return (int)why;
}

/* What v must leave to cuBLAS: a tail (where it tiles), n over n_max, a
 * misaligned A, the layouts it lacks, ldb off the alignment. */
static void refusals(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v)
{
  int ta, tb;
  first_layout(v, &ta, &tb);
  spec s = { .alpha = 1.0f, .beta = 0.5f };
  if (v->m_mult > 1 || v->n_mult > 1 || v->k_mult > 1) {
    /* m off its multiple, or else k, or else n */
    int64_t m = 2 * m_unit(v), n = n_of(v, 2), k = 2 * k_unit(v);
    if (v->m_mult > 1) m -= v->m_mult > 8 ? 8 : 1;
    else if (v->k_mult > 1) k -= v->k_mult > 8 ? 8 : 1;
    else n -= 1;
    problem tail = make(v, ta, tb, m, n, k, 0);
    check_forwarded(h, lt, &tail, &s, GS_R_SIZE_CLASS, "tail");
    release(&tail);
  }
  if (v->n_max) {
    problem wide = make(v, ta, tb, 2 * m_unit(v), v->n_max + v->n_mult, 5 * k_unit(v), 0);
    check_forwarded(h, lt, &wide, &s, GS_R_SIZE_CLASS, "n over n_max");
    release(&wide);
  }
  if (v->k_min > v->k_mult) {
    problem shallow = make(v, ta, tb, 2 * m_unit(v), n_of(v, 2),
                           (v->k_min - 1) / v->k_mult * v->k_mult, 0);
    check_forwarded(h, lt, &shallow, &s, GS_R_SIZE_CLASS, "k under k_min");
    release(&shallow);
  }
  problem p = base(v, ta, tb, 0);
  spec shifted = { .alpha = 1.0f, .beta = 0.5f, .a_shift = 1 };
  check_forwarded(h, lt, &p, &shifted, GS_R_ALIGNMENT, "A one element off");
  release(&p);
  for (int l = 0; l < 4; l++)
    if (!takes(v, l & 1, l >> 1)) {
      problem q = base(v, l & 1, l >> 1, 0);
      int why = lacking_layout_reason(&q);
      if (why < 0 || why == GS_R_ROUTED)
        printf("skip %s: %s is in %s class\n", v->name, lay_name(l & 1, l >> 1),
               why < 0 ? "another kernel's" : "its few rows'");
      else
        check_forwarded(h, lt, &q, &s, (gs_reason)why, "a layout it lacks");
      release(&q);
    }
  const int64_t al = ld_align(v);
  if (al > 1) {
    const int64_t m = 2 * m_unit(v), n = n_of(v, 3), k = 5 * k_unit(v);
    problem q = make_ld(v, ta, tb, m, n, k, round_up(ta ? k : m, al),
                        round_up(tb ? n : k, al) + 1, round_up(m, al));
    check_forwarded(h, lt, &q, &s, GS_R_ALIGNMENT, "ldb off the alignment");
    release(&q);
  }
}

/* Which outputs shift_outputs moves. */
enum { SHIFT_C = 1, SHIFT_D = 2, SHIFT_BIAS = 4, SHIFT_ALL = 7 };

/* The outputs in `which` one element past their allocations' starts (the
 * room dev_alloc leaves), so off 16 bytes; by -1 undoes it. C and D are
 * written afresh by every call (reset); the bias is uploaded again where
 * it now starts, so the kernels read the values the reference adds. */
static void shift_outputs(problem *p, int which, int by)
{
  if (which & SHIFT_C) p->C = (char *)p->C + by * (ptrdiff_t)esize(p->type);
  if (which & SHIFT_D) p->D = (char *)p->D + by * (ptrdiff_t)esize(p->type);
  if (which & SHIFT_BIAS) {
    p->bias = (char *)p->bias + by * (ptrdiff_t)esize(p->v->bias_type);
    upload(p->v->bias_type, p->bias, p->hbias, (size_t)p->m);
  }
}

/* p with its outputs off 16 bytes: a kernel whose outputs need only their
 * element's alignment serves it (the BLAS entry, and cuBLASLt with D apart,
 * on C and with the bias); any other leaves it to cuBLAS (`alignment`):
 * C off through the BLAS entry, D alone off and the bias alone off
 * through cuBLASLt. */
static void outputs_off_alignment(cublasHandle_t h, cublasLtHandle_t lt, problem *p,
                                  const char *prefix)
{
  const gs_variant *v = p->v;
  const int out = v->out_align_bytes ? v->out_align_bytes : v->align_bytes;
  char label[80], lt_prefix[96];
  snprintf(label, sizeof label, "%sC, D, bias one element off", prefix);
  snprintf(lt_prefix, sizeof lt_prefix, "%s, ", label);
  spec s = { .alpha = 1.0f, .beta = 0.5f };
  if (out <= (int)esize(p->type)) {
    shift_outputs(p, SHIFT_ALL, 1);
    check_call(h, lt, p, &s, label);
    lt_cases(h, lt, p, lt_prefix);
    shift_outputs(p, SHIFT_ALL, -1);
    return;
  }
  shift_outputs(p, SHIFT_C, 1);
  check_forwarded(h, lt, p, &s, GS_R_ALIGNMENT, label);
  shift_outputs(p, SHIFT_C, -1);
  snprintf(label, sizeof label, "%scuBLASLt, D alone one element off", prefix);
  spec d_apart = { .alpha = 1.0f, .beta = 0.5f, .lt = 1 };
  shift_outputs(p, SHIFT_D, 1);
  check_forwarded(h, lt, p, &d_apart, GS_R_ALIGNMENT, label);
  shift_outputs(p, SHIFT_D, -1);
  if (v->epilogues & GS_EPI_BIAS) {
    snprintf(label, sizeof label, "%scuBLASLt, the bias alone one element off", prefix);
    spec bias = { .alpha = 1.0f, .beta = 0.0f, .lt = 1, .bias = 1 };
    shift_outputs(p, SHIFT_BIAS, 1);
    check_forwarded(h, lt, p, &bias, GS_R_ALIGNMENT, label);
    shift_outputs(p, SHIFT_BIAS, -1);
  }
}

static void outputs_off(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v)
{
  int ta = 1, tb = 0;
  if (!takes(v, ta, tb)) first_layout(v, &ta, &tb);
  problem p = base(v, ta, tb, 0);
  outputs_off_alignment(h, lt, &p, "");
  release(&p);
}

/* Few rows (a column-major caller's x^T W: the weight as op(B), computed
 * as the transpose), in each layout v takes so: alpha and beta, device
 * scalars, cuBLASLt with D apart (C NaN) and on C, the BIAS epilogue (m
 * values, one per row of D), a sub-matrix view, a bit-identical rerun.
 * Then what it must leave to cuBLAS: m over m_max, and few rows in a
 * layout it takes for few columns only (n over n_max) or not at all. */
static void few_rows(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v)
{
  const float alphas[] = { 1.0f, -0.5f }, betas[] = { 0.0f, 0.3f };
  const int64_t m = v->m_max < 5 ? v->m_max : 5, n = round_up(1003, v->n_mult),
                k = round_up(1029, v->k_mult);
  for (int l = 0; l < 4; l++) {
    const int ta = l & 1, tb = l >> 1;
    if (!((v->layouts_few_rows >> l) & 1)) continue;
    problem p = make(v, ta, tb, m, n, k, 0);
    for (int a = 0; a < 2; a++)
      for (int b = 0; b < 2; b++) {
        spec sp = { .alpha = alphas[a], .beta = betas[b] };
        check_call(h, lt, &p, &sp, "few rows");
      }
    spec dev = { .alpha = -1.0f, .beta = 0.7f, .dev_scalars = 1 };
    check_call(h, lt, &p, &dev, "few rows, device scalars");
    lt_cases(h, lt, &p, "few rows, ");
    outputs_off_alignment(h, lt, &p, "few rows, ");
    char what[80];
    snprintf(what, sizeof what, "few rows %s: rerun bit-identical", lay_name(ta, tb));
    rerun_identical(h, lt, &p, what);
    release(&p);
    spec s = { .alpha = 1.0f, .beta = 0.5f };
    problem q = make(v, ta, tb, m, 4 * n, 2 * k, 3 * ld_align(v));
    check_call(h, lt, &q, &s, "few rows, sub-matrix view");
    release(&q);
  }
  spec s = { .alpha = 1.0f, .beta = 0.5f };
  for (int l = 0; l < 4; l++) {
    const int ta = l & 1, tb = l >> 1;
    const int few = (v->layouts_few_rows >> l) & 1;
    problem q = make(v, ta, tb, few ? v->m_max + v->m_mult : m, n, k, 0);
    char label[80];
    snprintf(label, sizeof label, few ? "few rows, m over m_max" : "few rows in a layout of few columns or none");
    gs_gemm g;
    memset(&g, 0, sizeof g);
    g.a_type = g.b_type = g.c_type = g.d_type = q.type;
    g.compute_type = q.type == CUDA_R_32F ? GS_NONE : CUBLAS_COMPUTE_32F;
    g.trans_a = op(ta); g.trans_b = op(tb);
    g.m = q.m; g.n = q.n; g.k = q.k; g.batch = 1;
    int why = lacking_layout_reason(&q);
    if (gs_variant_fits_args(v, &g) == GS_R_ROUTED)
      verdict(v->name, label, 0, 0, 0);   /* its class must not take it */
    else if (why < 0)
      printf("skip %s: %s %s is in another kernel's class\n", v->name, label, lay_name(ta, tb));
    else
      check_forwarded(h, lt, &q, &s, (gs_reason)why, label);
    release(&q);
  }
}

/* The code path v's launcher takes for p's call (0 for a launcher of one
 * path): the path the self-check keys its verdicts by. */
static int path_of(const problem *p)
{
  if (!p->v->path_of) return 0;
  gs_kernel_args a;
  memset(&a, 0, sizeof a);
  a.m = p->m; a.n = p->n; a.k = p->k;
  a.trans_a = p->ta; a.trans_b = p->tb;
  a.A = p->A; a.lda = p->lda; a.B = p->B; a.ldb = p->ldb;
  a.C = p->C; a.ldc = p->ldc; a.D = p->C; a.ldd = p->ldc;
  a.alpha = 1.0f;
  CU(cudaGetDevice(&a.device));
  return p->v->path_of(&a);
}

/* The tokens of a sweep: n, or with few rows m. */
typedef struct tokens {
  int few_rows;             /* the sweep is over m (the weight as op(B)) */
  int64_t mult, max;        /* the class's multiple and bound of them */
  unsigned layouts;
} tokens;

static tokens tokens_of(const gs_variant *v, int few_rows)
{
  tokens t = { few_rows, few_rows ? v->m_mult : v->n_mult, few_rows ? v->m_max : v->n_max,
               few_rows ? v->layouts_few_rows : v->layouts };
  t.max = t.max / t.mult * t.mult;
  return t;
}

/* A problem of `rows` weight rows (m, or with few rows n) and `tok` tokens. */
static problem make_tok(const gs_variant *v, const tokens *t, int ta, int tb, int64_t rows,
                        int64_t tok, int64_t k, int64_t pad)
{
  return t->few_rows ? make(v, ta, tb, tok, rows, k, pad) : make(v, ta, tb, rows, tok, k, pad);
}

/* Under GS_CHECK_QUICK the sweep takes tokens at powers of two (where
 * tiles change) and the count after each, and the bound. */
static int swept(const tokens *t, int64_t n)
{
  if (!getenv("GS_CHECK_QUICK") || n == t->max) return 1;
  int64_t before = n - t->mult;
  return (n & (n - 1)) == 0 || (before > 0 && (before & (before - 1)) == 0);
}

static void paths_named(char *out, size_t size, unsigned paths)
{
  size_t at = 0;
  out[0] = 0;
  for (int i = 0; i < 32 && at + 4 < size; i++)
    if (paths >> i & 1) at += (size_t)snprintf(out + at, size - at, "%s%d", at ? "," : "", i);
}

/* The FP64 reference of p with m rows, from ref of the same problem with
 * m_full rows (few rows: op(A)'s first m rows, C's first m rows; ld m). */
static double *ref_rows(const double *ref, int64_t m_full, int64_t m, int64_t n)
{
  double *out = malloc((size_t)(m * n) * sizeof *out);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) out[i + j * m] = ref[i + j * m_full];
  return out;
}

/* Every token count of the class up to its bound (n up to n_max; with few
 * rows, m up to m_max), in each layout v takes so, on three shapes of the
 * weight: a moderate one, few rows with a long K (the launcher splits K
 * across a cluster) and many rows (no split). Each call served by ours
 * (the shim's counters) and within the accuracy bound. Then every code
 * path the launcher takes on a wider probe of shapes (asked of path_of)
 * must have been checked: a path the three shapes missed (the split rule
 * is tuning) is checked on the smallest probe shape that takes it. */
static void every_n(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v, int few_rows)
{
  static const struct { int64_t rows, k; float alpha, beta; } shapes[] = {
    { 1003, 1029, 1.0f, 0.0f },
    { 520, 4100, -1.25f, 0.5f },
    { 40963, 1000, 1.0f, 0.0f },
  };
  static const int64_t probe_rows[] = { 1, 67, 520, 1003, 4099, 20483, 40963 },
                       few_probe_rows[] = { 67, 520, 1003, 4099, 20483, 40963 };
  static const int64_t probe_k[] = { 13, 200, 1029, 4100, 8209 };
  const tokens t = tokens_of(v, few_rows);
  const char *tok_name = few_rows ? "m (few rows)" : "n";
  /* the weight's rows: m, or n with few rows */
  const int64_t rows_mult = few_rows ? v->n_mult : v->m_mult;
  for (int l = 0; l < 4; l++) {
    int ta = l & 1, tb = l >> 1;
    if (!((t.layouts >> l) & 1)) continue;
    unsigned probed = 0, swept_paths = 0, taken = 0;
    struct { int64_t m, n, k; } smallest[32];   /* per path, the probe shape of least m n k */
    /* few rows in TN: weights of more rows than n_max (fewer take few
     * columns); TT has no few-column form */
    const int few_tn = few_rows && ta == 1 && tb == 0;
    const int64_t *probe = few_tn ? few_probe_rows : probe_rows;
    const size_t n_probe = few_tn ? sizeof few_probe_rows / sizeof *few_probe_rows
                                  : sizeof probe_rows / sizeof *probe_rows;
    for (size_t a = 0; a < n_probe; a++)
      for (size_t b = 0; b < sizeof probe_k / sizeof *probe_k; b++)
        for (int64_t n = t.mult; n <= t.max; n += t.mult) {
          problem q;
          memset(&q, 0, sizeof q);
          q.v = v; q.ta = ta; q.tb = tb;
          int64_t rows = round_up(probe[a], rows_mult);
          q.m = few_rows ? n : rows; q.n = few_rows ? rows : n;
          q.k = round_up(probe_k[b], v->k_mult);
          q.lda = round_up(rows_a(&q), ld_align(v)); q.ldb = round_up(rows_b(&q), ld_align(v));
          q.ldc = round_up(q.m, ldc_align(v));
          int path = path_of(&q);
          if (!(probed >> path & 1) ||
              q.m * q.n * q.k < smallest[path].m * smallest[path].n * smallest[path].k) {
            smallest[path].m = q.m; smallest[path].n = q.n; smallest[path].k = q.k;
          }
          probed |= 1u << path;
        }
    for (size_t sh = 0; sh < sizeof shapes / sizeof *shapes; sh++) {
      problem p = make_tok(v, &t, ta, tb, round_up(shapes[sh].rows, rows_mult), t.max,
                           round_up(shapes[sh].k, v->k_mult), 0);
      spec s = { .alpha = shapes[sh].alpha, .beta = shapes[sh].beta };
      /* at the bound; its first n columns (its first m rows: ref_rows) are
       * the reference for fewer */
      double *ref = reference(h, &p, &s), worst = 0, worst_theirs = 0;
      const int64_t m_full = p.m;
      int failed = 0;
      for (int64_t n = t.mult; n <= t.max; n += t.mult) {
        if (!swept(&t, n)) continue;
        if (few_rows) p.m = n; else p.n = n;
        double *r = few_rows ? ref_rows(ref, m_full, n, p.n) : ref;
        double ours, theirs;
        int was_ours = measure(h, lt, &p, &s, r, &ours, &theirs);
        if (few_rows) free(r);
        if (was_ours && within(v, ours, theirs)) swept_paths |= 1u << path_of(&p);
        if (!was_ours || !within(v, ours, theirs)) {
          failed++;
          printf("     %s %lld: %s%s, ours %.3e cublas %.3e\n", tok_name, (long long)n,
                 was_ours ? "over the bound" : "NOT SERVED: ", was_ours ? "" : last_forward, ours,
                 theirs);
        }
        if (!(ours <= worst)) { worst = ours; worst_theirs = theirs; }
      }
      if (few_rows) p.m = m_full; else p.n = t.max;
      char what[200];
      if (few_rows)
        snprintf(what, sizeof what, "every m, few rows%s: %s (%lld..%lld)x%lldx%lld a=%g b=%g, %d failed",
                 getenv("GS_CHECK_QUICK") ? " (quick)" : "", lay_name(ta, tb), (long long)t.mult,
                 (long long)t.max, (long long)p.n, (long long)p.k, s.alpha, s.beta, failed);
      else
        snprintf(what, sizeof what, "every n%s: %s %lldx(%lld..%lld)x%lld a=%g b=%g, %d failed",
                 getenv("GS_CHECK_QUICK") ? " (quick)" : "", lay_name(ta, tb), (long long)p.m,
                 (long long)t.mult, (long long)t.max, (long long)p.k, s.alpha, s.beta, failed);
      verdict(v->name, what, failed == 0, worst, worst_theirs);
      free(ref);
      release(&p);
    }
    taken = swept_paths;
    for (int path = 0; path < 32; path++)
      if ((probed & ~taken) >> path & 1) {
        problem p = make(v, ta, tb, smallest[path].m, smallest[path].n, smallest[path].k, 0);
        spec s = { .alpha = 1.0f, .beta = 0.5f };
        char label[40];
        snprintf(label, sizeof label, "every %s: path %d", few_rows ? "m" : "n", path);
        if (check_call(h, lt, &p, &s, label) && path_of(&p) == path) taken |= 1u << path;
        release(&p);
      }
    char all[100], got[100], what[300];
    paths_named(all, sizeof all, probed);
    paths_named(got, sizeof got, swept_paths);
    snprintf(what, sizeof what, "every %s: %s every path of the probe checked (%s; swept %s)",
             tok_name, lay_name(ta, tb), all, got);
    verdict(v->name, what, (probed & ~taken) == 0, 0, 0);
  }
}

/* k odd and k off the 16-byte vector (lda padded up to the alignment),
 * down to a k below one vector (or, for a kernel with a k_min, the odd k
 * just over it); m off 8 (NN: A's columns not a whole number of vectors),
 * and a few rows with a long K; in each layout. */
static void k_tails(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v)
{
  static const struct { int64_t m, n, k; } shapes[] = {
    { 1001, 1, 13 }, { 1001, 13, 1023 }, { 1001, 64, 4095 }, { 1001, 8, 4100 }, { 37, 17, 4095 },
  };
  for (int l = 0; l < 4; l++) {
    int ta = l & 1, tb = l >> 1;
    if (!takes(v, ta, tb)) continue;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
      int64_t k = shapes[i].k < v->k_min ? v->k_min + shapes[i].k : shapes[i].k;
      problem p = make(v, ta, tb, round_up(shapes[i].m, v->m_mult), n_in_class(v, shapes[i].n), k,
                       0);
      spec s = { .alpha = 1.0f, .beta = i % 2 ? 0.5f : 0.0f };
      check_call(h, lt, &p, &s, "k tail");
      release(&p);
    }
  }
}

/* The same call captured on two streams into two graphs, each writing its
 * own output, then both replayed 50 times on their streams at once (no
 * sync in between): both outputs correct, and the bytes of a call made
 * outside any graph (the kernel's answer does not depend on the stream or
 * on what runs beside it; for a kernel whose captured calls go to cuBLAS,
 * cuBLAS's own call's bytes). */
static void graphs_on_two_streams(cublasHandle_t h, cublasLtHandle_t lt, const gs_variant *v)
{
  enum { REPLAYS = 50 };
  int ta, tb;
  first_layout(v, &ta, &tb);
  /* the reruns' shape: a long K (split, where the launcher splits) */
  problem p = make(v, ta, tb, 4 * m_unit(v), n_of(v, 2), 16 * k_unit(v), 0);
  problem q = p;   /* the same operands, an output of its own */
  size_t bytes = n_c(&p) * esize(p.type);
  q.C = dev_alloc(bytes);
  q.image = malloc(bytes);
  spec s = { .alpha = 1.0f, .beta = 0.0f };   /* a replay overwrites, never accumulates */
  double *ref = reference(h, &p, &s);
  int ok = call_ours(h, lt, &p, &s);          /* the class checked, and the bytes outside a graph */
  if (captures_forward(v)) {
    reset(&p, &s);
    CB(call(h, lt, &p, &s, 0));
    CU(cudaDeviceSynchronize());
  }
  unsigned char *solo = malloc(bytes), *got = malloc(bytes);
  CU(cudaMemcpy(solo, p.C, bytes, cudaMemcpyDeviceToHost));

  problem *out[2] = { &p, &q };
  cudaStream_t st[2];
  cudaGraph_t g[2];
  cudaGraphExec_t ge[2];
  uint64_t before = captured_calls_seen(v);
  for (int i = 0; i < 2; i++) {
    CU(cudaStreamCreateWithFlags(&st[i], cudaStreamNonBlocking));
    spec si = s;
    si.stream = st[i];
    reset(out[i], &si);
    CU(cudaStreamBeginCapture(st[i], cudaStreamCaptureModeGlobal));
    CB(call(h, lt, out[i], &si, 1));
    CU(cudaStreamEndCapture(st[i], &g[i]));
    CU(cudaGraphInstantiate(&ge[i], g[i], 0));
  }
  ok &= captured_calls_seen(v) == before + 2;
  for (int r = 0; r < REPLAYS; r++)
    for (int i = 0; i < 2; i++) CU(cudaGraphLaunch(ge[i], st[i]));
  CU(cudaStreamSynchronize(st[0]));
  CU(cudaStreamSynchronize(st[1]));
  double worst = 0;
  for (int i = 0; i < 2; i++) {
    double e = error_of(out[i], &s, ref);
    if (!(e <= worst)) worst = e;
    CU(cudaMemcpy(got, out[i]->C, bytes, cudaMemcpyDeviceToHost));
    ok &= memcmp(got, solo, bytes) == 0;
  }
  CB(cublasSetStream_v2(h, 0));
  reset(&p, &s);
  CB(call(h, lt, &p, &s, 0));
  CU(cudaDeviceSynchronize());
  double theirs = error_of(&p, &s, ref);
  char what[160];
  snprintf(what, sizeof what, "2 graphs replayed %dx on 2 streams at once: bytes of a plain call",
           REPLAYS);
  verdict(v->name, what, ok && within(v, worst, theirs), worst, theirs);
  for (int i = 0; i < 2; i++) {
    cudaGraphExecDestroy(ge[i]);
    cudaGraphDestroy(g[i]);
    cudaStreamDestroy(st[i]);
  }
  cudaFree(q.C);
  free(q.image); free(solo); free(got); free(ref);
  release(&p);
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
 * policy gives only to calls that opted in gets the user's opt-in that
 * selects it (GEMMSHIM_FP32=tc or tc-fast, math_rules.h): the first value
 * under which the policy's opt-in answers yes for a plain FP32 call. */
static void aim_at(const gs_variant *v)
{
  static const char *const fp32_modes[] = { "tc", "tc-fast" };
  const gs_route_entry *r = route_of(v);
  set_env("GEMMSHIM_FORCE", v->name);
  set_env("GEMMSHIM_FP32", NULL);
  set_env("CUBLAS_EMULATE_SINGLE_PRECISION", NULL);
  gs_config_reload();
  if (!r || !r->opted_in) return;
  gs_gemm g;
  memset(&g, 0, sizeof g);
  g.a_type = g.b_type = g.c_type = g.d_type = CUDA_R_32F;
  g.compute_type = GS_NONE;
  g.math_mode = CUBLAS_DEFAULT_MATH;
  g.state_loaded = 1;
  for (size_t i = 0; i < sizeof fp32_modes / sizeof *fp32_modes; i++) {
    set_env("GEMMSHIM_FP32", fp32_modes[i]);
    gs_config_reload();
    if (r->opted_in(&g) == 1) return;
  }
  printf("note %s: no GEMMSHIM_FP32 value opts it in; checked as forced only\n", v->name);
  set_env("GEMMSHIM_FP32", NULL);
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

typedef struct battery {
  cublasHandle_t h;
  cublasLtHandle_t lt;
  const gs_variant *v;
} battery;

/* The contract cases for one kernel. */
static void *run_battery(void *arg)
{
  const battery *b = arg;
  cublasHandle_t h = b->h;
  cublasLtHandle_t lt = b->lt;
  const gs_variant *v = b->v;
  uint64_t failed_checks = gs_tally_count("cublas", GS_R_SELFCHECK_FAILED);
  aim_at(v);
  printf("== %s\n", v->name);
  layouts_and_scalars(h, lt, v);
  lt_epilogues(h, lt, v);
  streams_and_capture(h, lt, v);
  reruns(h, lt, v);
  after_late_producer(h, lt, v);
  threads(h, lt, v);
  for (int l = 0; l < 4; l++)
    if ((v->layouts >> l) & 1) non_finite(h, lt, v, l & 1, l >> 1);
  refusals(h, lt, v);
  outputs_off(h, lt, v);
  huge(h, lt, v);
  graphs_on_two_streams(h, lt, v);
  if (v->n_max) every_n(h, lt, v, 0);
  if (v->m_max) {
    few_rows(h, lt, v);
    every_n(h, lt, v, 1);
  }
  if (v->k_mult == 1) k_tails(h, lt, v);
  verdict(v->name, "no self-check failed",
          gs_tally_count("cublas", GS_R_SELFCHECK_FAILED) == failed_checks, 0, 0);
  return NULL;
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
    if (v->runs_cublaslt) {
      printf("skip %s: cuBLASLt's own algorithms, checked by check_lt_route\n", v->name);
      continue;
    }
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
    /* Each kernel's cases on a thread of their own: the shim counts calls
     * per thread in a bounded table, and one thread making every distinct
     * call of all the batteries overflows it (a call counted nowhere would
     * read as not served). */
    battery b = { h, lt, runs[i] };
    pthread_t t;
    if (pthread_create(&t, NULL, run_battery, &b) != 0 || pthread_join(t, NULL) != 0) {
      fprintf(stderr, "check_kernels: no thread for %s\n", runs[i]->name);
      return 1;
    }
  }
  cublasLtDestroy(lt);
  cublasDestroy_v2(h);
  printf("check_kernels: %d passed, %d failed\n", checks - failures, failures);
  return failures ? 1 : 0;
}
