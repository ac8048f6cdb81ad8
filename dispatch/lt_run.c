/* The route "cublaslt": a call run by cuBLASLt with a chosen algorithm
 * (lt_run.h). */
#include "lt_run.h"

#include <cublas_api.h>
#include <library_types.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static gs_lt_fns fns;
static atomic_int fns_set;   /* 0 none, 2 being set, 1 set */

/* The first table given is kept: the library is bound once. */
void gs_lt_set_fns(const gs_lt_fns *f)
{
  int none = 0;
  if (!atomic_compare_exchange_strong(&fns_set, &none, 2)) return;
  fns = *f;
  atomic_store_explicit(&fns_set, 1, memory_order_release);
}

#define OK(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) return (int)s_; } while (0)

int gs_lt_algo_read(const gs_lt_fns *f, const cublasLtMatmulAlgo_t *bytes, gs_lt_algo *out)
{
  memset(out, 0, sizeof *out);
  size_t w;
#define GET(attr, field) OK(f->algo_get(bytes, attr, &out->field, sizeof out->field, &w))
  GET(CUBLASLT_ALGO_CONFIG_ID, id);
  GET(CUBLASLT_ALGO_CONFIG_TILE_ID, tile);
  GET(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, splitk);
  GET(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, reduction);
  GET(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, swizzle);
  GET(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, custom);
  GET(CUBLASLT_ALGO_CONFIG_STAGES_ID, stages);
  GET(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, inner);
  GET(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, cluster);
#undef GET
  return CUBLAS_STATUS_SUCCESS;
}

static int same_fields(const gs_lt_algo *x, const gs_lt_algo *y)
{
  return x->id == y->id && x->tile == y->tile && x->splitk == y->splitk &&
         x->reduction == y->reduction && x->swizzle == y->swizzle && x->custom == y->custom &&
         x->stages == y->stages && x->inner == y->inner && x->cluster == y->cluster;
}

int gs_lt_algo_of(const gs_lt_fns *f, cublasLtHandle_t h, const cublasLtMatmulAlgo_t *bytes,
                  uint64_t workspace, int compute, int a_type, int b_type, int c_type, int d_type,
                  gs_lt_algo *out)
{
  OK(gs_lt_algo_read(f, bytes, out));
  out->workspace = workspace;
  cublasLtMatmulAlgo_t rebuilt;
  if (gs_lt_algo_build(f, h, out, compute, a_type, b_type, c_type, d_type, &rebuilt) !=
          CUBLAS_STATUS_SUCCESS ||
      memcmp(rebuilt.data, bytes->data, sizeof rebuilt.data)) {
    out->has_raw = 1;
    memcpy(out->raw, bytes->data, sizeof out->raw);
  }
  return CUBLAS_STATUS_SUCCESS;
}

int gs_lt_algo_build(const gs_lt_fns *f, cublasLtHandle_t h, const gs_lt_algo *algo,
                     int compute, int a_type, int b_type, int c_type, int d_type,
                     cublasLtMatmulAlgo_t *out)
{
  if (algo->has_raw) {
    memcpy(out->data, algo->raw, sizeof out->data);
    gs_lt_algo back;
    OK(gs_lt_algo_read(f, out, &back));
    return same_fields(&back, algo) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
  }
  memset(out, 0, sizeof *out);
  OK(f->algo_init(h, (cublasComputeType_t)compute, CUDA_R_32F, (cudaDataType_t)a_type,
                  (cudaDataType_t)b_type, (cudaDataType_t)c_type, (cudaDataType_t)d_type,
                  algo->id, out));
  OK(f->algo_set(out, CUBLASLT_ALGO_CONFIG_TILE_ID, &algo->tile, sizeof algo->tile));
  OK(f->algo_set(out, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &algo->splitk, sizeof algo->splitk));
  OK(f->algo_set(out, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &algo->reduction,
                 sizeof algo->reduction));
  OK(f->algo_set(out, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &algo->swizzle, sizeof algo->swizzle));
  OK(f->algo_set(out, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &algo->custom, sizeof algo->custom));
  OK(f->algo_set(out, CUBLASLT_ALGO_CONFIG_STAGES_ID, &algo->stages, sizeof algo->stages));
  OK(f->algo_set(out, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &algo->inner, sizeof algo->inner));
  OK(f->algo_set(out, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &algo->cluster,
                 sizeof algo->cluster));
  return CUBLAS_STATUS_SUCCESS;
}

