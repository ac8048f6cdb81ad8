/* NVTX ranges for the GEMM calls the shim sees (GEMMSHIM_NVTX=1), in the
 * "gemmshim" domain: named by entry, dtype, layout and m x n x k, with the
 * route and the reason in the name and as the range's category. Header-only
 * NVTX3: without a tool attached each call costs a check. */
#ifndef GS_NVTX_H
#define GS_NVTX_H

#include "gemm.h"
#include "route.h"

/* Push the call's range with decision d. */
void gs_nvtx_push(const gs_gemm *g, const gs_decision *d);
void gs_nvtx_pop(void);

/* The range's name, as pushed (for the tests): "ENTRY DTYPE LAYOUT MxNxK
 * [xBATCH] -> ROUTE" or "... -> cublas (REASON)". */
void gs_nvtx_name(const gs_gemm *g, const gs_decision *d, char *out, size_t size);

#endif
