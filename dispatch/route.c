/* The routing decision over a gs_gemm: argument checks as cuBLAS makes
 * them, then, kernel by kernel in the routing policy's order (routes.h),
 * its class (the kernel table's capability checks), its opt-in, whether a
 * route table sends the call to it (tables.h), and whether this GPU can
 * run it. */
#include "route.h"

#include <cublas_api.h>
#include <string.h>

#include "config.h"
#include "gpu.h"
#include "health.h"
#include "lt_algo.h"
#include "routes.h"
#include "tables.h"

static int op_valid(int op)
{
  return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static int64_t max1(int64_t v) { return v > 1 ? v : 1; }

int gs_args_invalid(const gs_gemm *g)
{
  if (!op_valid(g->trans_a) || !op_valid(g->trans_b)) return 1;
  if (g->m < 0 || g->n < 0 || g->k < 0 || g->batch < 0) return 1;
  if (!g->alpha || !g->beta) return 1;
  int64_t a_rows = g->trans_a == CUBLAS_OP_N ? g->m : g->k;
  int64_t b_rows = g->trans_b == CUBLAS_OP_N ? g->k : g->n;
  if (g->lda < max1(a_rows) || g->ldb < max1(b_rows) || g->ldc < max1(g->m))
    return 1;
  if (g->is_lt && g->ldd < max1(g->m)) return 1;
  return 0;
}

/* GEMMSHIM_FORCE: every kernel (1), or the one it names, serves its whole
 * class, measured win or not (validation). Not the route cublaslt: only a
 * table row can name its algorithm, so its rows decide, forced or not. */
static int forced(const gs_variant *v)
{
  const gs_config_t *cfg = gs_config();
  return cfg->force && !v->runs_cublaslt &&
         (!cfg->force_kernel[0] || !strcmp(cfg->force_kernel, v->name));
}

/* The call's route-table key, made once, when a kernel's class first
 * takes the call. */
typedef struct lazy_key { int made; gs_rt_key k; } lazy_key;

static const gs_rt_key *key_of(const gs_gemm *g, lazy_key *lk)
{
  if (!lk->made) {
    gs_rt_key_of(g, &lk->k);
    lk->made = 1;
  }
  return &lk->k;
}

/* Everything decidable from the call's arguments alone: the class, the
 * tiling, and whether any table that may apply sends it to this kernel
 * (GEMMSHIM_FORCE=1 routes the whole class). */
static gs_reason static_checks(const gs_gemm *g, const gs_route_entry *r, lazy_key *lk)
{
  const gs_variant *v = r->kernel;
  if (v->runs_cublaslt && !gs_tables_name(v)) return GS_R_NOT_TUNED;
  gs_reason why = gs_variant_fits_args(v, g);
  if (why != GS_R_ROUTED) return why;
  /* forced: the state decides, math mode before opt-in (state_checks) */
  if (forced(v)) return GS_R_ROUTED;
  why = gs_tables_precheck(key_of(g, lk), v);
  if (why != GS_R_ROUTED) return why;
  /* an opt-in that is surely missing costs no state read */
  if (r->opted_in && r->opted_in(g) == 0) return GS_R_NOT_OPTED_IN;
  return GS_R_ROUTED;
}

/* What needs the handle's or descriptor's state. */
static gs_reason state_checks(const gs_gemm *g, const gs_route_entry *r)
{
  if (!r->kernel->math_ok(g)) return GS_R_MATH_MODE;
  if (r->opted_in && r->opted_in(g) != 1) return GS_R_NOT_OPTED_IN;
  return gs_variant_fits_state(r->kernel, g);
}

static gs_reason gpu_checks(const gs_gemm *g, const gs_variant *v,
                            gs_gpu_place *place, int *placed)
{
  if (!*placed) {
    if (gs_gpu_place_stream(g->stream, place) != 0) return GS_R_NO_GPU;
    *placed = 1;
  }
  if (v->cc_major && (place->cc_major != v->cc_major || place->cc_minor != v->cc_minor))
    return GS_R_ARCH;
  /* A target below the GPU's SM count asks us to leave SMs free. Only a
   * persistent grid can (one CTA per SM, at most the target's count), and
   * the wins were measured on the whole GPU: such a kernel serves a call
   * with a target only when forced (no variant has wins measured under a
   * target yet). */
  if (g->sm_count_target > 0 && g->sm_count_target < place->sm_count &&
      (!v->honours_sm_target || !forced(v)))
    return GS_R_SM_COUNT;
  if (!gs_variant_usable(v, place->ctx)) return GS_R_DISABLED;
  return GS_R_ROUTED;
}

gs_decision gs_route(gs_gemm *g)
{
  gs_decision d = { GS_R_DTYPE, NULL, -1, NULL, 0, 0, NULL };
  if (!gs_config()->route) { d.reason = GS_R_ROUTING_OFF; return d; }
  if (gs_args_invalid(g)) { d.reason = GS_R_BAD_ARGS; return d; }
  if (g->m == 0 || g->n == 0 || g->k == 0) { d.reason = GS_R_EMPTY; return d; }

  gs_gpu_place place = { -1, 0, 0, 0, 0, NULL };
  int placed = 0;
  lazy_key lk = { 0 };
  for (size_t i = 0; i < gs_n_routes; i++) {
    const gs_variant *v = gs_routes[i].kernel;
    gs_reason r = static_checks(g, &gs_routes[i], &lk);
    if (r == GS_R_ROUTED && !g->state_loaded) {
      if (!g->load_state || g->load_state(g) != 0) r = GS_R_STATE_UNREADABLE;
      g->state_loaded = 1;
    }
    /* cuBLASLt leading dimensions arrive with the state */
    if (r == GS_R_ROUTED && g->is_lt && gs_args_invalid(g)) {
      d.reason = GS_R_BAD_ARGS;
      return d;
    }
    if (r == GS_R_ROUTED) r = state_checks(g, &gs_routes[i]);
    if (r == GS_R_ROUTED) r = gpu_checks(g, v, &place, &placed);
    /* the table of the device the call runs on, its validators checked
     * (chosen, and said, on the first such call even when forced) */
    const gs_rt_row *row = NULL;
    if (r == GS_R_ROUTED) {
      if (forced(v)) (void)gs_tables_for_device(place.device);
      else r = gs_tables_decide(place.device, key_of(g, &lk), v, &row);
    }
    /* a cuBLASLt route runs its row's algorithm */
    if (r == GS_R_ROUTED && v->runs_cublaslt) {
      if (!row || !row->has_algo) r = GS_R_ROUTE_UNAVAILABLE;
      else if (!gs_lt_algo_fits_call(&row->algo, g)) r = GS_R_LT_ALGO_UNFIT;
    }
    /* a kernel serves only a call described from the library itself */
    if (r == GS_R_ROUTED && g->revalidate && g->revalidate(g) != 0) r = GS_R_STATE_UNREADABLE;
    if (r == GS_R_ROUTED) {
      d.reason = GS_R_ROUTED;
      d.variant = v;
      d.device = place.device;
      d.ctx = place.ctx;
      d.lt_algo = v->runs_cublaslt ? &row->algo : NULL;
      return d;
    }
    /* the route cublaslt takes every 16-bit call its class holds, so where
     * no row names it, that it was not tuned says nothing: the reason is
     * what our kernels met. A row that says cublas does say something,
     * also where no kernel of ours takes the call (a batch). */
    if (v->runs_cublaslt && r <= GS_R_ROUTE_UNAVAILABLE && r != GS_R_TUNED_CUBLAS) continue;
    if (r > d.reason) d.reason = r;
  }
  d.device = place.device;
  d.ctx = place.ctx;
  return d;
}
