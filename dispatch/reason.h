/* Why a call went where it went, as the router, the kernel table's
 * capability checks and the log share it; gs_reason_name (reason.c) names
 * each in the log. */
#ifndef GS_REASON_H
#define GS_REASON_H

/* The order is the order of the checks, so a
 * later reason means the call got further; for a call no variant takes, the
 * reason recorded is the furthest any variant got. What the arguments alone
 * decide comes first, so most forwarded calls never pay for reading the
 * handle's state. Keep gs_reason_name in step (reason.c). */
typedef enum gs_reason {
  GS_R_ROUTED = 0,       /* served by one of our kernels */
  GS_R_ROUTING_OFF,      /* GEMMSHIM_ROUTE=0: observe only */
  GS_R_BAD_ARGS,         /* invalid arguments: cuBLAS gives its own status */
  GS_R_EMPTY,            /* m, n or k is 0: nothing for a kernel to do */
  GS_R_DTYPE,            /* no kernel for these types / compute type */
  GS_R_BATCHED,          /* batch count above 1 (outside a route that takes batches, or
                            their outputs not packed) */
  GS_R_LAYOUT,           /* no kernel for this op(A)/op(B) combination */
  GS_R_SIZE_CLASS,       /* dims outside what the kernel tiles */
  GS_R_NOT_TUNED,        /* in the class, but no route table row sends this
                            call to a kernel (no row, or no usable table) */
  GS_R_TUNED_CUBLAS,     /* the route table's row says cuBLAS: its route is
                            "cublas" or measured below 1.02x cuBLAS */
  GS_R_ROUTE_UNAVAILABLE,/* the row names a kernel this build does not have */
  GS_R_STATE_UNREADABLE, /* the handle or descriptor state could not be read */
  GS_R_MATH_MODE,        /* math mode or compute type asks for another math */
  GS_R_NOT_OPTED_IN,     /* an opt-in kernel (FP32 on tensor cores) would take
                            the call, but nobody asked for it */
  GS_R_POINTER_MODE,     /* alpha/beta mode we do not handle (Lt vectors) */
  GS_R_ALPHA_ZERO,       /* alpha == 0 in host pointer mode: cuBLAS then
                            gives beta*C without reading A and B (NaN in A
                            or B stays out), so the call is its */
  GS_R_EPILOGUE,         /* cuBLASLt epilogue we do not fuse */
  GS_R_LT_ATTRIBUTE,     /* another cuBLASLt attribute outside our whitelist */
  GS_R_ALIGNMENT,        /* pointer or leading dimension alignment */
  GS_R_NO_GPU,           /* the shim's CUDA runtime could not start */
  GS_R_ARCH,             /* the kernel is not built for this GPU */
  GS_R_TABLE_REFUSED,    /* the route table's validators do not match this
                            GPU (said once on stderr, naming the key) */
  GS_R_LT_ALGO_UNFIT,    /* the row's cuBLASLt algorithm needs more workspace
                            than the call gives (none for a BLAS call), or
                            reduces split-K partial sums in the output type
                            where the math mode disallows it */
  GS_R_SM_COUNT,         /* an SM-count target: the kernel cannot honour it,
                          * or has no win measured under one (see route.c) */
  GS_R_DISABLED,         /* variant disabled on this context (self-check
                            mismatch, launch failure) */
  GS_R_LAUNCH_FAILED,    /* our launch failed before anything was enqueued:
                            this call forwarded, the kernel disabled */
  GS_R_LOADING,          /* routed, but our kernels are still being loaded
                            into this context (by a thread of the shim's:
                            a load may wait for the whole device) */
  GS_R_UNCHECKED,        /* routed, but the kernel's first-use self-check
                            could not start (the stream is capturing, no
                            scratch or verdict slot): forwarded */
  GS_R_CHECKING,         /* routed, but the kernel's self-check for this
                            class of calls is still running on the GPU:
                            forwarded */
  GS_R_NO_SCRATCH,       /* routed, but the device scratch the kernel needs
                            (gs_variant.scratch_bytes) could not be had:
                            the stream was capturing a graph, or the
                            shim's pool refused: forwarded */
  /* Outcomes of routed calls, for the log (never a routing decision): */
  GS_R_SELFCHECK,        /* first use: cuBLAS served the call, our kernel ran
                            into scratch and the two are being compared */
  GS_R_SELFCHECK_FAILED, /* this call found the comparison failed: the
                            kernel is disabled, the call forwarded */
  GS_R_KERNEL_FAILED,    /* a later kernel of our launch failed after an
                            earlier one was enqueued: the call returned
                            CUBLAS_STATUS_EXECUTION_FAILED, and cuBLAS was
                            not run into its output */
  GS_R_AB_COMPARED,      /* A/B: ours served, cuBLAS measured beside it */
  GS_R_AB_SHADOW,        /* A/B shadow: cuBLAS served, ours measured */
  GS_R_AB_SKIPPED_CAPTURING, /* sampled for A/B on a capturing stream */
  GS_R_AB_SKIPPED_SCRATCH,   /* sampled, but over GEMMSHIM_AB_SCRATCH_MB */
  GS_R_AB_SKIPPED_ALLOC,     /* sampled, but scratch could not be allocated */
  GS_R_COUNT
} gs_reason;

#ifdef __cplusplus
extern "C" {
#endif
const char *gs_reason_name(gs_reason r);
#ifdef __cplusplus
}
#endif

#endif
