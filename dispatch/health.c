#include "health.h"

#include <stdio.h>

#include "config.h"

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

static atomic_int pdl_refused;

int gs_pdl_usable(void)
{
  return gs_config()->pdl && !atomic_load_explicit(&pdl_refused, memory_order_relaxed);
}

void gs_pdl_refused(const gs_variant *v, long long m, long long n, long long k)
{
  if (!atomic_exchange(&pdl_refused, 1))
    fprintf(stderr, "gemmshim: kernel %s could not launch a %lldx%lldx%lld call with programmatic "
                    "dependent launch but could without it; kernels launch without it from now "
                    "on, and route-table rows measured with it are passed over\n",
            v->name, m, n, k);
}

void gs_pdl_forget_refusal(void) { atomic_store(&pdl_refused, 0); }
