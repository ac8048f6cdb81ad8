/* Running a routed call on both paths, ours and cuBLAS's, and comparing:
 * the first-use self-check of each kernel variant (per device, layout and
 * epilogue), and A/B mode (GEMMSHIM_AB). */
#ifndef GS_AB_H
#define GS_AB_H

#include "gemm.h"
#include "route.h"

/* For a call routed to d->variant:
 *  1: handled here (both paths ran; *status is what the caller returns;
 *     d->reason/d->variant say who served it, for the log);
 *  0: run our kernel the plain way (checked, and not sampled);
 * -1: forward the call to cuBLAS (d->reason says why: unchecked, disabled).
 * Never fails the call: anything that goes wrong here forwards. */
int gs_ab_handle(gs_gemm *g, gs_decision *d, int *status);

/* The A/B CSV header (GEMMSHIM_AB_LOG). */
#define GS_AB_HEADER                                                                      \
  "time_s,pid,entry,a_type,c_type,layout,m,n,k,batch,kernel,mode,ours_us,cublas_us,speedup," \
  "max_abs,max_rel,rel_fro,device"

/* Pure decisions, unit-tested. */
typedef enum gs_selfcheck_state { GS_SC_UNCHECKED = 0, GS_SC_PASSED, GS_SC_FAILED } gs_selfcheck_state;

/* Whether call number `seq` (0-based, counted over routed calls) is sampled
 * when one call in `every` is compared (every == 0: none). */
int gs_ab_sampled(long every, unsigned long seq);

/* Bytes of scratch a comparison of g needs (the second result, ldd x n),
 * or 0 when it cannot be compared (output type we cannot compare). */
size_t gs_ab_scratch_needed(const gs_gemm *g);

/* Whether a comparison needing `need` bytes fits the per-device bound of
 * GEMMSHIM_AB_SCRATCH_MB = mb. */
int gs_ab_fits(size_t need, long mb);

/* Whether a comparison passes a self-check with tolerance tol. */
int gs_selfcheck_passes(double rel_fro, double mismatched_nonfinite, double tol);

/* One CSV row (no newline) into buf; returns its length. */
int gs_ab_format_row(char *buf, size_t size, double time_s, long pid, const gs_gemm *g,
                     const char *kernel, const char *mode, double ours_us, double cublas_us,
                     double max_abs, double max_rel, double rel_fro, int device);

#endif
