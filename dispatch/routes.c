/* The routing policy as data (routes.h): the order in which kernels are
 * tried, their opt-ins, and the built-in route table. */
#include "routes.h"

#include "config.h"
#include "math_rules.h"
#include "tables.h"

static int f32_tc_opted_in(const gs_gemm *g) { return gs_f32_tc_opted_in(g, gs_config()); }
static int f32_tc_fast_opted_in(const gs_gemm *g)
{
  return gs_f32_tc_fast_opted_in(g, gs_config());
}

/* The opt-in FP32 kernels first, the accurate one before the fast one: a
 * call that asked for one gets it where it wins, the strict FP32 kernel
 * otherwise. */
const gs_route_entry gs_routes[] = {
  { .kernel = &gs_kernel_f32_bf16x6, .opted_in = f32_tc_opted_in },
  { .kernel = &gs_kernel_f32_3xtf32, .opted_in = f32_tc_fast_opted_in },
  { .kernel = &gs_kernel_sgemm_simt },
  { .kernel = &gs_kernel_bf16_persistent },
  { .kernel = &gs_kernel_decode_bf16 },
  { .kernel = &gs_kernel_decode_f16 },
  { .kernel = &gs_kernel_decode_f32 },
  /* cuBLASLt's own algorithms: only where a user's tuned table names one */
  { .kernel = &gs_route_cublaslt },
};
const size_t gs_n_routes = sizeof gs_routes / sizeof *gs_routes;

/* The built-in route tables, one per GPU measured; a device takes the one
 * of its GPU's name (tables.c). This one: what was measured on one H200
 * (cuBLAS 13.1), used only where its validators match; a user's table (GEMMSHIM_TABLE, or
 * the per-GPU cache) replaces it. Each row is a shape or a box of shapes
 * where the kernel measured at least 1.02x cuBLAS; its ratio is the
 * lowest measured in the box, its time (where one shape) that shape's. The
 * CSVs, under bench/results/:
 * - gemm_f32_3xtf32: f32_3xtf32-spec-lay-h200-2026-12-03.csv and
 *   f32_3xtf32-default-beside-spec-lay-h200-2026-12-03.csv (faster than
 *   SGEMM and at most half its error on randn data in each layout; only
 *   for calls that opted in, math_rules.h).
 * - gemm_bf16_persistent: bf16_wgmma_persistent-llm-run1- and -run2-
 *   h200-2026-12-03.csv, both runs (calls with an SM count target are not
 *   wins there, bf16_wgmma_persistent-routed-sm*.csv: only under FORCE).
 * - gemm_decode_bf16, gemm_decode_f16: gemm_decode_{bf16,f16}-h200-
 *   2026-12-03-run2.csv (back to back, before the kernels launched with
 *   programmatic dependent launch: after a producer kernel, as in a
 *   program, PDL made the kernel faster than its plain launch on every
 *   shape measured), each n range also won in -run1, -halfwave-...-run3
 *   or decode_split-h200-2026-12-03.csv on the same code path; exact rows
 *   for the measured n, a range for the n between, all measured with
 *   the kernel launched plainly (as with GEMMSHIM_PDL=0). Shapes
 *   that win only with PDL (4096x1x4096 TN, 1024x{1,8}x4096 NN,
 *   4096x1x4096 NN, BF16: after a producer in three runs,
 *   presplit-pdl-h200-2026-12-05/ and bf16x6-pp-decode-pdl-tune-train-
 *   h200-2026-12-05/; plainly launched they lose, 0.94-0.98x) are not
 *   routed yet: a row can now say that it needs PDL (column launch), but
 *   the after-producer CSVs are one run each with B and C rotating, whose
 *   cuBLAS side ran slower than a program's (H100: 0.012-0.044 of the
 *   ratio, kernels/gemm_decode.md); rows from two runs with B and C fixed
 *   (bench/pdl_routes.py) wait for an H200.
 * - gemm_sgemm_simt: none (no shape at 1.02x SGEMM in
 *   bench/results/sgemm_simt-*.csv): reachable under GEMMSHIM_FORCE.
 * - gemm_f32_bf16x6: bench/results/f32-bf16x6-h200-2026-12-05/
 *   bench-bf16x6-56-run1.csv and -run2.csv (the 56-shape sweep twice; the
 *   box holds its shapes of its class, K >= 512, all faster in both runs;
 *   ratio the least of them, 1024x2048x1024 NT; only for calls that opted
 *   in, math_rules.h).
 * The kernel_table validator was restamped when gemm_f32_bf16x6 joined
 * the table (2026-12-05), and again when the hash came to say which
 * kernels launch with programmatic dependent launch (the same day: the
 * tables that say so have a column launch, which older builds ignore): the
 * other entries and their code are unchanged, so their rows stand as
 * measured. */
