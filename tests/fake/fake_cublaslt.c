/* A fake libcublasLt: descriptors and layouts hold their attributes (with
 * the library's documented defaults) and answer the getters as the real
 * library does; algorithms hold what AlgoInit and ConfigSetAttribute were
 * given (fake.h, fake_lt_algo); cublasLtMatmul records its arguments and
 * copies what they point to (fake_lt_matmul). */
#include <cublasLt.h>
#include <stdio.h>
#include <stdlib.h>

#include "fake_common.h"

_Static_assert(sizeof(fake_lt_algo) == sizeof(cublasLtMatmulAlgo_t), "the algorithm's 64 bytes");
_Static_assert(sizeof(((fake_lt_matmul *)0)->desc) == sizeof(cublasLtMatmulDescOpaque_t) &&
               sizeof(((fake_lt_matmul *)0)->layout[0]) == sizeof(cublasLtMatrixLayoutOpaque_t) &&
               sizeof(((fake_lt_matmul *)0)->algo) == sizeof(cublasLtMatmulAlgo_t),
               "the copies are the real objects' sizes");

/* A call counted (fake_count) without becoming fake_last: the shim's own
 * handle and algorithms must not hide the call a test looks at. */
static void count_only(const char *name)
{
  if (fake_quiet) return;
  pthread_mutex_lock(&fake_lock);
  for (int i = 0; i < 32; i++) {
    if (!fake_counts[i].name[0]) strncpy(fake_counts[i].name, name, sizeof fake_counts[i].name - 1);
    if (!strcmp(fake_counts[i].name, name)) {
      fake_counts[i].count++;
      break;
    }
  }
  pthread_mutex_unlock(&fake_lock);
}

/* fake_lt_fail: one function made to fail (set only while no other thread
 * calls the fake). */
static char fail_name[64];
static int fail_status;

void fake_lt_fail(const char *name, int status)
{
  snprintf(fail_name, sizeof fail_name, "%s", name ? name : "");
  fail_status = status;
}

static int failing(const char *name)
{
  return fail_name[0] && !strcmp(fail_name, name) ? fail_status : CUBLAS_STATUS_SUCCESS;
}

static fake_lt_matmul last_matmul;
static int keep_matmul;

const fake_lt_matmul *fake_lt_last_matmul(void) { return &last_matmul; }

/* Copying reads what the pointers point to: only for a test that asks,
 * since others pass made-up pointers (the shim forwards them unread). */
void fake_lt_keep_matmul(int keep) { keep_matmul = keep; }

void fake_lt_clear(void)
{
  fake_lt_fail(NULL, 0);
  keep_matmul = 0;
  pthread_mutex_lock(&fake_lock);
  memset(&last_matmul, 0, sizeof last_matmul);
  pthread_mutex_unlock(&fake_lock);
}

#define N_ATTR 64

/* A descriptor: every attribute id 0..63 packed into the 256 bytes of the
 * real semi-opaque struct, as the real library packs its own (the shim
 * compares those bytes to know a descriptor unchanged). Sizes are cuBLAS
 * 13's for the ids it has, cuBLAS 12's for its ATOMIC_SYNC ids 27..30, and
 * one byte for ids no cuBLAS has yet: the shim must forward a call that
 * sets any of them, which the tests check id by id. */
typedef struct fake_desc { unsigned char bytes[sizeof(cublasLtMatmulDescOpaque_t)]; } fake_desc;

static int attr_size(int attr)
{
  switch (attr) {
  case 8: case 10: case 11: case 12: case 13: case 14: case 17: case 18: case 19: case 20:
  case 21: case 23: case 24: case 29: case 30: case 36: case 38:
    return 8;
  case 25: return 1;
  default: return attr <= 38 ? 4 : 1;
  }
}

static size_t attr_offset(int attr)
{
  size_t off = 0;
  for (int a = 0; a < attr; a++) off += (size_t)attr_size(a);
  return off;
}
_Static_assert(sizeof(fake_desc) >= 246, "every attribute fits the real size");

/* The real getter's protocol: size 0 with a NULL buffer asks for the size;
 * otherwise the size must be the attribute's. */
