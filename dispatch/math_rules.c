#include "math_rules.h"

#include <cublas_api.h>
#include <library_types.h>

static int f32_data(const gs_gemm *g)
{
  return g->a_type == CUDA_R_32F && g->b_type == CUDA_R_32F && g->c_type == CUDA_R_32F &&
         g->d_type == CUDA_R_32F;
}

int gs_f32_types(const gs_gemm *g)
{
  return f32_data(g) &&
         (g->compute_type == GS_NONE || g->compute_type == CUBLAS_COMPUTE_32F ||
          g->compute_type == CUBLAS_COMPUTE_32F_PEDANTIC);
}

/* cuBLAS math mode is a bitmask (PyTorch ORs in DISALLOW_REDUCED_PRECISION_
 * REDUCTION): only the low bits name the math. */
static int math_of(const gs_gemm *g) { return g->math_mode & 0xf; }

int gs_f32_strict_math(const gs_gemm *g)
{
  if (g->is_lt) return g->scale_type == CUDA_R_32F;
  return math_of(g) == CUBLAS_DEFAULT_MATH || math_of(g) == CUBLAS_PEDANTIC_MATH;
}

int gs_f32_tc_types(const gs_gemm *g)
{
  return f32_data(g) &&
         (g->compute_type == GS_NONE || g->compute_type == CUBLAS_COMPUTE_32F ||
          g->compute_type == CUBLAS_COMPUTE_32F_EMULATED_16BFX9);
}

int gs_f32_tc_math(const gs_gemm *g)
{
  if (g->is_lt) return g->scale_type == CUDA_R_32F;
  return math_of(g) == CUBLAS_DEFAULT_MATH || math_of(g) == CUBLAS_FP32_EMULATED_BF16X9_MATH;
}

int gs_f32_tc_opted_in(const gs_gemm *g, const gs_config_t *cfg)
{
  if (cfg->fp32_tc || cfg->emulate_single) return 1;
  if (g->compute_type == CUBLAS_COMPUTE_32F_EMULATED_16BFX9) return 1;
  if (g->is_lt) return 0;   /* cuBLASLt has no math mode */
  if (!g->state_loaded) return -1;
  return math_of(g) == CUBLAS_FP32_EMULATED_BF16X9_MATH;
}

int gs_f32_tc_fast_opted_in(const gs_gemm *g, const gs_config_t *cfg)
{
  (void)g;
  return cfg->fp32_tc_fast;
}

int gs_bf16_types(const gs_gemm *g)
{
  return g->a_type == CUDA_R_16BF && g->b_type == CUDA_R_16BF && g->c_type == CUDA_R_16BF &&
         g->d_type == CUDA_R_16BF &&
         (g->compute_type == CUBLAS_COMPUTE_32F || g->compute_type == CUBLAS_COMPUTE_32F_PEDANTIC);
}

int gs_f16_types(const gs_gemm *g)
{
  return g->a_type == CUDA_R_16F && g->b_type == CUDA_R_16F && g->c_type == CUDA_R_16F &&
         g->d_type == CUDA_R_16F &&
         (g->compute_type == CUBLAS_COMPUTE_32F || g->compute_type == CUBLAS_COMPUTE_32F_PEDANTIC);
}

int gs_bf16_math(const gs_gemm *g)
{
  return !g->is_lt || g->scale_type == CUDA_R_32F;
}

int gs_lt_route_types(const gs_gemm *g)
{
  return (g->a_type == CUDA_R_16BF || g->a_type == CUDA_R_16F) && g->b_type == g->a_type &&
         g->c_type == g->a_type && g->d_type == g->a_type &&
         g->compute_type == CUBLAS_COMPUTE_32F;
}

int gs_lt_route_math(const gs_gemm *g)
{
  if (g->is_lt) return g->scale_type == CUDA_R_32F;
  return math_of(g) == CUBLAS_DEFAULT_MATH;
}
