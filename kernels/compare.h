/* Compare two matrices on the device, deterministically: what A/B mode and
 * the self-check report. FP32, BF16 or FP16 elements, compared in FP64. */
#ifndef GS_COMPARE_H
#define GS_COMPARE_H

#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_compare_type { GS_CMP_F32 = 0, GS_CMP_BF16 = 1, GS_CMP_F16 = 2 } gs_compare_type;

/* The result, written to device memory (read it after the stream syncs). */
typedef struct gs_compare_result {
  double max_abs;     /* max |x - ref| */
  double max_rel;     /* max |x - ref| / max(|ref|, FLT_MIN); inf for a NaN/Inf mismatch */
  double diff_sq;     /* sum (x - ref)^2 over finite pairs */
  double ref_sq;      /* sum ref^2 */
  double mismatched_nonfinite;  /* elements finite in one and not the other, or
                                   non-finite in both but not alike (NaN, +Inf, -Inf) */
  double mismatched_where_ref_nonfinite;  /* of those, where ref is not finite and x
                                   is no NaN (x finite, or an Inf where ref has NaN or
                                   the other Inf): all a result holding FP64's kinds
                                   may show where ref's own sums overflowed */
  double inputs_nonfinite;      /* elements of the inputs scanned (gs_compare_inputs)
                                   that are Inf or NaN; -1 when none were given */
} gs_compare_result;

/* Inputs to scan for Inf and NaN along with the comparison (the operands
 * of the GEMM whose results are compared): column-major, as stored. */
typedef struct gs_compare_inputs {
  gs_compare_type type;
  const void *a;
  int64_t lda, a_rows, a_cols;
  const void *b;
  int64_t ldb, b_rows, b_cols;
} gs_compare_inputs;

/* Load the compare kernels into the current context (CUDA loads them
 * lazily, and a load may wait for the whole device). 0 on success. */
int gs_compare_preload(void);

/* Scratch the launcher needs for its partial results, in bytes. */
size_t gs_compare_scratch_bytes(void);


/* x and ref: m x n column-major matrices of `type` with leading dims ldx,
 * ldr; inputs: NULL, or matrices to scan for Inf and NaN in the same pass.
 * partials: gs_compare_scratch_bytes() of device memory; out: one device
 * result. Two kernels (per-block partials, then one block), no atomics:
 * the same inputs give the same bits. 0 on success. */
int gs_compare(gs_compare_type type, const void *x, int64_t ldx, const void *ref, int64_t ldr,
               int64_t m, int64_t n, const gs_compare_inputs *inputs, void *partials,
               gs_compare_result *out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
