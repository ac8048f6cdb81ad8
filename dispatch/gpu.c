/* The GPU as the shim's own (static) CUDA runtime sees it. The application
 * has its own runtime; the two share the driver's contexts and streams but
 * not their per-thread "current device", so the device always comes from
 * the call's stream. Driver functions come through the runtime's entry
 * point query: the shim never links libcuda. Nothing here is torn down. */
#include "gpu.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "variants.h"

typedef CUresult (*stream_get_ctx_fn)(CUstream, CUcontext *);
typedef CUresult (*ctx_get_current_fn)(CUcontext *);
typedef CUresult (*ctx_push_fn)(CUcontext);
typedef CUresult (*ctx_pop_fn)(CUcontext *);
typedef CUresult (*ctx_get_device_fn)(CUdevice *);
typedef CUresult (*ctx_get_id_fn)(CUcontext, unsigned long long *);

static struct {
  int ok;
  stream_get_ctx_fn stream_get_ctx;
  ctx_get_current_fn ctx_get_current;
  ctx_push_fn ctx_push;
  ctx_pop_fn ctx_pop;
  ctx_get_device_fn ctx_get_device;
  ctx_get_id_fn ctx_get_id;
} drv;

static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

/* A driver function as it was at CUDA version `version` (12000: 12.0). */
static int entry_point_at(const char *name, unsigned version, void **fn)
{
  enum cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion(name, fn, version, cudaEnableDefault, &q) != cudaSuccess) {
    (void)cudaGetLastError();
    q = cudaDriverEntryPointSymbolNotFound;
  }
  if (q != cudaDriverEntryPointSuccess) *fn = NULL;   /* *fn: NULL whenever it is not there */
  return *fn != NULL;
}

static int entry_point(const char *name, void **fn) { return entry_point_at(name, 12000, fn); }

static void drv_init(void)
{
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    (void)cudaGetLastError();
    int driver = 0, runtime = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = CUDART_VERSION;
    (void)cudaGetLastError();
    char why[256];
    fprintf(stderr, "gemmshim: the shim's CUDA runtime cannot start: %s; every call goes to cuBLAS\n",
            gs_gpu_absent_cause(why, sizeof why, (int)e, cudaGetErrorString(e), n, driver, runtime,
                                getenv("CUDA_VISIBLE_DEVICES")));
    return;
  }
  if (!entry_point("cuStreamGetCtx", (void **)&drv.stream_get_ctx) ||
      !entry_point("cuCtxGetCurrent", (void **)&drv.ctx_get_current) ||
      !entry_point("cuCtxPushCurrent", (void **)&drv.ctx_push) ||
      !entry_point("cuCtxPopCurrent", (void **)&drv.ctx_pop) ||
      !entry_point("cuCtxGetDevice", (void **)&drv.ctx_get_device) ||
      !entry_point("cuCtxGetId", (void **)&drv.ctx_get_id)) {
    fprintf(stderr, "gemmshim: the CUDA driver lacks a function the shim needs (it needs CUDA 12.0 "
                    "or newer); every call goes to cuBLAS\n");
    return;
  }
  drv.ok = 1;
}

static int drv_ready(void)
{
  pthread_once(&drv_once, drv_init);
  return drv.ok;
}

/* Per device: compute capability and SM count, read once. */
static struct { atomic_int known; int major, minor, sms; } devices[GS_MAX_DEVICES];

/* ---- identity: what the route tables' validators compare ---------------- */

static struct { atomic_int known; gs_rt_identity id; } identities[GS_MAX_DEVICES];
static pthread_mutex_t identity_lock = PTHREAD_MUTEX_INITIALIZER;
static char cublas_version[32];
static atomic_int cublas_version_state;   /* 0 unset, 1 being written, 2 set */

/* BLAS and cuBLASLt are found on separate onces, maybe on two threads:
 * the first to claim the slot writes it, readers take it only once set. */
void gs_gpu_set_cublas_version(const char *version)
{
  int unset = 0;
  if (!atomic_compare_exchange_strong(&cublas_version_state, &unset, 1)) return;
  snprintf(cublas_version, sizeof cublas_version, "%s", version);
  atomic_store_explicit(&cublas_version_state, 2, memory_order_release);
}

/* The driver's version string and the enforced power limit come from NVML,
 * part of the driver, loaded here only for that (the CUDA APIs give
 * neither). Without it both stay unknown and are not checked. */
typedef int (*nvml_init_fn)(void);
typedef int (*nvml_by_bus_fn)(const char *, void **);
typedef int (*nvml_power_fn)(void *, unsigned *);
typedef int (*nvml_driver_fn)(char *, unsigned);

/* NVML is started once per process (its start attaches every GPU of the
 * node, the slow part) and kept: one start for all devices. */
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

/* The device's UUID; under MIG the instance's own, so that each instance
 * has its route table: the driver's cuDeviceGetUuid_v2 gives it, the first
 * version the whole GPU's, and where the two differ the device is a MIG
 * instance. Without the driver's functions, the runtime's. */
typedef CUresult (*uuid_fn)(CUuuid *, CUdevice);
typedef CUresult (*device_get_fn)(CUdevice *, int);

