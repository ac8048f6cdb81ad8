/* The one line said when the shim's CUDA runtime finds no GPU, naming the
 * real cause: the runtime's own message ("CUDA driver version is
 * insufficient") says the same for no driver at all and for an old one. */
#include "gpu.h"

#include <cuda_runtime_api.h>
#include <stdio.h>

const char *gs_gpu_absent_cause(char *buf, size_t size, int count_error,
                                const char *count_error_text, int count, int driver_version,
                                int runtime_version, const char *visible_devices)
{
  if (driver_version == 0)
    snprintf(buf, size, "no CUDA driver is installed (libcuda.so.1 was not found)");
  else if (driver_version < runtime_version || count_error == cudaErrorInsufficientDriver)
    snprintf(buf, size,
             "the CUDA driver supports CUDA %d.%d, older than the CUDA %d.%d the shim was built "
             "with; update the driver",
             driver_version / 1000, driver_version % 1000 / 10, runtime_version / 1000,
             runtime_version % 1000 / 10);
  else if (count_error == cudaErrorNoDevice || (count_error == cudaSuccess && count == 0))
    snprintf(buf, size, "the driver sees no CUDA device%s%s%s",
             visible_devices ? " (CUDA_VISIBLE_DEVICES=\"" : "",
             visible_devices ? visible_devices : "", visible_devices ? "\")" : "");
  else
    snprintf(buf, size, "the CUDA runtime could not start: error %d (%s)", count_error,
             count_error_text ? count_error_text : "no description");
  return buf;
}
