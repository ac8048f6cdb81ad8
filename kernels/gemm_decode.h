/* Decode-shaped GEMMs: few tokens against a weight that is read once, so
 * the call is bound by reading the weight. BF16 or FP16 in and out (n <=
 * 64), FP32 accumulation on the tensor cores (mma.sync); or FP32 in and
 * out (n <= 8), strict FP32 arithmetic (FFMA on the CUDA cores). The
 * weight as op(A) in layout TN (F.linear) or NN (x @ W on row-major data),
 * or, for a column-major caller's few rows (x^T W), as op(B) in layout TN
 * or TT, computed as the transpose. Every m and k, tails included. See kernels/gemm_decode.md for the
 * design, the contract and the measurements. sm_90a only.
 *
 * Split-K is summed in a fixed order inside a CTA, and across a thread-block
 * cluster through distributed shared memory: no atomics, no global scratch,
 * the same bits on every run and on every stream. */
#ifndef GS_GEMM_DECODE_H
#define GS_GEMM_DECODE_H

#include "gs_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most tokens the launchers take (n, or m with the weight as op(B)):
 * 16-bit, FP32. */
#define GS_GEMM_DECODE_MAX_N 64
#define GS_GEMM_DECODE_F32_MAX_N 8

/* The class the launchers handle (everything else is refused with
 * GS_K_UNSUPPORTED, never launched), for the 16-bit ones (the FP32 one:
 * the same with 4-byte elements, n <= GS_GEMM_DECODE_F32_MAX_N and lda
 * and ldb multiples of 4 elements, in gs_gemm_decode_f32_supports):
 *   layouts (cuBLAS column-major, D[m,n] = alpha * op(A) op(B) + beta * C),
 *   few columns, 0 < n <= GS_GEMM_DECODE_MAX_N:
 *     TN: trans_a == 1, trans_b == 0: A stored k x m (lda >= k), B k x n;
 *     NN: trans_a == 0, trans_b == 0: A stored m x k (lda >= m), B k x n;
 *   or few rows, 0 < m <= GS_GEMM_DECODE_MAX_N (where n is over it, or the
 *   layout is TT):
 *     TN: A stored k x m (lda >= k), B stored k x n (ldb >= k);
 *     TT: A stored k x m (lda >= k), B stored n x k (ldb >= n);
 *   0 < m, n, k < 2^31;
 *   A and B 16-byte aligned, lda and ldb multiples of 8 elements;
 *   C (when read), D and bias 2-byte aligned; ldc, ldd >= m;
 *   D may alias C exactly (same pointer, same ld).
 * C is read only when beta != 0 (with device scalars, beta is read on the
 * device and C is checked as if it were read). alpha and beta are FP32,
 * host values or device pointers. bias: NULL or m values of the data type
 * added to every column (D = alpha * acc + beta * C + bias, in FP32,
 * rounded once). The first of those that holds is the kernels' form (both
 * hold for TN with m and n small: few columns). */
int gs_gemm_decode_supports(int64_t m, int64_t n, int64_t k, int trans_a, int trans_b,
                            const void *A, int64_t lda, const void *B, int64_t ldb,
                            const void *C, int64_t ldc, int check_c);
int gs_gemm_decode_f32_supports(int64_t m, int64_t n, int64_t k, int trans_a, int trans_b,
                                const void *A, int64_t lda, const void *B, int64_t ldb,
                                const void *C, int64_t ldc, int check_c);

/* A, B, C, D and bias bf16 (first) or fp16 (second). Launch on a->stream,
 * with programmatic dependent launch where the driver has it (read by the
 * preload) unless a->no_pdl; the kernel waits for the previous kernel's
 * memory before touching any. Never synchronize or allocate (graph
 * capture safe). GS_K_UNSUPPORTED
 * outside the class, GS_K_LAUNCH_FAILED when a device query or the launch
 * fails (nothing enqueued). */
gs_kstatus gs_gemm_decode_bf16_launch(const gs_kernel_args *a);
gs_kstatus gs_gemm_decode_f16_launch(const gs_kernel_args *a);
/* The same with A, B, C, D and bias FP32. */
gs_kstatus gs_gemm_decode_f32_launch(const gs_kernel_args *a);

/* The code path a call takes: (4 for few rows, plus the token tile: 16-bit
 * up to 8, 16, 32, 64 tokens; FP32 up to 1, 2, 4, 8: 0 .. 3) times two, plus
 * one when K is split across a cluster. 0 .. 15. */
int gs_gemm_decode_path(const gs_kernel_args *a);
int gs_gemm_decode_f32_path(const gs_kernel_args *a);

/* Load every kernel of the 16-bit launchers (the FP32 one) into the
 * current context, and read whether the driver has programmatic dependent
 * launch. 0 on success. */
int gs_gemm_decode_preload(void);
int gs_gemm_decode_f32_preload(void);

/* Nonzero when the launchers launch with programmatic dependent launch in
 * this process (the driver has it), unless a call says a->no_pdl. */
int gs_gemm_decode_launches_pdl(void);

#ifdef __cplusplus
}
#endif
#endif