static const char h200_routes[] =
  "Validator,gpu_name,NVIDIA H200\n"
  "Validator,compute_capability,9.0\n"
  "Validator,sm_count,132\n"
  "Validator,cublas_version,13.1.0\n"
  "Validator,shim_version,0.1.0\n"
  "Validator,kernel_table,d3b0b1f98d8f4898\n"
  "Validator,driver_version,580.159.04\n"
  "Validator,power_limit_w,700\n"
  "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio\n"
  "*,f32,f32,f32,*,*,*,4096-8192,4096-8192,256-16384,1,*,gemm_f32_3xtf32,-,1.6333\n"
  "*,f32,f32,f32,*,*,*,1024-8192,2048-8192,1024-4096,1,*,gemm_f32_3xtf32,-,1.883\n"
  "*,f32,f32,f32,*,*,*,1024-8192,2048-8192,1024-16384,1,*,gemm_f32_bf16x6,-,1.057\n"
  "*,bf16,bf16,bf16,*,NN,*,8192,8192,10240,1,*,gemm_bf16_wgmma_persistent,2030.06,1.0235\n"
  "*,bf16,bf16,bf16,*,NN,*,8192,8192,57344,1,*,gemm_bf16_wgmma_persistent,11219.7,1.0221\n"
  "*,bf16,bf16,bf16,*,NN,*,4096,16384,28672,1,*,gemm_bf16_wgmma_persistent,5676.74,1.0238\n"
  "*,bf16,bf16,bf16,*,NN,*,8192,16384,57344,1,*,gemm_bf16_wgmma_persistent,22571.6,1.021\n"
  "*,bf16,bf16,bf16,*,NT,*,8192,8192,4096,1,*,gemm_bf16_wgmma_persistent,801.27,1.0221\n"
  "*,bf16,bf16,bf16,*,NT,*,8192,8192,16384,1,*,gemm_bf16_wgmma_persistent,3258.82,1.0208\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,1,4096,1,*,gemm_decode_bf16,6.5,1.2155\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,2,4096,1,*,gemm_decode_bf16,6.54,1.2188\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,4,4096,1,*,gemm_decode_bf16,6.63,1.2059\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,8,4096,1,*,gemm_decode_bf16,6.79,1.1826\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,1-8,4096,1,*,gemm_decode_bf16,-,1.1826\n"
  "*,bf16,bf16,bf16,32f,TN,*,2048,1,4096,1,*,gemm_decode_bf16,9.22,1.0567\n"
  "*,bf16,bf16,bf16,32f,TN,*,2048,2,4096,1,*,gemm_decode_bf16,9.29,1.0538\n"
  "*,bf16,bf16,bf16,32f,TN,*,2048,4,4096,1,*,gemm_decode_bf16,9.36,1.0427\n"
  "*,bf16,bf16,bf16,32f,TN,*,2048,8,4096,1,*,gemm_decode_bf16,9.46,1.0385\n"
  "*,bf16,bf16,bf16,32f,TN,*,2048,1-8,4096,1,*,gemm_decode_bf16,-,1.0385\n"
  "*,bf16,bf16,bf16,32f,NN,*,5120,1,5120,1,*,gemm_decode_bf16,17.58,1.0352\n"
  "*,bf16,bf16,bf16,32f,NN,*,5120,2,5120,1,*,gemm_decode_bf16,17.59,1.0345\n"
  "*,bf16,bf16,bf16,32f,NN,*,5120,4,5120,1,*,gemm_decode_bf16,17.9,1.0204\n"
  "*,bf16,bf16,bf16,32f,NN,*,5120,1-4,5120,1,*,gemm_decode_bf16,-,1.0204\n"
  "*,bf16,bf16,bf16,32f,NN,*,32000,1,4096,1,*,gemm_decode_bf16,63.44,1.0217\n"
  "*,f16,f16,f16,32f,TN,*,1024,1,4096,1,*,gemm_decode_f16,6.51,1.2276\n"
  "*,f16,f16,f16,32f,TN,*,1024,2,4096,1,*,gemm_decode_f16,6.54,1.2284\n"
  "*,f16,f16,f16,32f,TN,*,1024,4,4096,1,*,gemm_decode_f16,6.64,1.2078\n"
  "*,f16,f16,f16,32f,TN,*,1024,8,4096,1,*,gemm_decode_f16,6.79,1.1882\n"
  "*,f16,f16,f16,32f,TN,*,1024,1-8,4096,1,*,gemm_decode_f16,-,1.1882\n"
  "*,f16,f16,f16,32f,TN,*,2048,1,4096,1,*,gemm_decode_f16,9.25,1.058\n"
  "*,f16,f16,f16,32f,TN,*,2048,2,4096,1,*,gemm_decode_f16,9.3,1.0634\n"
  "*,f16,f16,f16,32f,TN,*,2048,4,4096,1,*,gemm_decode_f16,9.38,1.0438\n"
  "*,f16,f16,f16,32f,TN,*,2048,8,4096,1,*,gemm_decode_f16,9.49,1.0406\n"
  "*,f16,f16,f16,32f,TN,*,2048,1-8,4096,1,*,gemm_decode_f16,-,1.0406\n"
  "*,f16,f16,f16,32f,TN,*,5120,1,5120,1,*,gemm_decode_f16,17.52,1.0398\n"
  "*,f16,f16,f16,32f,TN,*,5120,2,5120,1,*,gemm_decode_f16,17.56,1.0382\n"
  "*,f16,f16,f16,32f,TN,*,5120,4,5120,1,*,gemm_decode_f16,17.71,1.0379\n"
  "*,f16,f16,f16,32f,TN,*,5120,8,5120,1,*,gemm_decode_f16,18.19,1.0219\n"
  "*,f16,f16,f16,32f,TN,*,5120,1-8,5120,1,*,gemm_decode_f16,-,1.0219\n"
  "*,f16,f16,f16,32f,NN,*,8192,1,8192,1,*,gemm_decode_f16,35.36,1.0863\n"
  "*,f16,f16,f16,32f,NN,*,8192,2,8192,1,*,gemm_decode_f16,35.42,1.0848\n"
  "*,f16,f16,f16,32f,NN,*,8192,4,8192,1,*,gemm_decode_f16,35.4,1.0965\n"
  "*,f16,f16,f16,32f,NN,*,8192,8,8192,1,*,gemm_decode_f16,35.81,1.0952\n"
  "*,f16,f16,f16,32f,NN,*,8192,1-8,8192,1,*,gemm_decode_f16,-,1.0848\n";

