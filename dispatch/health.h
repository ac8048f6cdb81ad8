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

#endif