static cublasStatus_t get_attr(const fake_desc *o, int attr, void *buf, size_t size,
                               size_t *written)
{
  if (!o || attr < 0 || attr >= N_ATTR) return CUBLAS_STATUS_INVALID_VALUE;
  size_t need = (size_t)attr_size(attr);
  if (written) *written = need;
  if (size == 0 && !buf) return CUBLAS_STATUS_SUCCESS;
  if (size != need || !buf) return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(buf, o->bytes + attr_offset(attr), need);
  return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t set_attr(fake_desc *o, int attr, const void *buf, size_t size)
{
  if (!o || attr < 0 || attr >= N_ATTR || size != (size_t)attr_size(attr))
    return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(o->bytes + attr_offset(attr), buf, size);
  return CUBLAS_STATUS_SUCCESS;
}

static void set_i32(fake_desc *o, int attr, int32_t v) { set_attr(o, attr, &v, 4); }

/* A layout packed into the 64 bytes of the real semi-opaque struct, as the
 * real one is. */
typedef struct fake_layout {
  uint32_t type;
  int32_t order;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch_count;
  uint32_t batch_mode;
  int64_t stride, plane;
} fake_layout;
_Static_assert(sizeof(fake_layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "fits the real size");

static void *layout_field(fake_layout *l, int attr, size_t *size)
{
  switch (attr) {
  case CUBLASLT_MATRIX_LAYOUT_TYPE: *size = 4; return &l->type;
  case CUBLASLT_MATRIX_LAYOUT_ORDER: *size = 4; return &l->order;
  case CUBLASLT_MATRIX_LAYOUT_ROWS: *size = 8; return &l->rows;
  case CUBLASLT_MATRIX_LAYOUT_COLS: *size = 8; return &l->cols;
  case CUBLASLT_MATRIX_LAYOUT_LD: *size = 8; return &l->ld;
  case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: *size = 4; return &l->batch_count;
  case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: *size = 8; return &l->stride;
  case CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET: *size = 8; return &l->plane;
  case CUBLASLT_MATRIX_LAYOUT_BATCH_MODE: *size = 4; return &l->batch_mode;
  default: return NULL;
  }
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
  count_only("cublasLtCreate");
  int st = failing("cublasLtCreate");
  if (st) return (cublasStatus_t)st;
  *h = (cublasLtHandle_t)calloc(1, 64);
  return CUBLAS_STATUS_SUCCESS;
}
size_t cublasLtGetVersion(void) { return 130099; }

/* Init writes every byte an attribute lives in, and leaves the rest (the
 * real one leaves 59 of its 256 bytes) as they were. */
cublasStatus_t cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t d, size_t size,
                                               cublasComputeType_t compute, cudaDataType_t scale)
{
  if (size < sizeof(fake_desc)) return CUBLAS_STATUS_INVALID_VALUE;
  int st = failing("cublasLtMatmulDescInit_internal");
  if (st) return (cublasStatus_t)st;
  fake_desc *o = (fake_desc *)d;
  memset(o->bytes, 0, attr_offset(N_ATTR));
  set_i32(o, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, compute);
  set_i32(o, CUBLASLT_MATMUL_DESC_SCALE_TYPE, scale);
  set_i32(o, CUBLASLT_MATMUL_DESC_FILL_MODE, CUBLAS_FILL_MODE_FULL);
  set_i32(o, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_DEFAULT);
  set_i32(o, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, -1);
  set_i32(o, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, -1);
  return CUBLAS_STATUS_SUCCESS;
}

/* Create: malloc and Init, as the real one does; the bytes Init leaves are
 * heap garbage (made visible here). */
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                        cudaDataType_t scale)
{
  static unsigned char garbage;
  fake_desc *o = malloc(sizeof *o);
  memset(o, ++garbage, sizeof *o);
  *d = (cublasLtMatmulDesc_t)o;
  return cublasLtMatmulDescInit_internal(*d, sizeof *o, compute, scale);
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) { free(d); return 0; }
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t a, const void *buf,
                                              size_t size)
{
  int st = failing("cublasLtMatmulDescSetAttribute");
  if (st) return (cublasStatus_t)st;
  return set_attr((fake_desc *)d, a, buf, size);
}
cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t a, void *buf,
                                              size_t size, size_t *written)
{
  return get_attr((const fake_desc *)d, a, buf, size, written);
}

