#include "health.h"

#include <stdatomic.h>
#include <stdio.h>

#define GS_MAX_VARIANTS 32

/* One flag per (variant, device); set once, read on every routed call. */
static atomic_uchar disabled[GS_MAX_VARIANTS][GS_MAX_DEVICES];

static int slot(const gs_variant *v)
{
  for (size_t i = 0; i < gs_n_variants && i < GS_MAX_VARIANTS; i++)
    if (gs_variants[i] == v) return (int)i;
  return -1;
}

int gs_variant_usable(const gs_variant *v, int device)
{
  int s = slot(v);
  if (s < 0 || device < 0 || device >= GS_MAX_DEVICES) return 0;
  return !atomic_load_explicit(&disabled[s][device], memory_order_relaxed);
}

void gs_variant_disable(const gs_variant *v, int device, const char *why)
{
  int s = slot(v);
  if (s < 0 || device < 0 || device >= GS_MAX_DEVICES) return;
  if (!atomic_exchange(&disabled[s][device], 1))
    fprintf(stderr, "gemmshim: kernel %s disabled on device %d (%s); its calls go to cuBLAS\n",
            v->name, device, why);
}
