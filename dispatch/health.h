/* Which variants may still serve calls. A variant that failed on a context
 * (launch error, self-check mismatch) is disabled there for the rest of the
 * process; the reason is said once on stderr. */
#ifndef GS_HEALTH_H
#define GS_HEALTH_H

#include "context.h"
#include "variants.h"

/* The variant's index in gs_variants, or -1. */
int gs_variant_index(const gs_variant *v);

int gs_variant_usable(const gs_variant *v, const gs_ctx *ctx);
void gs_variant_disable(const gs_variant *v, gs_ctx *ctx, const char *why);

/* Whether kernels launch with programmatic dependent launch where they
 * can: GEMMSHIM_PDL, unless a launch with it failed in this process where
 * the same launch without it then worked. */
int gs_pdl_usable(void);

/* v's m x n x k launch failed with PDL and worked without it: PDL off for
 * the rest of the process (route-table rows measured with it are passed
 * over from then on); said once. */
void gs_pdl_refused(const gs_variant *v, long long m, long long n, long long k);

/* Tests: forget such a refusal. */
void gs_pdl_forget_refusal(void);

#endif
