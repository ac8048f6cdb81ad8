/* The one door from interpose/ into dispatch/. */
#ifndef GS_DISPATCH_H
#define GS_DISPATCH_H

#include "gemm.h"
#include "route.h"

/* Decide, and run our kernel when routed. Returns 1 when the call was
 * served (and counted), with the cublasStatus_t to return in *status; 0
 * when the caller must forward it, then call gs_dispatch_forwarded with the
 * same decision. */
int gs_dispatch(gs_gemm *g, gs_decision *d, int *status);
void gs_dispatch_forwarded(const gs_gemm *g, const gs_decision *d);

/* Launch variant v on g's problem with C and D replaced (A/B mode writes
 * one of the two results to scratch). The caller has entered the stream's
 * context. Returns the launcher's status. */
gs_kstatus gs_launch_variant(const gs_gemm *g, const gs_variant *v, const void *c, void *d);

#endif