/* op(X) is rows x cols; X itself is that or its transpose. A strided
 * batch (more than one item) gives every layout its count and stride. */
static cublasStatus_t layout(const gs_lt_fns *f, cublasLtMatrixLayoutOpaque_t *l, int type,
                             int trans, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                             int64_t stride)
{
  uint64_t r = (uint64_t)(trans ? cols : rows), c = (uint64_t)(trans ? rows : cols);
  cublasLtMatrixLayout_t lay = (cublasLtMatrixLayout_t)l;
  OK(f->layout_init(lay, sizeof *l, (cudaDataType)type, r, c, ld));
  if (batch <= 1) return CUBLAS_STATUS_SUCCESS;
  if (batch > INT32_MAX || !f->layout_set) return CUBLAS_STATUS_NOT_SUPPORTED;
  const int32_t count = (int32_t)batch;
  OK(f->layout_set(lay, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
  OK(f->layout_set(lay, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
  return CUBLAS_STATUS_SUCCESS;
}

int gs_lt_build(const gs_lt_fns *f, cublasLtHandle_t h, const gs_gemm *g,
                const gs_kernel_args *a, const gs_lt_algo *algo, gs_lt_matmul *out)
{
  const int compute = gs_lt_compute_of(g);
  cublasLtMatmulDesc_t desc = (cublasLtMatmulDesc_t)&out->desc;
  OK(f->desc_init(desc, sizeof out->desc, (cublasComputeType_t)compute, CUDA_R_32F));
  const int32_t ta = a->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int32_t tb = a->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int32_t pm = a->scalars_on_device ? CUBLASLT_POINTER_MODE_DEVICE : CUBLASLT_POINTER_MODE_HOST;
  OK(f->desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  OK(f->desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  OK(f->desc_set(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pm, sizeof pm));
  if (a->bias) {
    const uint32_t epi = CUBLASLT_EPILOGUE_BIAS;
    const int32_t bias_type = g->bias_type;
    OK(f->desc_set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    OK(f->desc_set(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &a->bias, sizeof a->bias));
    OK(f->desc_set(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type));
  }
  if (a->sm_limit > 0) {
    const int32_t sms = a->sm_limit;
    OK(f->desc_set(desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sms, sizeof sms));
  }
  OK(layout(f, &out->layout[0], g->a_type, a->trans_a, a->m, a->k, a->lda, a->batch, a->stride_a));
  OK(layout(f, &out->layout[1], g->b_type, a->trans_b, a->k, a->n, a->ldb, a->batch, a->stride_b));
  OK(layout(f, &out->layout[2], g->c_type, 0, a->m, a->n, a->ldc, a->batch, a->stride_c));
  OK(layout(f, &out->layout[3], g->d_type, 0, a->m, a->n, a->ldd, a->batch, a->stride_d));
  if (algo)
    OK(gs_lt_algo_build(f, h, algo, compute, g->a_type, g->b_type, g->c_type, g->d_type,
                        &out->algo));
  out->alpha = a->scalars_on_device ? (const void *)a->alpha_dev : (const void *)&a->alpha;
  out->beta = a->scalars_on_device ? (const void *)a->beta_dev : (const void *)&a->beta;
  /* a BLAS call's algorithm needs none (gs_lt_algo_fits_call) */
  out->workspace = g->is_lt ? g->workspace : NULL;
  out->workspace_size = g->is_lt ? g->workspace_size : 0;
  return CUBLAS_STATUS_SUCCESS;
}

/* ---- the shim's handles, one per CUDA context ------------------------- */

/* Made on the loader thread (gs_lt_prepare), never inside a call: a call
 * only looks its context's up. Records are appended and never change, so
 * a lookup takes no lock; a context made again (cudaDeviceReset) has a new
 * identity and gets a record of its own (the old handle is left). */
#define MAX_HANDLES 64

typedef struct ctx_handle {
  uint64_t ctx_id;
  cublasLtHandle_t h;
} ctx_handle;

static ctx_handle handles[MAX_HANDLES];
static atomic_int n_handles;
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;

static cublasLtHandle_t handle_of(uint64_t ctx_id)
{
  int n = atomic_load_explicit(&n_handles, memory_order_acquire);
  for (int i = 0; i < n; i++)
    if (handles[i].ctx_id == ctx_id) return handles[i].h;
  return NULL;
}

int gs_lt_prepare(uint64_t ctx_id)
{
  if (atomic_load_explicit(&fns_set, memory_order_acquire) != 1 || !fns.create) return -1;
  pthread_mutex_lock(&handles_lock);
  int rc = 0;
  if (!handle_of(ctx_id)) {
    int n = atomic_load_explicit(&n_handles, memory_order_relaxed);
    cublasLtHandle_t h = NULL;
    if (n < MAX_HANDLES && fns.create(&h) == CUBLAS_STATUS_SUCCESS && h) {
      handles[n].ctx_id = ctx_id;
      handles[n].h = h;
      atomic_store_explicit(&n_handles, n + 1, memory_order_release);
    } else {
      rc = -1;
    }
  }
  pthread_mutex_unlock(&handles_lock);
  return rc;
}

void gs_lt_forget_handles(void)
{
  pthread_mutex_lock(&handles_lock);
  atomic_store(&n_handles, 0);
  pthread_mutex_unlock(&handles_lock);
}

/* cuBLASLt's refusals of a call, made before anything is enqueued. */
static int refused(int st)
{
  return st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_INVALID_VALUE ||
         st == CUBLAS_STATUS_ARCH_MISMATCH;
}

gs_kstatus gs_lt_run(const gs_gemm *g, const gs_lt_algo *algo, const gs_kernel_args *a)
{
  if (atomic_load_explicit(&fns_set, memory_order_acquire) != 1 || !fns.create || !fns.desc_init ||
      !fns.desc_set || !fns.layout_init || !fns.algo_init || !fns.algo_set || !fns.algo_get ||
      !fns.matmul)
    return GS_K_LAUNCH_FAILED;
  cublasLtHandle_t h = handle_of(a->ctx_id);
  if (!h) return GS_K_LAUNCH_FAILED;   /* gs_lt_prepare did not make one */
  gs_lt_matmul mm;
  int st = gs_lt_build(&fns, h, g, a, algo, &mm);
  if (st != CUBLAS_STATUS_SUCCESS) /* nothing ran: cuBLAS may serve the call */
    return refused(st) ? GS_K_UNSUPPORTED : GS_K_LAUNCH_FAILED;
  st = fns.matmul(h, (cublasLtMatmulDesc_t)&mm.desc, mm.alpha, a->A,
                  (cublasLtMatrixLayout_t)&mm.layout[0], a->B,
                  (cublasLtMatrixLayout_t)&mm.layout[1], mm.beta, a->C,
                  (cublasLtMatrixLayout_t)&mm.layout[2], a->D,
                  (cublasLtMatrixLayout_t)&mm.layout[3], &mm.algo, mm.workspace,
                  mm.workspace_size, a->stream);
  if (st == CUBLAS_STATUS_SUCCESS) return GS_K_OK;
  if (refused(st)) return GS_K_UNSUPPORTED;
  if (st == CUBLAS_STATUS_NOT_INITIALIZED || st == CUBLAS_STATUS_ALLOC_FAILED)
    return GS_K_LAUNCH_FAILED;
  return GS_K_FAILED_AFTER_ENQUEUE;   /* it may have written D */
}
