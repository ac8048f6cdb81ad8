/* gemm_f32_bf16x6.cu: the launcher of the BF16x6 FP32 GEMM (contract:
 * gemm_f32_bf16x6.h; device code: gemm_f32_bf16x6_device.cuh; design and
 * numbers: gemm_f32_bf16x9.md). Order of the launches, each split wanting
 * the other operand's Inf/NaN flag: A's exponents and flag, then B's split
 * (finding B's exponents and flag on the way when B is K-major), then A's
 * split, then the main kernel. */
#include "gemm_f32_bf16x6.h"

#include <atomic>

#include "gemm_f32_bf16x6_device.cuh"
#include "gs_launch.h"
#include "sm90_host.h"

namespace gs_bf16x6 {

/* Where a call's scratch goes: A's parts, B's parts, then the scales. */
struct Layout {
  size_t parts_a, parts_b, scales, total;
};
static Layout layout_of(int64_t m, int64_t n, int64_t k) {
  const size_t kp = (size_t)parts_kp((int)k);
  Layout l;
  l.parts_a = 0;
  l.parts_b = l.parts_a + 3 * (size_t)m * kp * 2;
  l.scales = l.parts_b + 3 * (size_t)n * kp * 2;
  l.total = l.scales + ((size_t)m + (size_t)n + 2) * sizeof(int);
  return l;
}

/* cudaFuncSetAttribute once per context (gemm_f32_3xtf32.cu's scheme): not
 * a stream operation, so safe while a stream captures. */
static constexpr int kMaxDevices = 64;
static std::atomic<uint64_t> attr_ctx[kMaxDevices];

static cudaError_t ensure_attributes(int dev, uint64_t ctx_id) {
  const bool cacheable = ctx_id != 0 && dev >= 0 && dev < kMaxDevices;
  if (cacheable && attr_ctx[dev].load(std::memory_order_acquire) == ctx_id) return cudaSuccess;
  const cudaError_t e = cudaFuncSetAttribute(
      bf16x6_presplit_ab_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kSmemABBytes);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return e;
  }
  if (cacheable) attr_ctx[dev].store(ctx_id, std::memory_order_release);
  return cudaSuccess;
}

/* Blocks enough for a few per SM on the passes that spread k over blocks. */
static constexpr int kSpreadBlocks = 528;

/* An MN-major operand's exponents: the largest bits by slices of k, then
 * turned into exponents. */
static bool exps_mn(const float *x, int k, int64_t ld, int runs, int *exps, int *flag,
                    cudaStream_t st) {
  gs_launch_begin();
  if (cudaMemsetAsync(exps, 0, (size_t)runs * sizeof(int), st) != cudaSuccess) {
    (void)cudaGetLastError();   /* read: not left for the caller's next call */
    return false;
  }
  const int bx = (runs + 31) / 32, slices = std::max(1, std::min(k / 64, kSpreadBlocks / bx));
  run_bits_mn<<<dim3(bx, slices), 256, 0, st>>>(x, k, ld, runs, exps, flag);
  if (gs_launch_end(0) != GS_K_OK) return false;
  exps_of_bits<<<(runs + 255) / 256, 256, 0, st>>>(exps, runs);
  return gs_launch_end(0) == GS_K_OK;
}

static dim3 grid_mn(int runs, int kp) {
  const int bx = (runs + 63) / 64;
  return dim3(bx, std::max(1, std::min(kp / 64, kSpreadBlocks / bx)));
}

}  // namespace gs_bf16x6

using namespace gs_bf16x6;

extern "C" size_t gs_gemm_f32_bf16x6_scratch_bytes(int64_t m, int64_t n, int64_t k) {
  if (m <= 0 || n <= 0 || k <= 0 || k >= ((int64_t)1 << 31)) return 0;
  return layout_of(m, n, k).total;
}

extern "C" size_t gs_gemm_f32_bf16x6_scratch_of(const gs_kernel_args *a) {
  return a ? gs_gemm_f32_bf16x6_scratch_bytes(a->m, a->n, a->k) : 0;
}

extern "C" int gs_gemm_f32_bf16x6_preload(void) {
  const void *const kernels[] = {(const void *)bf16x6_presplit_ab_kernel,
                                 (const void *)run_exponents, (const void *)presplit,
                                 (const void *)run_bits_mn,   (const void *)exps_of_bits,
                                 (const void *)presplit_mn};
  for (const void *k : kernels) {
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, k) != cudaSuccess) {
      (void)cudaGetLastError();
      return -1;
    }
  }
  return 0;
}

extern "C" int gs_gemm_f32_bf16x6_supports(int64_t m, int64_t n, int64_t k, int trans_a,
                                           int trans_b, const void *A, int64_t lda,
                                           const void *B, int64_t ldb, const void *C,
                                           int64_t ldc, int check_c) {
  const int64_t lim = (int64_t)1 << 31, ldal = GS_GEMM_F32_BF16X6_ALIGN_LD;
  if (m <= 0 || n <= 0 || k < GS_GEMM_F32_BF16X6_MIN_K || k >= lim - 64) return 0;
  /* part rows are addressed as part * m + row in an int */
  if (3 * m >= lim || 3 * n >= lim) return 0;
  if (m % GS_GEMM_F32_BF16X6_ALIGN_M || n % GS_GEMM_F32_BF16X6_ALIGN_N) return 0;
  if ((trans_a != 0 && trans_a != 1) || (trans_b != 0 && trans_b != 1)) return 0;
  if (!A || !B || !aligned16(A) || !aligned16(B)) return 0;
  if (lda % ldal || ldb % ldal || lda < (trans_a ? k : m) || ldb < (trans_b ? n : k)) return 0;
  if (lda >= ((int64_t)1 << 38) || ldb >= ((int64_t)1 << 38)) return 0;
  if (check_c && (!C || !aligned16(C) || ldc % ldal || ldc < m)) return 0;
  return 1;
}

