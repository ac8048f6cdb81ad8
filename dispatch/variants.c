/* The kernel variants the router may pick, as data. A win rule is a box of
 * shapes where the variant measured at least 1.02x cuBLAS on the GPU named
 * beside it, in a benchmark CSV under bench/results/. No rule, no routing. */
#include "variants.h"

#include <cublasLt.h>
#include <cublas_api.h>
#include <library_types.h>

#include "../kernels/gemm_bf16_wgmma.h"
#include "../kernels/sgemm_simt.h"

/* FP32 in, FP32 out, FP32 math: Sgemm, GemmEx and cuBLASLt with
 * COMPUTE_32F or _PEDANTIC (FAST_TF32 and friends ask for other math). */
static int f32_types(const gs_gemm *g)
{
  return g->a_type == CUDA_R_32F && g->b_type == CUDA_R_32F && g->c_type == CUDA_R_32F &&
         g->d_type == CUDA_R_32F &&
         (g->compute_type == GS_NONE || g->compute_type == CUBLAS_COMPUTE_32F ||
          g->compute_type == CUBLAS_COMPUTE_32F_PEDANTIC);
}

/* cuBLAS math mode is a bitmask (PyTorch ORs in DISALLOW_REDUCED_PRECISION_
 * REDUCTION): only the low bits name the math. TF32 mode makes cuBLAS run
 * tensor cores, far faster than any FP32 SIMT kernel: that stays cuBLAS's. */
static int f32_strict_math(const gs_gemm *g)
{
  if (g->is_lt) return g->scale_type == CUDA_R_32F;
  int math = g->math_mode & 0xf;
  return math == CUBLAS_DEFAULT_MATH || math == CUBLAS_PEDANTIC_MATH;
}

static const gs_variant sgemm_simt = {
  .name = "sgemm_simt",
  .cc_major = 9, .cc_minor = 0,
  .types_ok = f32_types,
  .math_ok = f32_strict_math,
  .layouts = GS_LAYOUT_ALL,
  .epilogues = GS_EPI_NONE | GS_EPI_BIAS,
  .bias_type = CUDA_R_32F,
  .elem_bytes = 4,
  .align_bytes = 16,
  .m_mult = GS_SGEMM_SIMT_ALIGN_MN, .n_mult = GS_SGEMM_SIMT_ALIGN_MN,
  .k_mult = GS_SGEMM_SIMT_ALIGN_K,
  /* Measured wins (bench/results/): none yet, so nothing is routed. */
  .wins = NULL, .n_wins = 0,
  /* FP32 with FP32 accumulation in another order than cuBLAS's: ~1e-6 apart
   * at K = 4096; 1e-5 leaves room for K up to ~1e5 and catches any real bug. */
  .selfcheck_tol = 1e-5,
  .launch = gs_sgemm_simt_launch,
};

/* BF16 in and out, FP32 accumulation and scalars: GemmEx with
 * COMPUTE_32F (PyTorch's bf16 autocast) and cuBLASLt (nn.Linear). */
static int bf16_types(const gs_gemm *g)
{
  return g->a_type == CUDA_R_16BF && g->b_type == CUDA_R_16BF && g->c_type == CUDA_R_16BF &&
         g->d_type == CUDA_R_16BF &&
         (g->compute_type == CUBLAS_COMPUTE_32F || g->compute_type == CUBLAS_COMPUTE_32F_PEDANTIC);
}

/* Math mode does not change a BF16 GEMM with FP32 accumulation; cuBLASLt
 * must scale in FP32. */
static int bf16_math(const gs_gemm *g)
{
  return !g->is_lt || g->scale_type == CUDA_R_32F;
}

static const gs_variant gemm_bf16_wgmma = {
  .name = "gemm_bf16_wgmma",
  .cc_major = 9, .cc_minor = 0,
  .types_ok = bf16_types,
  .math_ok = bf16_math,
  .layouts = GS_LAYOUT_TN,
  .epilogues = GS_EPI_NONE | GS_EPI_BIAS,
  .bias_type = CUDA_R_16BF,
  .elem_bytes = 2,
  .align_bytes = 16,
  .m_mult = GS_GEMM_BF16_WGMMA_ALIGN_M, .n_mult = GS_GEMM_BF16_WGMMA_ALIGN_N,
  .k_mult = GS_GEMM_BF16_WGMMA_ALIGN_K,
  /* Measured (bench/results/bf16_wgmma-h200-2026-12-02.csv): 0.93-1.02x
   * cuBLAS under the power cap, no shape at 1.02x on both runs: no wins. */
  .wins = NULL, .n_wins = 0,
  /* BF16 output: ours and cuBLAS round differently (~2e-3 apart). */
  .selfcheck_tol = 1e-2,
  .launch = gs_gemm_bf16_wgmma_launch,
};

const gs_variant *const gs_variants[] = { &sgemm_simt, &gemm_bf16_wgmma };
const size_t gs_n_variants = sizeof gs_variants / sizeof *gs_variants;
