#include "health.h"

#include <stdio.h>

int gs_variant_index(const gs_variant *v)
{
  for (size_t i = 0; i < gs_n_variants && i < GS_MAX_VARIANTS; i++)
    if (gs_variants[i] == v) return (int)i;
  return -1;
}

int gs_variant_usable(const gs_variant *v, const gs_ctx *ctx)
{
  int s = gs_variant_index(v);
  if (s < 0 || !ctx) return 0;
  return !atomic_load_explicit(&ctx->disabled[s], memory_order_relaxed);
}

void gs_variant_disable(const gs_variant *v, gs_ctx *ctx, const char *why)
{
  int s = gs_variant_index(v);
  if (s < 0 || !ctx) return;
  if (!atomic_exchange(&ctx->disabled[s], 1))
    fprintf(stderr, "gemmshim: kernel %s disabled on device %d (context %llu): %s; its calls go to "
                    "cuBLAS\n",
            v->name, ctx->device, (unsigned long long)ctx->id, why);
}
