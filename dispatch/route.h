/* The routing decision: a kernel variant of ours, or the real cuBLAS with a
 * reason. Knows no symbol names: it sees only gs_gemm descriptors. */
#ifndef GS_ROUTE_H
#define GS_ROUTE_H

#include "gemm.h"
#include "reason.h"
#include "variants.h"

typedef struct gs_decision {
  gs_reason reason;
  const gs_variant *variant;  /* the kernel that served the call, or NULL */
  int device;                 /* the stream's device, when it was needed */
  struct gs_ctx *ctx;         /* the shim's state for the stream's context,
                                 set with device */
  /* GEMMSHIM_TIME (timing.c): 1 + the sample slot of a timed call, or 0;
   * and what to count when the call is tallied (GS_TIME_*). */
  int time_slot;
  int time_note;
  /* The route cublaslt: the algorithm its table row names (lives as long
   * as the table); NULL otherwise. */
  const struct gs_lt_algo *lt_algo;
} gs_decision;

/* Decide where the call goes. May call g->load_state once. */
gs_decision gs_route(gs_gemm *g);

/* Argument checks as cuBLAS makes them; nonzero when the call is invalid. */
int gs_args_invalid(const gs_gemm *g);


#endif
