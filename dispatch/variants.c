/* The kernel table: what each kernel of ours can do (variants.h). Where the
 * router uses it is the routing policy, routes.c. */
#include "variants.h"

#include <library_types.h>

#include "../kernels/gemm_bf16_wgmma_persistent.h"
#include "../kernels/gemm_decode.h"
#include "../kernels/gemm_f32_3xtf32.h"
#include "../kernels/gemm_f32_bf16x6.h"
#include "../kernels/sgemm_simt.h"
#include "math_rules.h"
#include "route_table.h"

/* FP32 on the CUDA cores (kernels/sgemm_simt.md). */
const gs_variant gs_kernel_sgemm_simt = {
  .name = "sgemm_simt",
  .cc_major = 9, .cc_minor = 0,
  .data_type = CUDA_R_32F,
  .types_ok = gs_f32_types,
  .math_ok = gs_f32_strict_math,
  .layouts = GS_LAYOUT_ALL,
  .epilogues = GS_EPI_NONE | GS_EPI_BIAS,
  .bias_type = CUDA_R_32F,
  .elem_bytes = 4,
  .align_bytes = 16,
  .m_mult = GS_SGEMM_SIMT_ALIGN_MN, .n_mult = GS_SGEMM_SIMT_ALIGN_MN,
  .k_mult = GS_SGEMM_SIMT_ALIGN_K,
  /* FP32 accumulation in another order than cuBLAS's: the self-check's
   * bound leaves room for long K and still catches a lost K-slice. */
  .selfcheck_tol = 1e-5,
  .err_vs_cublas = 2.0, .err_floor = 1e-7,
  .launch = gs_sgemm_simt_launch,
  .path_of = gs_sgemm_simt_path,
  .preload = gs_sgemm_simt_preload,
};

/* BF16 on the tensor cores, persistent (kernels/gemm_bf16_wgmma_persistent.md). */
const gs_variant gs_kernel_bf16_persistent = {
  .name = "gemm_bf16_wgmma_persistent",
  .cc_major = 9, .cc_minor = 0,
  .data_type = CUDA_R_16BF,
  .types_ok = gs_bf16_types,
  .math_ok = gs_bf16_math,
  .layouts = GS_LAYOUT_TN | GS_LAYOUT_NN | GS_LAYOUT_NT,
  .epilogues = GS_EPI_NONE | GS_EPI_BIAS,
  .bias_type = CUDA_R_16BF,
  .elem_bytes = 2,
  .align_bytes = 16,
  .m_mult = GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_M, .n_mult = GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_N,
  .k_mult = GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_K,
  /* a persistent grid: at most sm_limit CTAs */
  .honours_sm_target = 1,
  /* BF16 output: ours and cuBLAS may round a value to neighbouring BF16s */
  .selfcheck_tol = 1e-2,
  .err_vs_cublas = 1.5, .err_floor = 0,
  .launch = gs_gemm_bf16_wgmma_persistent_launch,
  .preload = gs_gemm_bf16_wgmma_persistent_preload,
};

/* FP32 on the tensor cores from three BF16 parts, scaled by powers of two
 * (kernels/gemm_f32_bf16x9.md): within issue 21's bound of SGEMM's error
 * on every input class from K = 512 on (measured; not below), but other
 * numerics than SGEMM's, so the routing policy gives it only calls that
 * opted in (GEMMSHIM_FP32=tc or cuBLAS's own emulation requests). Scratch:
 * 6 bytes a value of A and B. */
