#include "loader.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "../kernels/compare.h"
#include "../kernels/hold.h"
#include "gpu.h"
#include "health.h"
#include "lt_run.h"
#include "tables.h"
#include "variants.h"

enum { NOT_STARTED = 0, LOADING, LOADED, FAILED };

static void *load_all(void *arg)
{
  gs_ctx *ctx = arg;
  const char *why = NULL;
  if (gs_gpu_push(ctx->handle) != 0) {
    why = "its context could not be made current";
  } else {
    for (size_t i = 0; !why && i < gs_n_variants; i++) {
      const gs_variant *v = gs_variants[i];
      /* the route cublaslt: the shim's cuBLASLt handle for this context,
       * where a table names the route; without it only that route is off */
      if (v->runs_cublaslt) {
        if (gs_tables_name(v) && gs_lt_prepare(ctx->id) != 0)
          gs_variant_disable(v, ctx, "the shim's cuBLASLt handle could not be made");
        continue;
      }
      if (v->preload && v->preload() != 0) why = "a kernel failed to load";
    }
    if (!why && gs_compare_preload() != 0) why = "the compare kernels failed to load";
    /* A/B mode's hold: without it A/B times pairs unheld and says so */
    if (!why) (void)gs_hold_preload();
    gs_gpu_pop();
  }
  if (why)
    for (size_t i = 0; i < gs_n_variants; i++) gs_variant_disable(gs_variants[i], ctx, why);
  atomic_store_explicit(&ctx->kernels, why ? FAILED : LOADED, memory_order_release);
  return NULL;
}

int gs_kernels_ready_for(void *stream)
{
  gs_gpu_place place;
  if (gs_gpu_place_stream(stream, &place) != 0) return -1;
  return gs_kernels_ready(place.ctx);
}

int gs_kernels_ready(gs_ctx *ctx)
{
  int state = atomic_load_explicit(&ctx->kernels, memory_order_acquire);
  if (state == LOADED) return 1;
  if (state == NOT_STARTED && atomic_compare_exchange_strong(&ctx->kernels, &state, LOADING)) {
    pthread_attr_t attr;
    pthread_t t;
    int started = pthread_attr_init(&attr) == 0 &&
                  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
                  pthread_create(&t, &attr, load_all, ctx) == 0;
    pthread_attr_destroy(&attr);
    if (!started) {
      for (size_t i = 0; i < gs_n_variants; i++)
        gs_variant_disable(gs_variants[i], ctx, "no thread could be started to load it");
      atomic_store_explicit(&ctx->kernels, FAILED, memory_order_release);
    }
  }
  return 0;
}
