/* The GPU as the shim's own (static) CUDA runtime sees it. The application
 * has its own runtime; the two share the driver's contexts and streams but
 * not their per-thread "current device", so the device always comes from
 * the call's stream. Driver functions come through the runtime's entry
 * point query: the shim never links libcuda. Nothing here is torn down. */
#include "gpu.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "identity.h"

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

static int entry_point(const char *name, void **fn)
{
  *fn = gs_driver_entry(name, 12000);
  return *fn != NULL;
}

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
    (void)gs_identity_read(dev, id);
    /* as the router sees the device, whatever the properties said */
    snprintf(id->compute_capability, sizeof id->compute_capability, "%d.%d", major, minor);
    snprintf(id->sm_count, sizeof id->sm_count, "%d", sms);
    /* cublas_version stays "": gs_gpu_cublas_version has it, once known */
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

/* Every visible device's name, read once. */
static struct { int n; char name[GS_MAX_DEVICES][sizeof ((gs_rt_identity *)0)->gpu_name]; } present;
static pthread_once_t present_once = PTHREAD_ONCE_INIT;

static void read_present(void)
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  if (n > GS_MAX_DEVICES) n = GS_MAX_DEVICES;
  for (int d = 0; d < n; d++) {
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    snprintf(present.name[present.n++], sizeof present.name[0], "%.*s",
             (int)sizeof present.name[0] - 1, p.name);
  }
  (void)cudaGetLastError();
}

int gs_gpu_name_present(const char *gpu_name)
{
  pthread_once(&present_once, read_present);
  if (!present.n) return -1;
  for (int d = 0; d < present.n; d++)
    if (!strcmp(present.name[d], gpu_name)) return 1;
  return 0;
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
