/* The kernel table: every kernel of ours, as the router, the benchmark, the
 * GPU checks and the tools see it. An entry says what the kernel can do:
 * its launcher, the class of calls it accepts, the code paths its launcher
 * takes and its accuracy. Where it is worth using is not here: that is the
 * routing policy (routes.h). The table itself is in variants.c. */
#ifndef GS_VARIANTS_H
#define GS_VARIANTS_H

#include <stddef.h>
#include <stdint.h>
#include "gemm.h"
#include "reason.h"
#include "../kernels/gs_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cublasOperation_t's N and T (cublas_api.h), as gs_gemm holds them. */
#define GS_OP_N 0
#define GS_OP_T 1

/* Layout bits: bit (trans_a + 2 * trans_b), N = 0, T = 1. */
#define GS_LAYOUT_NN 1u
#define GS_LAYOUT_TN 2u
#define GS_LAYOUT_NT 4u
#define GS_LAYOUT_TT 8u
#define GS_LAYOUT_ALL 15u

/* Epilogue bits. */
#define GS_EPI_NONE 1u   /* plain GEMM, or cuBLASLt EPILOGUE_DEFAULT */
#define GS_EPI_BIAS 2u   /* cuBLASLt EPILOGUE_BIAS */

typedef struct gs_variant {
  const char *name;
  int cc_major, cc_minor;          /* the GPU the code is built for */
  /* The class of calls. data_type: the cudaDataType of A, B, C and D
   * (the benchmark and the checks make their data in it); types_ok and
   * math_ok: the types, compute type and math mode (after load_state)
   * it accepts, each nonzero when acceptable. */
  int data_type;
  int (*types_ok)(const gs_gemm *g);
  int (*math_ok)(const gs_gemm *g);
  unsigned layouts;
  unsigned epilogues;
  int bias_type;                   /* cudaDataType of an accepted bias */
  int elem_bytes;                  /* of A and B */
  int align_bytes;                 /* pointers and ld * elem_bytes */
  /* C, D and bias pointers, ldc and ldd: their alignment in bytes where the
   * kernel needs less there (an epilogue of scalar stores: a leading
   * dimension of a few rows); 0: align_bytes. */
  int out_align_bytes;
  int64_t m_mult, n_mult, k_mult;  /* tiling: dims must be multiples */
  int64_t n_max;                   /* the largest n it takes; 0: no bound */
  /* Few rows: a call in one of these layouts with m <= m_max is taken
   * whatever its n (n_max and `layouts` bound the other calls). The
   * launcher computes the transpose (a column-major caller's x^T W, with
   * the weight as op(B)). 0 and 0: none. */
  unsigned layouts_few_rows;
  int64_t m_max;
  int64_t k_min;                   /* the smallest k it takes; 0: no bound */
  /* Nonzero: the launcher holds its grid to gs_kernel_args.sm_limit (a
   * persistent grid). */
  int honours_sm_target;
  /* The Inf/NaN pattern of D. 0: cuBLAS's. 1: the FP64 result's wherever
   * that is decisive, which differs from SGEMM's where SGEMM's own sums
   * overflow (an overflow FP64 cancels stays finite; an Inf it keeps does
   * not become NaN); the GPU checks hold such a kernel to FP64's kinds. */
  int nonfinite_as_fp64;
  /* Accuracy. selfcheck_tol: the largest relative Frobenius difference
   * from cuBLAS's result that passes the first-use self-check.
   * err_vs_cublas: its relative error against an FP64 reference may be at
   * most this multiple of cuBLAS's own error on the same call (plus
   * err_floor, for results at rounding level); the GPU checks and the
   * benchmark hold every result to it. */
  double selfcheck_tol;
  double err_vs_cublas, err_floor;
  gs_kstatus (*launch)(const gs_kernel_args *a);
  /* The code path the launcher takes for a call (which kernel or tile it
   * picks), 0 .. GS_CHECK_PATHS - 1; NULL: one path. Each path is
   * self-checked on its own. */
  int (*path_of)(const gs_kernel_args *a);
  /* Loads the launcher's kernels into the current context (NULL: nothing
   * to load); run by the loader thread, never on a call path. */
  int (*preload)(void);
  /* Bytes of device scratch the launcher needs for a call (dispatch gives
   * it from the context's stream-ordered pool, gs_kernel_args.scratch);
   * NULL: none. */
  size_t (*scratch_bytes)(const gs_kernel_args *a);
  /* Nonzero when the launcher launches with programmatic dependent launch
   * in this process unless told not to (gs_kernel_args.no_pdl); NULL:
   * never. Route-table rows measured so hold only then (route_table.h). */
  int (*launches_pdl)(void);
  /* Nonzero for the route that runs cuBLASLt itself with the algorithm its
   * route table row names (lt_run.h): launch is NULL, and a row must name
   * the algorithm. cc_major 0: any GPU cuBLASLt runs on. */
  int runs_cublaslt;
  /* Nonzero: takes strided-batched calls (gs_kernel_args.batch) whose
   * outputs lie packed (gs_batch_packed), up to INT32_MAX items. */
  int takes_batch;
} gs_variant;

