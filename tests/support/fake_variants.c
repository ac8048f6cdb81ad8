#include "fake_variants.h"

#include <cublas_api.h>
#include <library_types.h>

fake_launch_fn fake_variant_launch;
int (*fake_variant_preload)(void);

static int preload(void) { return fake_variant_preload ? fake_variant_preload() : 0; }

#define LAUNCHER(variant)                                                            \
  static gs_kstatus launch_##variant(const gs_kernel_args *a)                        \
  {                                                                                  \
    return fake_variant_launch ? fake_variant_launch(&variant, a) : GS_K_UNSUPPORTED; \
  }
LAUNCHER(f32_variant)
LAUNCHER(bf16_variant)
LAUNCHER(opt_in_variant)

static int f32_types(const gs_gemm *g)
{
  return g->a_type == CUDA_R_32F && g->b_type == CUDA_R_32F && g->c_type == CUDA_R_32F &&
         (g->compute_type == GS_NONE || g->compute_type == CUBLAS_COMPUTE_32F);
}

static int strict(const gs_gemm *g)
{
  int m = g->math_mode & 0xf;
  return g->is_lt || m == CUBLAS_DEFAULT_MATH || m == CUBLAS_PEDANTIC_MATH;
}

static int bf16_types(const gs_gemm *g)
{
  return g->a_type == CUDA_R_16BF && g->b_type == CUDA_R_16BF &&
         (g->c_type == CUDA_R_16BF || g->c_type == CUDA_R_32F) &&
         g->compute_type == CUBLAS_COMPUTE_32F;
}

static int any_math(const gs_gemm *g)
{
  (void)g;
  return 1;
}

static const gs_win_rule f32_wins[] = {
  { GS_LAYOUT_NN | GS_LAYOUT_TN, 1024, 8192, 1024, 8192, 1024, 8192 },
};

static const gs_win_rule bf16_wins[] = {
  { GS_LAYOUT_ALL, 1, INT64_MAX, 1, INT64_MAX, 1, INT64_MAX },
};

const gs_variant f32_variant = {
  .name = "f32_test", .cc_major = 9, .cc_minor = 0,
  .types_ok = f32_types, .math_ok = strict,
  .layouts = GS_LAYOUT_ALL, .epilogues = GS_EPI_NONE | GS_EPI_BIAS, .bias_type = CUDA_R_32F,
  .elem_bytes = 4, .align_bytes = 16, .m_mult = 128, .n_mult = 128, .k_mult = 16,
  .data_type = CUDA_R_32F, .selfcheck_tol = 1e-5, .launch = launch_f32_variant,
  .preload = preload,
};

const gs_variant bf16_variant = {
  .name = "bf16_test", .cc_major = 9, .cc_minor = 0,
  .types_ok = bf16_types, .math_ok = any_math,
  .layouts = GS_LAYOUT_TN, .epilogues = GS_EPI_NONE, .bias_type = CUDA_R_16BF,
  .elem_bytes = 2, .align_bytes = 16, .m_mult = 64, .n_mult = 64, .k_mult = 64,
  .data_type = CUDA_R_16BF, .honours_sm_target = 1, .selfcheck_tol = 1e-2,
  .launch = launch_bf16_variant,
};

/* An opt-in kernel: FP32 asked for as emulated FP32 (compute type
 * EMULATED_16BFX9, which nothing else in these tests uses). */
int fake_opted_in, fake_opted_in_later;

static int emulated_f32_types(const gs_gemm *g)
{
  return g->a_type == CUDA_R_32F && g->b_type == CUDA_R_32F && g->c_type == CUDA_R_32F &&
         g->compute_type == CUBLAS_COMPUTE_32F_EMULATED_16BFX9;
}

static int opted_in(const gs_gemm *g)
{
  if (fake_opted_in < 0) return g->state_loaded ? fake_opted_in_later : -1;
  return fake_opted_in;
}

const gs_variant opt_in_variant = {
  .name = "opt_in_test", .cc_major = 9, .cc_minor = 0,
  .types_ok = emulated_f32_types, .math_ok = any_math,
  .layouts = GS_LAYOUT_ALL, .epilogues = GS_EPI_NONE, .bias_type = CUDA_R_32F,
  .elem_bytes = 4, .align_bytes = 16, .m_mult = 128, .n_mult = 128, .k_mult = 32,
  .data_type = CUDA_R_32F, .selfcheck_tol = 1e-5, .launch = launch_opt_in_variant,
};

const gs_variant *const gs_variants[] = { &opt_in_variant, &f32_variant, &bf16_variant };
const size_t gs_n_variants = 3;

const gs_route_entry gs_routes[] = {
  { .kernel = &opt_in_variant, .opted_in = opted_in, .wins = bf16_wins, .n_wins = 1 },
  { .kernel = &f32_variant, .wins = f32_wins, .n_wins = 1 },
  { .kernel = &bf16_variant, .wins = bf16_wins, .n_wins = 1 },
};
const size_t gs_n_routes = 3;