cublasStatus_t cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t l, size_t size,
                                                 cudaDataType type, uint64_t rows, uint64_t cols,
                                                 int64_t ld)
{
  if (size < sizeof(cublasLtMatrixLayoutOpaque_t)) return CUBLAS_STATUS_INVALID_VALUE;
  int st = failing("cublasLtMatrixLayoutInit_internal");
  if (st) return (cublasStatus_t)st;
  fake_layout *o = (fake_layout *)l;
  memset(o, 0, sizeof *o);
  o->type = (uint32_t)type;
  o->rows = rows;
  o->cols = cols;
  o->ld = ld;
  o->batch_count = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld)
{
  static unsigned char garbage;
  void *o = malloc(sizeof(cublasLtMatrixLayoutOpaque_t));
  memset(o, ++garbage, sizeof(cublasLtMatrixLayoutOpaque_t));
  *l = (cublasLtMatrixLayout_t)o;
  return cublasLtMatrixLayoutInit_internal(*l, sizeof(cublasLtMatrixLayoutOpaque_t), type, rows,
                                           cols, ld);
}
cublasStatus_t cublasLtMatrixLayoutDestroy(const cublasLtMatrixLayout_t l) { free(l); return 0; }
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                cublasLtMatrixLayoutAttribute_t a,
                                                const void *buf, size_t size)
{
  size_t field_size;
  void *f = layout_field((fake_layout *)l, a, &field_size);
  if (!f || size != field_size) return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(f, buf, size);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l,
                                                cublasLtMatrixLayoutAttribute_t a, void *buf,
                                                size_t size, size_t *written)
{
  size_t field_size;
  void *f = layout_field((fake_layout *)l, a, &field_size);
  if (!f) return CUBLAS_STATUS_INVALID_VALUE;
  if (written) *written = field_size;
  if (size == 0 && !buf) return CUBLAS_STATUS_SUCCESS;
  if (size != field_size || !buf) return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(buf, f, size);
  return CUBLAS_STATUS_SUCCESS;
}

/* Init: the id and types, every field at its documented default (splitk 1,
 * the rest 0); a handle is needed, as the real one needs it. */
cublasStatus_t cublasLtMatmulAlgoInit(cublasLtHandle_t lightHandle, cublasComputeType_t computeType,
                                      cudaDataType_t scaleType, cudaDataType_t Atype,
                                      cudaDataType_t Btype, cudaDataType_t Ctype,
                                      cudaDataType_t Dtype, int algoId, cublasLtMatmulAlgo_t *algo)
{
  count_only("cublasLtMatmulAlgoInit");
  int st = failing("cublasLtMatmulAlgoInit");
  if (st) return (cublasStatus_t)st;
  if (!lightHandle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!algo) return CUBLAS_STATUS_INVALID_VALUE;
  fake_lt_algo *o = (fake_lt_algo *)algo->data;
  memset(o, 0, sizeof *o);
  o->magic = FAKE_LT_ALGO_MAGIC;
  o->id = algoId;
  o->compute = computeType;
  o->scale = scaleType;
  o->a_type = Atype;
  o->b_type = Btype;
  o->c_type = Ctype;
  o->d_type = Dtype;
  o->splitk = 1;
  return CUBLAS_STATUS_SUCCESS;
}

/* Where each configuration attribute lives, with its documented size. */
static void *algo_field(fake_lt_algo *o, int attr, size_t *need)
{
  switch (attr) {
  case CUBLASLT_ALGO_CONFIG_ID: *need = 4; return &o->id;
  case CUBLASLT_ALGO_CONFIG_TILE_ID: *need = 4; return &o->tile;
  case CUBLASLT_ALGO_CONFIG_SPLITK_NUM: *need = 4; return &o->splitk;
  case CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME: *need = 4; return &o->reduction;
  case CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING: *need = 4; return &o->swizzle;
  case CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION: *need = 4; return &o->custom;
  case CUBLASLT_ALGO_CONFIG_STAGES_ID: *need = 4; return &o->stages;
  case CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID: *need = 2; return &o->inner;
  case CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID: *need = 2; return &o->cluster;
  default: return NULL;
  }
}