extern "C" gs_kstatus gs_gemm_f32_bf16x6_launch(const gs_kernel_args *a) {
  if (!a) return GS_K_UNSUPPORTED;
  const int check_c = a->scalars_on_device ? 1 : (a->beta != 0.f);
  if (!gs_gemm_f32_bf16x6_supports(a->m, a->n, a->k, a->trans_a, a->trans_b, a->A, a->lda, a->B,
                                   a->ldb, a->C, a->ldc, check_c))
    return GS_K_UNSUPPORTED;
  if (!a->D || !aligned16(a->D) || a->ldd % GS_GEMM_F32_BF16X6_ALIGN_LD || a->ldd < a->m)
    return GS_K_UNSUPPORTED;
  if (a->bias && !aligned16(a->bias)) return GS_K_UNSUPPORTED;
  if (a->scalars_on_device && (!a->alpha_dev || !a->beta_dev)) return GS_K_UNSUPPORTED;
  /* D may alias C only exactly (same start, same ld) */
  if (check_c && a->C == a->D && a->ldc != a->ldd) return GS_K_UNSUPPORTED;
  if (!a->scratch || !aligned16(a->scratch)) return GS_K_UNSUPPORTED;
  PFN_cuTensorMapEncodeTiled_v12000 enc = get_encode();
  if (!enc) return GS_K_LAUNCH_FAILED;

  const int m = (int)a->m, n = (int)a->n, k = (int)a->k, kp = parts_kp(k);
  const Layout lay = layout_of(m, n, k);
  unsigned char *const base = static_cast<unsigned char *>(a->scratch);
  uint32_t *const parts_a = reinterpret_cast<uint32_t *>(base + lay.parts_a);
  uint32_t *const parts_b = reinterpret_cast<uint32_t *>(base + lay.parts_b);
  int *const exps_a = reinterpret_cast<int *>(base + lay.scales), *const exps_b = exps_a + m;
  int *const flag_a = exps_b + n, *const flag_b = flag_a + 1;
  const float *const A = static_cast<const float *>(a->A);
  const float *const B = static_cast<const float *>(a->B);
  const bool a_kmajor = a->trans_a == 1, b_kmajor = a->trans_b == 0;

  CUtensorMap tmA, tmB;
  if (!encode_parts(enc, &tmA, parts_a, kp, 3 * (int64_t)m) ||
      !encode_parts(enc, &tmB, parts_b, kp, 3 * (int64_t)n))
    return GS_K_LAUNCH_FAILED;
  if (ensure_attributes(a->device, a->ctx_id) != cudaSuccess) return GS_K_LAUNCH_FAILED;

  /* Every launch before the main kernel writes the scratch only: a failure
   * there leaves D untouched (GS_K_LAUNCH_FAILED, the call falls back). */
  cudaStream_t st = a->stream;
  gs_launch_begin();
  if (cudaMemsetAsync(flag_a, 0, 2 * sizeof(int), st) != cudaSuccess) {
    (void)cudaGetLastError();   /* read: not left for the caller's next call */
    return GS_K_LAUNCH_FAILED;
  }
  if (a_kmajor) {
    run_exponents<<<(m + 7) / 8, 256, 0, st>>>(A, k, a->lda, m, exps_a, flag_a);
    if (gs_launch_end(0) != GS_K_OK) return GS_K_LAUNCH_FAILED;
  } else if (!exps_mn(A, k, a->lda, m, exps_a, flag_a, st)) {
    return GS_K_LAUNCH_FAILED;
  }
  if (b_kmajor) {
    gs_launch_begin();
    presplit<<<(n + 7) / 8, 256, 0, st>>>(B, k, a->ldb, n, kp, parts_b, exps_b, flag_b, flag_a);
  } else {
    if (!exps_mn(B, k, a->ldb, n, exps_b, flag_b, st)) return GS_K_LAUNCH_FAILED;
    gs_launch_begin();
    presplit_mn<<<grid_mn(n, kp), 256, 0, st>>>(B, k, a->ldb, n, kp, parts_b, exps_b, flag_a);
  }
  if (gs_launch_end(0) != GS_K_OK) return GS_K_LAUNCH_FAILED;
  gs_launch_begin();
  if (a_kmajor)
    presplit<<<(m + 7) / 8, 256, 0, st>>>(A, k, a->lda, m, kp, parts_a, exps_a, nullptr, flag_b);
  else
    presplit_mn<<<grid_mn(m, kp), 256, 0, st>>>(A, k, a->lda, m, kp, parts_a, exps_a, flag_b);
  if (gs_launch_end(0) != GS_K_OK) return GS_K_LAUNCH_FAILED;

  Params p{};
  p.m = m, p.n = n, p.k = k;
  p.C = static_cast<const float *>(a->C);
  p.D = static_cast<float *>(a->D);
  p.ldc = a->ldc, p.ldd = a->ldd;
  p.alpha = a->alpha, p.beta = a->beta;
  p.alpha_dev = a->scalars_on_device ? a->alpha_dev : nullptr;
  p.beta_dev = a->scalars_on_device ? a->beta_dev : nullptr;
  p.bias = static_cast<const float *>(a->bias);
  p.scales = exps_a;
  const unsigned grid = (unsigned)((a->m / BM) * (a->n / BN));
  gs_launch_begin();
  bf16x6_presplit_ab_kernel<<<grid, 384, kSmemABBytes, st>>>(tmA, tmB, p);
  return gs_launch_end(0);
}
