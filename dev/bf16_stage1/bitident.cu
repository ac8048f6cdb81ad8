/* bitident: the stage-1 BF16 kernel (dev/bf16_stage1/gemm_bf16_wgmma.cu)
 * against the library's persistent kernel (kernels/gemm_bf16_wgmma_persistent.cu,
 * linked as the library's own object), bit for bit.
 *
 * kernels/gemm_bf16_wgmma_persistent.h promises that for layout TN the two
 * launchers take exactly the same problems (the persistent one also
 * refuses ldd >= 2^39) and give the same bits: the same epilogue operations
 * in the same order, the same k order in the tensor cores. TN is the only
 * layout both launchers take (stage 1 is TN only; the persistent one adds
 * NN and NT and refuses TT), so every case runs TN through both, on the
 * same inputs, and checks:
 *   - both return GS_K_OK;
 *   - the whole D buffers (views with padding rows included) are bitwise
 *     equal;
 *   - D starts NaN-poisoned, and no NaN is left in the m x n view (every
 *     element written; beta == 0 over a NaN C never reads C), and the
 *     padding rows of D (ldd > m) are still the poison (nothing written
 *     outside the view).
 * Also checked, without a launch: the two supports() predicates agree on
 * a grid of TN problems around the class edges; and with a launch: stage 1
 * refuses NN, NT and TT, the persistent launcher TT (GS_K_UNSUPPORTED,
 * D untouched).
 *
 * Reported, never failed on (the kernels do not promise either):
 *   - cuBLAS (cublasGemmEx, bf16 in and out, CUBLAS_COMPUTE_32F), for the
 *     cases without bias: mismatching elements and the relative Frobenius
 *     difference. The stage-1 README records that ours and cuBLAS's are not
 *     bit-identical (cuBLAS rounds twice where beta != 0);
 *   - the persistent kernel's NN and NT on explicitly transposed copies of
 *     A (and B) against stage 1's TN result: the same products in the same
 *     k order, read through MN-major descriptors.
 *
 * Exits 77 without a GPU (or on one that is not sm_90: both kernels are
 * sm_90a only), 0 when every checked case is bitwise identical, 1
 * otherwise. Build: make dev/bf16_stage1/bitident in a build folder (Makefile.am). */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_bf16_wgmma.h"            /* dev/bf16_stage1/ */
#include "gemm_bf16_wgmma_persistent.h" /* kernels/ */

#define CU(x)                                                                           \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                            \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

static int failures, checks;

static void verdict(const char *what, int ok, const char *detail) {
  checks++;
  if (!ok) failures++;
  printf("%-4s %-58s %s\n", ok ? "ok" : "FAIL", what, detail);
}

static const uint16_t kPoison = 0x7fc1; /* a bf16 NaN no arithmetic produces */

/* ------------------------------------------------------------ device helpers */

/* Deterministic values in [-1, 1) (lo = -1) or [lo, lo + 1): a hash of the
 * index, so two buffers filled with one seed are equal. */
__global__ void fill_random(uint16_t *p, size_t n, uint32_t seed, float lo, float span) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint32_t h = (uint32_t)i * 2654435761u ^ (uint32_t)(i >> 32) * 40503u ^ seed * 0x9e3779b9u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    const float v = lo + span * ((float)(h & 0xffffff) / 16777216.f);
    const __nv_bfloat16 b = __float2bfloat16_rn(v);
    p[i] = *reinterpret_cast<const uint16_t *>(&b);
  }
}

__global__ void fill_bits(uint16_t *p, size_t n, uint16_t bits) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = bits;
}

/* out (cols x rows, ld_out) = in (rows x cols, ld_in)^T, column-major. */
__global__ void transpose(const uint16_t *in, int64_t ld_in, int64_t rows, int64_t cols,
                          uint16_t *out, int64_t ld_out) {
  for (int64_t c = blockIdx.y; c < cols; c += gridDim.y)
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < rows;
         r += (int64_t)gridDim.x * blockDim.x)
      out[r * ld_out + c] = in[c * ld_in + r];
}

struct Stats {
  unsigned long long diff;         /* differing elements (padding rows too, unless DIFF_VIEW) */
  unsigned long long nan_x, nan_y; /* NaNs in the m x cols view */
  unsigned long long pad_x, pad_y; /* padding elements that are not the poison (PAD_POISON) */
  double ss_diff, ss_y;            /* sums of squares over the view, both finite */
};
enum { PAD_POISON = 1, DIFF_VIEW = 2 };