static void device_uuid(int dev, const unsigned char runtime_uuid[16], char out[48])
{
  device_get_fn get;
  uuid_fn v2, v1;
  entry_point("cuDeviceGet", (void **)&get);
  entry_point_at("cuDeviceGetUuid", 11040, (void **)&v2);
  entry_point_at("cuDeviceGetUuid", 11000, (void **)&v1);
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

/* As for the table choice (tables.c): a fork waits for a reading in
 * progress rather than leave the child's lock held. */
static void lock_identity_for_fork(void) { pthread_mutex_lock(&identity_lock); }
static void unlock_identity_after_fork(void) { pthread_mutex_unlock(&identity_lock); }
static void guard_identity_fork(void)
{
  pthread_atfork(lock_identity_for_fork, unlock_identity_after_fork, unlock_identity_after_fork);
}
static pthread_once_t identity_fork_once = PTHREAD_ONCE_INIT;

static void fill_identity(int dev, int major, int minor, int sms)
{
  pthread_once(&identity_fork_once, guard_identity_fork);
  pthread_mutex_lock(&identity_lock);
  if (!atomic_load_explicit(&identities[dev].known, memory_order_relaxed)) {
    gs_rt_identity *id = &identities[dev].id;
    memset(id, 0, sizeof *id);
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, dev) == cudaSuccess) {
      snprintf(id->gpu_name, sizeof id->gpu_name, "%.*s", (int)sizeof id->gpu_name - 1, p.name);
      device_uuid(dev, (const unsigned char *)p.uuid.bytes, id->uuid);
    }
    (void)cudaGetLastError();
    snprintf(id->compute_capability, sizeof id->compute_capability, "%d.%d", major, minor);
    snprintf(id->sm_count, sizeof id->sm_count, "%d", sms);
    /* cublas_version stays "": gs_gpu_cublas_version has it, once known */
    snprintf(id->shim_version, sizeof id->shim_version, "%s", PACKAGE_VERSION);
    gs_rt_kernel_table_hash(gs_variants, gs_n_variants, id->kernel_table);
    read_nvml(dev, id);
    atomic_store_explicit(&identities[dev].known, 1, memory_order_release);
  }
  pthread_mutex_unlock(&identity_lock);
}

const char *gs_gpu_cublas_version(void)
{
  return atomic_load_explicit(&cublas_version_state, memory_order_acquire) == 2 ? cublas_version
                                                                                : "";
}

const gs_rt_identity *gs_gpu_identity(int dev)
{
  if (dev < 0 || dev >= GS_MAX_DEVICES ||
      !atomic_load_explicit(&identities[dev].known, memory_order_acquire))
    return NULL;
  return &identities[dev].id;
}


static int device_info(int dev, gs_gpu_place *out)
{
  if (dev < 0 || dev >= GS_MAX_DEVICES) return -1;
  if (!atomic_load_explicit(&devices[dev].known, memory_order_acquire)) {
    int major, minor, sms;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      (void)cudaGetLastError();
      return -1;
    }
    devices[dev].major = major;
    devices[dev].minor = minor;
    devices[dev].sms = sms;
    fill_identity(dev, major, minor, sms);
    atomic_store_explicit(&devices[dev].known, 1, memory_order_release);
  }
  out->device = dev;
  out->cc_major = devices[dev].major;
  out->cc_minor = devices[dev].minor;
  out->sm_count = devices[dev].sms;
  return 0;
}

int gs_gpu_enter(void *stream, gs_gpu_entered *e)
{
  e->previous = NULL;
  e->pushed = 0;
  if (!drv_ready()) return -1;
  CUcontext ctx = NULL, cur = NULL;
  if (drv.ctx_get_current(&cur) != CUDA_SUCCESS) return -1;
  /* The legacy and per-thread default streams belong to the current
   * context; any other stream names its own. */
  if (stream && stream != (void *)cudaStreamLegacy && stream != (void *)cudaStreamPerThread) {
    if (drv.stream_get_ctx((CUstream)stream, &ctx) != CUDA_SUCCESS) return -1;
  } else {
    ctx = cur;
  }
  if (!ctx) return -1;
  if (ctx != cur) {
    if (drv.ctx_push(ctx) != CUDA_SUCCESS) return -1;
    e->pushed = 1;
  }
  return 0;
}

void gs_gpu_leave(gs_gpu_entered *e)
{
  if (e->pushed) {
    CUcontext popped;
    drv.ctx_pop(&popped);
    e->pushed = 0;
  }
}

int gs_gpu_push(void *cu_ctx)
{
  if (!drv_ready() || !cu_ctx) return -1;
  return drv.ctx_push((CUcontext)cu_ctx) == CUDA_SUCCESS ? 0 : -1;
}

void gs_gpu_pop(void)
{
  CUcontext popped;
  if (drv.ok) drv.ctx_pop(&popped);
}

int gs_gpu_place_stream(void *stream, gs_gpu_place *out)
{
  gs_gpu_entered e;
  if (gs_gpu_enter(stream, &e) != 0) return -1;
  CUdevice dev = -1;
  CUcontext ctx = NULL;
  unsigned long long id = 0;
  int rc = drv.ctx_get_device(&dev) == CUDA_SUCCESS && drv.ctx_get_current(&ctx) == CUDA_SUCCESS &&
                   ctx && drv.ctx_get_id(ctx, &id) == CUDA_SUCCESS
               ? device_info((int)dev, out)
               : -1;
  gs_gpu_leave(&e);
  if (rc != 0) return -1;
  out->ctx_id = id;
  out->ctx = gs_ctx_of(id, (int)dev, ctx);
  return out->ctx ? 0 : -1;
}

int gs_gpu_stream_capturing(void *stream)
{
  enum cudaStreamCaptureStatus st;
  if (cudaStreamIsCapturing((cudaStream_t)stream, &st) != cudaSuccess) {
    (void)cudaGetLastError();
    return 1;
  }
  return st != cudaStreamCaptureStatusNone;
}
