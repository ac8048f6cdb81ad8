#include "dispatch.h"

#include <cublasLt.h>
#include <cublas_api.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "ab.h"
#include "config.h"
#include "gpu.h"
#include "health.h"
#include "tally.h"

static gs_kernel_args kernel_args(const gs_gemm *g)
{
  gs_kernel_args a;
  a.m = g->m; a.n = g->n; a.k = g->k;
  a.trans_a = g->trans_a == CUBLAS_OP_T;
  a.trans_b = g->trans_b == CUBLAS_OP_T;
  a.A = g->A; a.lda = g->lda;
  a.B = g->B; a.ldb = g->ldb;
  a.C = g->C; a.ldc = g->ldc;
  a.D = g->D; a.ldd = g->ldd;
  a.scalars_on_device = g->pointer_mode == 1;
  /* Host scalars are read now, as cuBLAS does: the caller may reuse the
   * memory as soon as the call returns. */
  a.alpha = a.scalars_on_device ? 0.0f : *(const float *)g->alpha;
  a.beta = a.scalars_on_device ? 0.0f : *(const float *)g->beta;
  a.alpha_dev = a.scalars_on_device ? (const float *)g->alpha : NULL;
  a.beta_dev = a.scalars_on_device ? (const float *)g->beta : NULL;
  a.bias = g->is_lt && g->epilogue == CUBLASLT_EPILOGUE_BIAS ? g->bias : NULL;
  a.stream = (cudaStream_t)g->stream;
  a.sm_limit = g->sm_count_target > 0 ? g->sm_count_target : 0;
  return a;
}

gs_kstatus gs_launch_variant(const gs_gemm *g, const gs_variant *v, const void *c, void *d)
{
  gs_kernel_args a = kernel_args(g);
  a.C = c;
  a.D = d;
  /* GEMMSHIM_TEST_BREAK=<kernel>: drop the last k-slice so the result is
   * wrong (tests of the self-check; never set in production). */
  const char *brk = gs_config()->test_break;
  if (brk[0] && !strcmp(brk, v->name) && a.k > v->k_mult) a.k -= v->k_mult;
  return v->launch(&a);
}

static int run(const gs_gemm *g, gs_decision *d)
{
  gs_gpu_entered e;
  if (gs_gpu_enter(g->stream, &e) != 0) {
    d->reason = GS_R_NO_GPU;
    return 0;
  }
  gs_kstatus st = gs_launch_variant(g, d->variant, g->C, g->D);
  gs_gpu_leave(&e);
  if (st == GS_K_OK) return 1;
  if (st == GS_K_UNSUPPORTED) {
    /* The kernel's own check is narrower than its router entry: this call
     * goes to cuBLAS; the kernel keeps serving the rest. Said once. */
    static atomic_int said;
    if (!atomic_exchange(&said, 1))
      fprintf(stderr, "gemmshim: kernel %s refused a %lldx%lldx%lld call the router sent it; "
                      "such calls go to cuBLAS\n",
              d->variant->name, (long long)g->m, (long long)g->n, (long long)g->k);
    d->reason = GS_R_SIZE_CLASS;
  } else {
    gs_variant_disable(d->variant, d->device, "launch failed");
    d->reason = GS_R_LAUNCH_FAILED;
  }
  d->variant = NULL;
  return 0;
}

int gs_dispatch(gs_gemm *g, gs_decision *d, int *status)
{
  *d = gs_route(g);
  if (d->reason != GS_R_ROUTED) return 0;
  /* The first use of a kernel on a device, and the calls A/B mode samples,
   * run both paths and compare them. */
  int handled = gs_ab_handle(g, d, status);
  if (handled < 0) return 0;
  if (handled == 0) {
    if (!run(g, d)) return 0;
    *status = CUBLAS_STATUS_SUCCESS;
  }
  gs_tally_add(g, d);
  return 1;
}

void gs_dispatch_forwarded(const gs_gemm *g, const gs_decision *d)
{
  gs_tally_add(g, d);
}
