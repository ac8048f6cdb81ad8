/* For tests/gpu/check_kernels: a producer kernel that lets a kernel
 * launched after it with programmatic dependent launch be scheduled at
 * once (griddepcontrol.launch_dependents), then waits for the host's go
 * (a flag in mapped host memory, or a timeout), then writes: a dependent
 * that did not wait for the producer's memory (griddepcontrol.wait)
 * would read what was there before. */
#include <cuda_runtime.h>
#include <stddef.h>

__global__ void late_copy(unsigned char *dst, const unsigned char *src, size_t bytes,
                          const volatile int *go, long long timeout_ns) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  while (!*go && t - t0 < timeout_ns);
  for (size_t i = threadIdx.x; i < bytes; i += blockDim.x) dst[i] = src[i];
}

/* bytes from src to dst on st, once *go (device view of mapped host
 * memory) is nonzero or timeout_ns after the kernel starts. */
extern "C" cudaError_t gs_check_late_write(void *dst, const void *src, size_t bytes, const int *go,
                                           long long timeout_ns, cudaStream_t st) {
  late_copy<<<1, 256, 0, st>>>(static_cast<unsigned char *>(dst),
                               static_cast<const unsigned char *>(src), bytes, go, timeout_ns);
  return cudaGetLastError();
}
