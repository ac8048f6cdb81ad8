#include "launch.h"

#include <cublasLt.h>
#include <cublas_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "context.h"
#include "gpu.h"
#include "health.h"
#include "lt_run.h"
#include "scratch.h"

gs_kernel_args gs_kernel_args_of(const gs_gemm *g, const gs_decision *d)
{
  gs_kernel_args a;
  memset(&a, 0, sizeof a);
  a.m = g->m; a.n = g->n; a.k = g->k;
  a.trans_a = g->trans_a == CUBLAS_OP_T;
  a.trans_b = g->trans_b == CUBLAS_OP_T;
  a.A = g->A; a.lda = g->lda;
  a.B = g->B; a.ldb = g->ldb;
  a.C = g->C; a.ldc = g->ldc;
  a.D = g->D; a.ldd = g->ldd;
  a.batch = g->batch;
  a.stride_a = g->stride_a; a.stride_b = g->stride_b;
  a.stride_c = g->stride_c; a.stride_d = g->stride_d;
  a.scalars_on_device = g->pointer_mode == 1;
  a.alpha = a.scalars_on_device ? 0.0f : *(const float *)g->alpha;
  a.beta = a.scalars_on_device ? 0.0f : *(const float *)g->beta;
  a.alpha_dev = a.scalars_on_device ? (const float *)g->alpha : NULL;
  a.beta_dev = a.scalars_on_device ? (const float *)g->beta : NULL;
  a.bias = g->is_lt && g->epilogue == CUBLASLT_EPILOGUE_BIAS ? g->bias : NULL;
  a.stream = (cudaStream_t)g->stream;
  a.no_pdl = !gs_pdl_usable();
  a.sm_limit = g->sm_count_target > 0 ? g->sm_count_target : 0;
  a.device = d->device;
  a.ctx_id = d->ctx ? d->ctx->id : 0;
  return a;
}

/* The context's pool, made here when no self-check or A/B comparison has
 * made it yet: only tried, never waited for (a call that finds the lock
 * taken goes without). */
static int pool_ready(gs_ctx *ctx)
{
  int made = atomic_load_explicit(&ctx->resources, memory_order_acquire);
  if (made != 0) return made == 1;
  if (pthread_mutex_trylock(&ctx->lock) != 0) return 0;
  int ok = gs_ctx_make_resources(ctx) == 0;
  pthread_mutex_unlock(&ctx->lock);
  return ok;
}

/* A launch with programmatic dependent launch that the runtime refused
 * with an error the attribute can cause (GS_K_PDL_REFUSED: nothing was
 * enqueued) is made again without it; where that works the call is served
 * so, and PDL is off for the process from then on (health.h). Where it
 * fails too, that failure is the call's. */
static gs_kstatus launch(const gs_variant *v, const gs_kernel_args *a)
{
  gs_kstatus st = v->launch(a);
  if (st != GS_K_PDL_REFUSED) return st;
  gs_kernel_args plain = *a;
  plain.no_pdl = 1;
  st = v->launch(&plain);
  if (st == GS_K_OK) gs_pdl_refused(v, a->m, a->n, a->k);
  return st == GS_K_PDL_REFUSED ? GS_K_LAUNCH_FAILED : st;
}

static gs_kstatus run(const gs_gemm *g, const gs_decision *d, const gs_kernel_args *a)
{
  const gs_variant *v = d->variant;
  if (v->runs_cublaslt) return d->lt_algo ? gs_lt_run(g, d->lt_algo, a) : GS_K_UNSUPPORTED;
  if (!v->scratch_bytes) return launch(v, a);
  /* scratch from the context's stream-ordered pool, given back in stream
   * order after the launch's work (a launch that failed enqueued nothing
   * that uses it). Not while the stream captures: the allocation would
   * become a graph's memory node, and a graph holding one may have only
   * one executable instance at a time (a program's second
   * cudaGraphInstantiate would fail): such calls go to cuBLAS. */
  size_t bytes = v->scratch_bytes(a);
  if (!bytes) return launch(v, a);   /* none for this call */
  gs_kernel_args with = *a;
  if (!d->ctx || gs_gpu_stream_capturing(a->stream) || !pool_ready(d->ctx) ||
      gs_scratch_try(d->ctx, bytes, a->stream, &with.scratch) != 0)
    return GS_K_NO_SCRATCH;
  gs_kstatus st = launch(v, &with);
  gs_relaxed r;   /* as the allocation: another thread may be capturing */
  gs_relax(&r);
  gs_scratch_put(with.scratch, a->stream);
  gs_unrelax(&r);
  return st;
}

gs_kstatus gs_launch_route(const gs_gemm *g, const gs_decision *d, const gs_kernel_args *a)
{
  /* GEMMSHIM_TEST_BREAK=<kernel>: drop the last k-slice so the result is
   * wrong (tests of the self-check; never set in production). */
  const gs_variant *v = d->variant;
  const char *brk = gs_config()->test_break;
  if (brk[0] && !strcmp(brk, v->name) && a->k > v->k_mult) {
    gs_kernel_args broken = *a;
    broken.k -= v->k_mult;
    return run(g, d, &broken);
  }
  return run(g, d, a);
}

gs_reason gs_launch_refused(const gs_variant *v, gs_ctx *ctx, gs_kstatus st,
                            const gs_kernel_args *a)
{
  if (st == GS_K_UNSUPPORTED) {
    /* The kernel's own check is narrower than its router entry: this call
     * goes to cuBLAS; the kernel keeps serving the rest. Said once. */
    static atomic_int said;
    if (!atomic_exchange(&said, 1))
      fprintf(stderr, "gemmshim: kernel %s refused a %lldx%lldx%lld call the router sent it; "
                      "such calls go to cuBLAS\n",
              v->name, (long long)a->m, (long long)a->n, (long long)a->k);
    return GS_R_SIZE_CLASS;
  }
  if (st == GS_K_NO_SCRATCH) {
    /* no scratch (the stream captures, the pool refused, or its lock was
     * busy): this call goes to cuBLAS, the kernel keeps serving. Said once. */
    static atomic_int said;
    if (!atomic_exchange(&said, 1))
      fprintf(stderr, "gemmshim: kernel %s got no scratch for a %lldx%lldx%lld call (the stream "
                      "was capturing a graph, or the shim's pool refused); such calls go to "
                      "cuBLAS (reason no_scratch)\n",
              v->name, (long long)a->m, (long long)a->n, (long long)a->k);
    return GS_R_NO_SCRATCH;
  }
  if (st == GS_K_FAILED_AFTER_ENQUEUE) {
    gs_variant_disable(v, ctx, "a kernel of its launch failed after an earlier one was enqueued; "
                               "that call returned CUBLAS_STATUS_EXECUTION_FAILED");
    return GS_R_KERNEL_FAILED;
  }
  gs_variant_disable(v, ctx, "its launch failed");
  return GS_R_LAUNCH_FAILED;
}