/* Each field with its documented size (ID is read-only); an algorithm
 * AlgoInit did not make is refused, which the real library cannot tell. */
cublasStatus_t cublasLtMatmulAlgoConfigSetAttribute(cublasLtMatmulAlgo_t *algo,
                                                    cublasLtMatmulAlgoConfigAttributes_t attr,
                                                    const void *buf, size_t size)
{
  int st = failing("cublasLtMatmulAlgoConfigSetAttribute");
  if (st) return (cublasStatus_t)st;
  if (!algo || !buf) return CUBLAS_STATUS_INVALID_VALUE;
  fake_lt_algo *o = (fake_lt_algo *)algo->data;
  if (o->magic != FAKE_LT_ALGO_MAGIC) return CUBLAS_STATUS_INVALID_VALUE;
  size_t need;
  void *field = algo_field(o, attr, &need);
  if (!field || attr == CUBLASLT_ALGO_CONFIG_ID) return CUBLAS_STATUS_INVALID_VALUE;   /* read-only */
  if (size != need) return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(field, buf, need);
  o->set |= 1u << attr;
  return CUBLAS_STATUS_SUCCESS;
}

/* Each field back, as the real getter gives it (ID included). */
cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t *algo,
                                                    cublasLtMatmulAlgoConfigAttributes_t attr,
                                                    void *buf, size_t size, size_t *written)
{
  if (!algo || !buf) return CUBLAS_STATUS_INVALID_VALUE;
  const fake_lt_algo *o = (const fake_lt_algo *)algo->data;
  size_t need;
  const void *field = algo_field((fake_lt_algo *)o, attr, &need);
  if (!field) return CUBLAS_STATUS_INVALID_VALUE;
  if (size != need) return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(buf, field, need);
  if (written) *written = need;
  return CUBLAS_STATUS_SUCCESS;
}

/* The bytes of what the call points to, while it runs. */
static void copy_matmul(cublasLtMatmulDesc_t desc, const void *alpha, const void *beta,
                        const cublasLtMatrixLayout_t layouts[4], const cublasLtMatmulAlgo_t *algo)
{
  if (fake_quiet || !keep_matmul) return;
  fake_lt_matmul m;
  memset(&m, 0, sizeof m);
  if (desc) {
    memcpy(m.desc, desc, sizeof m.desc);
    int32_t mode = -1, scale = -1;
    get_attr((const fake_desc *)desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode, 4, NULL);
    get_attr((const fake_desc *)desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale, 4, NULL);
    if (mode == CUBLASLT_POINTER_MODE_HOST && scale == CUDA_R_32F && alpha && beta) {
      m.host_scalars = 1;
      memcpy(&m.alpha, alpha, sizeof m.alpha);
      memcpy(&m.beta, beta, sizeof m.beta);
    }
  }
  for (int i = 0; i < 4; i++)
    if (layouts[i]) memcpy(m.layout[i], layouts[i], sizeof m.layout[i]);
  if (algo) {
    m.has_algo = 1;
    memcpy(m.algo, algo->data, sizeof m.algo);
  }
  pthread_mutex_lock(&fake_lock);
  m.n = last_matmul.n + 1;
  last_matmul = m;
  pthread_mutex_unlock(&fake_lock);
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                              const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
                              const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                              const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
                              void *workspace, size_t workspaceSizeInBytes, cudaStream_t stream)
{
  const cublasLtMatrixLayout_t layouts[4] = { Adesc, Bdesc, Cdesc, Ddesc };
  copy_matmul(computeDesc, alpha, beta, layouts, algo);
  return FAKE_RECORD("cublasLtMatmul", lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta,
                     C, Cdesc, D, Ddesc, algo, workspace, workspaceSizeInBytes, stream);
}
