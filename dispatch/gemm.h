/* The GEMM descriptor: one cuBLAS or cuBLASLt call, as data.
 *
 * interpose/ fills it from the call's arguments; dispatch/ decides on it.
 * Everything is column-major, as cuBLAS sees it: D (m x n) = alpha * op(A)
 * op(B) + beta * C. For the BLAS entry points D is C. Enum-valued fields hold
 * the cuBLAS/CUDA enum values unchanged (cudaDataType, cublasOperation_t,
 * cublasComputeType_t, cublasLtEpilogue_t), so nothing is lost in
 * translation; dispatch compares them against the library's constants. */
#ifndef GS_GEMM_H
#define GS_GEMM_H

#include <stddef.h>
#include <stdint.h>

#define GS_NONE (-1)   /* "not given / not applicable" for enum-valued fields */

typedef struct gs_gemm gs_gemm;

/* Reads what the handle holds (stream, pointer mode, math mode, SM count
 * target; for cuBLASLt the remaining descriptor attributes). interpose/
 * provides it; dispatch/ calls it only for calls that could be routed, so a
 * forwarded call does not pay for it. Returns 0 on success. */
typedef int (*gs_load_state_fn)(gs_gemm *g);

struct gs_gemm {
  /* Who called: an index into interpose's entry table and its name (the
   * name only travels to the log; no decision looks at it). */
  int entry;
  const char *entry_name;
  int is_lt;           /* came through cublasLtMatmul (D separate from C) */
  int is_batched_api;  /* a strided-batched entry point */

  int a_type, b_type, c_type, d_type;  /* cudaDataType */
  int compute_type;                    /* cublasComputeType_t */
  int scale_type;                      /* cudaDataType of alpha/beta */
  int trans_a, trans_b;                /* cublasOperation_t */
  int algo;                            /* cublasGemmAlgo_t, or GS_NONE */

  int64_t m, n, k;
  int64_t lda, ldb, ldc, ldd;
  int64_t stride_a, stride_b, stride_c, stride_d;
  int64_t batch;

  const void *A, *B, *C;
  void *D;
  const void *alpha, *beta;

  /* Filled by load_state (state_loaded set); GS_NONE until then. */
  int state_loaded;
  int pointer_mode;      /* 0 host, 1 device, other values: Lt vector modes */
  int math_mode;         /* cublasMath_t bitmask, BLAS entries only */
  int sm_count_target;   /* 0 = all SMs */
  void *stream;          /* cudaStream_t */

  int epilogue;          /* cublasLtEpilogue_t (cuBLASLt), GS_NONE (BLAS) */

  /* cuBLASLt only: the attributes a fast path must agree with.
   * lt_unhandled names the first attribute outside the whitelist (NULL when
   * all are plain). */
  const void *bias;
  int bias_type;         /* cudaDataType */
  const char *lt_unhandled;

  void *handle;          /* opaque; only interpose's functions use it */
  gs_load_state_fn load_state;

  /* Set when part of the description came from interpose's cache rather
   * than from the library: read it all again, once the call is about to be
   * served by a kernel. Nonzero when something differed (the call then
   * forwards). */
  int (*revalidate)(gs_gemm *g);

  /* Call the real cuBLAS again, exactly as the caller did but with C and D
   * replaced (A/B mode and the self-check run cuBLAS into scratch). D is
   * ignored by the BLAS entry points, which write C. Returns the
   * cublasStatus_t. Set by interpose. */
  int (*reissue)(const gs_gemm *g, const void *c, void *d);

  const void *lt_cached;  /* interpose's cached reading, for revalidate */

  /* The cuBLASLt call's own objects, for load_state and reissue. */
  const void *lt_desc;
  const void *lt_layout[4];   /* A, B, C, D */
  const void *lt_algo;
  void *workspace;
  size_t workspace_size;
};

/* A batched call whose items' outputs lie one after the other (C's and
 * D's item stride is ld x n): its output is then one m x (n x batch)
 * matrix, which is how the self-check and A/B mode copy and compare it.
 * The only batched calls a route takes (gs_variant.takes_batch). */
static inline int gs_batch_packed(const gs_gemm *g)
{
  int64_t c_item, d_item, all;
  return g->batch >= 1 && g->n >= 0 && !__builtin_mul_overflow(g->ldc, g->n, &c_item) &&
         !__builtin_mul_overflow(g->ldd, g->n, &d_item) &&
         !__builtin_mul_overflow(g->n, g->batch, &all) && g->stride_c == c_item &&
         g->stride_d == d_item;
}

/* The columns of the output seen as one matrix: n, or n x batch for a
 * packed batched call. */
static inline int64_t gs_output_cols(const gs_gemm *g)
{
  return g->batch > 1 ? g->n * g->batch : g->n;
}

/* "NN", "TN", "NT", "TT" (op(A) then op(B)); "C?" style for others. */
void gs_layout_name(const gs_gemm *g, char out[3]);

#endif
