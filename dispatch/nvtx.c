/* NVTX ranges (see nvtx.h). The range opens once the router has decided,
 * before anything is launched, so that a profiler's projection of the range
 * onto the GPU holds the call's kernels: ours, or cuBLAS's for a forwarded
 * call (gs_dispatch_forwarded closes it after the real call). A routed call
 * that ends up forwarded (first-use check, loading, a refused launch) closes
 * its range and opens one with the new reason around cuBLAS's run. */
#include "nvtx.h"

#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>

#include "names.h"
#include "reason.h"
#include "variants.h"

static nvtxDomainHandle_t domain;
static pthread_once_t domain_once = PTHREAD_ONCE_INIT;

/* Category r + 1 is reason r (0 is NVTX's "no category"). */
static void make_domain(void)
{
  domain = nvtxDomainCreateA("gemmshim");
  for (int r = 0; r < GS_R_COUNT; r++)
    nvtxDomainNameCategoryA(domain, (uint32_t)r + 1, gs_reason_name((gs_reason)r));
}

void gs_nvtx_name(const gs_gemm *g, const gs_decision *d, char *out, size_t size)
{
  char layout[3];
  gs_layout_name(g, layout);
  char batch[32] = "";
  if (g->batch > 1) snprintf(batch, sizeof batch, " x%lld", (long long)g->batch);
  if (d->reason == GS_R_ROUTED && d->variant)
    snprintf(out, size, "%s %s %s %lldx%lldx%lld%s -> %s", g->entry_name ? g->entry_name : "?",
             gs_dtype_name(g->a_type), layout, (long long)g->m, (long long)g->n, (long long)g->k,
             batch, d->variant->name);
  else
    snprintf(out, size, "%s %s %s %lldx%lldx%lld%s -> cublas (%s)",
             g->entry_name ? g->entry_name : "?", gs_dtype_name(g->a_type), layout,
             (long long)g->m, (long long)g->n, (long long)g->k, batch, gs_reason_name(d->reason));
}

void gs_nvtx_push(const gs_gemm *g, const gs_decision *d)
{
  pthread_once(&domain_once, make_domain);
  char name[192];
  gs_nvtx_name(g, d, name, sizeof name);
  nvtxEventAttributes_t a = { 0 };
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = (uint32_t)d->reason + 1;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  nvtxDomainRangePushEx(domain, &a);
}

void gs_nvtx_pop(void)
{
  nvtxDomainRangePop(domain);
}
