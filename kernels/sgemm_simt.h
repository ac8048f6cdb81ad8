/* FP32 SIMT SGEMM (cp.async multi-stage, 128x128 block tile or a per-layout
 * 256-wide one on large grids, 8x16 per thread) for Hopper; see
 * kernels/sgemm_simt.cu for the technique and kernels/sgemm_simt.md for
 * the design, contract and measurements. */
#ifndef GS_SGEMM_SIMT_H
#define GS_SGEMM_SIMT_H

#include "gs_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The class gs_sgemm_simt_launch handles (everything else is refused with
 * GS_K_UNSUPPORTED, never launched):
 *   m % 128 == 0, n % 128 == 0, k % 16 == 0, m, n, k > 0 (m, n, k <= 2^31);
 *   A, B, C, D, bias (when used) 16-byte aligned;
 *   lda, ldb, ldc, ldd multiples of 4 and at least the stored rows
 *     (lda >= (trans_a ? k : m), ldb >= (trans_b ? n : k), ldc, ldd >= m);
 *   any of NN, TN, NT, TT; any alpha/beta, host or device scalars;
 *   D may alias C exactly (same pointer, same ld).
 * C is read only when beta != 0 (C and ldc are ignored otherwise). */
#define GS_SGEMM_SIMT_ALIGN_MN 128
#define GS_SGEMM_SIMT_ALIGN_K 16

/* 1 if the launcher handles this problem, 0 if it would refuse it. C and ldc
 * are checked only when check_c != 0 (pass beta != 0 or "unknown": device
 * scalars); D/ldd and bias are checked by the launcher itself, with the same
 * alignment rules as C. */
int gs_sgemm_simt_supports(int64_t m, int64_t n, int64_t k, int trans_a,
                           int trans_b, const void *A, int64_t lda,
                           const void *B, int64_t ldb, const void *C,
                           int64_t ldc, int check_c);

/* D = alpha * op(A) * op(B) + beta * C (+ bias[m] broadcast along columns).
 * Launches on a->stream; never synchronizes or allocates (graph capture
 * safe); returns GS_K_UNSUPPORTED outside the class above and
 * GS_K_LAUNCH_FAILED when the launch itself fails (nothing enqueued). */
gs_kstatus gs_sgemm_simt_launch(const gs_kernel_args *a);

/* The code path the launcher takes for a problem it supports: 0 the
 * 128 x 128 tile, 1 the wide tile. */
int gs_sgemm_simt_path(const gs_kernel_args *a);

/* Load every kernel of the launcher into the current context (CUDA loads
 * them lazily, and a load may wait for the whole device). 0 on success. */
int gs_sgemm_simt_preload(void);

#ifdef __cplusplus
}
#endif
#endif
