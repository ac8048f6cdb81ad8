#include "fake_variants.h"

#include <cublas_api.h>
#include <library_types.h>

#include "../../dispatch/tables.h"

fake_launch_fn fake_variant_launch;
int (*fake_variant_preload)(void);

size_t fake_scratch_bytes;

static int preload(void) { return fake_variant_preload ? fake_variant_preload() : 0; }

static size_t scratch_bytes(const gs_kernel_args *a)
{
  (void)a;
  return fake_scratch_bytes;
}

#define LAUNCHER(variant)                                                            \
  static gs_kstatus launch_##variant(const gs_kernel_args *a)                        \
  {                                                                                  \
    return fake_variant_launch ? fake_variant_launch(&variant, a) : GS_K_UNSUPPORTED; \
  }
LAUNCHER(f32_variant)
LAUNCHER(bf16_variant)
LAUNCHER(opt_in_variant)
LAUNCHER(batch_variant)

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

int fake_launches_pdl;
static int launches_pdl(void) { return fake_launches_pdl; }

const gs_variant f32_variant = {
  .name = "f32_test", .cc_major = 9, .cc_minor = 0,
  .types_ok = f32_types, .math_ok = strict,
  .layouts = GS_LAYOUT_ALL, .epilogues = GS_EPI_NONE | GS_EPI_BIAS, .bias_type = CUDA_R_32F,
  .elem_bytes = 4, .align_bytes = 16, .m_mult = 128, .n_mult = 128, .k_mult = 16,
  .data_type = CUDA_R_32F, .selfcheck_tol = 1e-5, .launch = launch_f32_variant,
  .preload = preload, .scratch_bytes = scratch_bytes, .launches_pdl = launches_pdl,
  .nonfinite_as_fp64 = 1,
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

/* The route cublaslt of these tests: FP16 in and out with COMPUTE_32F,
 * which no other test variant takes, so it changes no other test's
 * reasons. Its math rule is the real one's (math_rules.c, not linked by
 * every test that links this file). */
static int lt_types(const gs_gemm *g)
{
  return g->a_type == CUDA_R_16F && g->b_type == CUDA_R_16F && g->c_type == CUDA_R_16F &&
         g->d_type == CUDA_R_16F && g->compute_type == CUBLAS_COMPUTE_32F;
}

static int lt_math(const gs_gemm *g)
{
  if (g->is_lt) return g->scale_type == CUDA_R_32F;
  return (g->math_mode & 0xf) == CUBLAS_DEFAULT_MATH;
}

const gs_variant lt_variant = {
  .name = "lt_test", .cc_major = 0, .cc_minor = 0,
  .types_ok = lt_types, .math_ok = lt_math,
  .layouts = GS_LAYOUT_ALL, .epilogues = GS_EPI_NONE | GS_EPI_BIAS, .bias_type = GS_NONE,
  .elem_bytes = 2, .align_bytes = 2, .m_mult = 1, .n_mult = 1, .k_mult = 1,
  .data_type = GS_NONE, .honours_sm_target = 1, .selfcheck_tol = 1e-2,
  .runs_cublaslt = 1, .takes_batch = 1,
};

/* A launcher that takes batches (as only the route cublaslt does in the
 * real table, whose launches need a cuBLASLt): FP32 with compute type
 * 32F_FAST_16BF, which no other variant here takes; no table row, so it
 * serves only when forced. */
static int fast_16bf_f32_types(const gs_gemm *g)
{
  return g->a_type == CUDA_R_32F && g->b_type == CUDA_R_32F && g->c_type == CUDA_R_32F &&
         g->compute_type == CUBLAS_COMPUTE_32F_FAST_16BF;
}

const gs_variant batch_variant = {
  .name = "batch_test", .cc_major = 9, .cc_minor = 0,
  .types_ok = fast_16bf_f32_types, .math_ok = any_math,
  .layouts = GS_LAYOUT_ALL, .epilogues = GS_EPI_NONE, .bias_type = CUDA_R_32F,
  .elem_bytes = 4, .align_bytes = 16, .m_mult = 1, .n_mult = 1, .k_mult = 1,
  .data_type = CUDA_R_32F, .selfcheck_tol = 1e-5, .launch = launch_batch_variant,
  .takes_batch = 1,
};

const gs_variant *const gs_variants[] = { &opt_in_variant, &f32_variant, &bf16_variant,
                                          &lt_variant, &batch_variant };
const size_t gs_n_variants = 5;

const gs_route_entry gs_routes[] = {
  { .kernel = &opt_in_variant, .opted_in = opted_in },
  { .kernel = &f32_variant },
  { .kernel = &bf16_variant },
  { .kernel = &lt_variant },
  { .kernel = &batch_variant },
};
const size_t gs_n_routes = 5;

/* The built-in table of these tests: f32_test wins on NN and TN with m, n
 * and k in 1024..8192, the other two everywhere in their class. Its
 * validators are fake_identity's (fake_gpu.c) and what the real gpu.c
 * reads from the stand-in runtime (fake_cudart.c). */
static const char h200_routes[] =
  "Validator,gpu_name,NVIDIA H200\n"
  "Validator,compute_capability,9.0\n"
  "Validator,sm_count,132\n"
  "Validator,cublas_version,13.1.0\n"
  "Validator,shim_version," PACKAGE_VERSION "\n"
  "Validator,kernel_table," FAKE_KERNEL_TABLE "\n"
  "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio\n"
  "*,f32,f32,f32,32f_emulated_16bfx9,*,*,*,*,*,*,*,opt_in_test,-,2\n"
  "*,f32,f32,f32,*,NN,*,1024-8192,1024-8192,1024-8192,*,*,f32_test,-,1.5\n"
  "*,f32,f32,f32,*,TN,*,1024-8192,1024-8192,1024-8192,*,*,f32_test,-,1.5\n"
  "*,bf16,bf16,*,*,*,*,*,*,*,*,*,bf16_test,-,1.5\n";

/* A second built-in table, for a GPU named "Fake H100" (tests set
 * fake_identity.gpu_name): f32_test routed on TT 3072^3 alone, and the
 * route cublaslt (lt_test) on FP16 NN 1024^3 with algorithm 90. */
static const char fake_h100_routes[] =
  "Validator,gpu_name,Fake H100\n"
  "Validator,compute_capability,9.0\n"
  "Validator,sm_count,132\n"
  "Validator,cublas_version,13.1.0\n"
  "Validator,shim_version," PACKAGE_VERSION "\n"
  "Validator,kernel_table," FAKE_KERNEL_TABLE "\n"
  "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio,lt_algo\n"
  "gemm,f32,f32,f32,-,TT,-,3072,3072,3072,1,16,f32_test,-,1.5,-\n"
  "gemm,f16,f16,f16,32f,NN,-,1024,1024,1024,1,16,lt_test,-,1.5,"
  "id=90;tile=20;splitk=1;reduction=0;swizzle=0;custom=0;stages=12;inner=0;cluster=0;workspace=0\n";

const char *const gs_default_route_tables[] = { h200_routes, fake_h100_routes };
const size_t gs_n_default_route_tables = 2;