/* x and y: ld x cols buffers, each holding an m x cols view in rows 0..m-1. */
__global__ void compare(const uint16_t *x, const uint16_t *y, int64_t m, int64_t ld, int64_t cols,
                        uint16_t poison, int flags, Stats *s) {
  unsigned long long diff = 0, nx = 0, ny = 0, px = 0, py = 0;
  double sd = 0, sy = 0;
  for (int64_t c = blockIdx.y; c < cols; c += gridDim.y)
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < ld;
         r += (int64_t)gridDim.x * blockDim.x) {
      const uint16_t a = x[c * ld + r], b = y[c * ld + r];
      if (r < m) {
        diff += a != b;
        const bool na = (a & 0x7fff) > 0x7f80, nb = (b & 0x7fff) > 0x7f80;
        nx += na;
        ny += nb;
        if (!na && !nb) {
          const double fa = __uint_as_float((uint32_t)a << 16);
          const double fb = __uint_as_float((uint32_t)b << 16);
          sd += (fa - fb) * (fa - fb);
          sy += fb * fb;
        }
      } else {
        if (!(flags & DIFF_VIEW)) diff += a != b;
        if (flags & PAD_POISON) {
          px += a != poison;
          py += b != poison;
        }
      }
    }
  for (int o = 16; o > 0; o >>= 1) {
    diff += __shfl_down_sync(0xffffffffu, diff, o);
    nx += __shfl_down_sync(0xffffffffu, nx, o);
    ny += __shfl_down_sync(0xffffffffu, ny, o);
    px += __shfl_down_sync(0xffffffffu, px, o);
    py += __shfl_down_sync(0xffffffffu, py, o);
    sd += __shfl_down_sync(0xffffffffu, sd, o);
    sy += __shfl_down_sync(0xffffffffu, sy, o);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&s->diff, diff);
    atomicAdd(&s->nan_x, nx);
    atomicAdd(&s->nan_y, ny);
    atomicAdd(&s->pad_x, px);
    atomicAdd(&s->pad_y, py);
    atomicAdd(&s->ss_diff, sd);
    atomicAdd(&s->ss_y, sy);
  }
}

static Stats *stats_dev;

static Stats compare_buffers(const void *x, const void *y, int64_t m, int64_t ld, int64_t cols,
                             int flags) {
  CU(cudaMemset(stats_dev, 0, sizeof(Stats)));
  const int64_t bx = (ld + 255) / 256;
  const dim3 grid((unsigned)(bx < 4 ? bx : 4), (unsigned)(cols < 4096 ? cols : 4096));
  compare<<<grid, 256>>>((const uint16_t *)x, (const uint16_t *)y, m, ld, cols, kPoison, flags,
                         stats_dev);
  CU(cudaGetLastError());
  Stats s;
  CU(cudaMemcpy(&s, stats_dev, sizeof s, cudaMemcpyDeviceToHost));
  return s;
}

static void fill(void *p, size_t n, uint32_t seed, float lo = -1.f, float span = 2.f) {
  fill_random<<<2048, 256>>>((uint16_t *)p, n, seed, lo, span);
  CU(cudaGetLastError());
}

static void poison(void *p, size_t n) {
  fill_bits<<<2048, 256>>>((uint16_t *)p, n, kPoison);
  CU(cudaGetLastError());
}

static void *dev_alloc(size_t bytes) {
  void *p = nullptr;
  CU(cudaMalloc(&p, bytes < 16 ? 16 : bytes));
  return p;
}

/* ------------------------------------------------- supports(): same class */

/* Every TN problem on a grid around the class edges: the two predicates
 * must give the same answer (no launch). */
