/* A/B mode (GEMMSHIM_AB): a sampled routed call runs on both paths, ours
 * and cuBLAS's, timed and compared, one CSV row each. A measurement mode,
 * opt-in: it waits for the GPU inside the call (the self-check never does:
 * selfcheck.h). Also the CPU-side rules both use. */
#ifndef GS_AB_H
#define GS_AB_H

#include <stddef.h>
#include <stdint.h>

#include "gemm.h"
#include "route.h"

struct gs_compare_result;

/* Whether this routed call (of a kernel already checked on its context)
 * is one A/B mode samples. */
int gs_ab_wanted(void);

/* Both paths for a sampled call. Returns 1 when the call was served here
 * (*status is what the caller returns; d->reason and d->variant say who
 * served it), 0 when it was not compared and should run the plain way
 * (d->reason says why: ab_skipped_*). The caller has entered the stream's
 * context. Never runs cuBLAS into an output our kernel may have written. */
int gs_ab_compare(gs_gemm *g, gs_decision *d, const gs_kernel_args *a, int *status);

/* The A/B CSV header (GEMMSHIM_AB_LOG). */
#define GS_AB_HEADER                                                                      \
  "time_s,pid,entry,a_type,c_type,layout,m,n,k,batch,kernel,mode,ours_us,cublas_us,speedup," \
  "max_abs,max_rel,rel_fro,device"

/* ---- pure rules, unit-tested ------------------------------------------- */

/* Whether call number `seq` (0-based, counted over routed calls) is sampled
 * when one call in `every` is compared (every == 0: none). */
int gs_ab_sampled(long every, unsigned long seq);

/* Where a comparison keeps its parts in one scratch allocation: a copy of
 * the output (the second result; m x n, or for a packed batch all its
 * items as one m x (n x batch) matrix), then the compare kernel's
 * partials, then its result; each part 256-byte aligned. The copy is
 * compact (leading dimension m rounded up to 16 bytes, which our kernels
 * accept) unless cuBLASLt writes it: a cuBLASLt call keeps the caller's
 * layouts, so there it has the caller's leading dimension. */
typedef struct gs_scratch_layout {
  int64_t ld;
  size_t out, partials, result, total;   /* byte offsets; total size */
} gs_scratch_layout;

/* Bytes per element of the output (4 FP32, 2 BF16 or FP16), or 0 when the
 * compare kernel cannot compare that type (then neither the self-check nor
 * A/B mode can run). */
int gs_output_elem_bytes(const gs_gemm *g);

/* The compare kernel's type (gs_compare_type) for the output, valid where
 * gs_output_elem_bytes is nonzero. */
int gs_output_compare_type(const gs_gemm *g);

/* The gs_compare_type of a cudaDataType; -1 for one it cannot compare. */
int gs_compare_type_of(int type);

/* The layout for g, given the compare kernel's partial bytes; cublas_writes:
 * the copy is written by cuBLAS (A/B use mode) rather than by our kernel.
 * -1 when the output cannot be compared (its type). */
int gs_scratch_layout_of(const gs_gemm *g, size_t partial_bytes, int cublas_writes,
                         gs_scratch_layout *out);

/* Whether a comparison needing `need` bytes fits the bound of
 * GEMMSHIM_AB_SCRATCH_MB = mb. */
int gs_ab_fits(size_t need, long mb);

/* How long A/B mode holds the stream before a pair (kernels/hold.h), so
 * that both paths are queued before the GPU reaches them and each is timed
 * on the GPU alone, not from an idle GPU waiting on the host (a program
 * whose GPU waits on its host, and A/B mode's own wait before every pair,
 * would add the host's queueing of the first path to its time): the first
 * pair's hold, then, from the host time the last pair took to queue
 * (queued_us), several times that plus a margin, within bounds. */
#define GS_AB_HOLD_FIRST_US 200.0
double gs_ab_next_hold_us(double queued_us);

/* What a first-use self-check's comparison (ours against cuBLAS's result)
 * says with tolerance tol. A kernel holding FP64's Inf/NaN pattern
 * (gs_variant.nonfinite_as_fp64) differs from cuBLAS only where cuBLAS's
 * own sums overflowed, which the comparison cannot judge without an FP64
 * reference: where the operands hold no Inf or NaN (the comparison scanned
 * them: c->inputs_nonfinite), every non-finite mismatch is of that kind and
 * the finite outputs agree, the check is inconclusive. */
typedef enum gs_selfcheck_verdict {
  GS_SELFCHECK_FAILS = 0,
  GS_SELFCHECK_PASSES,
  GS_SELFCHECK_INCONCLUSIVE
} gs_selfcheck_verdict;
gs_selfcheck_verdict gs_selfcheck_judge(const struct gs_compare_result *c, double tol,
                                        int nonfinite_as_fp64);

/* The relative Frobenius difference a comparison found. */
double gs_compare_rel_fro(const struct gs_compare_result *c);

/* One CSV row (no newline) into buf; returns its length. */
int gs_ab_format_row(char *buf, size_t size, double time_s, long pid, const gs_gemm *g,
                     const char *kernel, const char *mode, double ours_us, double cublas_us,
                     double max_abs, double max_rel, double rel_fro, int device);

#endif
