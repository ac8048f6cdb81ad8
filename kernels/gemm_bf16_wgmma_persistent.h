/* BF16 GEMM on Hopper tensor cores, persistent grid (TMA + wgmma,
 * warp-specialized, mbarrier pipeline, epilogue through shared memory and
 * TMA stores, overlapped with the next tile's loads), layouts TN, NN and
 * NT, FP32 accumulation, BF16 output; see
 * kernels/gemm_bf16_wgmma_persistent.cu for the technique and
 * kernels/gemm_bf16_wgmma_persistent.md for the design, the contract and
 * the measurements. sm_90a only.
 *
 * For layout TN the class and contract are those of the stage-1 kernel kept
 * as its reference (dev/bf16_stage1/gemm_bf16_wgmma.h): both refuse exactly
 * the same TN problems (plus ldd >= 2^39 here: D is written by TMA), and
 * they give the same bits (dev/bf16_stage1/bitident checks it). */
#ifndef GS_GEMM_BF16_WGMMA_PERSISTENT_H
#define GS_GEMM_BF16_WGMMA_PERSISTENT_H

#include "gs_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The class gs_gemm_bf16_wgmma_persistent_launch handles (everything else is
 * refused with GS_K_UNSUPPORTED, never launched):
 *   layouts (cuBLAS column-major, D[m,n] = alpha * op(A) op(B) + beta * C):
 *     TN: trans_a == 1, trans_b == 0: A stored k x m (lda >= k), B stored
 *         k x n (ldb >= k);
 *     NN: trans_a == 0, trans_b == 0: A stored m x k (lda >= m), B stored
 *         k x n (ldb >= k);
 *     NT: trans_a == 0, trans_b == 1: A stored m x k (lda >= m), B stored
 *         n x k (ldb >= n);
 *     TT is refused;
 *   A, B, C, D, bias: CUDA_R_16BF (bf16); accumulation and alpha/beta FP32;
 *   m % 128 == 0, n % 256 == 0, k % 64 == 0, all > 0 and < 2^31;
 *   A, B, C, D, bias (when used) 16-byte aligned;
 *   lda, ldb, ldc, ldd multiples of 8 elements (16 bytes), at least the
 *     stored rows (as above; ldc, ldd >= m), all < 2^39 elements
 *     (TMA strides are below 2^40 bytes);
 *   any alpha/beta, host values or device pointers (scalars_on_device);
 *   bias: NULL or m bf16 values added to every column (cuBLASLt BIAS:
 *     D = alpha * op(A) op(B) + beta * C + bias; any of the three layouts);
 *   D may alias C exactly (same pointer, same ld).
 * C is read only when beta != 0 (C and ldc are ignored otherwise; with
 * device scalars beta is read on the device and C is checked by the
 * launcher as if it would be read).
 * Numerics: FP32 accumulation in the tensor cores, then
 * alpha*acc (+ beta*C with one FMA) (+ bias), rounded once (RN) to bf16: the
 * same operations in the same order as the stage-1 kernel, and the same k
 * order inside the tensor cores: for TN the two give the same bits.
 * Requires an sm_90 device (the caller checks the arch: the cubin is
 * sm_90a only, so elsewhere the launch fails with GS_K_LAUNCH_FAILED). */
#define GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_M 128
#define GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_N 256
#define GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_K 64
#define GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_LD 8 /* elements */

/* 1 if the launcher handles this problem, 0 if it would refuse it. C and ldc
 * are checked only when check_c != 0 (pass beta != 0, or 1 when beta is
 * unknown: device scalars); D/ldd and bias are checked by the launcher
 * itself, with the same alignment rules as C. */
int gs_gemm_bf16_wgmma_persistent_supports(int64_t m, int64_t n, int64_t k, int trans_a,
                                           int trans_b, const void *A, int64_t lda,
                                           const void *B, int64_t ldb, const void *C,
                                           int64_t ldc, int check_c);

/* D = alpha * op(A) * op(B) + beta * C (+ bias[m] broadcast along columns),
 * all matrices bf16. Launches min(tiles, SMs) persistent CTAs (one per SM;
 * the SM count is read once per device, the device being the stream's), each
 * walking 128 x 256 output tiles in a grouped (L2-friendly) order. Builds
 * three or four TMA tensor maps on the host per call (A, B and D; C only
 * when it may be read) through cuTensorMapEncodeTiled, looked up with
 * cudaGetDriverEntryPointByVersion (libcuda is never linked), and passes
 * them by value as __grid_constant__ kernel parameters. Launches on
 * a->stream; never synchronizes or allocates (graph capture safe); returns
 * GS_K_UNSUPPORTED outside the class above and GS_K_LAUNCH_FAILED when the
 * driver entry point is missing, a tensor map cannot be encoded, a device
 * query fails, or the launch itself fails (nothing enqueued).
 * Deterministic: no atomics, no split-K; every output element is computed
 * by one CTA in a fixed k order; the same inputs give the same bits. */
gs_kstatus gs_gemm_bf16_wgmma_persistent_launch(const gs_kernel_args *a);

/* Load every kernel of the launcher into the current context (CUDA loads
 * them lazily, and a load may wait for the whole device). 0 on success. */
int gs_gemm_bf16_wgmma_persistent_preload(void);

#ifdef __cplusplus
}
#endif
#endif
