/* The exported cuBLAS / cuBLASLt GEMM entry points. Each wrapper: find the
 * real function, pass nested and disabled calls straight through, describe
 * the call, let dispatch/ serve it or forward it unchanged. No policy here. */
#include <cublasLt.h>
#include <cublas_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../dispatch/config.h"
#include "../dispatch/dispatch.h"
#include "../dispatch/gemm.h"
#include "resolve.h"

#define GS_EXPORT __attribute__((visibility("default")))

/* ---- the real functions ------------------------------------------------ */

enum {
#define GS_ENTRY(name, lib, params, args, describe) GS_ID_##name,
#include "entrypoints.def"
#undef GS_ENTRY
  GS_N_ENTRIES
};

#define GS_ENTRY(name, lib, params, args, describe) \
  typedef cublasStatus_t (*name##_fn) params;
#include "entrypoints.def"
#undef GS_ENTRY

static const struct { const char *name; gs_lib lib; } entries[GS_N_ENTRIES] = {
#define GS_ENTRY(name, lib, params, args, describe) [GS_ID_##name] = { #name, lib },
#include "entrypoints.def"
#undef GS_ENTRY
};

/* What the shim itself calls, from the same copy as the forwarded calls. */
typedef struct helpers {
  cublasStatus_t (*get_stream)(cublasHandle_t, cudaStream_t *);
  cublasStatus_t (*get_pointer_mode)(cublasHandle_t, cublasPointerMode_t *);
  cublasStatus_t (*get_math_mode)(cublasHandle_t, cublasMath_t *);
  cublasStatus_t (*get_sm_count_target)(cublasHandle_t, int *);
  cublasStatus_t (*desc_get)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t,
                             void *, size_t, size_t *);
  cublasStatus_t (*layout_get)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t,
                               void *, size_t, size_t *);
} helpers;

static void *real_fns[GS_N_ENTRIES];
static helpers help;
static int lib_ok[GS_LIB_COUNT];
static int disabled;
static pthread_once_t lib_once[GS_LIB_COUNT] = { PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT };

/* Set while a forwarded call runs on this thread: libcublas calls
 * cublasLtMatmul through its PLT, and those nested calls reach our export. */
static __thread int forwarding;

static void bind_lib(gs_lib lib)
{
  disabled = gs_config()->disable;
  if (!gs_lib_ready(lib)) return;
  for (int i = 0; i < GS_N_ENTRIES; i++)
    if (entries[i].lib == lib) real_fns[i] = gs_lib_sym(lib, entries[i].name);
  if (lib == GS_LIB_BLAS) {
    *(void **)&help.get_stream = gs_lib_sym(lib, "cublasGetStream_v2");
    *(void **)&help.get_pointer_mode = gs_lib_sym(lib, "cublasGetPointerMode_v2");
    *(void **)&help.get_math_mode = gs_lib_sym(lib, "cublasGetMathMode");
    *(void **)&help.get_sm_count_target = gs_lib_sym(lib, "cublasGetSmCountTarget");
  } else {
    *(void **)&help.desc_get = gs_lib_sym(lib, "cublasLtMatmulDescGetAttribute");
    *(void **)&help.layout_get = gs_lib_sym(lib, "cublasLtMatrixLayoutGetAttribute");
  }
  lib_ok[lib] = 1;
}

static void bind_blas(void) { bind_lib(GS_LIB_BLAS); }
static void bind_lt(void) { bind_lib(GS_LIB_LT); }

/* The real function of an entry, or NULL (then the status to return). */
static void *real_fn(int id, cublasStatus_t *status)
{
  gs_lib lib = entries[id].lib;
  pthread_once(&lib_once[lib], lib == GS_LIB_BLAS ? bind_blas : bind_lt);
  if (!lib_ok[lib]) {
    *status = CUBLAS_STATUS_NOT_INITIALIZED;
    return NULL;
  }
  if (!real_fns[id]) {
    static _Atomic int said[GS_N_ENTRIES];
    if (!said[id]++)
      fprintf(stderr, "gemmshim: %s is not in %s; returning CUBLAS_STATUS_NOT_SUPPORTED\n",
              entries[id].name, gs_lib_path(lib));
    *status = CUBLAS_STATUS_NOT_SUPPORTED;
  }
  return real_fns[id];
}

/* ---- describing a call ------------------------------------------------- */