const gs_variant gs_kernel_f32_bf16x6 = {
  .name = "gemm_f32_bf16x6",
  .cc_major = 9, .cc_minor = 0,
  .data_type = CUDA_R_32F,
  .types_ok = gs_f32_tc_types,
  .math_ok = gs_f32_tc_math,
  .layouts = GS_LAYOUT_ALL,
  .epilogues = GS_EPI_NONE | GS_EPI_BIAS,
  .bias_type = CUDA_R_32F,
  .elem_bytes = 4,
  .align_bytes = 16,
  .m_mult = GS_GEMM_F32_BF16X6_ALIGN_M, .n_mult = GS_GEMM_F32_BF16X6_ALIGN_N, .k_mult = 1,
  .k_min = GS_GEMM_F32_BF16X6_MIN_K,
  /* scaled rows and columns: no overflow in its sums that FP64 has not */
  .nonfinite_as_fp64 = 1,
  /* more accurate than SGEMM: the difference from cuBLAS is SGEMM's own
   * error (~1e-6 at long K); a lost K-slice is far over it */
  .selfcheck_tol = 1e-5,
  /* issue 21's bound, 1.1x SGEMM's worst case, over any one call */
  .err_vs_cublas = 1.1, .err_floor = 1e-7,
  .launch = gs_gemm_f32_bf16x6_launch,
  .preload = gs_gemm_f32_bf16x6_preload,
  .scratch_bytes = gs_gemm_f32_bf16x6_scratch_of,
};

/* FP32 on the tensor cores, 3xTF32 with FP32 accumulation of K-chunks
 * (kernels/gemm_f32_3xtf32.md): up to 8x SGEMM's error on wide-range data,
 * so the routing policy gives it only calls that asked for it by name
 * (GEMMSHIM_FP32=tc-fast). */
const gs_variant gs_kernel_f32_3xtf32 = {
  .name = "gemm_f32_3xtf32",
  .cc_major = 9, .cc_minor = 0,
  .data_type = CUDA_R_32F,
  .types_ok = gs_f32_tc_types,
  .math_ok = gs_f32_tc_math,
  .layouts = GS_LAYOUT_ALL,
  .epilogues = GS_EPI_NONE | GS_EPI_BIAS,
  .bias_type = CUDA_R_32F,
  .elem_bytes = 4,
  .align_bytes = 16,
  .m_mult = GS_GEMM_F32_3XTF32_ALIGN_M, .n_mult = GS_GEMM_F32_3XTF32_ALIGN_N,
  .k_mult = GS_GEMM_F32_3XTF32_ALIGN_K,
  /* FP32-level results: a lost cross term (TF32 level) fails the check */
  .selfcheck_tol = 1e-5,
  .err_vs_cublas = 2.0, .err_floor = 1e-7,
  .launch = gs_gemm_f32_3xtf32_launch,
  .preload = gs_gemm_f32_3xtf32_preload,
};

/* Few-token GEMMs, BF16 and FP16 (kernels/gemm_decode.md): the weight as
 * op(A), read once, or as op(B) for few rows; every m and k. */
#define DECODE_ENTRY(type, types, launcher)                                  \
  .cc_major = 9, .cc_minor = 0,                                             \
  .data_type = type,                                                        \
  .types_ok = types,                                                        \
  .math_ok = gs_bf16_math,                                                  \
  .layouts = GS_LAYOUT_TN | GS_LAYOUT_NN,                                   \
  .epilogues = GS_EPI_NONE | GS_EPI_BIAS,                                   \
  .bias_type = type,                                                        \
  .elem_bytes = 2,                                                          \
  .align_bytes = 16,                                                        \
  /* the epilogue stores elements: ldc = m of few rows (1, 3, ...) */       \
  .out_align_bytes = 2,                                                     \
  .m_mult = 1, .n_mult = 1, .k_mult = 1,                                    \
  .n_max = GS_GEMM_DECODE_MAX_N,                                            \
  /* few rows: a column-major caller's x^T W, the weight as op(B) */        \
  .layouts_few_rows = GS_LAYOUT_TN | GS_LAYOUT_TT,                          \
  .m_max = GS_GEMM_DECODE_MAX_N,                                            \
  /* 16-bit output: ours and cuBLAS may round to neighbouring values */     \
  .selfcheck_tol = 1e-2,                                                    \
  .err_vs_cublas = 1.5, .err_floor = 0,                                     \
  .launch = launcher,                                                       \
  .path_of = gs_gemm_decode_path,                                           \
  .preload = gs_gemm_decode_preload,                                        \
  .launches_pdl = gs_gemm_decode_launches_pdl