static void supports_agree(void) {
  const int64_t ms[] = {128, 64, 192, 256, 1024};
  const int64_t ns[] = {256, 128, 384, 512};
  const int64_t ks[] = {64, 32, 96, 128};
  const int64_t ld_off[] = {0, 8, 4, -8, 64};
  const uintptr_t ptr_off[] = {0, 2, 8};
  const uintptr_t base = 1u << 20; /* never dereferenced */
  long n_problems = 0, disagree = 0, accepted = 0;
  for (int64_t m : ms)
    for (int64_t n : ns)
      for (int64_t k : ks)
        for (int64_t oa : ld_off)
          for (int64_t ob : ld_off)
            for (uintptr_t pa : ptr_off)
              for (int check_c = 0; check_c < 2; check_c++)
                for (int64_t oc : ld_off) {
                  if (!check_c && oc) continue;
                  const void *A = (const void *)(base + pa), *B = (const void *)(base + 4096);
                  const void *C = (const void *)(base + 8192 + (oc == 4 ? 2 : 0));
                  const int64_t lda = k + oa, ldb = k + ob, ldc = m + oc;
                  const int s1 = gs_gemm_bf16_wgmma_supports(m, n, k, 1, 0, A, lda, B, ldb, C, ldc,
                                                             check_c);
                  const int s2 = gs_gemm_bf16_wgmma_persistent_supports(m, n, k, 1, 0, A, lda, B,
                                                                        ldb, C, ldc, check_c);
                  n_problems++;
                  accepted += s1 != 0;
                  if ((s1 != 0) != (s2 != 0)) {
                    if (disagree++ < 5)
                      printf("     supports() differ: m %ld n %ld k %ld lda %ld ldb %ld A+%lu "
                             "check_c %d ldc %ld: stage 1 %d, persistent %d\n",
                             (long)m, (long)n, (long)k, (long)lda, (long)ldb,
                             (unsigned long)pa, check_c, (long)ldc, s1, s2);
                  }
                }
  char detail[96];
  snprintf(detail, sizeof detail, "%ld TN problems (%ld accepted), %ld differ", n_problems,
           accepted, disagree);
  verdict("supports(): both predicates take the same TN problems", disagree == 0 && accepted > 0,
          detail);
}

/* ------------------------------------------------------ refused layouts */

static void refusals(cudaStream_t st, int device) {
  const int64_t m = 256, n = 256, k = 128;
  void *A = dev_alloc(m * k * 2), *B = dev_alloc(n * k * 2), *D = dev_alloc(m * n * 2);
  fill(A, m * k, 11);
  fill(B, n * k, 12);
  struct { int ta, tb; const char *name; int stage1, persistent; } lay[] = {
      {0, 0, "NN", 1, 0}, {0, 1, "NT", 1, 0}, {1, 1, "TT", 1, 1}};
  for (const auto &l : lay) {
    gs_kernel_args a;
    memset(&a, 0, sizeof a);
    a.m = m, a.n = n, a.k = k, a.trans_a = l.ta, a.trans_b = l.tb;
    a.A = A, a.lda = 256, a.B = B, a.ldb = 256, a.C = D, a.ldc = m, a.D = D, a.ldd = m;
    a.alpha = 1.f, a.beta = 0.f, a.stream = st, a.device = device;
    for (int which = 0; which < 2; which++) {
      if (!(which ? l.persistent : l.stage1)) continue;
      poison(D, m * n);
      CU(cudaDeviceSynchronize());
      const gs_kstatus s =
          which ? gs_gemm_bf16_wgmma_persistent_launch(&a) : gs_gemm_bf16_wgmma_launch(&a);
      CU(cudaStreamSynchronize(st));
      const Stats t = compare_buffers(D, D, 0, m, n, PAD_POISON); /* all rows are padding */
      char what[96], detail[96];
      snprintf(what, sizeof what, "%s refuses %s", which ? "persistent" : "stage 1", l.name);
      snprintf(detail, sizeof detail, "status %d, %llu elements of D written", (int)s, t.pad_x);
      verdict(what, s == GS_K_UNSUPPORTED && t.pad_x == 0, detail);
    }
  }
  CU(cudaFree(A));
  CU(cudaFree(B));
  CU(cudaFree(D));
}

/* ---------------------------------------------------------------- cases */

enum { FILL_RANDOM = 0, FILL_ZERO_A = 1 };

struct Case {
  const char *what;
  int64_t m, n, k;
  int64_t pad_a, pad_b, pad_c, pad_d; /* ld = stored rows + pad */
  float alpha, beta;
  int bias, dev_scalars, alias; /* alias: D is C (pad_c == pad_d) */
  int c_nan;                    /* C is NaN (beta == 0: never read) */
  int sm_limit;                 /* the persistent launcher's SM-count target */
  int fill;                     /* FILL_ZERO_A: A = +0, B < 0 (signed zeros) */
};

