/* Running a routed call through cuBLASLt with the algorithm its route table
 * row names (lt_algo.h): the route "cublaslt". The call, BLAS or cuBLASLt,
 * is expressed as a cuBLASLt matmul built here from the descriptor alone
 * (the router has checked that a cuBLASLt call's descriptor holds nothing
 * else), on a cuBLASLt handle the shim owns per CUDA context, and run by the real
 * cublasLtMatmul: the numerics are cuBLAS's own.
 *
 * Workspace: a cuBLASLt call's algorithm uses at most the workspace the
 * caller gave; a BLAS call gets zero-workspace algorithms only (the tuner
 * measures only those for it), so the shim holds no device memory for
 * them and nothing is shared between streams.
 *
 * The library's functions come in a table (gs_lt_fns): interpose/ fills it
 * from the real cuBLASLt, gemmshim-bench from the one it links, the unit
 * tests from a fake. No symbol names here. */
#ifndef GS_LT_RUN_H
#define GS_LT_RUN_H

#include <cublasLt.h>

#include "../kernels/gs_kernel.h"
#include "gemm.h"
#include "lt_algo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_lt_fns {
  cublasStatus_t (*create)(cublasLtHandle_t *);
  cublasStatus_t (*desc_init)(cublasLtMatmulDesc_t, size_t, cublasComputeType_t, cudaDataType_t);
  cublasStatus_t (*desc_set)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void *,
                             size_t);
  cublasStatus_t (*layout_init)(cublasLtMatrixLayout_t, size_t, cudaDataType, uint64_t, uint64_t,
                                int64_t);
  cublasStatus_t (*layout_set)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t,
                               const void *, size_t);
  cublasStatus_t (*algo_init)(cublasLtHandle_t, cublasComputeType_t, cudaDataType_t,
                              cudaDataType_t, cudaDataType_t, cudaDataType_t, cudaDataType_t,
                              int, cublasLtMatmulAlgo_t *);
  cublasStatus_t (*algo_set)(cublasLtMatmulAlgo_t *, cublasLtMatmulAlgoConfigAttributes_t,
                             const void *, size_t);
  cublasStatus_t (*algo_get)(const cublasLtMatmulAlgo_t *, cublasLtMatmulAlgoConfigAttributes_t,
                             void *, size_t, size_t *);
  cublasStatus_t (*matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *,
                           cublasLtMatrixLayout_t, const void *, cublasLtMatrixLayout_t,
                           const void *, const void *, cublasLtMatrixLayout_t, void *,
                           cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t *, void *, size_t,
                           cudaStream_t);
} gs_lt_fns;

/* The functions every route uses from now on (copied; NULL entries make
 * the route refuse its calls). Set once the library is found. */
void gs_lt_set_fns(const gs_lt_fns *fns);

/* The matmul a call is, built in storage the caller provides. */
typedef struct gs_lt_matmul {
  cublasLtMatmulDescOpaque_t desc;
  cublasLtMatrixLayoutOpaque_t layout[4];   /* A, B, C, D */
  cublasLtMatmulAlgo_t algo;
  const void *alpha, *beta;                 /* host or device, as the descriptor says */
  void *workspace;
  size_t workspace_size;
} gs_lt_matmul;

/* The configuration fields of algorithm bytes (the rest of *out zero).
 * Returns a cublasStatus_t. */
int gs_lt_algo_read(const gs_lt_fns *fns, const cublasLtMatmulAlgo_t *bytes, gs_lt_algo *out);

/* Algorithm bytes (a heuristic's) as a row writes them: their fields and
 * workspace, and where Init plus those fields does not rebuild the bytes
 * exactly, the raw bytes too (out->has_raw). Returns a cublasStatus_t. */
int gs_lt_algo_of(const gs_lt_fns *fns, cublasLtHandle_t h, const cublasLtMatmulAlgo_t *bytes,
                  uint64_t workspace, int compute, int a_type, int b_type, int c_type, int d_type,
                  gs_lt_algo *out);

/* Build the matmul for call g with arguments a (pointers, leading
 * dimensions, scalars: the self-check and A/B mode redirect the output)
 * and algorithm algo on handle h (algo NULL: the descriptor and layouts
 * only, as a heuristic query takes them). Returns a cublasStatus_t. */
int gs_lt_build(const gs_lt_fns *fns, cublasLtHandle_t h, const gs_gemm *g,
                const gs_kernel_args *a, const gs_lt_algo *algo, gs_lt_matmul *out);

/* The algorithm's cublasLtMatmulAlgo_t for these types: the raw bytes
 * (whose fields must read back as the record's: the router judged the call
 * by them; else CUBLAS_STATUS_INVALID_VALUE), or Init plus each
 * configuration field. Returns a cublasStatus_t. */
int gs_lt_algo_build(const gs_lt_fns *fns, cublasLtHandle_t h, const gs_lt_algo *algo,
                     int compute, int a_type, int b_type, int c_type, int d_type,
                     cublasLtMatmulAlgo_t *out);

/* Make the shim's cuBLASLt handle for the current CUDA context, whose
 * identity is ctx_id (once; later calls find it). The loader thread does
 * it when it loads our kernels into a context, so no call ever waits for
 * it. 0, or -1 when there is no library or the handle cannot be made. */
int gs_lt_prepare(uint64_t ctx_id);

/* Serve call g (arguments a) with algorithm algo, on a->stream, through
 * the handle gs_lt_prepare made for a->ctx_id. Statuses as a launcher's: GS_K_OK;
 * GS_K_UNSUPPORTED when cuBLASLt refused the call before anything ran (not
 * supported, invalid value: the call goes to cuBLAS); GS_K_LAUNCH_FAILED
 * when there is no library or handle, or building the matmul failed
 * otherwise (nothing ran); GS_K_FAILED_AFTER_ENQUEUE for any
 * other failure of the matmul (it may have written D). */
gs_kstatus gs_lt_run(const gs_gemm *g, const gs_lt_algo *algo, const gs_kernel_args *a);

/* The handles made so far are forgotten (tests; cudaDeviceReset). */
void gs_lt_forget_handles(void);

#ifdef __cplusplus
}
#endif

#endif
