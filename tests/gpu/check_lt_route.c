/* GPU check: the route cublaslt (cuBLASLt's own algorithms, named by a
 * route table row). Linked with the shim's objects, like check_ab: its
 * cublasGemmEx and cublasLtMatmul calls go through the shim's wrappers,
 * and the shim's counters say who served. For a BF16 call, one of
 * cuBLASLt's heuristic algorithms (zero workspace, the call's alignment) is
 * written into a route table (GEMMSHIM_TABLE) with this GPU's validators;
 * then:
 *   - the algorithm rebuilt from its fields is byte-equal to the
 *     heuristic's (else the raw form is what a table must hold);
 *   - each layout: the first call is the self-check (cuBLAS serves), later
 *     calls are served by the route, bit for bit what the real
 *     cublasLtMatmul gives with that algorithm (beta != 0, C read);
 *   - device pointer mode, a captured graph, A/B mode, the raw form;
 *   - a cublasLtMatmul call with a workspace (a row of entry lt);
 *   - a BLAS call whose row's algorithm needs workspace forwards
 *     (lt_algo_unfit) and gets cuBLAS's own bits;
 *   - a strided batch (cublasGemmStridedBatchedEx, a row of entry
 *     gemm_batched; ldc above the self-check's compact one): checked on its
 *     own, then served, every item bit-equal to cublasLtMatmul with the
 *     row's algorithm and the batch in its layouts, in A/B use mode too;
 *     A/B shadow mode gives cuBLAS's own bits; with gaps between its
 *     outputs it forwards (batched) and gets cuBLAS's own bits;
 *   - a program's cublasLtMatmul with a batch in its layouts, D apart:
 *     served, bit-equal to cublasLtMatmul on its own objects, C untouched;
 *   - with no table of the user's: the route is named exactly where this
 *     GPU's built-in table has rows for it (for this cuBLAS), and each such
 *     row's call is served by the route with the row's algorithm (the
 *     router's pick), bit-equal to cublasLtMatmul with it and close to
 *     cuBLAS's own; where the table is refused here, forwarded.
 * Exits 77 without a GPU. */
#define _GNU_SOURCE
#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <library_types.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../dispatch/config.h"
#include "../../dispatch/identity.h"
#include "../../dispatch/lt_run.h"
#include "../../dispatch/route.h"
#include "../../dispatch/tables.h"
#include "../../dispatch/tally.h"
#include "gpu_check.h"

#define M 1024
#define N 512
#define K 768

static int failures, checks;

static void verdict(const char *what, int ok)
{
  checks++;
  if (!ok) failures++;
  printf("%-4s %s\n", ok ? "ok" : "FAIL", what);
  fflush(stdout);
}

static gemmex_fn real_gemmex;
static ltmatmul_fn real_lt;
static cublasLtHandle_t lt;
static uint16_t *A, *B, *C0, *C, *R;   /* device, BF16 */
static void *ws;                        /* a caller's workspace */
#define WS_BYTES ((size_t)32 << 20)

static void fill(uint16_t *d, size_t n, uint64_t seed) { gs_check_fill_bf16(d, n, seed); }

static int same(const uint16_t *x, const uint16_t *y)
{
  static uint16_t hx[M * N], hy[M * N];
  CU(cudaMemcpy(hx, x, sizeof hx, cudaMemcpyDeviceToHost));
  CU(cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost));
  return !memcmp(hx, hy, sizeof hx);
}

static uint64_t count(const char *route, gs_reason r) { return gs_tally_count(route, (int)r); }

static gs_lt_fns fns(void)
{
  gs_lt_fns f = { cublasLtCreate, cublasLtMatmulDescInit_internal, cublasLtMatmulDescSetAttribute,
                  cublasLtMatrixLayoutInit_internal, cublasLtMatrixLayoutSetAttribute,
                  cublasLtMatmulAlgoInit,
                  cublasLtMatmulAlgoConfigSetAttribute, cublasLtMatmulAlgoConfigGetAttribute,
                  real_lt };
  return f;
}

/* The call as the shim describes a BLAS GemmEx (or, with workspace, a
 * cublasLtMatmul) of layout ta, tb, and its arguments. */
static void describe(int ta, int tb, gs_gemm *g, gs_kernel_args *a, const float *ab)
{
  memset(g, 0, sizeof *g);
  g->a_type = g->b_type = g->c_type = g->d_type = CUDA_R_16BF;
  g->compute_type = CUBLAS_COMPUTE_32F;
  g->scale_type = CUDA_R_32F;
  g->trans_a = ta, g->trans_b = tb;
  g->m = M, g->n = N, g->k = K, g->batch = 1;
  g->lda = ta ? K : M, g->ldb = tb ? N : K, g->ldc = g->ldd = M;
  g->math_mode = CUBLAS_DEFAULT_MATH;
  g->epilogue = GS_NONE;
  memset(a, 0, sizeof *a);
  a->m = M, a->n = N, a->k = K, a->trans_a = ta, a->trans_b = tb;
  a->A = A, a->lda = g->lda, a->B = B, a->ldb = g->ldb;
  a->C = R, a->ldc = M, a->D = R, a->ldd = M;
  a->alpha = ab[0], a->beta = ab[1];
}

/* The last algorithm cuBLASLt's heuristic offers for a matmul (most likely
 * not cuBLAS's own first pick), with at most max_ws of workspace and the
 * reduction schemes of mask, as a row writes it: its fields, and the raw
 * bytes where the fields do not rebuild them. */
static gs_lt_algo last_offered(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t la,
                               cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t lc,
                               cublasLtMatrixLayout_t ld, uint64_t max_ws, uint32_t mask)
{
  cublasLtMatmulPreference_t pref;
  CB(cublasLtMatmulPreferenceCreate(&pref));
  CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws,
                                          sizeof max_ws));
  CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask,
                                          sizeof mask));
  cublasLtMatmulHeuristicResult_t res[4];
  int got = 0;
  CB(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, ld, pref, 4, res, &got));
  cublasLtMatmulPreferenceDestroy(pref);
  if (got < 1) {
    fprintf(stderr, "check_lt_route: cuBLASLt has no algorithm for the call\n");
    exit(1);
  }
  gs_lt_fns f = fns();
  gs_lt_algo x;
  CB((cublasStatus_t)gs_lt_algo_of(&f, lt, &res[got - 1].algo, res[got - 1].workspaceSize,
                                   CUBLAS_COMPUTE_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF,
                                   CUDA_R_16BF, &x));
  return x;
}

/* For a BLAS call as the route builds it: no workspace, any reduction
 * scheme. */
