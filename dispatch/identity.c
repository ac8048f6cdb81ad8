/* Reading a device's identity (identity.h). NVML is started once per
 * process and kept: its start attaches every GPU of the node, the slow
 * part. */
#include "identity.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "variants.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

void *gs_driver_entry(const char *name, unsigned version)
{
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &q) != cudaSuccess) {
    (void)cudaGetLastError();
    q = cudaDriverEntryPointSymbolNotFound;
  }
  return q == cudaDriverEntryPointSuccess ? fn : NULL;
}

/* The device's UUID; under MIG the instance's own, so that each instance
 * has its route table: the driver's cuDeviceGetUuid_v2 gives it, the first
 * version the whole GPU's, and where the two differ the device is a MIG
 * instance. Without the driver's functions, the runtime's. */
typedef CUresult (*uuid_fn)(CUuuid *, CUdevice);
typedef CUresult (*device_get_fn)(CUdevice *, int);

static void device_uuid(int dev, const unsigned char runtime_uuid[16], char out[48])
{
  device_get_fn get = (device_get_fn)gs_driver_entry("cuDeviceGet", 12000);
  uuid_fn v2 = (uuid_fn)gs_driver_entry("cuDeviceGetUuid", 11040);
  uuid_fn v1 = (uuid_fn)gs_driver_entry("cuDeviceGetUuid", 11000);
  CUdevice d;
  CUuuid own, whole;
  int have2 = get && v2 && get(&d, dev) == CUDA_SUCCESS && v2(&own, d) == CUDA_SUCCESS;
  int have1 = have2 && v1 && v1 != v2 && v1(&whole, d) == CUDA_SUCCESS;
  (void)cudaGetLastError();
  if (!have2) {
    gs_rt_format_uuid(runtime_uuid, 0, out);
    return;
  }
  gs_rt_format_uuid((const unsigned char *)own.bytes,
                    have1 && memcmp(own.bytes, whole.bytes, sizeof own.bytes) != 0, out);
}

/* The driver's version string and the enforced power limit come from NVML,
 * part of the driver, loaded only for that (the CUDA APIs give neither).
 * Without it both stay unknown, and a table's values for them are not
 * checked. */
typedef int (*nvml_init_fn)(void);
typedef int (*nvml_by_bus_fn)(const char *, void **);
typedef int (*nvml_power_fn)(void *, unsigned *);
typedef int (*nvml_driver_fn)(char *, unsigned);

static struct {
  int ok;
  nvml_by_bus_fn by_bus;
  nvml_power_fn power;
  char driver[80];
} nvml;
static pthread_once_t nvml_once = PTHREAD_ONCE_INIT;

static void nvml_start(void)
{
  void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return;
  nvml_init_fn init = (nvml_init_fn)dlsym(lib, "nvmlInit_v2");
  nvml_driver_fn driver = (nvml_driver_fn)dlsym(lib, "nvmlSystemGetDriverVersion");
  nvml.by_bus = (nvml_by_bus_fn)dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
  nvml.power = (nvml_power_fn)dlsym(lib, "nvmlDeviceGetEnforcedPowerLimit");
  if (!init || init() != 0) {
    dlclose(lib);
    return;
  }
  if (!driver || driver(nvml.driver, sizeof nvml.driver) != 0) nvml.driver[0] = '\0';
  nvml.ok = 1;
}

static void read_nvml(int dev, gs_rt_identity *id)
{
  pthread_once(&nvml_once, nvml_start);
  if (!nvml.ok) return;
  snprintf(id->driver_version, sizeof id->driver_version, "%.*s",
           (int)sizeof id->driver_version - 1, nvml.driver);
  char bus[64];
  void *h = NULL;
  unsigned mw = 0;
  if (nvml.by_bus && nvml.power && cudaDeviceGetPCIBusId(bus, sizeof bus, dev) == cudaSuccess &&
      nvml.by_bus(bus, &h) == 0 && nvml.power(h, &mw) == 0)
    snprintf(id->power_limit_w, sizeof id->power_limit_w, "%u", (mw + 500) / 1000);
  (void)cudaGetLastError();
}

int gs_identity_read(int dev, gs_rt_identity *id)
{
  memset(id, 0, sizeof *id);
  snprintf(id->shim_version, sizeof id->shim_version, "%s", PACKAGE_VERSION);
  gs_rt_kernel_table_hash(gs_variants, gs_n_variants, id->kernel_table);
  read_nvml(dev, id);
  struct cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  snprintf(id->gpu_name, sizeof id->gpu_name, "%.*s", (int)sizeof id->gpu_name - 1, p.name);
  device_uuid(dev, (const unsigned char *)p.uuid.bytes, id->uuid);
  snprintf(id->compute_capability, sizeof id->compute_capability, "%d.%d", p.major, p.minor);
  snprintf(id->sm_count, sizeof id->sm_count, "%d", p.multiProcessorCount);
  return 0;
}