extern const gs_variant *const gs_variants[];
extern const size_t gs_n_variants;
/* The entries of variants.c, for the routing policy (routes.c). */
extern const gs_variant gs_kernel_sgemm_simt, gs_kernel_bf16_persistent, gs_kernel_f32_3xtf32,
    gs_kernel_f32_bf16x6, gs_kernel_decode_bf16, gs_kernel_decode_f16, gs_kernel_decode_f32,
    gs_route_cublaslt;

/* The entry of that name, or NULL. */
const gs_variant *gs_variant_named(const char *name);

/* The layout bit of g's op(A), op(B) (0 for CUBLAS_OP_C). */
static inline unsigned gs_layout_bit(const gs_gemm *g)
{
  if ((g->trans_a != GS_OP_N && g->trans_a != GS_OP_T) ||
      (g->trans_b != GS_OP_N && g->trans_b != GS_OP_T))
    return 0;
  return 1u << (g->trans_a + 2 * g->trans_b);
}

/* Whether v can take g, in the router's order of reasons: from the
 * arguments alone (types, batch, layout, size class; inline: the router
 * asks it of every kernel on every call), and from the state read by
 * load_state, after math_ok (pointer mode, alpha, epilogue, cuBLASLt
 * attributes, alignment; capability.c). GS_R_ROUTED when it can. */
static inline gs_reason gs_variant_fits_args(const gs_variant *v, const gs_gemm *g)
{
  if (!v->types_ok(g)) return GS_R_DTYPE;
  if (g->batch != 1 && !(v->takes_batch && g->batch > 1 && g->batch <= INT32_MAX &&
                         gs_batch_packed(g)))
    return GS_R_BATCHED;
  const unsigned bit = gs_layout_bit(g);
  if (!((v->layouts | v->layouts_few_rows) & bit)) return GS_R_LAYOUT;
  if (g->m % v->m_mult || g->n % v->n_mult || g->k % v->k_mult) return GS_R_SIZE_CLASS;
  /* our kernels index with int dimensions (cuBLASLt's own takes any) */
  if (!v->runs_cublaslt && (g->m > INT32_MAX || g->n > INT32_MAX || g->k > INT32_MAX))
    return GS_R_SIZE_CLASS;
  if (!((v->layouts_few_rows & bit) && g->m <= v->m_max)) {
    /* few rows' layout with m over m_max */
    if (!(v->layouts & bit)) return GS_R_SIZE_CLASS;
    if (v->n_max && g->n > v->n_max) return GS_R_SIZE_CLASS;
  }
  if (v->k_min && g->k < v->k_min) return GS_R_SIZE_CLASS;
  return GS_R_ROUTED;
}
gs_reason gs_variant_fits_state(const gs_variant *v, const gs_gemm *g);

#ifdef __cplusplus
}
#endif
#endif
