/* A fake libcublasLt: descriptors and layouts hold their attributes (with
 * the library's documented defaults); cublasLtMatmul records its
 * arguments. */
#include <cublasLt.h>
#include <stdlib.h>

#include "fake_common.h"

#define N_ATTR 64

/* A descriptor: one 8-byte slot per attribute (the shim reads attributes up
 * to 26, inside the 256 bytes of the real semi-opaque struct). */
typedef struct fake_obj { int64_t v[N_ATTR]; } fake_obj;

/* A layout packed into the 64 bytes of the real semi-opaque struct, as the
 * real one is: the shim compares those bytes to know a layout unchanged. */
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

static cublasStatus_t get_attr(const fake_obj *o, int attr, void *buf, size_t size,
                               size_t *written)
{
  if (!o || attr < 0 || attr >= N_ATTR || size > sizeof(int64_t)) return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(buf, &o->v[attr], size);  /* little endian: the low bytes */
  if (written) *written = size;
  return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t set_attr(fake_obj *o, int attr, const void *buf, size_t size)
{
  if (!o || attr < 0 || attr >= N_ATTR || size > sizeof(int64_t)) return CUBLAS_STATUS_INVALID_VALUE;
  int64_t v = 0;
  memcpy(&v, buf, size);
  /* sign-extend 4-byte values such as BIAS_DATA_TYPE = -1 */
  if (size == 4) v = (int32_t)v;
  o->v[attr] = v;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
  *h = (cublasLtHandle_t)calloc(1, 64);
  return CUBLAS_STATUS_SUCCESS;
}
size_t cublasLtGetVersion(void) { return 130099; }

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                        cudaDataType_t scale)
{
  fake_obj *o = calloc(1, sizeof *o);
  o->v[CUBLASLT_MATMUL_DESC_COMPUTE_TYPE] = compute;
  o->v[CUBLASLT_MATMUL_DESC_SCALE_TYPE] = scale;
  o->v[CUBLASLT_MATMUL_DESC_FILL_MODE] = CUBLAS_FILL_MODE_FULL;
  o->v[CUBLASLT_MATMUL_DESC_EPILOGUE] = CUBLASLT_EPILOGUE_DEFAULT;
  o->v[CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE] = -1;
  o->v[CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE] = -1;
  *d = (cublasLtMatmulDesc_t)o;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) { free(d); return 0; }
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t a, const void *buf,
                                              size_t size)
{
  return set_attr((fake_obj *)d, a, buf, size);
}
cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t a, void *buf,
                                              size_t size, size_t *written)
{
  return get_attr((const fake_obj *)d, a, buf, size, written);
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld)
{
  fake_layout *o = calloc(1, sizeof(cublasLtMatrixLayoutOpaque_t));
  o->type = (uint32_t)type;
  o->rows = rows;
  o->cols = cols;
  o->ld = ld;
  o->batch_count = 1;
  *l = (cublasLtMatrixLayout_t)o;
  return CUBLAS_STATUS_SUCCESS;
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
  if (!f || size != field_size) return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(buf, f, size);
  if (written) *written = size;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                              const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
                              const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                              const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
                              void *workspace, size_t workspaceSizeInBytes, cudaStream_t stream)
{
  return FAKE_RECORD("cublasLtMatmul", lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta,
                     C, Cdesc, D, Ddesc, algo, workspace, workspaceSizeInBytes, stream);
}