static int load_state_blas(gs_gemm *g)
{
  cublasHandle_t h = g->handle;
  cudaStream_t stream = NULL;
  cublasPointerMode_t pm;
  cublasMath_t math;
  int sms = 0;
  if (!help.get_stream || help.get_stream(h, &stream) != CUBLAS_STATUS_SUCCESS) return -1;
  if (!help.get_pointer_mode || help.get_pointer_mode(h, &pm) != CUBLAS_STATUS_SUCCESS) return -1;
  if (!help.get_math_mode || help.get_math_mode(h, &math) != CUBLAS_STATUS_SUCCESS) return -1;
  if (help.get_sm_count_target && help.get_sm_count_target(h, &sms) != CUBLAS_STATUS_SUCCESS)
    return -1;
  g->stream = stream;
  g->pointer_mode = (int)pm;
  g->math_mode = (int)math;
  g->sm_count_target = sms;
  return 0;
}

static gs_gemm describe_blas(cublasHandle_t handle, int ta, int tb, int64_t m, int64_t n,
                             int64_t k, const void *alpha, const void *A, int a_type,
                             int64_t lda, int64_t sa, const void *B, int b_type, int64_t ldb,
                             int64_t sb, const void *beta, void *C, int c_type, int64_t ldc,
                             int64_t sc, int64_t batch, int compute, int algo, int batched_api)
{
  gs_gemm g;
  memset(&g, 0, sizeof g);
  g.is_batched_api = batched_api;
  g.a_type = a_type; g.b_type = b_type; g.c_type = c_type; g.d_type = c_type;
  g.compute_type = compute;
  g.scale_type = GS_NONE;
  g.trans_a = ta; g.trans_b = tb;
  g.algo = algo;
  g.m = m; g.n = n; g.k = k;
  g.lda = lda; g.ldb = ldb; g.ldc = ldc; g.ldd = ldc;
  g.stride_a = sa; g.stride_b = sb; g.stride_c = sc; g.stride_d = sc;
  g.batch = batch;
  g.A = A; g.B = B; g.C = C; g.D = C;
  g.alpha = alpha; g.beta = beta;
  g.pointer_mode = g.math_mode = g.epilogue = g.bias_type = GS_NONE;
  g.handle = handle;
  g.load_state = load_state_blas;
  return g;
}

#define DESC_GET(desc, attr, var) \
  (help.desc_get(desc, attr, &(var), sizeof(var), &written) == CUBLAS_STATUS_SUCCESS)
#define LAYOUT_GET(lay, attr, var) \
  (help.layout_get(lay, attr, &(var), sizeof(var), &written) == CUBLAS_STATUS_SUCCESS)

/* Attributes a fast path must see at their defaults; anything else is
 * "unhandled" and the call forwards (reason lt_attribute). Left unread:
 * what only planar-complex or FP8 types use (plane offsets, scale modes;
 * we route neither) and what only epilogues we never fuse read (aux). */
static const char *lt_unhandled(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t lay[4])
{
  size_t written;
  int32_t transc = 0, fill = 0;
  void *ptr = NULL;
  static const struct { cublasLtMatmulDescAttributes_t attr; const char *name; } null_ptrs[] = {
    { CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, "A_SCALE_POINTER" },
    { CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, "B_SCALE_POINTER" },
    { CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, "C_SCALE_POINTER" },
    { CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, "D_SCALE_POINTER" },
    { CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, "AMAX_D_POINTER" },
  };
  if (!DESC_GET(desc, CUBLASLT_MATMUL_DESC_TRANSC, transc) || transc != CUBLAS_OP_N)
    return "TRANSC";
  if (!DESC_GET(desc, CUBLASLT_MATMUL_DESC_FILL_MODE, fill) || fill != CUBLAS_FILL_MODE_FULL)
    return "FILL_MODE";
  for (size_t i = 0; i < sizeof null_ptrs / sizeof *null_ptrs; i++)
    if (!DESC_GET(desc, null_ptrs[i].attr, ptr) || ptr != NULL) return null_ptrs[i].name;
  for (int i = 0; i < 4; i++) {
    int32_t order = 0;
    uint32_t mode = 0;
    if (!LAYOUT_GET(lay[i], CUBLASLT_MATRIX_LAYOUT_ORDER, order) || order != CUBLASLT_ORDER_COL)
      return "LAYOUT_ORDER";
    if (!LAYOUT_GET(lay[i], CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, mode) || mode != 0)
      return "LAYOUT_BATCH_MODE";
  }
  return NULL;
}

