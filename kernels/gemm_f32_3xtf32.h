/* FP32 GEMM on Hopper tensor cores with 3xTF32 (big*big + big*small +
 * small*big) and FP32 accumulation of per-K-chunk partials outside the
 * tensor cores (Ootomo-Yokota), layouts TN, NN, NT and TT; see
 * kernels/gemm_f32_3xtf32.cu for the technique and kernels/gemm_f32_3xtf32.md
 * for its design, contract and measurements. sm_90a only. */
#ifndef GS_GEMM_F32_3XTF32_H
#define GS_GEMM_F32_3XTF32_H

#include "gs_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The class gs_gemm_f32_3xtf32_launch handles (everything else is refused
 * with GS_K_UNSUPPORTED, never launched):
 *   layouts (cuBLAS column-major, D = alpha op(A) op(B) + beta C):
 *     TN: trans_a 1, trans_b 0: A stored k x m, lda >= k; B stored k x n,
 *         ldb >= k (both operands contiguous along k, which is what TF32
 *         wgmma reads from shared memory; the others are rearranged there);
 *     NN: trans_a 0, trans_b 0: A stored m x k, lda >= m; B stored k x n,
 *         ldb >= k;
 *     NT: trans_a 0, trans_b 1: A stored m x k, lda >= m; B stored n x k,
 *         ldb >= n;
 *     TT: trans_a 1, trans_b 1: A stored k x m, lda >= k; B stored n x k,
 *         ldb >= n;
 *   A, B, C, D, bias: CUDA_R_32F; alpha/beta FP32;
 *   m % 128 == 0, n % 128 == 0, k % 32 == 0, all > 0 and < 2^31;
 *   A, B, C, D, bias (when used) 16-byte aligned;
 *   lda, ldb, ldc, ldd multiples of 4 elements (16 bytes), at least the
 *     stored rows (TN: lda, ldb >= k; the other layouts above; ldc,
 *     ldd >= m), lda, ldb < 2^38;
 *   any alpha/beta, host values or device pointers (scalars_on_device);
 *   bias: NULL or m FP32 values added to every column (cuBLASLt BIAS:
 *     D = alpha * A^T B + beta * C + bias);
 *   D may alias C exactly (same pointer, same ld).
 * C is read only when beta != 0 (C and ldc are ignored otherwise; with
 * device scalars beta is read on the device and C is checked by the
 * launcher as if it would be read).
 * Numerics: every operand x is split into big = TF32(x) and small =
 * TF32(x - big) (kernels/tf32_split.h); per K-chunk of 32 the tensor cores
 * accumulate big*small + small*big, then big*big, and the chunks are summed
 * in FP32 outside them. Inf/NaN inputs enter big*big only (tf32_split.h), so
 * the Inf/NaN pattern of D is FP32 SGEMM's, with the exceptions its doc
 * lists (kernels/gemm_f32_3xtf32.md: an Inf times a nonzero value of
 * magnitude below 2^-136 gives NaN, SGEMM Inf). Inputs below about 2^-113 in magnitude are
 * carried with TF32 precision only (tf32_split.h).
 * Requires an sm_90 device (the caller checks the arch: the cubin is
 * sm_90a only, so elsewhere the launch fails with GS_K_LAUNCH_FAILED). */
#define GS_GEMM_F32_3XTF32_ALIGN_M 128
#define GS_GEMM_F32_3XTF32_ALIGN_N 128
#define GS_GEMM_F32_3XTF32_ALIGN_K 32
#define GS_GEMM_F32_3XTF32_ALIGN_LD 4 /* elements */

/* 1 if the launcher handles this problem, 0 if it would refuse it. C and ldc
 * are checked only when check_c != 0 (pass beta != 0, or 1 when beta is
 * unknown: device scalars); D/ldd and bias are checked by the launcher
 * itself, with the same alignment rules as C. Same signature as
 * gs_gemm_bf16_wgmma_supports. */
int gs_gemm_f32_3xtf32_supports(int64_t m, int64_t n, int64_t k, int trans_a, int trans_b,
                                const void *A, int64_t lda, const void *B, int64_t ldb,
                                const void *C, int64_t ldc, int check_c);

/* D = alpha * op(A) * op(B) + beta * C (+ bias[m] broadcast along columns),
 * all matrices FP32. Builds two TMA tensor maps on the host per call
 * (cuTensorMapEncodeTiled through cudaGetDriverEntryPointByVersion; libcuda
 * is never linked) and passes them by value as __grid_constant__ kernel
 * parameters. Launches on a->stream; never synchronizes or allocates (graph
 * capture safe); returns GS_K_UNSUPPORTED outside the class above and
 * GS_K_LAUNCH_FAILED when the driver entry point is missing, a tensor map
 * cannot be encoded, or the launch itself fails (nothing enqueued).
 * Deterministic: no atomics, no split-K; the same inputs give the same bits. */
gs_kstatus gs_gemm_f32_3xtf32_launch(const gs_kernel_args *a);

/* Load every kernel of the launcher into the current context (CUDA loads
 * them lazily, and a load may wait for the whole device). 0 on success. */
int gs_gemm_f32_3xtf32_preload(void);

#ifdef __cplusplus
}
#endif
#endif
