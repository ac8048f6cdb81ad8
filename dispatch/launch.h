/* Running one of our kernels for a routed call: its arguments, the launch,
 * and what a failed launch means. Used by dispatch.c (the plain path),
 * selfcheck.c and ab.c; knows no cuBLAS symbols. */
#ifndef GS_LAUNCH_VARIANT_H
#define GS_LAUNCH_VARIANT_H

#include "gemm.h"
#include "route.h"

/* The kernel arguments for g, routed as d says. Host scalars are read now,
 * as cuBLAS does: the caller may reuse the memory once the call returns. */
gs_kernel_args gs_kernel_args_of(const gs_gemm *g, const gs_decision *d);

/* Run the route d chose for call g on a: its kernel's launcher, with the
 * scratch its table entry asks for from the context's pool (GS_K_NO_SCRATCH
 * when none could be had), or for the route cublaslt, cuBLASLt with the
 * row's algorithm (lt_run.h) (GEMMSHIM_TEST_BREAK applied). The caller has
 * entered the stream's context. Returns the launcher's status. */
gs_kstatus gs_launch_route(const gs_gemm *g, const gs_decision *d, const gs_kernel_args *a);

/* What a launch that did not return GS_K_OK means, done once here:
 * GS_K_UNSUPPORTED refuses this call only (said once; reason size_class);
 * GS_K_NO_SCRATCH too (said once; reason no_scratch);
 * GS_K_LAUNCH_FAILED disables the kernel on the context (reason
 * launch_failed); GS_K_FAILED_AFTER_ENQUEUE disables it too (reason
 * kernel_failed). Returns the reason. */
gs_reason gs_launch_refused(const gs_variant *v, struct gs_ctx *ctx, gs_kstatus st,
                            const gs_kernel_args *a);

#endif