static gs_lt_algo heuristic_for(const gs_gemm *g, const gs_kernel_args *a)
{
  gs_lt_fns f = fns();
  gs_lt_matmul mm;
  CB((cublasStatus_t)gs_lt_build(&f, lt, g, a, NULL, &mm));
  return last_offered((cublasLtMatmulDesc_t)&mm.desc, (cublasLtMatrixLayout_t)&mm.layout[0],
                      (cublasLtMatrixLayout_t)&mm.layout[1], (cublasLtMatrixLayout_t)&mm.layout[2],
                      (cublasLtMatrixLayout_t)&mm.layout[3], 0, CUBLASLT_REDUCTION_SCHEME_MASK);
}

static gs_lt_algo heuristic(int ta, int tb)
{
  static const float ab[2] = { 1.5f, 0.5f };
  gs_gemm g;
  gs_kernel_args a;
  describe(ta, tb, &g, &a, ab);
  return heuristic_for(&g, &a);
}

/* The real cublasLtMatmul with algo on the matmul the route builds for
 * g and a (a's pointers), synchronized: the route's reference. */
static void run_as_route(const gs_gemm *g, const gs_kernel_args *a, const gs_lt_algo *algo)
{
  gs_lt_fns f = fns();
  gs_lt_matmul mm;
  CB((cublasStatus_t)gs_lt_build(&f, lt, g, a, algo, &mm));
  CB(real_lt(lt, (cublasLtMatmulDesc_t)&mm.desc, mm.alpha, a->A,
             (cublasLtMatrixLayout_t)&mm.layout[0], a->B, (cublasLtMatrixLayout_t)&mm.layout[1],
             mm.beta, a->C, (cublasLtMatrixLayout_t)&mm.layout[2], a->D,
             (cublasLtMatrixLayout_t)&mm.layout[3], &mm.algo, mm.workspace, mm.workspace_size, 0));
  CU(cudaDeviceSynchronize());
}

/* R = what the real cublasLtMatmul gives with algo from C0, host scalars. */
static void reference(int ta, int tb, const gs_lt_algo *algo)
{
  static const float ab[2] = { 1.5f, 0.5f };
  gs_gemm g;
  gs_kernel_args a;
  describe(ta, tb, &g, &a, ab);
  CU(cudaMemcpy(R, C0, (size_t)M * N * 2, cudaMemcpyDeviceToDevice));
  run_as_route(&g, &a, algo);
}

static cublasOperation_t op(int t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; }

/* A program's own cublasLtMatmul objects: TN, bias epilogue, D apart from
 * C with another leading dimension (LDD), made with the Create calls. */
#define LDD (M + 8)
typedef struct lt_call {
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t a, b, c, d;
} lt_call;

