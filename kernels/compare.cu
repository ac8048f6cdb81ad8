/* compare.cu: the comparison of two matrices (FP32 or BF16) on the device,
 * for the first-use self-check and A/B mode.
 *
 * Technique: elements widened to FP64; a grid-stride pass where each block reduces its share into one
 * partial (max abs diff, max rel diff, sums of squares in FP64, non-finite
 * mismatches), then a single block folds the partials in a fixed order.
 * Fixed grid size and fixed reduction trees: deterministic bits; no atomics.
 * Any architecture (sm_80 and up). */
#include "compare.h"

#include "gs_launch.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <float.h>
#include <math.h>

namespace gs_cmp {

constexpr int THREADS = 256;
constexpr int BLOCKS = 264;   /* 2 per SM on a 132-SM H200; a fixed number keeps bits fixed */

struct Acc {
  double max_abs, max_rel, diff_sq, ref_sq, bad, bad_ref, inputs_bad;
};

__device__ inline void fold(Acc &a, const Acc &b)
{
  a.max_abs = fmax(a.max_abs, b.max_abs);
  a.max_rel = fmax(a.max_rel, b.max_rel);
  a.diff_sq += b.diff_sq;
  a.ref_sq += b.ref_sq;
  a.bad += b.bad;
  a.bad_ref += b.bad_ref;
  a.inputs_bad += b.inputs_bad;
}

/* Block-wide reduction through shared memory, a fixed tree. */
__device__ Acc block_reduce(Acc v)
{
  __shared__ Acc buf[THREADS];
  buf[threadIdx.x] = v;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) fold(buf[threadIdx.x], buf[threadIdx.x + s]);
    __syncthreads();
  }
  return buf[0];
}

__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline float to_float(__half v) { return __half2float(v); }

/* Element i of a matrix of a type known at run time. */
__device__ inline float load_as(gs_compare_type type, const void *p, int64_t i)
{
  if (type == GS_CMP_BF16) return to_float(static_cast<const __nv_bfloat16 *>(p)[i]);
  if (type == GS_CMP_F16) return to_float(static_cast<const __half *>(p)[i]);
  return static_cast<const float *>(p)[i];
}

/* The Inf and NaN in a rows x cols matrix, this thread's share. */
__device__ inline double count_nonfinite(gs_compare_type type, const void *p, int64_t ld,
                                         int64_t rows, int64_t cols)
{
  double bad = 0;
  if (!p) return bad;
  const int64_t total = rows * cols;
  for (int64_t e = (int64_t)blockIdx.x * THREADS + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * THREADS) {
    int64_t j = e / rows, i = e - j * rows;
    bad += !isfinite(load_as(type, p, i + j * ld));
  }
  return bad;
}

template <typename T>
__global__ void __launch_bounds__(THREADS) gemmshim_compare_partial(const T *x, int64_t ldx, const T *ref,
                                                          int64_t ldr, int64_t m, int64_t n,
                                                          gs_compare_inputs in, Acc *partials)
{
  Acc a = { 0, 0, 0, 0, 0, 0, 0 };
  const int64_t total = m * n;
  for (int64_t e = (int64_t)blockIdx.x * THREADS + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * THREADS) {
    int64_t j = e / m, i = e - j * m;
    float xv = to_float(x[i + j * ldx]), rv = to_float(ref[i + j * ldr]);
    bool fx = isfinite(xv), fr = isfinite(rv);
    if (fx && fr) {
      double d = fabs((double)xv - (double)rv);
      a.max_abs = fmax(a.max_abs, d);
      a.max_rel = fmax(a.max_rel, d / fmax(fabs((double)rv), (double)FLT_MIN));
      a.diff_sq += d * d;
      a.ref_sq += (double)rv * rv;
    } else if (fx != fr || (isnan(xv) != isnan(rv)) || (!fx && !isnan(xv) && xv != rv)) {
      /* one finite and one not, or different non-finite values */
      a.bad += 1;
      if (!fr && !isnan(xv)) a.bad_ref += 1;
      a.max_rel = INFINITY;
      a.max_abs = INFINITY;
    }
  }
  a.inputs_bad = count_nonfinite(in.type, in.a, in.lda, in.a_rows, in.a_cols) +
                 count_nonfinite(in.type, in.b, in.ldb, in.b_rows, in.b_cols);
  Acc r = block_reduce(a);
  if (threadIdx.x == 0) partials[blockIdx.x] = r;
}

__global__ void __launch_bounds__(THREADS) gemmshim_compare_final(const Acc *partials, int count,
                                                        bool scanned, gs_compare_result *out)
{
  Acc a = { 0, 0, 0, 0, 0, 0, 0 };
  for (int i = threadIdx.x; i < count; i += THREADS) fold(a, partials[i]);
  Acc r = block_reduce(a);
  if (threadIdx.x == 0) {
    out->max_abs = r.max_abs;
    out->max_rel = r.max_rel;
    out->diff_sq = r.diff_sq;
    out->ref_sq = r.ref_sq;
    out->mismatched_nonfinite = r.bad;
    out->mismatched_where_ref_nonfinite = r.bad_ref;
    out->inputs_nonfinite = scanned ? r.inputs_bad : -1;
  }
}

}  // namespace gs_cmp

extern "C" int gs_compare_preload(void)
{
  using namespace gs_cmp;
  cudaFuncAttributes fa;
  if (cudaFuncGetAttributes(&fa, gemmshim_compare_partial<float>) != cudaSuccess ||
      cudaFuncGetAttributes(&fa, gemmshim_compare_partial<__nv_bfloat16>) != cudaSuccess ||
      cudaFuncGetAttributes(&fa, gemmshim_compare_partial<__half>) != cudaSuccess ||
      cudaFuncGetAttributes(&fa, gemmshim_compare_final) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return 0;
}

extern "C" size_t gs_compare_scratch_bytes(void)
{
  return sizeof(gs_cmp::Acc) * gs_cmp::BLOCKS;
}

extern "C" int gs_compare(gs_compare_type type, const void *x, int64_t ldx, const void *ref,
                          int64_t ldr, int64_t m, int64_t n, const gs_compare_inputs *inputs,
                          void *partials, gs_compare_result *out, cudaStream_t stream)
{
  using namespace gs_cmp;
  const gs_compare_inputs in = inputs ? *inputs : gs_compare_inputs{};
  gs_launch_begin();
  if (type == GS_CMP_BF16)
    gemmshim_compare_partial<<<BLOCKS, THREADS, 0, stream>>>((const __nv_bfloat16 *)x, ldx,
                                                   (const __nv_bfloat16 *)ref, ldr, m, n, in,
                                                   (Acc *)partials);
  else if (type == GS_CMP_F16)
    gemmshim_compare_partial<<<BLOCKS, THREADS, 0, stream>>>((const __half *)x, ldx, (const __half *)ref,
                                                   ldr, m, n, in, (Acc *)partials);
  else
    gemmshim_compare_partial<<<BLOCKS, THREADS, 0, stream>>>((const float *)x, ldx, (const float *)ref, ldr,
                                                   m, n, in, (Acc *)partials);
  if (gs_launch_end(0) != GS_K_OK) return -1;
  gemmshim_compare_final<<<1, THREADS, 0, stream>>>((const Acc *)partials, BLOCKS, inputs != nullptr,
                                                    out);
  return gs_launch_end(1) == GS_K_OK ? 0 : -1;
}
