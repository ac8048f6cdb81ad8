/* A routed call, in order: route, the start of its timing (GEMMSHIM_TIME),
 * our kernels loaded (else forward), the first-use check or an A/B
 * comparison, launch, tally, the end of its timing. */
#include "dispatch.h"

#include "config.h"

#include <cublas_api.h>

#include "ab.h"
#include "gpu.h"
#include "launch.h"
#include "loader.h"
#include "nvtx.h"
#include "selfcheck.h"
#include "tally.h"
#include "timing.h"

/* Serve a routed call; 0 when it must be forwarded after all. */
static int serve(gs_gemm *g, gs_decision *d, const gs_kernel_args *a, int *status)
{
  switch (gs_selfcheck_gate(g, d, a, status)) {
  case GS_GATE_FORWARD: return 0;
  case GS_GATE_ANSWERED: return 1;
  case GS_GATE_SERVE: break;
  }
  if (gs_ab_wanted() && gs_ab_compare(g, d, a, status)) return 1;
  gs_kstatus st = gs_launch_route(g, d, a);
  if (st == GS_K_OK) {
    *status = CUBLAS_STATUS_SUCCESS;
    return 1;
  }
  d->reason = gs_launch_refused(d->variant, d->ctx, st, a);
  if (st == GS_K_FAILED_AFTER_ENQUEUE) {
    /* an earlier kernel of ours may be writing C: cuBLAS must not run
     * into it as well; the caller gets the failure */
    *status = CUBLAS_STATUS_EXECUTION_FAILED;
    return 1;
  }
  d->variant = NULL;
  return 0;
}

int gs_dispatch(gs_gemm *g, gs_decision *d, int *status)
{
  *d = gs_route(g);
  const int nvtx = gs_config()->nvtx;
  if (nvtx) gs_nvtx_push(g, d);
  gs_time_begin(g, d);
  if (d->reason != GS_R_ROUTED) return 0;
  gs_gpu_entered e;
  if (gs_gpu_enter(g->stream, &e) != 0) {
    d->reason = GS_R_NO_GPU;
    d->variant = NULL;
    if (nvtx) { gs_nvtx_pop(); gs_nvtx_push(g, d); }
    return 0;
  }
  gs_kernel_args a = gs_kernel_args_of(g, d);
  int served = 0;
  if (gs_kernels_ready(d->ctx)) {
    served = serve(g, d, &a, status);
  } else {
    d->reason = GS_R_LOADING;
    d->variant = NULL;
  }
  gs_gpu_leave(&e);
  if (nvtx) {
    /* forwarded after all: cuBLAS's run gets a range with the reason */
    gs_nvtx_pop();
    if (!served) gs_nvtx_push(g, d);
  }
  if (served) gs_time_end(gs_tally_add(g, d), g, d);
  return served;
}

void gs_dispatch_forwarded(gs_gemm *g, gs_decision *d)
{
  /* The log is a record to replay: it needs the pointer and math mode
   * even of a call decided before the router read the handle's state. */
  if (!g->state_loaded && g->load_state && gs_config()->log_path[0])
    g->state_loaded = g->load_state(g) == 0;
  gs_time_end(gs_tally_add(g, d), g, d);
  if (gs_config()->nvtx) gs_nvtx_pop();
}