static int load_state_lt(gs_gemm *g)
{
  cublasLtMatmulDesc_t desc = (cublasLtMatmulDesc_t)g->lt_desc;
  cublasLtMatrixLayout_t lay[4];
  for (int i = 0; i < 4; i++) lay[i] = (cublasLtMatrixLayout_t)g->lt_layout[i];
  size_t written;
  int32_t pm = 0, scale = 0, bias_type = -1, sms = 0;
  const void *bias = NULL;
  int64_t ld[4];
  uint64_t rows[4], cols[4];
  uint32_t epi = (uint32_t)g->epilogue;
  if (!DESC_GET(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, pm) ||
      !DESC_GET(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, scale) ||
      !DESC_GET(desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, sms))
    return -1;
  if ((epi & CUBLASLT_EPILOGUE_BIAS) &&
      (!DESC_GET(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias) ||
       !DESC_GET(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bias_type)))
    return -1;
  for (int i = 0; i < 4; i++)
    if (!LAYOUT_GET(lay[i], CUBLASLT_MATRIX_LAYOUT_LD, ld[i])) return -1;
  /* A's and D's shape came with the description; B's and C's are checked
   * against it. */
  for (int i = 1; i < 3; i++)
    if (!LAYOUT_GET(lay[i], CUBLASLT_MATRIX_LAYOUT_ROWS, rows[i]) ||
        !LAYOUT_GET(lay[i], CUBLASLT_MATRIX_LAYOUT_COLS, cols[i]))
      return -1;
  g->pointer_mode = pm;
  g->scale_type = scale;
  g->bias = bias;
  g->bias_type = bias_type == -1 ? g->d_type : bias_type;
  g->sm_count_target = sms;
  g->lda = ld[0]; g->ldb = ld[1]; g->ldc = ld[2]; g->ldd = ld[3];
  /* B must be k x n as op(B) sees it, C and D m x n: otherwise cuBLASLt
   * rejects the call and so must we (its own status comes back). */
  uint64_t b_rows = g->trans_b == CUBLAS_OP_N ? rows[1] : cols[1];
  uint64_t b_cols = g->trans_b == CUBLAS_OP_N ? cols[1] : rows[1];
  if (b_rows != (uint64_t)g->k || b_cols != (uint64_t)g->n || rows[2] != (uint64_t)g->m ||
      cols[2] != (uint64_t)g->n)
    g->m = -1;  /* invalid: gs_args_invalid says bad_args */
  g->lt_unhandled = lt_unhandled(desc, lay);
  return 0;
}

static gs_gemm describe_lt(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha,
                           const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                           cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                           cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
                           const cublasLtMatmulAlgo_t *algo, void *workspace, size_t ws_size,
                           cudaStream_t stream)
{
  gs_gemm g;
  memset(&g, 0, sizeof g);
  size_t written;
  int32_t compute = GS_NONE, ta = CUBLAS_OP_N, tb = CUBLAS_OP_N, batch = 1;
  uint32_t epi = CUBLASLT_EPILOGUE_DEFAULT;
  uint32_t t[4] = { (uint32_t)GS_NONE, (uint32_t)GS_NONE, (uint32_t)GS_NONE, (uint32_t)GS_NONE };
  uint64_t a_rows = 0, a_cols = 0, d_rows = 0, d_cols = 0;
  cublasLtMatrixLayout_t lay[4] = { Adesc, Bdesc, Cdesc, Ddesc };
  int ok = help.desc_get && help.layout_get && desc && Adesc && Bdesc && Cdesc && Ddesc;
  ok = ok && DESC_GET(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, compute) &&
       DESC_GET(desc, CUBLASLT_MATMUL_DESC_TRANSA, ta) &&
       DESC_GET(desc, CUBLASLT_MATMUL_DESC_TRANSB, tb) &&
       DESC_GET(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epi);
  for (int i = 0; ok && i < 4; i++) ok = LAYOUT_GET(lay[i], CUBLASLT_MATRIX_LAYOUT_TYPE, t[i]);
  ok = ok && LAYOUT_GET(Adesc, CUBLASLT_MATRIX_LAYOUT_ROWS, a_rows) &&
       LAYOUT_GET(Adesc, CUBLASLT_MATRIX_LAYOUT_COLS, a_cols) &&
       LAYOUT_GET(Ddesc, CUBLASLT_MATRIX_LAYOUT_ROWS, d_rows) &&
       LAYOUT_GET(Ddesc, CUBLASLT_MATRIX_LAYOUT_COLS, d_cols) &&
       LAYOUT_GET(Ddesc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, batch);
  g.is_lt = 1;
  g.a_type = (int)t[0]; g.b_type = (int)t[1]; g.c_type = (int)t[2]; g.d_type = (int)t[3];
  g.compute_type = compute;
  g.scale_type = GS_NONE;
  g.trans_a = ta; g.trans_b = tb;
  g.algo = GS_NONE;
  g.m = (int64_t)d_rows;
  g.n = (int64_t)d_cols;
  g.k = (int64_t)(ta == CUBLAS_OP_N ? a_cols : a_rows);
  /* Leading dimensions are read by load_state; until then nothing fails
   * on them. */
  g.lda = g.ldb = g.ldc = g.ldd = INT64_MAX;
  g.batch = batch;
  g.A = A; g.B = B; g.C = C; g.D = D;
  g.alpha = alpha; g.beta = beta;
  g.stream = stream;
  g.pointer_mode = g.math_mode = g.bias_type = GS_NONE;
  g.epilogue = (int)epi;
  g.handle = handle;
  if (!ok) {
    g.m = -1;     /* unreadable descriptors: cuBLASLt says what is wrong */
    g.load_state = NULL;
    return g;
  }
  g.lt_desc = desc;
  for (int i = 0; i < 4; i++) g.lt_layout[i] = lay[i];
  g.lt_algo = algo;
  g.workspace = workspace;
  g.workspace_size = ws_size;
  g.load_state = load_state_lt;
  return g;
}