/* The built-in table for the H100 (80GB HBM3, SXM, 132 SMs, 700 W;
 * cuBLAS 13.1): the decode kernels measured after a producer kernel with
 * programmatic dependent launch (launch pdl: they hold only where the
 * kernel launches so), B and C fixed as a program's fresh x, two runs per
 * data type: bench/results/decode-pdl-h100-2026-12-05/gemm_decode_{bf16,
 * f16}-after-producer-fixed-bc-run{1,2}.csv; rows by bench/pdl_routes.py
 * (at least 1.02x cuBLAS in both runs; no plain rows measured on this GPU,
 * so with GEMMSHIM_PDL=0 nothing here routes). gemm_decode_f32 the same
 * way against cublasSgemm_v2 (compute `*`: Sgemm_v2 has no compute type):
 * bench/results/decode-f32-h100-2026-12-06/gemm_decode_f32-after-producer-
 * fixed-bc-run{1,2}.csv (build dd88c02). */
static const char h100_routes[] =
  "Validator,gpu_name,NVIDIA H100 80GB HBM3\n"
  "Validator,compute_capability,9.0\n"
  "Validator,sm_count,132\n"
  "Validator,cublas_version,13.1.0\n"
  "Validator,shim_version,0.1.0\n"
  "Validator,kernel_table,d3b0b1f98d8f4898\n"
  "Validator,driver_version,580.159.04\n"
  "Validator,power_limit_w,700\n"
  "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio,launch\n"
  "*,bf16,bf16,bf16,32f,NN,*,1024,1,4096,1,*,gemm_decode_bf16,9.92,1.0775,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,1024,2,4096,1,*,gemm_decode_bf16,9.97,1.0774,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,1024,4,4096,1,*,gemm_decode_bf16,9.99,1.0791,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,1024,8,4096,1,*,gemm_decode_bf16,10.31,1.0454,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,1024,1-8,4096,1,*,gemm_decode_bf16,-,1.0454,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,1,4096,1,*,gemm_decode_bf16,8.66,1.2662,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,2,4096,1,*,gemm_decode_bf16,8.69,1.2594,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,4,4096,1,*,gemm_decode_bf16,8.78,1.2465,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,8,4096,1,*,gemm_decode_bf16,8.89,1.2340,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,16,4096,1,*,gemm_decode_bf16,9.62,1.1521,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,1-16,4096,1,*,gemm_decode_bf16,-,1.1521,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,1024,1,8192,1,*,gemm_decode_bf16,13.06,1.0232,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,1024,2,8192,1,*,gemm_decode_bf16,13.07,1.0233,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,1024,1-2,8192,1,*,gemm_decode_bf16,-,1.0232,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,1,8192,1,*,gemm_decode_bf16,11.83,1.1392,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,2,8192,1,*,gemm_decode_bf16,11.90,1.1401,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,4,8192,1,*,gemm_decode_bf16,11.99,1.1259,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,8,8192,1,*,gemm_decode_bf16,12.24,1.1178,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,16,8192,1,*,gemm_decode_bf16,13.21,1.0509,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,1024,1-16,8192,1,*,gemm_decode_bf16,-,1.0509,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,2048,1,4096,1,*,gemm_decode_bf16,12.58,1.0634,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,2048,2,4096,1,*,gemm_decode_bf16,12.62,1.0690,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,2048,4,4096,1,*,gemm_decode_bf16,12.72,1.0579,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,2048,8,4096,1,*,gemm_decode_bf16,12.99,1.0276,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,2048,1-8,4096,1,*,gemm_decode_bf16,-,1.0276,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,2048,1,4096,1,*,gemm_decode_bf16,11.43,1.1715,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,2048,2,4096,1,*,gemm_decode_bf16,11.44,1.1777,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,2048,4,4096,1,*,gemm_decode_bf16,11.50,1.1689,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,2048,8,4096,1,*,gemm_decode_bf16,11.59,1.1585,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,2048,16,4096,1,*,gemm_decode_bf16,12.61,1.0718,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,2048,1-16,4096,1,*,gemm_decode_bf16,-,1.0718,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,4096,1,4096,1,*,gemm_decode_bf16,17.27,1.0851,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,4096,2,4096,1,*,gemm_decode_bf16,17.28,1.0876,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,4096,4,4096,1,*,gemm_decode_bf16,17.37,1.0865,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,4096,8,4096,1,*,gemm_decode_bf16,17.50,1.0881,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,4096,16,4096,1,*,gemm_decode_bf16,18.61,1.0370,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,4096,1-16,4096,1,*,gemm_decode_bf16,-,1.0370,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,6144,1,4096,1,*,gemm_decode_bf16,23.44,1.0603,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,6144,2,4096,1,*,gemm_decode_bf16,23.50,1.0700,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,6144,4,4096,1,*,gemm_decode_bf16,23.58,1.0751,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,6144,8,4096,1,*,gemm_decode_bf16,23.66,1.0220,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,6144,1-8,4096,1,*,gemm_decode_bf16,-,1.0220,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,6144,1,4096,1,*,gemm_decode_bf16,22.29,1.0835,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,6144,2,4096,1,*,gemm_decode_bf16,22.37,1.0802,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,6144,4,4096,1,*,gemm_decode_bf16,22.53,1.0808,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,6144,8,4096,1,*,gemm_decode_bf16,22.95,1.0667,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,6144,1-8,4096,1,*,gemm_decode_bf16,-,1.0667,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,5120,1,5120,1,*,gemm_decode_bf16,22.77,1.0474,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,5120,2,5120,1,*,gemm_decode_bf16,22.80,1.0454,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,5120,4,5120,1,*,gemm_decode_bf16,23.01,1.0440,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,5120,8,5120,1,*,gemm_decode_bf16,23.44,1.0310,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,5120,1-8,5120,1,*,gemm_decode_bf16,-,1.0310,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,14336,1,4096,1,*,gemm_decode_bf16,45.67,1.0564,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,14336,2,4096,1,*,gemm_decode_bf16,45.85,1.0503,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,14336,4,4096,1,*,gemm_decode_bf16,46.04,1.0534,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,14336,8,4096,1,*,gemm_decode_bf16,46.64,1.0529,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,14336,16,4096,1,*,gemm_decode_bf16,44.39,1.1194,pdl\n"
  "*,bf16,bf16,bf16,32f,NN,*,14336,1-16,4096,1,*,gemm_decode_bf16,-,1.0503,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,32000,1,4096,1,*,gemm_decode_bf16,91.29,1.0497,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,32000,2,4096,1,*,gemm_decode_bf16,91.75,1.0541,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,32000,4,4096,1,*,gemm_decode_bf16,92.21,1.0487,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,32000,8,4096,1,*,gemm_decode_bf16,93.33,1.0404,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,32000,1-8,4096,1,*,gemm_decode_bf16,-,1.0404,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,128256,1,4096,1,*,gemm_decode_bf16,342.52,1.0672,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,128256,2,4096,1,*,gemm_decode_bf16,343.86,1.0612,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,128256,4,4096,1,*,gemm_decode_bf16,345.95,1.0621,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,128256,8,4096,1,*,gemm_decode_bf16,349.22,1.0533,pdl\n"
  "*,bf16,bf16,bf16,32f,TN,*,128256,1-8,4096,1,*,gemm_decode_bf16,-,1.0533,pdl\n"
  "*,f16,f16,f16,32f,NN,*,1024,1,4096,1,*,gemm_decode_f16,9.83,1.0686,pdl\n"
  "*,f16,f16,f16,32f,NN,*,1024,2,4096,1,*,gemm_decode_f16,9.86,1.0700,pdl\n"
  "*,f16,f16,f16,32f,NN,*,1024,4,4096,1,*,gemm_decode_f16,9.87,1.0735,pdl\n"
  "*,f16,f16,f16,32f,NN,*,1024,8,4096,1,*,gemm_decode_f16,10.21,1.0451,pdl\n"
  "*,f16,f16,f16,32f,NN,*,1024,1-8,4096,1,*,gemm_decode_f16,-,1.0451,pdl\n"
  "*,f16,f16,f16,32f,TN,*,1024,1,4096,1,*,gemm_decode_f16,8.51,1.2588,pdl\n"
  "*,f16,f16,f16,32f,TN,*,1024,2,4096,1,*,gemm_decode_f16,8.54,1.2499,pdl\n"
  "*,f16,f16,f16,32f,TN,*,1024,4,4096,1,*,gemm_decode_f16,8.65,1.2487,pdl\n"
  "*,f16,f16,f16,32f,TN,*,1024,8,4096,1,*,gemm_decode_f16,8.76,1.2364,pdl\n"
  "*,f16,f16,f16,32f,TN,*,1024,16,4096,1,*,gemm_decode_f16,9.60,1.1437,pdl\n"
  "*,f16,f16,f16,32f,TN,*,1024,1-16,4096,1,*,gemm_decode_f16,-,1.1437,pdl\n"
  "*,f16,f16,f16,32f,NN,*,1024,1,8192,1,*,gemm_decode_f16,12.96,1.0207,pdl\n"
  "*,f16,f16,f16,32f,NN,*,1024,2,8192,1,*,gemm_decode_f16,12.95,1.0224,pdl\n"
  "*,f16,f16,f16,32f,NN,*,1024,1-2,8192,1,*,gemm_decode_f16,-,1.0207,pdl\n"
  "*,f16,f16,f16,32f,TN,*,1024,1,8192,1,*,gemm_decode_f16,11.72,1.1399,pdl\n"
  "*,f16,f16,f16,32f,TN,*,1024,2,8192,1,*,gemm_decode_f16,11.78,1.1424,pdl\n"
  "*,f16,f16,f16,32f,TN,*,1024,4,8192,1,*,gemm_decode_f16,11.87,1.1299,pdl\n"
  "*,f16,f16,f16,32f,TN,*,1024,8,8192,1,*,gemm_decode_f16,12.12,1.1168,pdl\n"
  "*,f16,f16,f16,32f,TN,*,1024,16,8192,1,*,gemm_decode_f16,13.13,1.0493,pdl\n"
  "*,f16,f16,f16,32f,TN,*,1024,1-16,8192,1,*,gemm_decode_f16,-,1.0493,pdl\n"
  "*,f16,f16,f16,32f,NN,*,2048,1,4096,1,*,gemm_decode_f16,12.48,1.0642,pdl\n"
  "*,f16,f16,f16,32f,NN,*,2048,2,4096,1,*,gemm_decode_f16,12.52,1.0662,pdl\n"
  "*,f16,f16,f16,32f,NN,*,2048,4,4096,1,*,gemm_decode_f16,12.61,1.0533,pdl\n"
  "*,f16,f16,f16,32f,NN,*,2048,8,4096,1,*,gemm_decode_f16,12.89,1.0234,pdl\n"
  "*,f16,f16,f16,32f,NN,*,2048,1-8,4096,1,*,gemm_decode_f16,-,1.0234,pdl\n"
  "*,f16,f16,f16,32f,TN,*,2048,1,4096,1,*,gemm_decode_f16,11.30,1.1731,pdl\n"
  "*,f16,f16,f16,32f,TN,*,2048,2,4096,1,*,gemm_decode_f16,11.32,1.1799,pdl\n"
  "*,f16,f16,f16,32f,TN,*,2048,4,4096,1,*,gemm_decode_f16,11.38,1.1693,pdl\n"
  "*,f16,f16,f16,32f,TN,*,2048,8,4096,1,*,gemm_decode_f16,11.47,1.1540,pdl\n"
  "*,f16,f16,f16,32f,TN,*,2048,16,4096,1,*,gemm_decode_f16,12.50,1.0693,pdl\n"
  "*,f16,f16,f16,32f,TN,*,2048,1-16,4096,1,*,gemm_decode_f16,-,1.0693,pdl\n"
  "*,f16,f16,f16,32f,TN,*,4096,1,4096,1,*,gemm_decode_f16,17.15,1.0877,pdl\n"
  "*,f16,f16,f16,32f,TN,*,4096,2,4096,1,*,gemm_decode_f16,17.16,1.0883,pdl\n"
  "*,f16,f16,f16,32f,TN,*,4096,4,4096,1,*,gemm_decode_f16,17.25,1.0863,pdl\n"
  "*,f16,f16,f16,32f,TN,*,4096,1-4,4096,1,*,gemm_decode_f16,-,1.0863,pdl\n"
  "*,f16,f16,f16,32f,TN,*,4096,16,4096,1,*,gemm_decode_f16,18.37,1.0418,pdl\n"
  "*,f16,f16,f16,32f,NN,*,6144,4,4096,1,*,gemm_decode_f16,23.47,1.0210,pdl\n"
  "*,f16,f16,f16,32f,NN,*,6144,8,4096,1,*,gemm_decode_f16,23.58,1.0209,pdl\n"
  "*,f16,f16,f16,32f,NN,*,6144,4-8,4096,1,*,gemm_decode_f16,-,1.0209,pdl\n"
  "*,f16,f16,f16,32f,TN,*,6144,1,4096,1,*,gemm_decode_f16,22.15,1.0802,pdl\n"
  "*,f16,f16,f16,32f,TN,*,6144,2,4096,1,*,gemm_decode_f16,22.25,1.0790,pdl\n"
  "*,f16,f16,f16,32f,TN,*,6144,4,4096,1,*,gemm_decode_f16,22.44,1.0753,pdl\n"
  "*,f16,f16,f16,32f,TN,*,6144,8,4096,1,*,gemm_decode_f16,22.84,1.0639,pdl\n"
  "*,f16,f16,f16,32f,TN,*,6144,1-8,4096,1,*,gemm_decode_f16,-,1.0639,pdl\n"
  "*,f16,f16,f16,32f,TN,*,5120,1,5120,1,*,gemm_decode_f16,22.62,1.0481,pdl\n"
  "*,f16,f16,f16,32f,TN,*,5120,2,5120,1,*,gemm_decode_f16,22.72,1.0487,pdl\n"
  "*,f16,f16,f16,32f,TN,*,5120,4,5120,1,*,gemm_decode_f16,22.85,1.0452,pdl\n"
  "*,f16,f16,f16,32f,TN,*,5120,8,5120,1,*,gemm_decode_f16,23.32,1.0291,pdl\n"
  "*,f16,f16,f16,32f,TN,*,5120,1-8,5120,1,*,gemm_decode_f16,-,1.0291,pdl\n"
  "*,f16,f16,f16,32f,NN,*,14336,1,4096,1,*,gemm_decode_f16,45.64,1.0553,pdl\n"
  "*,f16,f16,f16,32f,NN,*,14336,2,4096,1,*,gemm_decode_f16,45.79,1.0501,pdl\n"
  "*,f16,f16,f16,32f,NN,*,14336,4,4096,1,*,gemm_decode_f16,45.95,1.0531,pdl\n"
  "*,f16,f16,f16,32f,NN,*,14336,8,4096,1,*,gemm_decode_f16,46.53,1.0539,pdl\n"
  "*,f16,f16,f16,32f,NN,*,14336,16,4096,1,*,gemm_decode_f16,44.23,1.1252,pdl\n"
  "*,f16,f16,f16,32f,NN,*,14336,1-16,4096,1,*,gemm_decode_f16,-,1.0501,pdl\n"
  "*,f16,f16,f16,32f,TN,*,32000,1,4096,1,*,gemm_decode_f16,91.14,1.0481,pdl\n"
  "*,f16,f16,f16,32f,TN,*,32000,2,4096,1,*,gemm_decode_f16,91.59,1.0461,pdl\n"
  "*,f16,f16,f16,32f,TN,*,32000,4,4096,1,*,gemm_decode_f16,92.27,1.0407,pdl\n"
  "*,f16,f16,f16,32f,TN,*,32000,8,4096,1,*,gemm_decode_f16,93.20,1.0431,pdl\n"
  "*,f16,f16,f16,32f,TN,*,32000,1-8,4096,1,*,gemm_decode_f16,-,1.0407,pdl\n"
  "*,f16,f16,f16,32f,TN,*,128256,1,4096,1,*,gemm_decode_f16,342.56,1.0663,pdl\n"
  "*,f16,f16,f16,32f,TN,*,128256,2,4096,1,*,gemm_decode_f16,343.55,1.0637,pdl\n"
  "*,f16,f16,f16,32f,TN,*,128256,4,4096,1,*,gemm_decode_f16,345.83,1.0631,pdl\n"
  "*,f16,f16,f16,32f,TN,*,128256,8,4096,1,*,gemm_decode_f16,349.05,1.0526,pdl\n"
  "*,f16,f16,f16,32f,TN,*,128256,1-8,4096,1,*,gemm_decode_f16,-,1.0526,pdl\n"
  "*,f32,f32,f32,*,NN,*,1024,1,4096,1,*,gemm_decode_f32,11.34,1.1979,pdl\n"
  "*,f32,f32,f32,*,NN,*,1024,2,4096,1,*,gemm_decode_f32,12.03,1.6109,pdl\n"
  "*,f32,f32,f32,*,NN,*,1024,4,4096,1,*,gemm_decode_f32,14.08,1.3787,pdl\n"
  "*,f32,f32,f32,*,NN,*,1024,1-4,4096,1,*,gemm_decode_f32,-,1.1979,pdl\n"
  "*,f32,f32,f32,*,TN,*,1024,2,4096,1,*,gemm_decode_f32,11.27,2.0141,pdl\n"
  "*,f32,f32,f32,*,TN,*,1024,4,4096,1,*,gemm_decode_f32,11.67,2.0056,pdl\n"
  "*,f32,f32,f32,*,TN,*,1024,8,4096,1,*,gemm_decode_f32,11.60,2.1095,pdl\n"
  "*,f32,f32,f32,*,TN,*,1024,2-8,4096,1,*,gemm_decode_f32,-,2.0056,pdl\n"
  "*,f32,f32,f32,*,NN,*,1024,1,8192,1,*,gemm_decode_f32,17.24,1.1396,pdl\n"
  "*,f32,f32,f32,*,NN,*,1024,2,8192,1,*,gemm_decode_f32,18.16,1.7071,pdl\n"
  "*,f32,f32,f32,*,NN,*,1024,4,8192,1,*,gemm_decode_f32,22.22,1.3957,pdl\n"
  "*,f32,f32,f32,*,NN,*,1024,1-4,8192,1,*,gemm_decode_f32,-,1.1396,pdl\n"
  "*,f32,f32,f32,*,TN,*,1024,2,8192,1,*,gemm_decode_f32,16.60,2.3819,pdl\n"
  "*,f32,f32,f32,*,TN,*,1024,4,8192,1,*,gemm_decode_f32,16.91,2.4637,pdl\n"
  "*,f32,f32,f32,*,TN,*,1024,8,8192,1,*,gemm_decode_f32,17.49,4.1476,pdl\n"
  "*,f32,f32,f32,*,TN,*,1024,2-8,8192,1,*,gemm_decode_f32,-,2.3819,pdl\n"
  "*,f32,f32,f32,*,NN,*,2048,1,4096,1,*,gemm_decode_f32,16.36,1.2184,pdl\n"
  "*,f32,f32,f32,*,NN,*,2048,2,4096,1,*,gemm_decode_f32,17.06,1.6396,pdl\n"
  "*,f32,f32,f32,*,NN,*,2048,4,4096,1,*,gemm_decode_f32,18.24,1.5413,pdl\n"
  "*,f32,f32,f32,*,NN,*,2048,8,4096,1,*,gemm_decode_f32,24.59,1.1514,pdl\n"
  "*,f32,f32,f32,*,NN,*,2048,1-8,4096,1,*,gemm_decode_f32,-,1.1514,pdl\n"
  "*,f32,f32,f32,*,TN,*,2048,1,4096,1,*,gemm_decode_f32,16.39,1.0327,pdl\n"
  "*,f32,f32,f32,*,TN,*,2048,2,4096,1,*,gemm_decode_f32,16.55,1.5011,pdl\n"
  "*,f32,f32,f32,*,TN,*,2048,4,4096,1,*,gemm_decode_f32,16.09,1.6412,pdl\n"
  "*,f32,f32,f32,*,TN,*,2048,8,4096,1,*,gemm_decode_f32,16.55,2.7702,pdl\n"
  "*,f32,f32,f32,*,TN,*,2048,1-8,4096,1,*,gemm_decode_f32,-,1.0327,pdl\n"
  "*,f32,f32,f32,*,NN,*,4096,2,4096,1,*,gemm_decode_f32,28.16,2.4680,pdl\n"
  "*,f32,f32,f32,*,NN,*,4096,4,4096,1,*,gemm_decode_f32,29.98,2.3365,pdl\n"
  "*,f32,f32,f32,*,NN,*,4096,8,4096,1,*,gemm_decode_f32,32.25,1.4687,pdl\n"
  "*,f32,f32,f32,*,NN,*,4096,2-8,4096,1,*,gemm_decode_f32,-,1.4687,pdl\n"
  "*,f32,f32,f32,*,TN,*,4096,1,4096,1,*,gemm_decode_f32,26.19,1.1846,pdl\n"
  "*,f32,f32,f32,*,TN,*,4096,2,4096,1,*,gemm_decode_f32,26.54,1.2492,pdl\n"
  "*,f32,f32,f32,*,TN,*,4096,4,4096,1,*,gemm_decode_f32,27.84,1.2357,pdl\n"
  "*,f32,f32,f32,*,TN,*,4096,8,4096,1,*,gemm_decode_f32,28.93,1.7569,pdl\n"
  "*,f32,f32,f32,*,TN,*,4096,1-8,4096,1,*,gemm_decode_f32,-,1.1846,pdl\n"
  "*,f32,f32,f32,*,NN,*,6144,1,4096,1,*,gemm_decode_f32,38.31,1.0219,pdl\n"
  "*,f32,f32,f32,*,NN,*,6144,2,4096,1,*,gemm_decode_f32,38.68,1.9304,pdl\n"
  "*,f32,f32,f32,*,NN,*,6144,4,4096,1,*,gemm_decode_f32,38.80,1.9436,pdl\n"
  "*,f32,f32,f32,*,NN,*,6144,8,4096,1,*,gemm_decode_f32,47.42,1.5585,pdl\n"
  "*,f32,f32,f32,*,NN,*,6144,1-8,4096,1,*,gemm_decode_f32,-,1.0219,pdl\n"
  "*,f32,f32,f32,*,TN,*,6144,1,4096,1,*,gemm_decode_f32,37.20,1.1280,pdl\n"
  "*,f32,f32,f32,*,TN,*,6144,2,4096,1,*,gemm_decode_f32,37.44,1.1673,pdl\n"
  "*,f32,f32,f32,*,TN,*,6144,4,4096,1,*,gemm_decode_f32,37.71,1.5781,pdl\n"
  "*,f32,f32,f32,*,TN,*,6144,8,4096,1,*,gemm_decode_f32,40.84,2.2367,pdl\n"
  "*,f32,f32,f32,*,TN,*,6144,1-8,4096,1,*,gemm_decode_f32,-,1.1280,pdl\n"
  "*,f32,f32,f32,*,NN,*,5120,1,5120,1,*,gemm_decode_f32,39.95,1.0416,pdl\n"
  "*,f32,f32,f32,*,NN,*,5120,2,5120,1,*,gemm_decode_f32,40.55,2.0343,pdl\n"
  "*,f32,f32,f32,*,NN,*,5120,4,5120,1,*,gemm_decode_f32,41.05,2.0387,pdl\n"
  "*,f32,f32,f32,*,NN,*,5120,8,5120,1,*,gemm_decode_f32,42.69,1.8890,pdl\n"
  "*,f32,f32,f32,*,NN,*,5120,1-8,5120,1,*,gemm_decode_f32,-,1.0416,pdl\n"
  "*,f32,f32,f32,*,TN,*,5120,1,5120,1,*,gemm_decode_f32,39.26,1.1168,pdl\n"
  "*,f32,f32,f32,*,TN,*,5120,2,5120,1,*,gemm_decode_f32,39.61,1.2358,pdl\n"
  "*,f32,f32,f32,*,TN,*,5120,4,5120,1,*,gemm_decode_f32,39.07,1.3104,pdl\n"
  "*,f32,f32,f32,*,TN,*,5120,8,5120,1,*,gemm_decode_f32,44.98,1.5063,pdl\n"
  "*,f32,f32,f32,*,TN,*,5120,1-8,5120,1,*,gemm_decode_f32,-,1.1168,pdl\n"
  "*,f32,f32,f32,*,NN,*,4096,2,14336,1,*,gemm_decode_f32,83.55,1.7829,pdl\n"
  "*,f32,f32,f32,*,NN,*,4096,4,14336,1,*,gemm_decode_f32,88.37,1.7199,pdl\n"
  "*,f32,f32,f32,*,NN,*,4096,8,14336,1,*,gemm_decode_f32,93.95,1.7971,pdl\n"
  "*,f32,f32,f32,*,NN,*,4096,2-8,14336,1,*,gemm_decode_f32,-,1.7199,pdl\n"
  "*,f32,f32,f32,*,TN,*,4096,1,14336,1,*,gemm_decode_f32,80.93,1.0611,pdl\n"
  "*,f32,f32,f32,*,TN,*,4096,2,14336,1,*,gemm_decode_f32,81.03,1.3731,pdl\n"
  "*,f32,f32,f32,*,TN,*,4096,4,14336,1,*,gemm_decode_f32,86.46,1.3079,pdl\n"
  "*,f32,f32,f32,*,TN,*,4096,8,14336,1,*,gemm_decode_f32,89.37,1.8850,pdl\n"
  "*,f32,f32,f32,*,TN,*,4096,1-8,14336,1,*,gemm_decode_f32,-,1.0611,pdl\n"
  "*,f32,f32,f32,*,NN,*,14336,1,4096,1,*,gemm_decode_f32,81.40,1.0225,pdl\n"
  "*,f32,f32,f32,*,NN,*,14336,2,4096,1,*,gemm_decode_f32,81.89,1.2613,pdl\n"
  "*,f32,f32,f32,*,NN,*,14336,4,4096,1,*,gemm_decode_f32,80.83,1.2926,pdl\n"
  "*,f32,f32,f32,*,NN,*,14336,8,4096,1,*,gemm_decode_f32,92.68,1.2342,pdl\n"
  "*,f32,f32,f32,*,NN,*,14336,1-8,4096,1,*,gemm_decode_f32,-,1.0225,pdl\n"
  "*,f32,f32,f32,*,TN,*,14336,1,4096,1,*,gemm_decode_f32,80.29,1.0754,pdl\n"
  "*,f32,f32,f32,*,TN,*,14336,2,4096,1,*,gemm_decode_f32,80.78,1.2974,pdl\n"
  "*,f32,f32,f32,*,TN,*,14336,4,4096,1,*,gemm_decode_f32,80.93,1.2867,pdl\n"
  "*,f32,f32,f32,*,TN,*,14336,8,4096,1,*,gemm_decode_f32,87.68,1.5687,pdl\n"
  "*,f32,f32,f32,*,TN,*,14336,1-8,4096,1,*,gemm_decode_f32,-,1.0754,pdl\n"
  "*,f32,f32,f32,*,NN,*,8192,1,8192,1,*,gemm_decode_f32,90.51,1.0436,pdl\n"
  "*,f32,f32,f32,*,NN,*,8192,2,8192,1,*,gemm_decode_f32,90.99,1.4143,pdl\n"
  "*,f32,f32,f32,*,NN,*,8192,4,8192,1,*,gemm_decode_f32,97.16,1.3381,pdl\n"
  "*,f32,f32,f32,*,NN,*,8192,8,8192,1,*,gemm_decode_f32,106.24,1.2480,pdl\n"
  "*,f32,f32,f32,*,NN,*,8192,1-8,8192,1,*,gemm_decode_f32,-,1.0436,pdl\n"
  "*,f32,f32,f32,*,TN,*,8192,1,8192,1,*,gemm_decode_f32,90.69,1.2713,pdl\n"
  "*,f32,f32,f32,*,TN,*,8192,2,8192,1,*,gemm_decode_f32,91.05,1.7594,pdl\n"
  "*,f32,f32,f32,*,TN,*,8192,4,8192,1,*,gemm_decode_f32,92.17,1.7562,pdl\n"
  "*,f32,f32,f32,*,TN,*,8192,8,8192,1,*,gemm_decode_f32,96.87,1.6863,pdl\n"
  "*,f32,f32,f32,*,TN,*,8192,1-8,8192,1,*,gemm_decode_f32,-,1.2713,pdl\n"
  "*,f32,f32,f32,*,NN,*,32000,1,4096,1,*,gemm_decode_f32,173.32,1.1135,pdl\n"
  "*,f32,f32,f32,*,NN,*,32000,2,4096,1,*,gemm_decode_f32,173.82,1.2085,pdl\n"
  "*,f32,f32,f32,*,NN,*,32000,4,4096,1,*,gemm_decode_f32,172.21,1.0564,pdl\n"
  "*,f32,f32,f32,*,NN,*,32000,8,4096,1,*,gemm_decode_f32,188.22,1.1035,pdl\n"
  "*,f32,f32,f32,*,NN,*,32000,1-8,4096,1,*,gemm_decode_f32,-,1.0564,pdl\n"
  "*,f32,f32,f32,*,TN,*,32000,1,4096,1,*,gemm_decode_f32,172.78,1.0946,pdl\n"
  "*,f32,f32,f32,*,TN,*,32000,2,4096,1,*,gemm_decode_f32,173.31,1.2699,pdl\n"
  "*,f32,f32,f32,*,TN,*,32000,4,4096,1,*,gemm_decode_f32,173.09,1.3661,pdl\n"
  "*,f32,f32,f32,*,TN,*,32000,8,4096,1,*,gemm_decode_f32,186.31,1.6045,pdl\n"
  "*,f32,f32,f32,*,TN,*,32000,1-8,4096,1,*,gemm_decode_f32,-,1.0946,pdl\n"
  "*,f32,f32,f32,*,NN,*,28672,1,8192,1,*,gemm_decode_f32,310.98,1.0435,pdl\n"
  "*,f32,f32,f32,*,NN,*,28672,2,8192,1,*,gemm_decode_f32,312.52,1.0314,pdl\n"
  "*,f32,f32,f32,*,NN,*,28672,4,8192,1,*,gemm_decode_f32,307.00,1.0593,pdl\n"
  "*,f32,f32,f32,*,NN,*,28672,8,8192,1,*,gemm_decode_f32,346.85,1.0551,pdl\n"
  "*,f32,f32,f32,*,NN,*,28672,1-8,8192,1,*,gemm_decode_f32,-,1.0314,pdl\n"
  "*,f32,f32,f32,*,TN,*,28672,1,8192,1,*,gemm_decode_f32,305.48,1.0525,pdl\n"
  "*,f32,f32,f32,*,TN,*,28672,2,8192,1,*,gemm_decode_f32,306.09,1.1916,pdl\n"
  "*,f32,f32,f32,*,TN,*,28672,4,8192,1,*,gemm_decode_f32,308.18,1.6913,pdl\n"
  "*,f32,f32,f32,*,TN,*,28672,8,8192,1,*,gemm_decode_f32,321.10,1.6035,pdl\n"
  "*,f32,f32,f32,*,TN,*,28672,1-8,8192,1,*,gemm_decode_f32,-,1.0525,pdl\n"
  "*,f32,f32,f32,*,NN,*,128256,1,4096,1,*,gemm_decode_f32,683.68,1.0538,pdl\n"
  "*,f32,f32,f32,*,NN,*,128256,4,4096,1,*,gemm_decode_f32,682.69,1.0308,pdl\n"
  "*,f32,f32,f32,*,NN,*,128256,8,4096,1,*,gemm_decode_f32,722.66,1.0327,pdl\n"
  "*,f32,f32,f32,*,NN,*,128256,4-8,4096,1,*,gemm_decode_f32,-,1.0308,pdl\n"
  "*,f32,f32,f32,*,TN,*,128256,1,4096,1,*,gemm_decode_f32,674.51,1.0293,pdl\n"
  "*,f32,f32,f32,*,TN,*,128256,2,4096,1,*,gemm_decode_f32,676.20,1.1901,pdl\n"
  "*,f32,f32,f32,*,TN,*,128256,4,4096,1,*,gemm_decode_f32,677.10,1.2869,pdl\n"
  "*,f32,f32,f32,*,TN,*,128256,8,4096,1,*,gemm_decode_f32,711.22,1.6061,pdl\n"
  "*,f32,f32,f32,*,TN,*,128256,1-8,4096,1,*,gemm_decode_f32,-,1.0293,pdl\n";

const char *const gs_default_route_tables[] = { h200_routes, h100_routes };
const size_t gs_n_default_route_tables =
    sizeof gs_default_route_tables / sizeof *gs_default_route_tables;
