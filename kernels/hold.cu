/* kernels/hold.h */
#include "gs_launch.h"
#include "hold.h"

namespace {

__global__ void hold_kernel(long long ns)
{
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  while ((long long)(t - t0) < ns);
}

}  // namespace

extern "C" int gs_hold_preload(void)
{
  cudaFuncAttributes fa;
  if (cudaFuncGetAttributes(&fa, hold_kernel) == cudaSuccess) return 0;
  (void)cudaGetLastError();
  return -1;
}

extern "C" int gs_hold_stream(cudaStream_t s, double us)
{
  if (!(us > 0)) return 0;
  if (us > 1e5) us = 1e5;
  gs_launch_begin();   /* judged by its own launch, not an error left pending */
  hold_kernel<<<1, 1, 0, s>>>((long long)(us * 1e3));
  return (int)cudaGetLastError();   /* cudaSuccess is 0 */
}
