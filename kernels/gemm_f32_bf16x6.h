/* FP32 GEMM on Hopper tensor cores from three BF16 parts per value (BF16x6:
 * the six products of parts whose indices sum to at most 2), each row of
 * op(A) and column of op(B) scaled by a power of two first, FP32 TwoSum
 * accumulation outside the tensor cores; layouts TN, NN, NT and TT. Its
 * error meets issue 21's bound of SGEMM's (median at most 1.0x, worst at
 * most 1.1x, over seeds) on every input class the issue names (randn,
 * wide-range, uniform [0, 1)) from K = 512 on, as measured; the Inf/NaN
 * pattern is FP64's.
 * Device code: kernels/gemm_f32_bf16x6_device.cuh; design, numerics,
 * contract and measurements: kernels/gemm_f32_bf16x9.md. sm_90a only. */
#ifndef GS_GEMM_F32_BF16X6_H
#define GS_GEMM_F32_BF16X6_H

#include <stddef.h>

#include "gs_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The class gs_gemm_f32_bf16x6_launch handles (everything else is refused
 * with GS_K_UNSUPPORTED, never launched):
 *   layouts (cuBLAS column-major, D = alpha op(A) op(B) + beta C): TN, NN,
 *     NT and TT; A stored k x m (trans_a 1) or m x k (0), B stored k x n
 *     (trans_b 0) or n x k (1), leading dimensions at least the stored rows;
 *   A, B, C, D, bias: CUDA_R_32F; alpha/beta FP32, host values or device
 *     pointers (scalars_on_device);
 *   m % 128 == 0, n % 128 == 0, k >= 512 (any k from there; at K = 256
 *     and 384 its error on wide-range data came to 1.1-1.3x SGEMM's in
 *     some layouts and seeds: gemm_f32_bf16x9.md), all < 2^31;
 *   A, B, C, D, bias (when used) 16-byte aligned; lda, ldb, ldc, ldd
 *     multiples of 4 elements, lda, ldb < 2^38;
 *   bias: NULL or m FP32 values added to every column;
 *   D may alias C exactly (same pointer, same ld);
 *   scratch: gs_gemm_f32_bf16x6_scratch_bytes() bytes of device memory,
 *     16-byte aligned, free for this call's work on a->stream.
 * C is read only when beta != 0 (with device scalars, beta is read on the
 * device and C checked by the launcher as if it would be read).
 * Numerics (kernels/gemm_f32_bf16x9.md): the split is exact, the products
 * left out are about 2^-24 of the leading one, hi*hi accumulates per K-step
 * of 32 on the tensor cores and the steps are summed by TwoSum in FP32;
 * the scales are exact powers of two, so subnormal and huge inputs keep
 * their precision while the output is in FP32's range.
 * Requires an sm_90 device (the cubin is sm_90a only: elsewhere the launch
 * fails with GS_K_LAUNCH_FAILED). */
#define GS_GEMM_F32_BF16X6_ALIGN_M 128
#define GS_GEMM_F32_BF16X6_ALIGN_N 128
#define GS_GEMM_F32_BF16X6_MIN_K 512
#define GS_GEMM_F32_BF16X6_ALIGN_LD 4 /* elements */

/* 1 if the launcher handles this problem, 0 if it would refuse it (C and
 * ldc checked only when check_c != 0; D, bias, scalars and scratch are
 * checked by the launcher itself). Same signature as
 * gs_gemm_f32_3xtf32_supports. */
int gs_gemm_f32_bf16x6_supports(int64_t m, int64_t n, int64_t k, int trans_a, int trans_b,
                                const void *A, int64_t lda, const void *B, int64_t ldb,
                                const void *C, int64_t ldc, int check_c);

/* Bytes of scratch a call of these dimensions needs: both operands' parts
 * (6 bytes a value, k rounded up to 64) and the scales (m + n + 2 ints). */
size_t gs_gemm_f32_bf16x6_scratch_bytes(int64_t m, int64_t n, int64_t k);

/* The same for a launcher's arguments (the kernel table's scratch_bytes). */
size_t gs_gemm_f32_bf16x6_scratch_of(const gs_kernel_args *a);

/* D = alpha * op(A) * op(B) + beta * C (+ bias[m] broadcast along columns),
 * all matrices FP32, in five launches on a->stream: the scales and parts of
 * each operand into a->scratch (two to four small kernels and a memset),
 * then the main kernel. Never synchronizes or allocates (graph capture
 * safe); returns GS_K_UNSUPPORTED outside the class above (or without
 * scratch) and GS_K_LAUNCH_FAILED when the driver entry point is missing, a
 * tensor map cannot be encoded, or a launch fails: the launches before the
 * main kernel write only the scratch, so D is untouched then.
 * Deterministic: the same inputs give the same bits (the pre-passes'
 * atomics are max and or). */
gs_kstatus gs_gemm_f32_bf16x6_launch(const gs_kernel_args *a);

/* Load every kernel of the launcher into the current context. 0 on success. */
int gs_gemm_f32_bf16x6_preload(void);

#ifdef __cplusplus
}
#endif
#endif