const gs_variant gs_kernel_decode_bf16 = {
  .name = "gemm_decode_bf16",
  DECODE_ENTRY(CUDA_R_16BF, gs_bf16_types, gs_gemm_decode_bf16_launch),
};
const gs_variant gs_kernel_decode_f16 = {
  .name = "gemm_decode_f16",
  DECODE_ENTRY(CUDA_R_16F, gs_f16_types, gs_gemm_decode_f16_launch),
};

/* Few-token GEMMs in FP32 (kernels/gemm_decode.md): the same family in
 * strict FP32 arithmetic (FFMA on the CUDA cores), as SGEMM computes. */
const gs_variant gs_kernel_decode_f32 = {
  .name = "gemm_decode_f32",
  .cc_major = 9, .cc_minor = 0,
  .data_type = CUDA_R_32F,
  .types_ok = gs_f32_types,
  .math_ok = gs_f32_strict_math,
  .layouts = GS_LAYOUT_TN | GS_LAYOUT_NN,
  .epilogues = GS_EPI_NONE | GS_EPI_BIAS,
  .bias_type = CUDA_R_32F,
  .elem_bytes = 4,
  .align_bytes = 16,
  .out_align_bytes = 4,
  .m_mult = 1, .n_mult = 1, .k_mult = 1,
  .n_max = GS_GEMM_DECODE_F32_MAX_N,
  .layouts_few_rows = GS_LAYOUT_TN | GS_LAYOUT_TT,
  .m_max = GS_GEMM_DECODE_F32_MAX_N,
  /* FP32 sums in another order than cuBLAS's (split K): as sgemm_simt */
  .selfcheck_tol = 1e-5,
  .err_vs_cublas = 1.5, .err_floor = 1e-7,
  .launch = gs_gemm_decode_f32_launch,
  .path_of = gs_gemm_decode_f32_path,
  .preload = gs_gemm_decode_f32_preload,
  .launches_pdl = gs_gemm_decode_launches_pdl,
};

/* The route's two paths: one product, or a strided batch of them (its
 * layouts then carry the batch; checked on its own). */
static int lt_route_path(const gs_kernel_args *a) { return a->batch > 1; }

/* cuBLASLt's own algorithms, as `gemmshim tune` measured them (lt_run.h):
 * 16-bit data with FP32 accumulation, the numerics of another cuBLAS
 * algorithm. The row names the algorithm; any alignment (the row's key
 * holds the alignment class it was measured with). */
const gs_variant gs_route_cublaslt = {
  .name = GS_RT_LT_ROUTE,
  .cc_major = 0, .cc_minor = 0,
  .data_type = GS_NONE,   /* BF16 or FP16: types_ok says */
  .types_ok = gs_lt_route_types,
  .math_ok = gs_lt_route_math,
  .layouts = GS_LAYOUT_ALL,
  .epilogues = GS_EPI_NONE | GS_EPI_BIAS,
  .bias_type = GS_NONE,   /* the output's type (cuBLASLt's default) */
  .elem_bytes = 2,
  .align_bytes = 2,
  .m_mult = 1, .n_mult = 1, .k_mult = 1,
  /* cuBLASLt honours SM_COUNT_TARGET, but no win was measured under one:
   * such calls stay cuBLAS's (the route is never forced) */
  .honours_sm_target = 0,
  /* 16-bit output: two algorithms may round a value to neighbouring values */
  .selfcheck_tol = 1e-2,
  .err_vs_cublas = 1.5, .err_floor = 0,
  .path_of = lt_route_path,
  .runs_cublaslt = 1,
  .takes_batch = 1,
};

const gs_variant *const gs_variants[] = { &gs_kernel_f32_bf16x6,      &gs_kernel_f32_3xtf32,
                                          &gs_kernel_sgemm_simt,      &gs_kernel_bf16_persistent,
                                          &gs_kernel_decode_bf16,     &gs_kernel_decode_f16,
                                          &gs_kernel_decode_f32,      &gs_route_cublaslt };
const size_t gs_n_variants = sizeof gs_variants / sizeof *gs_variants;
