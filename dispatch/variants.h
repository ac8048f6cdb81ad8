/* A kernel variant as the router sees it: what it accepts, as data, and
 * where it is a measured win. The table itself is in variants.c, beside the
 * benchmark CSVs that justify its win rules. */
#ifndef GS_VARIANTS_H
#define GS_VARIANTS_H

#include <stddef.h>
#include <stdint.h>
#include "gemm.h"
#include "../kernels/gs_kernel.h"

/* Layout bits: bit (trans_a + 2 * trans_b), N = 0, T = 1. */
#define GS_LAYOUT_NN 1u
#define GS_LAYOUT_TN 2u
#define GS_LAYOUT_NT 4u
#define GS_LAYOUT_TT 8u
#define GS_LAYOUT_ALL 15u

/* Epilogue bits. */
#define GS_EPI_NONE 1u   /* plain GEMM, or cuBLASLt EPILOGUE_DEFAULT */
#define GS_EPI_BIAS 2u   /* cuBLASLt EPILOGUE_BIAS */

/* A box of shapes on which the variant measured at least 1.02x cuBLAS. */
typedef struct gs_win_rule {
  unsigned layouts;
  int64_t m_min, m_max, n_min, n_max, k_min, k_max;
} gs_win_rule;

typedef struct gs_variant {
  const char *name;
  int cc_major, cc_minor;          /* the GPU the code is built for */
  /* Types and compute type; math mode (after load_state). Each returns
   * nonzero when acceptable. */
  int (*types_ok)(const gs_gemm *g);
  int (*math_ok)(const gs_gemm *g);
  /* NULL for a kernel that serves whatever it wins; else the opt-in a
   * kernel with other numerics needs: 1 yes, 0 no, -1 not known before
   * load_state (asked again after it). */
  int (*opted_in)(const gs_gemm *g);
  unsigned layouts;
  unsigned epilogues;
  int bias_type;                   /* cudaDataType of an accepted bias */
  int elem_bytes;                  /* of A and B */
  int align_bytes;                 /* pointers and ld * elem_bytes */
  int64_t m_mult, n_mult, k_mult;  /* tiling: dims must be multiples */
  const gs_win_rule *wins;
  size_t n_wins;
  /* Nonzero: the launcher holds its grid to gs_kernel_args.sm_limit (a
   * persistent grid). Its wins are measured without a target, so such
   * calls reach it only under GEMMSHIM_FORCE (route.c). */
  int honours_sm_target;
  /* First-use self-check: the largest relative Frobenius difference from
   * cuBLAS's result that still passes. */
  double selfcheck_tol;
  gs_kstatus (*launch)(const gs_kernel_args *a);
  /* The code path the launcher takes for a call (which kernel or tile it
   * picks), 0 .. GS_CHECK_PATHS - 1; NULL: one path. Each path is
   * self-checked on its own. */
  int (*path_of)(const gs_kernel_args *a);
  /* Loads the launcher's kernels into the current context (NULL: nothing
   * to load); run by the loader thread, never on a call path. */
  int (*preload)(void);
} gs_variant;

extern const gs_variant *const gs_variants[];
extern const size_t gs_n_variants;

#endif
