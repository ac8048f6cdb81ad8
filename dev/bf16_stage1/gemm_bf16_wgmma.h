/* BF16 GEMM on Hopper tensor cores (TMA + wgmma, warp-specialized, mbarrier
 * pipeline), layout TN, FP32 accumulation, BF16 output; see
 * dev/bf16_stage1/gemm_bf16_wgmma.cu for the technique and
 * dev/bf16_stage1/README.md for why it is kept and what it measured.
 * sm_90a only. Not in the library; gs_kernel.h is in kernels/ (-I kernels). */
#ifndef GS_GEMM_BF16_WGMMA_H
#define GS_GEMM_BF16_WGMMA_H

#include "gs_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The class gs_gemm_bf16_wgmma_launch handles (everything else is refused
 * with GS_K_UNSUPPORTED, never launched):
 *   layout TN only: trans_a == 1, trans_b == 0 (cuBLAS column-major:
 *     D[m,n] = alpha * A^T B + beta * C, A stored k x m with lda >= k,
 *     B stored k x n with ldb >= k: both operands contiguous along k);
 *   A, B, C, D, bias: CUDA_R_16BF (bf16); accumulation and alpha/beta FP32;
 *   m % 128 == 0, n % 256 == 0, k % 64 == 0, all > 0 and < 2^31;
 *   A, B, C, D, bias (when used) 16-byte aligned;
 *   lda, ldb, ldc, ldd multiples of 8 elements (16 bytes), at least the
 *     stored rows (lda, ldb >= k; ldc, ldd >= m), lda, ldb < 2^39 / 2;
 *   any alpha/beta, host values or device pointers (scalars_on_device);
 *   bias: NULL or m bf16 values added to every column (cuBLASLt BIAS:
 *     D = alpha * A^T B + beta * C + bias);
 *   D may alias C exactly (same pointer, same ld).
 * C is read only when beta != 0 (C and ldc are ignored otherwise; with
 * device scalars beta is read on the device and C is checked by the
 * launcher as if it would be read).
 * Requires an sm_90 device (the caller checks the arch: the cubin is
 * sm_90a only, so elsewhere the launch fails with GS_K_LAUNCH_FAILED). */
#define GS_GEMM_BF16_WGMMA_ALIGN_M 128
#define GS_GEMM_BF16_WGMMA_ALIGN_N 256
#define GS_GEMM_BF16_WGMMA_ALIGN_K 64
#define GS_GEMM_BF16_WGMMA_ALIGN_LD 8 /* elements */

/* 1 if the launcher handles this problem, 0 if it would refuse it. C and ldc
 * are checked only when check_c != 0 (pass beta != 0, or 1 when beta is
 * unknown: device scalars); D/ldd and bias are checked by the launcher
 * itself, with the same alignment rules as C. */
int gs_gemm_bf16_wgmma_supports(int64_t m, int64_t n, int64_t k, int trans_a, int trans_b,
                                const void *A, int64_t lda, const void *B, int64_t ldb,
                                const void *C, int64_t ldc, int check_c);

/* D = alpha * op(A) * op(B) + beta * C (+ bias[m] broadcast along columns),
 * all matrices bf16. Builds two TMA tensor maps on the host per call
 * (cuTensorMapEncodeTiled through cudaGetDriverEntryPointByVersion; libcuda
 * is never linked) and passes them by value as __grid_constant__ kernel
 * parameters. Launches on a->stream; never synchronizes or allocates (graph
 * capture safe); returns GS_K_UNSUPPORTED outside the class above and
 * GS_K_LAUNCH_FAILED when the driver entry point is missing, a tensor map
 * cannot be encoded, or the launch itself fails (nothing enqueued).
 * Deterministic: no atomics, no split-K; the same inputs give the same bits. */
gs_kstatus gs_gemm_bf16_wgmma_launch(const gs_kernel_args *a);

#ifdef __cplusplus
}
#endif
#endif
