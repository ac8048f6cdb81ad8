/* The real type and math predicates of the kernel variants
 * (dispatch/math_rules.c): which FP32 calls may run on the tensor cores,
 * and who has to ask for it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <cublas_api.h>
#include <library_types.h>

#include "../dispatch/math_rules.h"

static gs_gemm f32_blas(int compute, int math)
{
  gs_gemm g;
  memset(&g, 0, sizeof g);
  g.a_type = g.b_type = g.c_type = g.d_type = CUDA_R_32F;
  g.compute_type = compute;
  g.scale_type = GS_NONE;
  g.math_mode = math;
  g.state_loaded = 1;
  return g;
}

static gs_gemm f32_lt(int compute, int scale)
{
  gs_gemm g = f32_blas(compute, GS_NONE);
  g.is_lt = 1;
  g.scale_type = scale;
  return g;
}

static void test_strict_f32_types(void **s)
{
  (void)s;
  gs_gemm g = f32_blas(GS_NONE, CUBLAS_DEFAULT_MATH);
  assert_true(gs_f32_types(&g));
  g.compute_type = CUBLAS_COMPUTE_32F;
  assert_true(gs_f32_types(&g));
  g.compute_type = CUBLAS_COMPUTE_32F_PEDANTIC;
  assert_true(gs_f32_types(&g));
  g.compute_type = CUBLAS_COMPUTE_32F_FAST_TF32;
  assert_false(gs_f32_types(&g));
  g.compute_type = CUBLAS_COMPUTE_32F_EMULATED_16BFX9;
  assert_false(gs_f32_types(&g));
  g = f32_blas(GS_NONE, CUBLAS_DEFAULT_MATH);
  g.d_type = CUDA_R_16BF;
  assert_false(gs_f32_types(&g));
}

static void test_strict_f32_math(void **s)
{
  (void)s;
  gs_gemm g = f32_blas(GS_NONE, CUBLAS_DEFAULT_MATH);
  assert_true(gs_f32_strict_math(&g));
  g.math_mode = CUBLAS_PEDANTIC_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
  assert_true(gs_f32_strict_math(&g));
  g.math_mode = CUBLAS_TF32_TENSOR_OP_MATH;
  assert_false(gs_f32_strict_math(&g));
  g.math_mode = CUBLAS_FP32_EMULATED_BF16X9_MATH;
  assert_false(gs_f32_strict_math(&g));
  g = f32_lt(CUBLAS_COMPUTE_32F, CUDA_R_32F);
  assert_true(gs_f32_strict_math(&g));
  g.scale_type = CUDA_R_64F;
  assert_false(gs_f32_strict_math(&g));
}

/* PEDANTIC always stays strict FP32; FAST_TF32 stays cuBLAS's TF32. */
static void test_tensor_core_types(void **s)
{
  (void)s;
  gs_gemm g = f32_blas(GS_NONE, CUBLAS_DEFAULT_MATH);
  assert_true(gs_f32_tc_types(&g));
  g.compute_type = CUBLAS_COMPUTE_32F;
  assert_true(gs_f32_tc_types(&g));
  g.compute_type = CUBLAS_COMPUTE_32F_EMULATED_16BFX9;
  assert_true(gs_f32_tc_types(&g));
  g.compute_type = CUBLAS_COMPUTE_32F_PEDANTIC;
  assert_false(gs_f32_tc_types(&g));
  g.compute_type = CUBLAS_COMPUTE_32F_FAST_TF32;
  assert_false(gs_f32_tc_types(&g));
  g.compute_type = CUBLAS_COMPUTE_32F_FAST_16BF;
  assert_false(gs_f32_tc_types(&g));
}

static void test_tensor_core_math(void **s)
{
  (void)s;
  gs_gemm g = f32_blas(GS_NONE, CUBLAS_DEFAULT_MATH);
  assert_true(gs_f32_tc_math(&g));
  /* PyTorch ORs in DISALLOW_REDUCED_PRECISION_REDUCTION */
  g.math_mode = CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
  assert_true(gs_f32_tc_math(&g));
  g.math_mode = CUBLAS_FP32_EMULATED_BF16X9_MATH;
  assert_true(gs_f32_tc_math(&g));
  g.math_mode = CUBLAS_PEDANTIC_MATH;
  assert_false(gs_f32_tc_math(&g));
  g.math_mode = CUBLAS_TF32_TENSOR_OP_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
  assert_false(gs_f32_tc_math(&g));
  g = f32_lt(CUBLAS_COMPUTE_32F, CUDA_R_32F);
  assert_true(gs_f32_tc_math(&g));
  g.scale_type = CUDA_R_16BF;
  assert_false(gs_f32_tc_math(&g));
}

/* Nobody asked: no. The user (GEMMSHIM_FP32=tc or cuBLAS's own variable)
 * or the program (emulation math mode or compute type) asks: yes. */