static const Case kCases[] = {
    {"one tile, one k-tile, C NaN", 128, 256, 64, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0},
    {"KT 1, 24 tiles", 1024, 768, 64, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0},
    {"KT 3 < stages, bias", 1024, 768, 192, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0},
    {"KT 5 = stages + 1, beta 0.5, bias", 1024, 768, 320, 0, 0, 0, 0, 1, 0.5f, 1, 0, 0, 0, 0, 0},
    {"alpha 0, beta 1", 1024, 768, 128, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0},
    {"alpha -0.5, beta 1, bias, device scalars", 1536, 1024, 576, 0, 0, 0, 0, -0.5f, 1, 1, 1, 0,
     0, 0, 0},
    {"alpha 2, beta 0.3, D aliases C", 1536, 1024, 576, 0, 0, 0, 0, 2, 0.3f, 0, 0, 1, 0, 0, 0},
    {"beta 0 on the device, C NaN", 1536, 1024, 576, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0},
    {"beta 0, D aliases a NaN C", 1536, 1024, 576, 0, 0, 0, 0, 1, 0, 1, 0, 1, 1, 0, 0},
    {"A = +0, B < 0, alpha -1 (signed zeros)", 1024, 768, 256, 0, 0, 0, 0, -1, 0, 0, 0, 0, 1, 0,
     FILL_ZERO_A},
    {"views ld + 64, a 0.7 b 0.3, device, bias", 1280, 1536, 1024, 64, 64, 64, 64, 0.7f, 0.3f, 1,
     1, 0, 0, 0, 0},
    {"views ld + 8, alias, device, bias, a -2 b 0.5", 1280, 1536, 1024, 8, 8, 8, 8, -2, 0.5f, 1,
     1, 1, 0, 0, 0},
    {"160 tiles (more than one wave)", 2560, 2048, 1024, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0},
    {"160 tiles on 8 SMs (sm_limit), beta 0.5", 2560, 2048, 1024, 0, 0, 0, 0, 1, 0.5f, 0, 0, 0,
     0, 8, 0},
    {"large k", 1024, 768, 8192, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0},
    {"4096^3", 4096, 4096, 4096, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0},
    {"8192^3, C NaN", 8192, 8192, 8192, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0},
    {"8192 tiles, KT 1, bias", 32768, 8192, 64, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0},
    {"k 14336, a 0.7 b 0.5, bias, device, alias", 4096, 8192, 14336, 0, 0, 0, 0, 0.7f, 0.5f, 1, 1,
     1, 0, 0, 0},
    {"A over 2 GiB", 131072, 256, 8448, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0},
    {"B over 2 GiB", 128, 131072, 8448, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0},
    {"C and D over 2 GiB, beta 0.3", 32768, 33024, 64, 0, 0, 0, 0, 1, 0.3f, 0, 0, 0, 0, 0, 0},
};

struct Bufs {
  void *A, *B, *At, *Bt, *C1, *C2, *D1, *D2, *C3, *bias;
  float *scal;
};

static double rel(const Stats &s) {
  return s.ss_y > 0 ? sqrt(s.ss_diff / s.ss_y) : sqrt(s.ss_diff);
}

/* Inputs of the case's outputs: C (random or NaN) and D (NaN-poisoned). */
static void prepare_out(const Case &c, void *C, void *D, size_t nc, size_t nd) {
  if (c.c_nan)
    poison(C, nc);
  else
    fill(C, nc, 3);
  if (!c.alias) poison(D, nd);
}

static gs_kernel_args make_args(const Case &c, const Bufs &b, cudaStream_t st, int device) {
  gs_kernel_args a;
  memset(&a, 0, sizeof a);
  a.m = c.m, a.n = c.n, a.k = c.k, a.trans_a = 1, a.trans_b = 0;
  a.A = b.A, a.lda = c.k + c.pad_a, a.B = b.B, a.ldb = c.k + c.pad_b;
  a.ldc = c.m + c.pad_c, a.ldd = c.m + c.pad_d;
  a.scalars_on_device = c.dev_scalars;
  /* With device scalars the host values are nonsense, so using them shows. */
  a.alpha = c.dev_scalars ? 99.f : c.alpha;
  a.beta = c.dev_scalars ? 99.f : c.beta;
  a.alpha_dev = b.scal, a.beta_dev = b.scal + 1;
  a.bias = c.bias ? b.bias : nullptr;
  a.stream = st;
  a.sm_limit = c.sm_limit;
  a.device = device;
  return a;
}

