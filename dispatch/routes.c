/* The routing policy as data (routes.h). A win box is where the kernel
 * measured at least 1.02x cuBLAS in the benchmark CSV named beside it (H200,
 * cuBLAS 13.1). No box, no routing (GEMMSHIM_FORCE aside). */
#include "routes.h"

#include "config.h"
#include "math_rules.h"


/* Points at >= 1.02x cuBLAS in both sweeps of bench/shapes/bf16_llm.txt:
 * bench/results/bf16_wgmma_persistent-llm-run1-h200-2026-12-03.csv and
 * -llm-run2-. Shapes near 1.02 that dipped below it in another run
 * (bf16_wgmma_persistent-llm_tn-*.csv) are not routed. Calls with an SM
 * count target are not wins there (bf16_wgmma_persistent-routed-sm*.csv):
 * the router gives them to this kernel only when forced. */
#define BF16_POINT(lay, m, n, k) { GS_LAYOUT_##lay, m, m, n, n, k, k }
static const gs_win_rule bf16_persistent_wins[] = {
  BF16_POINT(NN, 8192, 8192, 10240),   /* Llama-3-70B QKV dX, 8192 tokens */
  BF16_POINT(NN, 8192, 8192, 57344),   /* 70B gate_up dX, 8192 tokens */
  BF16_POINT(NN, 4096, 16384, 28672),  /* Llama-3-8B gate_up dX, 16384 tokens */
  BF16_POINT(NN, 8192, 16384, 57344),  /* 70B gate_up dX, 16384 tokens */
  BF16_POINT(NT, 8192, 8192, 4096),    /* 70B O dW, 4096 tokens */
  BF16_POINT(NT, 8192, 8192, 16384),   /* 70B O dW, 16384 tokens */
};

/* Faster than cuBLAS SGEMM and at most half its error on randn data, in
 * each of TN, NN, NT and TT, on all 56 shapes of
 * bench/shapes/f32_3xtf32_layouts.txt: bench/results/f32_3xtf32-spec-lay*.csv
 * and f32_3xtf32-default-beside-spec-lay-h200-2026-12-03.csv. Only for
 * calls that opted in (math_rules.h): its numerics are not SGEMM's. */
static int f32_tc_opted_in(const gs_gemm *g) { return gs_f32_tc_opted_in(g, gs_config()); }
static const gs_win_rule f32_3xtf32_wins[] = {
  { GS_LAYOUT_ALL, 4096, 8192, 4096, 8192, 256, 16384 },
  { GS_LAYOUT_ALL, 1024, 8192, 2048, 8192, 1024, 4096 },
};

/* Few-token GEMMs (bench/shapes/decode.txt, --roofline): a weight m x k,
 * a layout, a range of n at >= 1.02x cuBLAS in two sweeps of the same code
 * path: bench/results/gemm_decode_bf16-h200-2026-12-03-run2.csv (the
 * shipped split rule) with -run1.csv, or with -halfwave-...-run3.csv where
 * that run took the same split (the same time within 2%), or with the
 * split sweep bench/results/decode_split-h200-2026-12-03.csv; f16 the same
 * from gemm_decode_f16-*. */
#define DECODE(lay, m, k, n_lo, n_hi) { GS_LAYOUT_##lay, m, m, n_lo, n_hi, k, k }
static const gs_win_rule decode_bf16_wins[] = {
  DECODE(TN, 1024, 4096, 1, 8),      /* GQA k/v of an 8B model, F.linear */
  DECODE(TN, 2048, 4096, 1, 8),
  DECODE(NN, 5120, 5120, 1, 4),
  DECODE(NN, 32000, 4096, 1, 1),
};
static const gs_win_rule decode_f16_wins[] = {
  DECODE(TN, 1024, 4096, 1, 8),
  DECODE(TN, 2048, 4096, 1, 8),
  DECODE(TN, 5120, 5120, 1, 8),
  DECODE(NN, 8192, 8192, 1, 8),
};

#define WINS(w) .wins = w, .n_wins = sizeof w / sizeof *w
/* The opt-in FP32 kernel first: a call that asked for it gets it where it
 * wins, the strict FP32 kernel otherwise. */
const gs_route_entry gs_routes[] = {
  { .kernel = &gs_kernel_f32_3xtf32, .opted_in = f32_tc_opted_in, WINS(f32_3xtf32_wins) },
  /* no wins: its sweeps (bench/results/sgemm_simt-*.csv) found no shape at
   * 1.02x cuBLAS SGEMM; reachable under GEMMSHIM_FORCE */
  { .kernel = &gs_kernel_sgemm_simt, .wins = NULL, .n_wins = 0 },
  { .kernel = &gs_kernel_bf16_persistent, WINS(bf16_persistent_wins) },
  { .kernel = &gs_kernel_decode_bf16, WINS(decode_bf16_wins) },
  { .kernel = &gs_kernel_decode_f16, WINS(decode_f16_wins) },
};
const size_t gs_n_routes = sizeof gs_routes / sizeof *gs_routes;
