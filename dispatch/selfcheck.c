#include "selfcheck.h"

#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <library_types.h>
#include <stdio.h>
#include <string.h>

#include "../kernels/compare.h"
#include "ab.h"
#include "config.h"
#include "context.h"
#include "gpu.h"
#include "health.h"
#include "launch.h"
#include "scratch.h"

int gs_check_key(const gs_variant *v, const gs_gemm *g, const gs_kernel_args *a)
{
  int path = v->path_of ? v->path_of(a) : 0;
  if (path < 0 || path >= GS_CHECK_PATHS) path = GS_CHECK_PATHS - 1;
  int type = g->is_lt ? g->d_type : g->c_type;
  int dt = type == CUDA_R_32F ? 0 : type == CUDA_R_16BF ? 1 : type == CUDA_R_16F ? 2 : 3;
  int lay = a->trans_a + 2 * a->trans_b;
  int epi = g->is_lt && g->epilogue == CUBLASLT_EPILOGUE_BIAS;
  return ((path * 4 + dt) * 4 + lay) * 2 + epi;
}

static gs_gate forward(gs_decision *d, gs_reason why)
{
  d->reason = why;
  d->variant = NULL;
  return GS_GATE_FORWARD;
}

/* What a settled state means for this call. */
static gs_gate settled(gs_decision *d, int state)
{
  if (state == GS_CHECK_PASSED) return GS_GATE_SERVE;
  /* NONE: another thread found its check inconclusive, a new one starts */
  return forward(d, state == GS_CHECK_FAILED ? GS_R_DISABLED : GS_R_CHECKING);
}

/* Said once per kernel and kind: a check could not judge (given_up 0: it
 * is made again), or could not judge GS_CHECK_INCONCLUSIVE_MAX times
 * (given_up 1: that class stays with cuBLAS on the context). */
static atomic_uchar said_inconclusive[GS_MAX_VARIANTS][2];

static void say_inconclusive(const gs_variant *v, const gs_ctx *ctx, double outputs, int given_up)
{
  int vi = gs_variant_index(v);
  if (vi < 0 || atomic_exchange(&said_inconclusive[vi][given_up], 1)) return;
  if (!given_up)
    fprintf(stderr,
            "gemmshim: kernel %s on device %d: first-use self-check inconclusive: on %.0f "
            "outputs cuBLAS's own sums overflowed where ours holds FP64's Inf/NaN (the operands "
            "hold none); cuBLAS served that call, the next of its class is checked again (up "
            "to %d checks)\n",
            v->name, ctx->device, outputs, GS_CHECK_INCONCLUSIVE_MAX);
  else
    fprintf(stderr,
            "gemmshim: kernel %s on device %d (context %llu): first-use self-check of a class of "
            "calls inconclusive %d times (cuBLAS's own sums overflowed, %.0f outputs the last "
            "time); that class stays with cuBLAS on this context\n",
            v->name, ctx->device, (unsigned long long)ctx->id, GS_CHECK_INCONCLUSIVE_MAX, outputs);
}

/* A pending check: read its verdict if the GPU has written it. *recheck:
 * set when it was inconclusive and this call is to start the next one
 * (nothing forwarded then). */