static void test_opt_in(void **s)
{
  (void)s;
  gs_config_t none, tc, emu;
  memset(&none, 0, sizeof none);
  tc = emu = none;
  tc.fp32_tc = 1;
  emu.emulate_single = 1;
  gs_gemm g = f32_blas(GS_NONE, CUBLAS_DEFAULT_MATH);
  assert_int_equal(gs_f32_tc_opted_in(&g, &none), 0);
  assert_int_equal(gs_f32_tc_opted_in(&g, &tc), 1);
  assert_int_equal(gs_f32_tc_opted_in(&g, &emu), 1);
  g.math_mode = CUBLAS_FP32_EMULATED_BF16X9_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
  assert_int_equal(gs_f32_tc_opted_in(&g, &none), 1);
  /* before the handle's math mode is read, only the math mode can still say yes */
  g.state_loaded = 0;
  assert_int_equal(gs_f32_tc_opted_in(&g, &none), -1);
  assert_int_equal(gs_f32_tc_opted_in(&g, &tc), 1);
  g = f32_blas(CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUBLAS_DEFAULT_MATH);
  g.state_loaded = 0;
  assert_int_equal(gs_f32_tc_opted_in(&g, &none), 1);
  /* cuBLASLt has no math mode: known without reading the descriptors */
  g = f32_lt(CUBLAS_COMPUTE_32F, CUDA_R_32F);
  g.state_loaded = 0;
  assert_int_equal(gs_f32_tc_opted_in(&g, &none), 0);
  assert_int_equal(gs_f32_tc_opted_in(&g, &tc), 1);
  g = f32_lt(CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUDA_R_32F);
  assert_int_equal(gs_f32_tc_opted_in(&g, &none), 1);
}

/* The fast kernel (3xTF32, up to 8x SGEMM's error on wide-range data):
 * only GEMMSHIM_FP32=tc-fast asks for it, never tc, cuBLAS's variable or a
 * program's request for emulation (which promises FP32's accuracy); and
 * GEMMSHIM_FP32=tc-fast does not ask for the accurate one. */
static void test_fast_opt_in(void **s)
{
  (void)s;
  gs_config_t none, tc, fast, emu;
  memset(&none, 0, sizeof none);
  tc = fast = emu = none;
  tc.fp32_tc = 1;
  fast.fp32_tc_fast = 1;
  emu.emulate_single = 1;
  gs_gemm g = f32_blas(GS_NONE, CUBLAS_DEFAULT_MATH);
  assert_int_equal(gs_f32_tc_fast_opted_in(&g, &none), 0);
  assert_int_equal(gs_f32_tc_fast_opted_in(&g, &tc), 0);
  assert_int_equal(gs_f32_tc_fast_opted_in(&g, &emu), 0);
  assert_int_equal(gs_f32_tc_fast_opted_in(&g, &fast), 1);
  assert_int_equal(gs_f32_tc_opted_in(&g, &fast), 0);
  g.math_mode = CUBLAS_FP32_EMULATED_BF16X9_MATH;
  assert_int_equal(gs_f32_tc_fast_opted_in(&g, &none), 0);
  g.state_loaded = 0;   /* known without reading the handle */
  assert_int_equal(gs_f32_tc_fast_opted_in(&g, &none), 0);
  g = f32_lt(CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUDA_R_32F);
  assert_int_equal(gs_f32_tc_fast_opted_in(&g, &none), 0);
  assert_int_equal(gs_f32_tc_fast_opted_in(&g, &fast), 1);
}

static void test_bf16(void **s)
{
  (void)s;
  gs_gemm g = f32_blas(CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH);
  g.a_type = g.b_type = g.c_type = g.d_type = CUDA_R_16BF;
  assert_true(gs_bf16_types(&g));
  g.compute_type = CUBLAS_COMPUTE_32F_FAST_16BF;
  assert_false(gs_bf16_types(&g));
  g.compute_type = CUBLAS_COMPUTE_32F;
  g.c_type = g.d_type = CUDA_R_32F;
  assert_false(gs_bf16_types(&g));
  g.is_lt = 1;
  g.scale_type = CUDA_R_32F;
  assert_true(gs_bf16_math(&g));
  g.scale_type = CUDA_R_16BF;
  assert_false(gs_bf16_math(&g));
}

/* FP16 with FP32 accumulation only: COMPUTE_16F (FP16 accumulation) and
 * mixed types stay cuBLAS's; a BF16 call is not FP16's. */
static void test_f16(void **s)
{
  (void)s;
  gs_gemm g = f32_blas(CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH);
  g.a_type = g.b_type = g.c_type = g.d_type = CUDA_R_16F;
  assert_true(gs_f16_types(&g));
  assert_false(gs_bf16_types(&g));
  g.compute_type = CUBLAS_COMPUTE_32F_PEDANTIC;
  assert_true(gs_f16_types(&g));
  g.compute_type = CUBLAS_COMPUTE_16F;
  assert_false(gs_f16_types(&g));
  g.compute_type = CUBLAS_COMPUTE_32F;
  g.c_type = CUDA_R_32F;
  assert_false(gs_f16_types(&g));
  g.c_type = CUDA_R_16F;
  g.b_type = CUDA_R_16BF;
  assert_false(gs_f16_types(&g));
  g.b_type = CUDA_R_16F;
  g.d_type = CUDA_R_16BF;
  assert_false(gs_f16_types(&g));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_strict_f32_types),
    cmocka_unit_test(test_strict_f32_math),
    cmocka_unit_test(test_tensor_core_types),
    cmocka_unit_test(test_tensor_core_math),
    cmocka_unit_test(test_opt_in),
    cmocka_unit_test(test_fast_opt_in),
    cmocka_unit_test(test_bf16),
    cmocka_unit_test(test_f16),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
