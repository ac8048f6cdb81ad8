#include "scratch.h"

#include <cuda_runtime_api.h>
#include <stdatomic.h>

#include "../kernels/compare.h"
#include "config.h"

void gs_relax(gs_relaxed *r)
{
  enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  if (cudaThreadExchangeStreamCaptureMode(&mode) != cudaSuccess) {
    (void)cudaGetLastError();
    mode = cudaStreamCaptureModeRelaxed;
  }
  r->saved = (int)mode;
}

void gs_unrelax(gs_relaxed *r)
{
  enum cudaStreamCaptureMode mode = (enum cudaStreamCaptureMode)r->saved;
  if (cudaThreadExchangeStreamCaptureMode(&mode) != cudaSuccess) (void)cudaGetLastError();
}

static int make(gs_ctx *ctx)
{
  struct cudaMemPoolProps props = { 0 };
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = ctx->device;
  cudaMemPool_t pool;
  if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) return -1;
  /* freed memory goes back to the system at the next synchronization: the
   * pool holds only what comparisons in flight use */
  unsigned long long zero = 0;
  if (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &zero) != cudaSuccess) return -1;
  ctx->pool = pool;
  /* the kernels' pool: what it keeps is not mapped again after each
   * synchronization, nor usable by the program's allocator */
  cudaMemPool_t kpool;
  unsigned long long keep = (unsigned long long)gs_config()->scratch_keep_mb << 20;
  if (cudaMemPoolCreate(&kpool, &props) != cudaSuccess) return -1;
  if (cudaMemPoolSetAttribute(kpool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) return -1;
  ctx->kernel_pool = kpool;
  if (cudaHostAlloc(&ctx->verdicts, GS_CHECK_SLOTS * sizeof(gs_compare_result), cudaHostAllocDefault) !=
      cudaSuccess)
    return -1;
  for (int i = 0; i < GS_CHECK_SLOTS; i++) {
    cudaEvent_t ev;
    if (cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess) return -1;
    ctx->slot_event[i] = ev;
  }
  return 0;
}

int gs_ctx_make_resources(gs_ctx *ctx)
{
  if (atomic_load_explicit(&ctx->resources, memory_order_acquire) == 0) {
    gs_relaxed r;
    gs_relax(&r);
    int ok = make(ctx) == 0;
    if (!ok) (void)cudaGetLastError();
    gs_unrelax(&r);
    atomic_store_explicit(&ctx->resources, ok ? 1 : -1, memory_order_release);
  }
  return atomic_load_explicit(&ctx->resources, memory_order_acquire) == 1 ? 0 : -1;
}

/* bytes from pool on stream, in relaxed capture mode; a refusal's error
 * read. 0 on success. */
static int alloc_from(void *pool, size_t bytes, void *stream, void **out)
{
  gs_relaxed r;
  gs_relax(&r);
  cudaError_t e = cudaMallocFromPoolAsync(out, bytes, (cudaMemPool_t)pool, (cudaStream_t)stream);
  gs_unrelax(&r);
  if (e == cudaSuccess) return 0;
  (void)cudaGetLastError();
  return -1;
}

int gs_scratch_get(gs_ctx *ctx, size_t bytes, void *stream, void **out)
{
  size_t refused = atomic_load_explicit(&ctx->scratch_refused, memory_order_relaxed);
  if (atomic_load_explicit(&ctx->resources, memory_order_acquire) != 1 ||
      (refused && bytes >= refused))
    return -1;
  if (alloc_from(ctx->pool, bytes, stream, out) == 0) return 0;
  /* remember the smallest size refused */
  while ((!refused || bytes < refused) &&
         !atomic_compare_exchange_weak(&ctx->scratch_refused, &refused, bytes)) {}
  return -1;
}

int gs_scratch_try(gs_ctx *ctx, size_t bytes, void *stream, void **out)
{
  if (atomic_load_explicit(&ctx->resources, memory_order_acquire) != 1) return -1;
  return alloc_from(ctx->kernel_pool, bytes, stream, out);
}

void gs_scratch_put(void *p, void *stream)
{
  if (p && cudaFreeAsync(p, (cudaStream_t)stream) != cudaSuccess) (void)cudaGetLastError();
}