static void run_case(const Case &c, cudaStream_t st, int device, cublasHandle_t h,
                     int *cublas_equal, int *cublas_compared) {
  const int64_t lda = c.k + c.pad_a, ldb = c.k + c.pad_b, ldc = c.m + c.pad_c,
                ldd = c.m + c.pad_d;
  const size_t na = (size_t)lda * c.m, nb = (size_t)ldb * c.n, nc = (size_t)ldc * c.n,
               nd = (size_t)ldd * c.n;
  Bufs b;
  b.A = dev_alloc(na * 2), b.B = dev_alloc(nb * 2);
  b.C1 = dev_alloc(nc * 2), b.C2 = dev_alloc(nc * 2);
  b.D1 = c.alias ? b.C1 : dev_alloc(nd * 2);
  b.D2 = c.alias ? b.C2 : dev_alloc(nd * 2);
  b.bias = dev_alloc(c.m * 2);
  b.scal = (float *)dev_alloc(2 * sizeof(float));
  if (c.fill == FILL_ZERO_A) {
    CU(cudaMemset(b.A, 0, na * 2));
    fill(b.B, nb, 2, -1.f, 1.f);
  } else {
    fill(b.A, na, 1);
    fill(b.B, nb, 2);
  }
  fill(b.bias, c.m, 4);
  const float hs[2] = {c.alpha, c.beta};
  CU(cudaMemcpy(b.scal, hs, sizeof hs, cudaMemcpyHostToDevice));
  prepare_out(c, b.C1, b.D1, nc, nd);
  prepare_out(c, b.C2, b.D2, nc, nd);
  CU(cudaDeviceSynchronize());

  gs_kernel_args a = make_args(c, b, st, device);
  a.C = b.C1, a.D = b.D1;
  const gs_kstatus s1 = gs_gemm_bf16_wgmma_launch(&a);
  a.C = b.C2, a.D = b.D2;
  const gs_kstatus s2 = gs_gemm_bf16_wgmma_persistent_launch(&a);
  CU(cudaStreamSynchronize(st));
  const int pad = !c.alias ? PAD_POISON : 0; /* aliased: the padding is C's */
  const Stats t = compare_buffers(b.D1, b.D2, c.m, ldd, c.n, pad);
  const bool ok = s1 == GS_K_OK && s2 == GS_K_OK && t.diff == 0 && t.nan_x == 0 &&
                  t.nan_y == 0 && t.pad_x == 0 && t.pad_y == 0;
  char what[160], detail[200];
  snprintf(what, sizeof what, "TN %ldx%ldx%ld %s", (long)c.m, (long)c.n, (long)c.k, c.what);
  snprintf(detail, sizeof detail,
           "status %d/%d, %llu differ, NaN %llu/%llu, padding written %llu/%llu", (int)s1,
           (int)s2, t.diff, t.nan_x, t.nan_y, t.pad_x, t.pad_y);
  verdict(what, ok, detail);
  if (t.diff)
    printf("     relative difference stage 1 vs persistent %.3e\n", rel(t));

  /* Informational: NN and NT (persistent only) on transposed copies,
   * against stage 1's TN result in D1. */
  if (s1 == GS_K_OK) {
    const int64_t lda_t = c.m + c.pad_a, ldb_t = c.n + c.pad_b;
    b.At = dev_alloc((size_t)lda_t * c.k * 2);
    b.Bt = dev_alloc((size_t)ldb_t * c.k * 2);
    transpose<<<dim3(8, 4096), 256>>>((const uint16_t *)b.A, lda, c.k, c.m, (uint16_t *)b.At,
                                      lda_t);
    transpose<<<dim3(8, 4096), 256>>>((const uint16_t *)b.B, ldb, c.k, c.n, (uint16_t *)b.Bt,
                                      ldb_t);
    CU(cudaGetLastError());
    for (int nt = 0; nt < 2; nt++) {
      prepare_out(c, b.C2, b.D2, nc, nd);
      CU(cudaDeviceSynchronize());
      gs_kernel_args l = make_args(c, b, st, device);
      l.trans_a = 0, l.trans_b = nt;
      l.A = b.At, l.lda = lda_t;
      if (nt) l.B = b.Bt, l.ldb = ldb_t;
      l.C = b.C2, l.D = b.D2;
      const gs_kstatus s = gs_gemm_bf16_wgmma_persistent_launch(&l);
      CU(cudaStreamSynchronize(st));
      const Stats u = compare_buffers(b.D1, b.D2, c.m, ldd, c.n, pad);
      printf("     info: persistent %s on transposed copies vs stage-1 TN: status %d, %llu differ"
             ", NaN %llu, rel %.3e%s\n",
             nt ? "NT" : "NN", (int)s, u.diff, u.nan_y, rel(u),
             s == GS_K_OK && u.diff == 0 && u.nan_y == 0 ? " (identical)" : "");
    }
    CU(cudaFree(b.At));
    CU(cudaFree(b.Bt));
  }

  /* Informational: cuBLAS, GemmEx has no bias. C3 = C copied to ld ldd,
   * updated in place (beta == 0: cuBLAS need not read it either). */
  if (!c.bias && s1 == GS_K_OK) {
    b.C3 = dev_alloc(nd * 2);
    if (c.c_nan)
      poison(b.C3, nd);
    else {
      fill(b.C2, nc, 3); /* the original C (C2 may be D2, overwritten) */
      CU(cudaMemcpy2D(b.C3, ldd * 2, b.C2, ldc * 2, c.m * 2, c.n, cudaMemcpyDeviceToDevice));
    }
    CU(cudaDeviceSynchronize());
    const cublasStatus_t cs = cublasGemmEx(
        h, CUBLAS_OP_T, CUBLAS_OP_N, (int)c.m, (int)c.n, (int)c.k, &c.alpha, b.A, CUDA_R_16BF,
        (int)lda, b.B, CUDA_R_16BF, (int)ldb, &c.beta, b.C3, CUDA_R_16BF, (int)ldd,
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    CU(cudaDeviceSynchronize());
    if (cs != CUBLAS_STATUS_SUCCESS) {
      printf("     info: cublasGemmEx status %d (not compared)\n", (int)cs);
    } else {
      /* The view only: C3's padding rows are not ours. */
      const Stats u = compare_buffers(b.D1, b.C3, c.m, ldd, c.n, DIFF_VIEW);
      ++*cublas_compared;
      *cublas_equal += u.diff == 0 && u.nan_y == 0;
      printf("     info: cuBLAS GemmEx vs stage 1: %llu of %lld differ, rel %.3e, cuBLAS NaN %llu\n",
             u.diff, (long long)(c.m * c.n), rel(u), u.nan_y);
    }
    CU(cudaFree(b.C3));
  }

  CU(cudaFree(b.A));
  CU(cudaFree(b.B));
  CU(cudaFree(b.C1));
  CU(cudaFree(b.C2));
  if (!c.alias) {
    CU(cudaFree(b.D1));
    CU(cudaFree(b.D2));
  }
  CU(cudaFree(b.bias));
  CU(cudaFree(b.scal));
}

int main(void) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("bitident: no CUDA GPU available\n");
    return 77;
  }
  int device = 0, major = 0, minor = 0;
  CU(cudaGetDevice(&device));
  CU(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CU(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major != 9 || minor != 0) {
    printf("bitident: both kernels are built for sm_90a; this GPU is sm_%d%d\n", major, minor);
    return 77;
  }
  cudaStream_t st;
  CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CU(cudaMalloc(&stats_dev, sizeof(Stats)));
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    printf("bitident: cublasCreate failed: no cuBLAS comparison\n");
    h = nullptr;
  }

  supports_agree();
  refusals(st, device);
  int cublas_equal = 0, cublas_compared = 0;
  for (const Case &c : kCases) {
    if (c.c_nan && c.beta != 0.f) abort(); /* a case table mistake */
    if (c.alias && c.pad_c != c.pad_d) abort();
    run_case(c, st, device, h, &cublas_equal, &cublas_compared);
  }
  if (h) cublasDestroy(h);
  CU(cudaFree(stats_dev));
  CU(cudaStreamDestroy(st));
  printf("bitident: %d passed, %d failed (cuBLAS, not checked: bitwise equal in %d of %d cases)\n",
         checks - failures, failures, cublas_equal, cublas_compared);
  return failures ? 1 : 0;
}