static gs_gate finish(gs_decision *d, int vi, int key, int *recheck)
{
  gs_ctx *ctx = d->ctx;
  const gs_variant *v = d->variant;
  if (pthread_mutex_trylock(&ctx->lock) != 0) return forward(d, GS_R_CHECKING);
  int state = atomic_load_explicit(&ctx->check[vi][key], memory_order_acquire);
  if (state != GS_CHECK_PENDING) {
    pthread_mutex_unlock(&ctx->lock);
    return settled(d, state);
  }
  int slot = ctx->check_slot[vi][key];
  gs_relaxed r;
  gs_relax(&r);
  cudaError_t q = cudaEventQuery((cudaEvent_t)ctx->slot_event[slot]);
  gs_unrelax(&r);
  if (q == cudaErrorNotReady) {
    (void)cudaGetLastError();
    pthread_mutex_unlock(&ctx->lock);
    return forward(d, GS_R_CHECKING);
  }
  char why[240];
  gs_selfcheck_verdict verdict = GS_SELFCHECK_FAILS;
  double overflowed = 0;
  if (q != cudaSuccess) {
    (void)cudaGetLastError();
    snprintf(why, sizeof why, "its first-use self-check could not complete (%s)",
             cudaGetErrorString(q));
  } else {
    const gs_compare_result *res = (const gs_compare_result *)ctx->verdicts + slot;
    double rel = gs_compare_rel_fro(res);
    verdict = gs_selfcheck_judge(res, v->selfcheck_tol, v->nonfinite_as_fp64);
    overflowed = res->mismatched_where_ref_nonfinite;
    snprintf(why, sizeof why,
             "first-use self-check: relative difference %.3g from cuBLAS (%.0f non-finite "
             "mismatches), tolerance %.3g",
             rel, res->mismatched_nonfinite, v->selfcheck_tol);
  }
  ctx->slots_busy &= ~((uint64_t)1 << slot);
  /* an inconclusive check (cuBLAS served its call) is made again, on this
   * call, a few times; then that class (not the kernel) stays cuBLAS's */
  int inconclusive = verdict == GS_SELFCHECK_INCONCLUSIVE;
  int again = inconclusive && ++ctx->check_inconclusive[vi][key] < GS_CHECK_INCONCLUSIVE_MAX;
  state = verdict == GS_SELFCHECK_PASSES ? GS_CHECK_PASSED
          : again                        ? GS_CHECK_NONE
                                         : GS_CHECK_FAILED;
  atomic_store_explicit(&ctx->check[vi][key], state, memory_order_release);
  pthread_mutex_unlock(&ctx->lock);
  if (state == GS_CHECK_PASSED) return GS_GATE_SERVE;
  if (inconclusive) say_inconclusive(v, ctx, overflowed, !again);
  if (again) {
    *recheck = 1;
    return GS_GATE_FORWARD;
  }
  if (!inconclusive) gs_variant_disable(v, ctx, why);
  return forward(d, GS_R_SELFCHECK_FAILED);
}

static int free_slot(const gs_ctx *ctx)
{
  for (int i = 0; i < GS_CHECK_SLOTS; i++)
    if (!(ctx->slots_busy & ((uint64_t)1 << i))) return i;
  return -1;
}

/* Enqueue the check. Holding ctx->lock, in relaxed capture mode. Returns
 * the gate; on ANSWERED the check is pending, or (d->reason unchecked)
 * could not be completed after cuBLAS served the call. */
