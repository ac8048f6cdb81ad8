/* What a kernel of the table can take: its class of calls checked against
 * a descriptor (the argument checks are inline, variants.h). Pure
 * functions, shared by the router, the benchmark and the checks, so that
 * all of them agree on what a kernel accepts. */
#include "variants.h"

#include <cublasLt.h>
#include <cublas_api.h>
#include <string.h>

_Static_assert(GS_OP_N == CUBLAS_OP_N && GS_OP_T == CUBLAS_OP_T, "gs_gemm holds cublasOperation_t");

const gs_variant *gs_variant_named(const char *name)
{
  for (size_t i = 0; i < gs_n_variants; i++)
    if (!strcmp(gs_variants[i]->name, name)) return gs_variants[i];
  return NULL;
}

static unsigned epilogue_bit(const gs_gemm *g)
{
  if (!g->is_lt || g->epilogue == CUBLASLT_EPILOGUE_DEFAULT) return GS_EPI_NONE;
  if (g->epilogue == CUBLASLT_EPILOGUE_BIAS) return GS_EPI_BIAS;
  return 0;
}

static int aligned(const void *p, int bytes)
{
  return ((uintptr_t)p % (uintptr_t)bytes) == 0;
}

static gs_reason alignment_check(const gs_gemm *g, const gs_variant *v)
{
  int a = v->align_bytes, out = v->out_align_bytes ? v->out_align_bytes : a;
  if (!aligned(g->A, a) || !aligned(g->B, a) || !aligned(g->C, out) ||
      (g->is_lt && !aligned(g->D, out)) ||
      (epilogue_bit(g) == GS_EPI_BIAS && !aligned(g->bias, out)))
    return GS_R_ALIGNMENT;
  int64_t per = a / v->elem_bytes, per_out = out / v->elem_bytes;
  if (per > 1 && (g->lda % per || g->ldb % per)) return GS_R_ALIGNMENT;
  if (per_out > 1 && (g->ldc % per_out || (g->is_lt && g->ldd % per_out))) return GS_R_ALIGNMENT;
  return GS_R_ROUTED;
}

gs_reason gs_variant_fits_state(const gs_variant *v, const gs_gemm *g)
{
  if (g->pointer_mode != 0 && g->pointer_mode != 1) return GS_R_POINTER_MODE;
  /* every kernel takes float scalars (types_ok and math_ok checked it);
   * with alpha == 0 cuBLAS reads neither A nor B, and ours would */
  if (g->pointer_mode == 0 && *(const float *)g->alpha == 0.0f) return GS_R_ALPHA_ZERO;
  unsigned epi = epilogue_bit(g);
  if (!(v->epilogues & epi)) return GS_R_EPILOGUE;
  /* BIAS without a pointer: cuBLAS's own answer, whatever it is */
  if (epi == GS_EPI_BIAS && !g->bias) return GS_R_EPILOGUE;
  /* GS_NONE: the bias the output's type, cuBLASLt's default */
  if (epi == GS_EPI_BIAS && g->bias_type != (v->bias_type != GS_NONE ? v->bias_type : g->d_type))
    return GS_R_EPILOGUE;
  if (g->lt_unhandled) return GS_R_LT_ATTRIBUTE;
  return alignment_check(g, v);
}
