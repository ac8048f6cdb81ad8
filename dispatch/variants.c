/* The kernel variants the router may pick, as data. A win rule is a box of
 * shapes where the variant measured at least 1.02x cuBLAS on the GPU named
 * beside it, in a benchmark CSV under bench/results/. No rule, no routing. */
#include "variants.h"

#include <cublasLt.h>
#include <cublas_api.h>
#include <library_types.h>

#include "../kernels/gemm_bf16_wgmma_persistent.h"
#include "../kernels/gemm_f32_3xtf32.h"
#include "../kernels/sgemm_simt.h"
#include "config.h"
#include "math_rules.h"

static const gs_variant sgemm_simt = {
  .name = "sgemm_simt",
  .cc_major = 9, .cc_minor = 0,
  .types_ok = gs_f32_types,
  .math_ok = gs_f32_strict_math,
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
  .path_of = gs_sgemm_simt_path,
  .preload = gs_sgemm_simt_preload,
};

/* Shapes at >= 1.02x cuBLAS in both sweeps of bench/shapes/bf16_llm.txt
 * (bench/results/bf16_wgmma_persistent-llm-run{1,2}-h200-2026-12-03.csv,
 * H200, cuBLAS 13.1, power-capped): Llama-3-70B/8B backward GEMMs. The TN
 * shapes near 1.02 (8192^3, 8192x8192x28672) dipped to 1.011-1.018 in
 * other runs (bf16_wgmma_persistent-llm_tn-*): not routed. */
#define BF16_POINT(lay, m, n, k) { GS_LAYOUT_##lay, m, m, n, n, k, k }
static const gs_win_rule bf16_persistent_wins[] = {
  BF16_POINT(NN, 8192, 8192, 10240),   /* 70B QKV dX, 8192 tokens: 1.026 / 1.024 */
  BF16_POINT(NN, 8192, 8192, 57344),   /* 70B gate_up dX, 8192 tokens: 1.031 / 1.022 */
  BF16_POINT(NN, 4096, 16384, 28672),  /* 8B gate_up dX, 16384 tokens: 1.025 / 1.024 */
  BF16_POINT(NN, 8192, 16384, 57344),  /* 70B gate_up dX, 16384 tokens: 1.062 / 1.021 */
  BF16_POINT(NT, 8192, 8192, 4096),    /* 70B O dW, 4096 tokens: 1.023 / 1.022 */
  BF16_POINT(NT, 8192, 8192, 16384),   /* 70B O dW, 16384 tokens: 1.021 / 1.025 */
};

static const gs_variant gemm_bf16_wgmma_persistent = {
  .name = "gemm_bf16_wgmma_persistent",
  .cc_major = 9, .cc_minor = 0,
  .types_ok = gs_bf16_types,
  .math_ok = gs_bf16_math,
  .layouts = GS_LAYOUT_TN | GS_LAYOUT_NN | GS_LAYOUT_NT,
  .epilogues = GS_EPI_NONE | GS_EPI_BIAS,
  .bias_type = CUDA_R_16BF,
  .elem_bytes = 2,
  .align_bytes = 16,
  .m_mult = GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_M, .n_mult = GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_N,
  .k_mult = GS_GEMM_BF16_WGMMA_PERSISTENT_ALIGN_K,
  /* Geomean 1.006x over the 74 shapes of bf16_llm.txt (TN 1.002, NN 1.007,
   * NT 1.008; range 0.955-1.062): only the points above are wins. */
  .wins = bf16_persistent_wins,
  .n_wins = sizeof bf16_persistent_wins / sizeof *bf16_persistent_wins,
  /* A persistent grid: the launcher runs at most sm_limit CTAs. Not a win
   * under a target, so such calls stay with cuBLAS unless forced: on the
   * six points above, 0.967-1.000x cuBLAS at a target of 120 SMs (wave
   * quantization: 2048 tiles are 17.1 waves of 120) and 1.001-1.023x at 66
   * (H200, 2026-12-03, gemmshim-bench --sm-target, two runs each). */
  .honours_sm_target = 1,
  /* BF16 output: ours and cuBLAS round differently (~2e-3 apart). */
  .selfcheck_tol = 1e-2,
  .launch = gs_gemm_bf16_wgmma_persistent_launch,
  .preload = gs_gemm_bf16_wgmma_persistent_preload,
};

/* FP32 on the tensor cores (3xTF32 with FP32 accumulation of K-chunks):
 * other numerics than SGEMM (kernels/gemm_f32_3xtf32.NOTES.md), so it
 * serves only calls that opted in (math_rules.h), ahead of sgemm_simt. */
static int f32_tc_opted_in(const gs_gemm *g) { return gs_f32_tc_opted_in(g, gs_config()); }

/* Where it measured faster than cuBLAS SGEMM and at most half its error on
 * randn data, in each of TN, NN, NT and TT (H200, 56 of 56 shapes of
 * bench/shapes/f32_3xtf32_layouts.txt; bench/results/f32_3xtf32-spec-lay*
 * and -default-beside-spec-lay-h200-2026-12-03.csv, one per layout's kernel,
 * see the README): m, n 4096..8192 with K = 256..16384, 1.63-2.32x, error
 * 0.19-0.49x SGEMM's; m 1024..6144, n 2048..8192, K 1024..4096 (train.py's
 * Linear shapes among them), 1.90-2.48x, error 0.21-0.42x. */
static const gs_win_rule f32_3xtf32_wins[] = {
  { GS_LAYOUT_ALL, 4096, 8192, 4096, 8192, 256, 16384 },
  { GS_LAYOUT_ALL, 1024, 8192, 2048, 8192, 1024, 4096 },
};

static const gs_variant gemm_f32_3xtf32 = {
  .name = "gemm_f32_3xtf32",
  .cc_major = 9, .cc_minor = 0,
  .types_ok = gs_f32_tc_types,
  .math_ok = gs_f32_tc_math,
  .opted_in = f32_tc_opted_in,
  .layouts = GS_LAYOUT_ALL,
  .epilogues = GS_EPI_NONE | GS_EPI_BIAS,
  .bias_type = CUDA_R_32F,
  .elem_bytes = 4,
  .align_bytes = 16,
  .m_mult = GS_GEMM_F32_3XTF32_ALIGN_M, .n_mult = GS_GEMM_F32_3XTF32_ALIGN_N,
  .k_mult = GS_GEMM_F32_3XTF32_ALIGN_K,
  .wins = f32_3xtf32_wins,
  .n_wins = sizeof f32_3xtf32_wins / sizeof *f32_3xtf32_wins,
  /* ~5e-7 from FP64 where SGEMM is 3e-7..2e-6: 1e-5 from cuBLAS's result
   * leaves room and catches a lost cross term (~1e-4, TF32 level). */
  .selfcheck_tol = 1e-5,
  .launch = gs_gemm_f32_3xtf32_launch,
  .preload = gs_gemm_f32_3xtf32_preload,
};

const gs_variant *const gs_variants[] = { &gemm_f32_3xtf32, &sgemm_simt,
                                          &gemm_bf16_wgmma_persistent };
const size_t gs_n_variants = sizeof gs_variants / sizeof *gs_variants;