static lt_call make_lt_call(const uint16_t *bias)
{
  lt_call x;
  CB(cublasLtMatmulDescCreate(&x.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t t = CUBLAS_OP_T;
  const uint32_t epi = CUBLASLT_EPILOGUE_BIAS;
  CB(cublasLtMatmulDescSetAttribute(x.desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
  CB(cublasLtMatmulDescSetAttribute(x.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  CB(cublasLtMatmulDescSetAttribute(x.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  CB(cublasLtMatrixLayoutCreate(&x.a, CUDA_R_16BF, K, M, K));
  CB(cublasLtMatrixLayoutCreate(&x.b, CUDA_R_16BF, K, N, K));
  CB(cublasLtMatrixLayoutCreate(&x.c, CUDA_R_16BF, M, N, M));
  CB(cublasLtMatrixLayoutCreate(&x.d, CUDA_R_16BF, M, N, LDD));
  return x;
}

/* For the program's own objects, under the route's rules for a cuBLASLt
 * call: the caller's workspace, no scheme that reduces in the output type. */
static gs_lt_algo heuristic_of(const lt_call *x)
{
  return last_offered(x->desc, x->a, x->b, x->c, x->d, WS_BYTES,
                      CUBLASLT_REDUCTION_SCHEME_MASK &
                          ~(uint32_t)(CUBLASLT_REDUCTION_SCHEME_INPLACE |
                                      CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE));
}

/* The relative Frobenius difference of two BF16 results of n elements. */
static double rel_diff_n(const uint16_t *x, const uint16_t *y, size_t n)
{
  uint16_t *hx = malloc(n * 2), *hy = malloc(n * 2);
  CU(cudaMemcpy(hx, x, n * 2, cudaMemcpyDeviceToHost));
  CU(cudaMemcpy(hy, y, n * 2, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t ux = (uint32_t)hx[i] << 16, uy = (uint32_t)hy[i] << 16;
    float fx, fy;
    memcpy(&fx, &ux, 4);
    memcpy(&fy, &uy, 4);
    num += ((double)fx - fy) * ((double)fx - fy);
    den += (double)fy * fy;
  }
  free(hx);
  free(hy);
  return sqrt(num / den);
}

static double rel_diff(const uint16_t *x, const uint16_t *y)
{
  return rel_diff_n(x, y, (size_t)M * N);
}

/* C = 1.5 op(A) op(B) + 0.5 C0 through the shim's cublasGemmEx. */
static void gemmex(cublasHandle_t h, int ta, int tb, const float *alpha, const float *beta,
                   cudaStream_t s, int sync)
{
  CU(cudaMemcpyAsync(C, C0, (size_t)M * N * 2, cudaMemcpyDeviceToDevice, s));
  CB(cublasGemmEx(h, op(ta), op(tb), M, N, K, alpha, A, CUDA_R_16BF, ta ? K : M, B, CUDA_R_16BF,
                  tb ? N : K, beta, C, CUDA_R_16BF, M, CUBLAS_COMPUTE_32F,
                  CUBLAS_GEMM_DEFAULT_TENSOR_OP));
  if (sync) CU(cudaStreamSynchronize(s));
}

static const char *const layouts[4] = { "NN", "TN", "NT", "TT" };

/* ---- a strided batch: TN, BATCH items of BM x BN x BK, packed ---------- */
#define BM 256
#define BN 128
#define BK 64
#define BATCH 16
#define BLDC 264   /* not the self-check's compact ld (BM): a wrong redirect shows */
static uint16_t *bA, *bB, *bC0, *bC, *bR;   /* every item's, one after the other */
static const int64_t s_a = (int64_t)BK * BM, s_b = (int64_t)BK * BN, s_c = (int64_t)BLDC * BN;
typedef cublasStatus_t (*gemm_strided_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                           int, int, int, const void *, const void *, cudaDataType,
                                           int, long long, const void *, cudaDataType, int,
                                           long long, const void *, void *, cudaDataType, int,
                                           long long, int, cublasComputeType_t, cublasGemmAlgo_t);
static gemm_strided_fn real_strided;

static void describe_batch(gs_gemm *g, gs_kernel_args *a, const float *ab)
{
  memset(g, 0, sizeof *g);
  g->is_batched_api = 1;
  g->a_type = g->b_type = g->c_type = g->d_type = CUDA_R_16BF;
  g->compute_type = CUBLAS_COMPUTE_32F;
  g->scale_type = CUDA_R_32F;
  g->trans_a = CUBLAS_OP_T, g->trans_b = CUBLAS_OP_N;
  g->m = BM, g->n = BN, g->k = BK, g->batch = BATCH;
  g->lda = BK, g->ldb = BK, g->ldc = g->ldd = BLDC;
  g->stride_a = s_a, g->stride_b = s_b, g->stride_c = g->stride_d = s_c;
  g->math_mode = CUBLAS_DEFAULT_MATH;
  g->epilogue = GS_NONE;
  memset(a, 0, sizeof *a);
  a->m = BM, a->n = BN, a->k = BK, a->trans_a = 1, a->trans_b = 0;
  a->A = bA, a->lda = BK, a->B = bB, a->ldb = BK;
  a->C = bR, a->ldc = BLDC, a->D = bR, a->ldd = BLDC;
  a->batch = BATCH, a->stride_a = s_a, a->stride_b = s_b, a->stride_c = a->stride_d = s_c;
  a->alpha = ab[0], a->beta = ab[1];
}

static gs_lt_algo batch_heuristic(void)
{
  static const float ab[2] = { 1.5f, 0.5f };
  gs_gemm g;
  gs_kernel_args a;
  describe_batch(&g, &a, ab);
  return heuristic_for(&g, &a);
}

/* bR = the real cublasLtMatmul with algo and the batch in its layouts,
 * from bC0 */
static void batch_reference(const gs_lt_algo *algo)
{
  static const float ab[2] = { 1.5f, 0.5f };
  gs_gemm g;
  gs_kernel_args a;
  describe_batch(&g, &a, ab);
  CU(cudaMemcpy(bR, bC0, (size_t)s_c * BATCH * 2, cudaMemcpyDeviceToDevice));
  run_as_route(&g, &a, algo);
}

/* bC = 1.5 op(A_i) B_i + 0.5 bC0_i through the shim (or past it: real),
 * item i's output at i * stride_c */
static void strided(cublasHandle_t h, int64_t stride_c, int real)
{
  static const float alpha = 1.5f, beta = 0.5f;
  CU(cudaMemset(bC, 0, (size_t)s_c * BATCH * 2 + 64 * BATCH * 2));
  CU(cudaMemcpy2D(bC, (size_t)stride_c * 2, bC0, (size_t)s_c * 2, (size_t)s_c * 2, BATCH,
                  cudaMemcpyDeviceToDevice));
  CB((real ? real_strided : cublasGemmStridedBatchedEx)(
      h, CUBLAS_OP_T, CUBLAS_OP_N, BM, BN, BK, &alpha, bA, CUDA_R_16BF, BK, s_a, bB, CUDA_R_16BF,
      BK, s_b, &beta, bC, CUDA_R_16BF, BLDC, stride_c, BATCH, CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT_TENSOR_OP));
  CU(cudaDeviceSynchronize());
}

/* A program's cublasLtMatmul with a batch in its layouts: TN, no
 * epilogue, D apart from C (both packed, ld BLDC), made with the Create
 * calls. */
static lt_call make_lt_batch_call(void)
{
  lt_call x;
  CB(cublasLtMatmulDescCreate(&x.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t t = CUBLAS_OP_T;
  CB(cublasLtMatmulDescSetAttribute(x.desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
  CB(cublasLtMatrixLayoutCreate(&x.a, CUDA_R_16BF, BK, BM, BK));
  CB(cublasLtMatrixLayoutCreate(&x.b, CUDA_R_16BF, BK, BN, BK));
  CB(cublasLtMatrixLayoutCreate(&x.c, CUDA_R_16BF, BM, BN, BLDC));
  CB(cublasLtMatrixLayoutCreate(&x.d, CUDA_R_16BF, BM, BN, BLDC));
  const int32_t items = BATCH;
  cublasLtMatrixLayout_t lays[4] = { x.a, x.b, x.c, x.d };
  const int64_t strides[4] = { s_a, s_b, s_c, s_c };
  for (int i = 0; i < 4; i++) {
    CB(cublasLtMatrixLayoutSetAttribute(lays[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &items,
                                        sizeof items));
    CB(cublasLtMatrixLayoutSetAttribute(lays[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                        &strides[i], sizeof strides[i]));
  }
  return x;
}

/* Every item's output equal, bit for bit, to bR's (x's items stride_c apart). */
static int batch_same(const uint16_t *x, int64_t stride_c)
{
  static uint16_t hx[(BLDC * BN + 64) * BATCH], hr[BLDC * BN * BATCH];
  CU(cudaMemcpy(hx, x, (size_t)stride_c * BATCH * 2, cudaMemcpyDeviceToHost));
  CU(cudaMemcpy(hr, bR, sizeof hr, cudaMemcpyDeviceToHost));
  for (int i = 0; i < BATCH; i++)
    if (memcmp(hx + (size_t)i * stride_c, hr + (size_t)i * s_c, (size_t)s_c * 2)) return 0;
  return 1;
}

/* This GPU as the validators see it, with the cuBLAS this process runs. */
static void this_gpu(gs_rt_identity *id)
{
  int dev;
  CU(cudaGetDevice(&dev));
  if (gs_identity_read(dev, id)) {
    fprintf(stderr, "check_lt_route: the device cannot be described\n");
    exit(1);
  }
  int v[3];
  cublasGetProperty(MAJOR_VERSION, &v[0]);
  cublasGetProperty(MINOR_VERSION, &v[1]);
  cublasGetProperty(PATCH_LEVEL, &v[2]);
  snprintf(id->cublas_version, sizeof id->cublas_version, "%d.%d.%d", v[0], v[1], v[2]);
}

/* The table: this GPU's validators and the rows given. */
static void write_table(const char *path, const char *rows)
{
  gs_rt_identity id;
  this_gpu(&id);
  FILE *f = fopen(path, "w");
  if (!f) { perror(path); exit(1); }
  for (int i = 0; i < GS_V_COUNT; i++) {
    const char *val = gs_rt_identity_value(&id, i);
    if (val[0]) fprintf(f, "Validator,%s,%s\n", gs_rt_validator_name(i), val);
  }
  fprintf(f, "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,"
             "time_us,ratio,lt_algo\n%s", rows);
  fclose(f);
}

static void use_table(const char *path)
{
  setenv("GEMMSHIM_TABLE", path, 1);
  gs_config_reload();
  gs_tables_reset();
}

/* ---- the built-in table's rows ------------------------------------------ */

/* This GPU's built-in table, parsed (NULL: none was measured on a GPU of
 * its name). */
static gs_route_table *built_in_table(const char *gpu_name)
{
  char want[256];
  snprintf(want, sizeof want, "Validator,gpu_name,%s\n", gpu_name);
  for (size_t i = 0; i < gs_n_default_route_tables; i++) {
    const char *text = gs_default_route_tables[i];
    if (strstr(text, want))
      return gs_rt_parse(text, strlen(text), "(built-in)", gs_variants, gs_n_variants, stderr);
  }
  return NULL;
}

/* A built-in row's call as cuBLAS itself makes it, past the shim: out =
 * 1.5 op(A) op(B) + 0.5 out, the row's packed layout and batch. */
static void cublas_own(cublasHandle_t h, const gs_rt_row *r, const uint16_t *a_,
                       const uint16_t *b_, uint16_t *out)
{
  static const float ab[2] = { 1.5f, 0.5f };
  const int ta = r->layout[0] == 'T', tb = r->layout[1] == 'T';
  const int64_t m = r->m.lo, n = r->n.lo, k = r->k.lo, items = r->batch.lo;
  const int64_t lda = ta ? k : m, ldb = tb ? n : k, ldc = m;
  const int64_t sa = lda * (ta ? m : k), sb = ldb * (tb ? k : n), sc = ldc * n;
  if (items > 1)
    CB(real_strided(h, op(ta), op(tb), (int)m, (int)n, (int)k, &ab[0], a_, CUDA_R_16BF, (int)lda,
                    sa, b_, CUDA_R_16BF, (int)ldb, sb, &ab[1], out, CUDA_R_16BF, (int)ldc, sc,
                    (int)items, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP));
  else
    CB(real_gemmex(h, op(ta), op(tb), (int)m, (int)n, (int)k, &ab[0], a_, CUDA_R_16BF, (int)lda,
                   b_, CUDA_R_16BF, (int)ldb, &ab[1], out, CUDA_R_16BF, (int)ldc,
                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP));
  CU(cudaDeviceSynchronize());
}

/* One row's call (exact sizes, 16-byte aligned, packed batch), where the
 * table is used here: served by the route with the shim choosing the table,
 * the router naming the row's algorithm, bit-equal to cublasLtMatmul with
 * it, and close to cuBLAS's own. Where the table is refused: forwarded,
 * cuBLAS's own bits. */
static void check_built_in_row(cublasHandle_t h, const gs_rt_row *r, int usable)
{
  const int ta = r->layout[0] == 'T', tb = r->layout[1] == 'T';
  const int64_t m = r->m.lo, n = r->n.lo, k = r->k.lo, items = r->batch.lo;
  const int64_t lda = ta ? k : m, ldb = tb ? n : k, ldc = m;
  const int64_t sa = lda * (ta ? m : k), sb = ldb * (tb ? k : n), sc = ldc * n;
  const size_t nc = (size_t)(sc * items);
  uint16_t *a_, *b_, *c0, *c, *ref;
  CU(cudaMalloc((void **)&a_, (size_t)(sa * items) * 2));
  CU(cudaMalloc((void **)&b_, (size_t)(sb * items) * 2));
  CU(cudaMalloc((void **)&c0, nc * 2));
  CU(cudaMalloc((void **)&c, nc * 2));
  CU(cudaMalloc((void **)&ref, nc * 2));
  fill(a_, (size_t)(sa * items), 11), fill(b_, (size_t)(sb * items), 12), fill(c0, nc, 13);
  static const float ab[2] = { 1.5f, 0.5f };
  gs_gemm g;
  gs_kernel_args a;
  memset(&g, 0, sizeof g);
  g.entry_name = "check_lt_route";
  g.is_batched_api = r->entry_class == GS_EC_BATCHED;
  g.a_type = g.b_type = g.c_type = g.d_type = CUDA_R_16BF;
  g.compute_type = CUBLAS_COMPUTE_32F;
  g.scale_type = CUDA_R_32F;
  g.trans_a = op(ta), g.trans_b = op(tb);
  g.m = m, g.n = n, g.k = k, g.batch = items;
  g.lda = lda, g.ldb = ldb, g.ldc = g.ldd = ldc;
  if (items > 1) g.stride_a = sa, g.stride_b = sb, g.stride_c = g.stride_d = sc;
  g.math_mode = CUBLAS_DEFAULT_MATH;
  g.epilogue = GS_NONE;
  g.bias_type = GS_NONE;
  memset(&a, 0, sizeof a);
  a.m = m, a.n = n, a.k = k, a.trans_a = ta, a.trans_b = tb;
  a.A = a_, a.lda = lda, a.B = b_, a.ldb = ldb, a.C = ref, a.ldc = ldc, a.D = ref, a.ldd = ldc;
  if (items > 1) a.batch = items, a.stride_a = sa, a.stride_b = sb, a.stride_c = a.stride_d = sc;
  a.alpha = ab[0], a.beta = ab[1];
  CU(cudaMemcpy(ref, c0, nc * 2, cudaMemcpyDeviceToDevice));
  if (usable) {
    run_as_route(&g, &a, &r->algo);
  } else {
    cublas_own(h, r, a_, b_, ref);
  }

  const uint64_t ours = count("cublaslt", GS_R_ROUTED);
  /* the first call of a class may be its self-check (cuBLAS serves) */
  for (int i = 0; i < 5 && (i == 0 || (usable && count("cublaslt", GS_R_ROUTED) == ours)); i++) {
    CU(cudaMemcpy(c, c0, nc * 2, cudaMemcpyDeviceToDevice));
    if (items > 1)
      CB(cublasGemmStridedBatchedEx(h, op(ta), op(tb), (int)m, (int)n, (int)k, &ab[0], a_,
                                    CUDA_R_16BF, (int)lda, sa, b_, CUDA_R_16BF, (int)ldb, sb,
                                    &ab[1], c, CUDA_R_16BF, (int)ldc, sc, (int)items,
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP));
    else
      CB(cublasGemmEx(h, op(ta), op(tb), (int)m, (int)n, (int)k, &ab[0], a_, CUDA_R_16BF,
                      (int)lda, b_, CUDA_R_16BF, (int)ldb, &ab[1], c, CUDA_R_16BF, (int)ldc,
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP));
    CU(cudaDeviceSynchronize());
  }
  const int served = count("cublaslt", GS_R_ROUTED) == ours + (usable ? 1 : 0);
  /* which algorithm the router gives this call now */
  gs_gemm q = g;
  q.A = a_, q.B = b_, q.C = c, q.D = c, q.alpha = &ab[0], q.beta = &ab[1];
  q.pointer_mode = 0, q.state_loaded = 1, q.stream = NULL;
  const gs_decision dd = gs_route(&q);
  char text[GS_LT_ALGO_TEXT], chosen[GS_LT_ALGO_TEXT] = "-";
  gs_lt_algo_format(&r->algo, text);
  if (dd.lt_algo) gs_lt_algo_format(dd.lt_algo, chosen);
  const int picked = usable ? dd.reason == GS_R_ROUTED && dd.variant == &gs_route_cublaslt &&
                                  !strcmp(chosen, text)
                            : dd.variant == NULL;
  uint16_t *hc = malloc(nc * 2), *hr = malloc(nc * 2);
  CU(cudaMemcpy(hc, c, nc * 2, cudaMemcpyDeviceToHost));
  CU(cudaMemcpy(hr, ref, nc * 2, cudaMemcpyDeviceToHost));
  const int equal = !memcmp(hc, hr, nc * 2);
  free(hc), free(hr);
  char what[400];
  snprintf(what, sizeof what, "built-in row %s %s %lldx%lldx%lld x%lld (line %d): %s", 
           gs_rt_entry_class_name(r->entry_class), r->layout, (long long)m, (long long)n,
           (long long)k, (long long)items, r->line,
           usable ? "served by the route with the row's algorithm (the router's pick), bit-equal "
                    "to cublasLtMatmul with it"
                  : "the table refused here: forwarded, cuBLAS's own bits");
  verdict(what, served && picked && equal);
  if (!usable) {
    cudaFree(a_), cudaFree(b_), cudaFree(c0), cudaFree(c), cudaFree(ref);
    return;
  }
  CU(cudaMemcpy(ref, c0, nc * 2, cudaMemcpyDeviceToDevice));
  cublas_own(h, r, a_, b_, ref);
  const double d = rel_diff_n(c, ref, nc);
  snprintf(what, sizeof what, "built-in row (line %d): within 1e-2 of cuBLAS's own (relative "
           "Frobenius difference %.2e)", r->line, d);
  verdict(what, d < 1e-2);
  cudaFree(a_), cudaFree(b_), cudaFree(c0), cudaFree(c), cudaFree(ref);
}

/* No table of the user's: this GPU's built-in rows for the route, served
 * where the table is used here (its validators, this cuBLAS), forwarded
 * where it is refused. */
static void check_built_in_rows(cublasHandle_t h)
{
  unsetenv("GEMMSHIM_TABLE");
  setenv("GEMMSHIM_CACHE_DIR", "/nonexistent/gemmshim-check-lt-route", 1);
  gs_config_reload();
  gs_tables_reset();
  gs_rt_identity id;
  this_gpu(&id);
  gs_route_table *t = built_in_table(id.gpu_name);
  size_t rows = 0;
  for (size_t i = 0; t && i < t->n_rows; i++) rows += t->rows[i].kernel == &gs_route_cublaslt;
  char why[512] = "", soft[512] = "", what[700];
  const int usable = t && gs_rt_validate(t, &id, why, sizeof why, soft, sizeof soft) == 0;
  const int same_cublas = t && !strcmp(t->value[GS_V_CUBLAS_VERSION], id.cublas_version);
  printf("this GPU's built-in table: %s%s%s\n", !t ? "none" : usable ? "used here" : "refused: ",
         t && !usable ? why : "", soft[0] ? soft : "");
  /* (on a GPU with rows this holds whether or not other GPUs' rows count;
   * it tells the two apart on a GPU without) */
  snprintf(what, sizeof what, "no table of the user's on a %s with cuBLAS %s: the route is named "
           "(%d) exactly where this GPU's built-in table has rows for it (%zu) for this cuBLAS",
           id.gpu_name, id.cublas_version, gs_tables_name(&gs_route_cublaslt), rows);
  verdict(what, gs_tables_name(&gs_route_cublaslt) == (rows > 0 && same_cublas));
  for (size_t i = 0; t && i < t->n_rows; i++) {
    const gs_rt_row *r = &t->rows[i];
    if (r->kernel != &gs_route_cublaslt) continue;
    if (!r->exact || r->m.lo != r->m.hi || r->a_type != CUDA_R_16BF) {
      snprintf(what, sizeof what, "built-in row (line %d): exact BF16 sizes, as this check "
               "builds its call", r->line);
      verdict(what, 0);
      continue;
    }
    check_built_in_row(h, r, usable);
  }
  gs_rt_free(t);
}

int main(void)
{
  int n_dev = 0;
  if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0) {
    printf("SKIP: no CUDA GPU\n");
    return 77;
  }
  *(void **)&real_gemmex = dlsym(RTLD_NEXT, "cublasGemmEx");
  *(void **)&real_lt = dlsym(RTLD_NEXT, "cublasLtMatmul");
  *(void **)&real_strided = dlsym(RTLD_NEXT, "cublasGemmStridedBatchedEx");
  if (!real_gemmex || !real_lt || !real_strided) {
    fprintf(stderr, "check_lt_route: the real cuBLAS is not reachable\n");
    return 1;
  }
  unsetenv("GEMMSHIM_FORCE");
  unsetenv("GEMMSHIM_AB");
  CB(cublasLtCreate(&lt));
  size_t big = (size_t)M * N > (size_t)M * K ? (size_t)M * N : (size_t)M * K;
  if (big < (size_t)K * N) big = (size_t)K * N;
  CU(cudaMalloc((void **)&A, big * 2));
  CU(cudaMalloc((void **)&B, big * 2));
  CU(cudaMalloc((void **)&C0, (size_t)M * N * 2));
  CU(cudaMalloc((void **)&C, (size_t)M * N * 2));
  CU(cudaMalloc((void **)&R, (size_t)M * N * 2));
  CU(cudaMalloc(&ws, WS_BYTES));
  fill(A, big, 1), fill(B, big, 2), fill(C0, (size_t)M * N, 3);
  CU(cudaMalloc((void **)&bA, (size_t)s_a * BATCH * 2));
  CU(cudaMalloc((void **)&bB, (size_t)s_b * BATCH * 2));
  CU(cudaMalloc((void **)&bC0, (size_t)s_c * BATCH * 2));
  CU(cudaMalloc((void **)&bC, ((size_t)s_c + 64) * BATCH * 2));
  CU(cudaMalloc((void **)&bR, (size_t)s_c * BATCH * 2));
  fill(bA, (size_t)s_a * BATCH, 5), fill(bB, (size_t)s_b * BATCH, 6);
  fill(bC0, (size_t)s_c * BATCH, 7);

  /* the algorithms: each layout's, a BLAS call's (no workspace) and a
   * cublasLtMatmul call's (its workspace), as rows */
  gs_lt_algo algo[4], lt_algo;
  char rows[16384] = "", text[GS_LT_ALGO_TEXT];
  size_t used = 0;
  int all_rebuilt = 1;
  for (int l = 0; l < 4; l++) {
    algo[l] = heuristic(l & 1, l >> 1);
    const int rebuilt = !algo[l].has_raw;
    all_rebuilt &= rebuilt;
    gs_lt_algo_format(&algo[l], text);
    printf("%s: %s%s\n", layouts[l], text, rebuilt ? "" : " (raw: the fields do not rebuild it)");
    used += (size_t)snprintf(rows + used, sizeof rows - used,
                             "gemm,bf16,bf16,bf16,32f,%s,-,%d,%d,%d,1,16,cublaslt,-,1.5,%s\n",
                             layouts[l], M, N, K, text);
  }
  verdict("each layout's algorithm, rebuilt from its fields, is byte-equal to the heuristic's",
          all_rebuilt);
  uint16_t *bias, *D, *DR;
  CU(cudaMalloc((void **)&bias, M * 2));
  CU(cudaMalloc((void **)&D, (size_t)LDD * N * 2));
  CU(cudaMalloc((void **)&DR, (size_t)LDD * N * 2));
  fill(bias, M, 4);
  lt_call x = make_lt_call(bias);
  lt_algo = heuristic_of(&x);
  gs_lt_algo_format(&lt_algo, text);
  printf("cublasLtMatmul TN, bias, ldd %d, with a workspace: %s%s\n", LDD, text,
         lt_algo.has_raw ? " (raw)" : "");
  used += (size_t)snprintf(rows + used, sizeof rows - used,
                           "lt,bf16,bf16,bf16,32f,TN,bias,%d,%d,%d,1,16,cublaslt,-,1.5,%s\n", M,
                           N, K, text);
  const gs_lt_algo batch_algo = batch_heuristic();
  gs_lt_algo_format(&batch_algo, text);
  printf("cublasGemmStridedBatchedEx TN %dx%dx%d, %d items: %s%s\n", BM, BN, BK, BATCH, text,
         batch_algo.has_raw ? " (raw)" : "");
  used += (size_t)snprintf(rows + used, sizeof rows - used,
                           "gemm_batched,bf16,bf16,bf16,32f,TN,-,%d,%d,%d,%d,16,cublaslt,-,1.5,%s\n",
                           BM, BN, BK, BATCH, text);
  lt_call xb = make_lt_batch_call();
  const gs_lt_algo lt_batch_algo = heuristic_of(&xb);
  gs_lt_algo_format(&lt_batch_algo, text);
  printf("cublasLtMatmul TN %dx%dx%d, %d items in its layouts, D apart: %s%s\n", BM, BN, BK,
         BATCH, text, lt_batch_algo.has_raw ? " (raw)" : "");
  used += (size_t)snprintf(rows + used, sizeof rows - used,
                           "lt,bf16,bf16,bf16,32f,TN,default,%d,%d,%d,%d,16,cublaslt,-,1.5,%s\n",
                           BM, BN, BK, BATCH, text);
  char path[256];
  snprintf(path, sizeof path, "%s/gs-lt-route-%d.csv", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (int)getpid());
  write_table(path, rows);
  use_table(path);

  cublasHandle_t h;
  CB(cublasCreate_v2(&h));
  static const float alpha = 1.5f, beta = 0.5f;
  /* a first call binds cuBLAS in the shim, as a program's does, before our
   * kernels (and the route's handle) are loaded for the context */
  CU(cudaMemcpy(R, C0, (size_t)M * N * 2, cudaMemcpyDeviceToDevice));
  CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A, CUDA_R_16BF, M, B, CUDA_R_16BF,
                  K, &beta, R, CUDA_R_16BF, M, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP));
  if (!gs_check_wait_loaded()) return 1;

  /* every layout: self-check first, then the route, bit for bit */
  for (int l = 0; l < 4; l++) {
    int ta = l & 1, tb = l >> 1;
    reference(ta, tb, &algo[l]);
    uint64_t sc = count("cublas", GS_R_SELFCHECK), ours = count("cublaslt", GS_R_ROUTED);
    gemmex(h, ta, tb, &alpha, &beta, 0, 1);
    int checked = count("cublas", GS_R_SELFCHECK) == sc + 1;
    /* the comparison is read by a later call, once the GPU has written it */
    for (int i = 0; i < 4 && count("cublaslt", GS_R_ROUTED) == ours; i++)
      gemmex(h, ta, tb, &alpha, &beta, 0, 1);
    char what[200];
    snprintf(what, sizeof what, "%s: self-checked, then served by the route, bit-equal to "
             "cublasLtMatmul with the row's algorithm", layouts[l]);
    verdict(what, checked && count("cublaslt", GS_R_ROUTED) == ours + 1 && same(C, R));
    /* and close to cuBLAS's own GemmEx, past the shim (a translation
     * mistake common to the route and its reference shows here) */
    CU(cudaMemcpy(R, C0, (size_t)M * N * 2, cudaMemcpyDeviceToDevice));
    CB(real_gemmex(h, op(ta), op(tb), M, N, K, &alpha, A, CUDA_R_16BF, ta ? K : M, B,
                   CUDA_R_16BF, tb ? N : K, &beta, R, CUDA_R_16BF, M, CUBLAS_COMPUTE_32F,
                   CUBLAS_GEMM_DEFAULT_TENSOR_OP));
    CU(cudaDeviceSynchronize());
    double d = rel_diff(C, R);
    snprintf(what, sizeof what, "%s: the route's result within 1e-2 of cuBLAS GemmEx's "
             "(relative Frobenius difference %.2e)", layouts[l], d);
    verdict(what, d < 1e-2);
  }

  /* device pointer mode */
  {
    float *d_ab;
    CU(cudaMalloc((void **)&d_ab, 8));
    CU(cudaMemcpy(d_ab, (float[2]){ alpha, beta }, 8, cudaMemcpyHostToDevice));
    CB(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_DEVICE));
    reference(1, 0, &algo[1]);
    uint64_t ours = count("cublaslt", GS_R_ROUTED);
    gemmex(h, 1, 0, d_ab, d_ab + 1, 0, 1);
    verdict("device pointer mode: served by the route, bit-equal",
            count("cublaslt", GS_R_ROUTED) == ours + 1 && same(C, R));
    CB(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_HOST));
    cudaFree(d_ab);
  }

  /* a captured graph, replayed */
  {
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CB(cublasSetStream_v2(h, s));
    reference(1, 0, &algo[1]);
    uint64_t ours = count("cublaslt", GS_R_ROUTED);
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    gemmex(h, 1, 0, &alpha, &beta, s, 0);
    CU(cudaStreamEndCapture(s, &g));
    CU(cudaGraphInstantiate(&ge, g, 0));
    CU(cudaMemsetAsync(C, 0, (size_t)M * N * 2, s));
    CU(cudaGraphLaunch(ge, s));
    CU(cudaStreamSynchronize(s));
    verdict("a captured call: served by the route, bit-equal on replay",
            count("cublaslt", GS_R_ROUTED) == ours + 1 && same(C, R));
    CB(cublasSetStream_v2(h, 0));
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
  }

  /* A/B mode: the route serves, cuBLAS is measured beside it */
  {
    setenv("GEMMSHIM_AB", "1", 1);
    setenv("GEMMSHIM_AB_MODE", "use", 1);
    gs_config_reload();
    reference(1, 0, &algo[1]);
    uint64_t compared = count("cublaslt", GS_R_AB_COMPARED);
    gemmex(h, 1, 0, &alpha, &beta, 0, 1);
    verdict("A/B use: the route serves, compared with cuBLAS, bit-equal",
            count("cublaslt", GS_R_AB_COMPARED) == compared + 1 && same(C, R));
    unsetenv("GEMMSHIM_AB");
    unsetenv("GEMMSHIM_AB_MODE");
    gs_config_reload();
  }

  /* a program's cublasLtMatmul: bias, D apart with its own ld, a
   * workspace; bit-equal to the real cublasLtMatmul on the program's own
   * objects with the row's algorithm, and C untouched */
  {
    cublasLtMatmulAlgo_t bytes;
    gs_lt_fns f = fns();
    CB((cublasStatus_t)gs_lt_algo_build(&f, lt, &lt_algo, CUBLAS_COMPUTE_32F, CUDA_R_16BF,
                                        CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, &bytes));
    CU(cudaMemcpy(C, C0, (size_t)M * N * 2, cudaMemcpyDeviceToDevice));
    CU(cudaMemset(DR, 0, (size_t)LDD * N * 2));
    CB(real_lt(lt, x.desc, &alpha, A, x.a, B, x.b, &beta, C, x.c, DR, x.d, &bytes, ws, WS_BYTES, 0));
    CU(cudaDeviceSynchronize());
    uint64_t ours = count("cublaslt", GS_R_ROUTED);
    for (int i = 0; i < 5 && count("cublaslt", GS_R_ROUTED) == ours; i++) {
      CU(cudaMemset(D, 0, (size_t)LDD * N * 2));
      CB(cublasLtMatmul(lt, x.desc, &alpha, A, x.a, B, x.b, &beta, C, x.c, D, x.d, NULL, ws,
                        WS_BYTES, 0));
      CU(cudaDeviceSynchronize());
    }
    static uint16_t hd[LDD * N], hr[LDD * N];
    CU(cudaMemcpy(hd, D, sizeof hd, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(hr, DR, sizeof hr, cudaMemcpyDeviceToHost));
    verdict("a program's cublasLtMatmul (bias, D apart, ldd != ldc, workspace): served by the "
            "route after its self-check, bit-equal to cublasLtMatmul on its own objects with "
            "the row's algorithm, C untouched",
            count("cublaslt", GS_R_ROUTED) == ours + 1 && !memcmp(hd, hr, sizeof hd) &&
                same(C, C0));
    cublasLtMatrixLayoutDestroy(x.a);
    cublasLtMatrixLayoutDestroy(x.b);
    cublasLtMatrixLayoutDestroy(x.c);
    cublasLtMatrixLayoutDestroy(x.d);
    cublasLtMatmulDescDestroy(x.desc);
  }

  /* a strided batch: its own check (path 1), then the route; in A/B mode;
   * with gaps between the outputs, cuBLAS's */
  {
    batch_reference(&batch_algo);
    uint64_t sc = count("cublas", GS_R_SELFCHECK), ours = count("cublaslt", GS_R_ROUTED);
    strided(h, s_c, 0);
    int checked = count("cublas", GS_R_SELFCHECK) == sc + 1;
    for (int i = 0; i < 4 && count("cublaslt", GS_R_ROUTED) == ours; i++) strided(h, s_c, 0);
    verdict("a strided batch: self-checked on its own, then served by the route, every item "
            "bit-equal to cublasLtMatmul with the row's algorithm and the batch in its layouts",
            checked && count("cublaslt", GS_R_ROUTED) == ours + 1 && batch_same(bC, s_c));
    setenv("GEMMSHIM_AB", "1", 1);
    setenv("GEMMSHIM_AB_MODE", "use", 1);
    gs_config_reload();
    uint64_t compared = count("cublaslt", GS_R_AB_COMPARED);
    strided(h, s_c, 0);
    verdict("a strided batch in A/B use: the route serves, compared with cuBLAS, bit-equal",
            count("cublaslt", GS_R_AB_COMPARED) == compared + 1 && batch_same(bC, s_c));
    /* shadow: cuBLAS serves (its own bits), the route runs into scratch */
    static uint16_t mine[BLDC * BN * BATCH], theirs[BLDC * BN * BATCH];
    strided(h, s_c, 1);
    CU(cudaMemcpy(theirs, bC, sizeof theirs, cudaMemcpyDeviceToHost));
    setenv("GEMMSHIM_AB_MODE", "shadow", 1);
    gs_config_reload();
    uint64_t shadowed = count("cublas", GS_R_AB_SHADOW);
    strided(h, s_c, 0);
    CU(cudaMemcpy(mine, bC, sizeof mine, cudaMemcpyDeviceToHost));
    verdict("a strided batch in A/B shadow: cuBLAS serves, its own bits, the route compared",
            count("cublas", GS_R_AB_SHADOW) == shadowed + 1 && !memcmp(mine, theirs, sizeof mine));
    unsetenv("GEMMSHIM_AB");
    unsetenv("GEMMSHIM_AB_MODE");
    gs_config_reload();
    /* close to cuBLAS's own batched GemmEx, past the shim */
    strided(h, s_c, 1);
    double d = rel_diff_n(bC, bR, (size_t)s_c * BATCH);
    char what[200];
    snprintf(what, sizeof what, "a strided batch: the route's result within 1e-2 of cuBLAS's "
             "cublasGemmStridedBatchedEx (relative Frobenius difference %.2e)", d);
    verdict(what, d < 1e-2);
    /* outputs 64 elements apart: not one matrix; cuBLAS serves, its own bits */
    strided(h, s_c + 64, 1);
    static uint16_t want[(BLDC * BN + 64) * BATCH], got[(BLDC * BN + 64) * BATCH];
    CU(cudaMemcpy(want, bC, sizeof want, cudaMemcpyDeviceToHost));
    uint64_t fwd = count("cublas", GS_R_BATCHED);
    ours = count("cublaslt", GS_R_ROUTED);
    strided(h, s_c + 64, 0);
    CU(cudaMemcpy(got, bC, sizeof got, cudaMemcpyDeviceToHost));
    verdict("a strided batch with gaps between its outputs: forwarded (batched), cuBLAS's own "
            "bits",
            count("cublas", GS_R_BATCHED) == fwd + 1 && count("cublaslt", GS_R_ROUTED) == ours &&
                !memcmp(want, got, sizeof want));
  }

  /* a program's cublasLtMatmul with a batch in its layouts, D apart:
   * bit-equal to cublasLtMatmul on its own objects with the row's
   * algorithm, C untouched */
  {
    cublasLtMatmulAlgo_t bytes;
    gs_lt_fns f = fns();
    CB((cublasStatus_t)gs_lt_algo_build(&f, lt, &lt_batch_algo, CUBLAS_COMPUTE_32F, CUDA_R_16BF,
                                        CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, &bytes));
    const size_t n_all = (size_t)s_c * BATCH;
    uint16_t *bD, *bDR;
    CU(cudaMalloc((void **)&bD, n_all * 2));
    CU(cudaMalloc((void **)&bDR, n_all * 2));
    CU(cudaMemcpy(bC, bC0, n_all * 2, cudaMemcpyDeviceToDevice));
    CU(cudaMemset(bDR, 0, n_all * 2));
    CB(real_lt(lt, xb.desc, &alpha, bA, xb.a, bB, xb.b, &beta, bC, xb.c, bDR, xb.d, &bytes, ws,
               WS_BYTES, 0));
    CU(cudaDeviceSynchronize());
    uint64_t ours = count("cublaslt", GS_R_ROUTED);
    for (int i = 0; i < 5 && count("cublaslt", GS_R_ROUTED) == ours; i++) {
      CU(cudaMemset(bD, 0, n_all * 2));
      CB(cublasLtMatmul(lt, xb.desc, &alpha, bA, xb.a, bB, xb.b, &beta, bC, xb.c, bD, xb.d, NULL,
                        ws, WS_BYTES, 0));
      CU(cudaDeviceSynchronize());
    }
    uint16_t *hd = malloc(n_all * 2), *hr = malloc(n_all * 2), *hc = malloc(n_all * 2),
             *hc0 = malloc(n_all * 2);
    CU(cudaMemcpy(hd, bD, n_all * 2, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(hr, bDR, n_all * 2, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(hc, bC, n_all * 2, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(hc0, bC0, n_all * 2, cudaMemcpyDeviceToHost));
    /* (its class, TN bf16 batched, passed its check with the BLAS batch above) */
    verdict("a program's cublasLtMatmul with a batch in its layouts (D apart): served by the "
            "route, every item bit-equal to cublasLtMatmul on its own objects with the row's "
            "algorithm, C untouched",
            count("cublaslt", GS_R_ROUTED) == ours + 1 &&
                !memcmp(hd, hr, n_all * 2) && !memcmp(hc, hc0, n_all * 2));
    free(hd), free(hr), free(hc), free(hc0);
    cudaFree(bD), cudaFree(bDR);
    cublasLtMatrixLayoutDestroy(xb.a);
    cublasLtMatrixLayoutDestroy(xb.b);
    cublasLtMatrixLayoutDestroy(xb.c);
    cublasLtMatrixLayoutDestroy(xb.d);
    cublasLtMatmulDescDestroy(xb.desc);
  }

  /* the raw form, and a BLAS row whose algorithm needs workspace */
  {
    gs_lt_algo raw = algo[1], needy = algo[0];
    cublasLtMatmulAlgo_t bytes;
    gs_lt_fns f = fns();
    CB((cublasStatus_t)gs_lt_algo_build(&f, lt, &raw, CUBLAS_COMPUTE_32F, CUDA_R_16BF, CUDA_R_16BF,
                                        CUDA_R_16BF, CUDA_R_16BF, &bytes));
    raw.has_raw = 1;
    memcpy(raw.raw, bytes.data, sizeof raw.raw);
    needy.workspace = 1 << 20;
    char t1[GS_LT_ALGO_TEXT], t2[GS_LT_ALGO_TEXT], rows2[2048];
    gs_lt_algo_format(&raw, t1);
    gs_lt_algo_format(&needy, t2);
    snprintf(rows2, sizeof rows2,
             "gemm,bf16,bf16,bf16,32f,TN,-,%d,%d,%d,1,16,cublaslt,-,1.5,%s\n"
             "gemm,bf16,bf16,bf16,32f,NN,-,%d,%d,%d,1,16,cublaslt,-,1.5,%s\n",
             M, N, K, t1, M, N, K, t2);
    write_table(path, rows2);
    use_table(path);
    reference(1, 0, &algo[1]);
    uint64_t ours = count("cublaslt", GS_R_ROUTED);
    gemmex(h, 1, 0, &alpha, &beta, 0, 1);
    verdict("the raw form: served by the route, bit-equal",
            count("cublaslt", GS_R_ROUTED) == ours + 1 && same(C, R));
    /* cuBLAS's own result for NN, past the shim */
    CU(cudaMemcpy(R, C0, (size_t)M * N * 2, cudaMemcpyDeviceToDevice));
    CB(real_gemmex(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A, CUDA_R_16BF, M, B,
                   CUDA_R_16BF, K, &beta, R, CUDA_R_16BF, M, CUBLAS_COMPUTE_32F,
                   CUBLAS_GEMM_DEFAULT_TENSOR_OP));
    uint64_t unfit = count("cublas", GS_R_LT_ALGO_UNFIT);
    ours = count("cublaslt", GS_R_ROUTED);
    gemmex(h, 0, 0, &alpha, &beta, 0, 1);
    verdict("a BLAS call whose row's algorithm needs workspace: forwarded (lt_algo_unfit), "
            "cuBLAS's own bits",
            count("cublas", GS_R_LT_ALGO_UNFIT) == unfit + 1 &&
                count("cublaslt", GS_R_ROUTED) == ours && same(C, R));
  }

  unlink(path);
  check_built_in_rows(h);
  cublasDestroy_v2(h);
  printf("%s: %d of %d checks passed\n", failures ? "FAIL" : "PASS", checks - failures, checks);
  return failures ? 1 : 0;
}