static gs_gate start_locked(gs_gemm *g, gs_decision *d, const gs_kernel_args *a, int vi, int key,
                            int *status)
{
  gs_ctx *ctx = d->ctx;
  const gs_variant *v = d->variant;
  cudaStream_t s = a->stream;
  gs_scratch_layout lay;
  if (gs_scratch_layout_of(g, gs_compare_scratch_bytes(), 0, &lay) != 0 ||
      !gs_ab_fits(lay.total, gs_config()->ab_scratch_mb))
    return forward(d, GS_R_UNCHECKED);
  if (gs_ctx_make_resources(ctx) != 0) return forward(d, GS_R_UNCHECKED);
  int slot = free_slot(ctx);
  if (slot < 0) return forward(d, GS_R_UNCHECKED);
  void *scratch;
  if (gs_scratch_get(ctx, lay.total, s, &scratch) != 0) return forward(d, GS_R_UNCHECKED);
  unsigned char *base = scratch;
  int elem = gs_output_elem_bytes(g);

  /* ours: a compact copy of the output in scratch (a packed batch's items
   * one after the other, as the caller's); where C is the output too and
   * beta may count, C is copied there first and ours runs in place
   * (cuBLAS is about to overwrite the caller's C) */
  const int64_t cols = gs_output_cols(g);
  gs_kernel_args ours = *a;
  ours.D = base + lay.out;
  ours.ldd = lay.ld;
  ours.stride_d = lay.ld * g->n;
  int aliased = g->is_lt ? g->C == g->D : 1;
  int beta_matters = a->scalars_on_device || a->beta != 0.0f;
  if (aliased) {
    ours.C = base + lay.out;
    ours.ldc = lay.ld;
    ours.stride_c = lay.ld * g->n;
  }
  if (aliased && beta_matters &&
      cudaMemcpy2DAsync(base + lay.out, (size_t)lay.ld * elem, g->C, (size_t)g->ldc * elem,
                        (size_t)g->m * elem, (size_t)cols, cudaMemcpyDeviceToDevice,
                        s) != cudaSuccess) {
    (void)cudaGetLastError();
    gs_scratch_put(scratch, s);
    return forward(d, GS_R_UNCHECKED);
  }
  gs_kstatus ks = gs_launch_route(g, d, &ours);
  if (ks != GS_K_OK) {
    /* ours wrote nothing, or only scratch: cuBLAS may serve the call */
    gs_scratch_put(scratch, s);
    return forward(d, gs_launch_refused(v, ctx, ks, &ours));
  }

  /* cuBLAS serves the caller */
  *status = g->reissue(g, g->C, g->D);
  d->variant = NULL;
  d->reason = GS_R_UNCHECKED;
  gs_compare_type type = (gs_compare_type)gs_output_compare_type(g);
  /* a kernel holding FP64's Inf/NaN: the operands scanned too, so that an
   * Inf/NaN difference can be put down to SGEMM's overflow only where they
   * hold none (gs_selfcheck_judge) */
  int in_type = g->a_type == g->b_type ? gs_compare_type_of(g->a_type) : -1;
  gs_compare_inputs in = { (gs_compare_type)in_type,
                           a->A, a->lda, a->trans_a ? a->k : a->m, a->trans_a ? a->m : a->k,
                           a->B, a->ldb, a->trans_b ? a->n : a->k, a->trans_b ? a->k : a->n };
  int scan = v->nonfinite_as_fp64 && in_type >= 0 && a->batch <= 1;
  int queued = *status == CUBLAS_STATUS_SUCCESS &&
               gs_compare(type, base + lay.out, lay.ld, g->D, g->ldd, g->m, cols,
                          scan ? &in : NULL, base + lay.partials,
                          (gs_compare_result *)(base + lay.result), s) == 0 &&
               cudaMemcpyAsync((gs_compare_result *)ctx->verdicts + slot, base + lay.result,
                               sizeof(gs_compare_result), cudaMemcpyDeviceToHost, s) ==
                   cudaSuccess &&
               cudaEventRecord((cudaEvent_t)ctx->slot_event[slot], s) == cudaSuccess;
  if (!queued) (void)cudaGetLastError();
  gs_scratch_put(scratch, s);
  if (queued) {
    ctx->slots_busy |= (uint64_t)1 << slot;
    ctx->check_slot[vi][key] = (unsigned char)slot;
    atomic_store_explicit(&ctx->check[vi][key], GS_CHECK_PENDING, memory_order_release);
    d->reason = GS_R_SELFCHECK;
  }
  return GS_GATE_ANSWERED;
}

static gs_gate start(gs_gemm *g, gs_decision *d, const gs_kernel_args *a, int vi, int key,
                     int *status)
{
  gs_ctx *ctx = d->ctx;
  if (gs_gpu_stream_capturing(g->stream)) return forward(d, GS_R_UNCHECKED);
  if (pthread_mutex_trylock(&ctx->lock) != 0) return forward(d, GS_R_CHECKING);
  int state = atomic_load_explicit(&ctx->check[vi][key], memory_order_acquire);
  gs_gate gate;
  if (state != GS_CHECK_NONE) {
    gate = settled(d, state);
  } else {
    gs_relaxed r;
    gs_relax(&r);
    gate = start_locked(g, d, a, vi, key, status);
    gs_unrelax(&r);
  }
  pthread_mutex_unlock(&ctx->lock);
  return gate;
}

gs_gate gs_selfcheck_gate(gs_gemm *g, gs_decision *d, const gs_kernel_args *a, int *status)
{
  int vi = gs_variant_index(d->variant);
  if (vi < 0 || !d->ctx) return forward(d, GS_R_UNCHECKED);
  int key = gs_check_key(d->variant, g, a);
  int state = atomic_load_explicit(&d->ctx->check[vi][key], memory_order_acquire);
  switch (state) {
  case GS_CHECK_PASSED: return GS_GATE_SERVE;
  case GS_CHECK_PENDING: {
    int recheck = 0;
    gs_gate gate = finish(d, vi, key, &recheck);
    return recheck ? start(g, d, a, vi, key, status) : gate;
  }
  case GS_CHECK_NONE: return start(g, d, a, vi, key, status);
  default: return forward(d, GS_R_DISABLED);
  }
}