/* ---- calling the real function again ----------------------------------- */

/* Locals named like every parameter of the entry points, filled from the
 * descriptor, so that the table's own argument list calls the real
 * function. Each entry uses some of them. */
#define GS_LOCALS_GS_LIB_BLAS                                                   \
  cublasHandle_t handle = g->handle;                                            \
  cublasOperation_t transa = (cublasOperation_t)g->trans_a;                     \
  cublasOperation_t transb = (cublasOperation_t)g->trans_b;                     \
  int64_t m = g->m, n = g->n, k = g->k;                                         \
  const void *alpha = g->alpha, *beta = g->beta, *A = g->A, *B = g->B;          \
  void *C = (void *)c_out;                                                      \
  cudaDataType Atype = (cudaDataType)g->a_type, Btype = (cudaDataType)g->b_type; \
  cudaDataType Ctype = (cudaDataType)g->c_type;                                 \
  int64_t lda = g->lda, ldb = g->ldb, ldc = g->ldc, batchCount = g->batch;      \
  long long strideA = g->stride_a, strideB = g->stride_b, strideC = g->stride_c; \
  cublasComputeType_t computeType = (cublasComputeType_t)g->compute_type;       \
  cublasGemmAlgo_t algo = (cublasGemmAlgo_t)g->algo;                            \
  (void)d_out; (void)Atype; (void)Btype; (void)Ctype; (void)strideA;            \
  (void)strideB; (void)strideC; (void)batchCount; (void)computeType; (void)algo;

#define GS_LOCALS_GS_LIB_LT                                                     \
  cublasLtHandle_t lightHandle = g->handle;                                     \
  cublasLtMatmulDesc_t computeDesc = (cublasLtMatmulDesc_t)g->lt_desc;          \
  const void *alpha = g->alpha, *beta = g->beta, *A = g->A, *B = g->B;          \
  const void *C = c_out;                                                        \
  void *D = d_out;                                                              \
  cublasLtMatrixLayout_t Adesc = (cublasLtMatrixLayout_t)g->lt_layout[0];       \
  cublasLtMatrixLayout_t Bdesc = (cublasLtMatrixLayout_t)g->lt_layout[1];       \
  cublasLtMatrixLayout_t Cdesc = (cublasLtMatrixLayout_t)g->lt_layout[2];       \
  cublasLtMatrixLayout_t Ddesc = (cublasLtMatrixLayout_t)g->lt_layout[3];       \
  const cublasLtMatmulAlgo_t *algo = g->lt_algo;                                \
  void *workspace = g->workspace;                                               \
  size_t workspaceSizeInBytes = g->workspace_size;                              \
  cudaStream_t stream = (cudaStream_t)g->stream;

#define GS_ENTRY(name, lib, params, args, describe)                         \
  static int reissue_##name(const gs_gemm *g, const void *c_out, void *d_out) \
  {                                                                         \
    GS_LOCALS_##lib                                                         \
    forwarding++;                                                           \
    int st = (int)((name##_fn)real_fns[GS_ID_##name])args;                  \
    forwarding--;                                                           \
    return st;                                                              \
  }
#include "entrypoints.def"
#undef GS_ENTRY

/* ---- the wrappers ------------------------------------------------------ */

#define GS_ENTRY(name, lib, params, args, describe)                  \
  GS_EXPORT cublasStatus_t name params                               \
  {                                                                  \
    cublasStatus_t status;                                           \
    name##_fn real = (name##_fn)real_fn(GS_ID_##name, &status);      \
    if (!real) return status;                                        \
    if (forwarding || disabled) return real args;                    \
    gs_gemm g = describe;                                            \
    g.entry = GS_ID_##name;                                          \
    g.entry_name = #name;                                            \
    g.reissue = reissue_##name;                                      \
    gs_decision d;                                                   \
    int served_status;                                               \
    if (gs_dispatch(&g, &d, &served_status))                         \
      return (cublasStatus_t)served_status;                          \
    forwarding++;                                                    \
    status = real args;                                              \
    forwarding--;                                                    \
    gs_dispatch_forwarded(&g, &d);                                   \
    return status;                                                   \
  }
#include "entrypoints.def"
#undef GS_ENTRY
