/* The one door from interpose/ into dispatch/. */
#ifndef GS_DISPATCH_H
#define GS_DISPATCH_H

#include "gemm.h"
#include "route.h"

/* Decide, and serve the call when it is routed: our kernel, or, for a
 * kernel's first call of a class, cuBLAS while ours is checked beside it.
 * Returns 1 when the call was served (and counted), with the
 * cublasStatus_t to return in *status; 0 when the caller must forward it,
 * then call gs_dispatch_forwarded with the same decision (it may read the
 * handle's state into g for the log, and ends the call's timing). */
int gs_dispatch(gs_gemm *g, gs_decision *d, int *status);
void gs_dispatch_forwarded(gs_gemm *g, gs_decision *d);

#endif
