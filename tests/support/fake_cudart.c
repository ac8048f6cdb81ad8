/* The stand-in CUDA runtime of fake_cudart.h. One lock guards it all: the
 * tests that use threads make few calls. */
#include "fake_cudart.h"

#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

fake_cuda_stats fake_stats;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#define LOCK() pthread_mutex_lock(&lock)
#define UNLOCK() pthread_mutex_unlock(&lock)

/* ---- contexts ------------------------------------------------------------ */

typedef struct fake_ctx {
  uint64_t id;     /* changes when the context is destroyed and recreated */
  int device;
} fake_ctx;

static fake_ctx primary;
static uint64_t next_ctx_id = 100;
static int device_count = 1, driver_version = 13000;
static cudaError_t no_device_error = cudaSuccess;

/* Per thread: the current context (a stack: push/pop) and the last error. */
static __thread fake_ctx *ctx_stack[8];
static __thread int ctx_depth;
static __thread cudaError_t last_error;
static __thread enum cudaStreamCaptureMode thread_mode = cudaStreamCaptureModeGlobal;

static fake_ctx *current_ctx(void) { return ctx_depth ? ctx_stack[ctx_depth - 1] : NULL; }

static cudaError_t fail(cudaError_t e)
{
  if (e != cudaSuccess) last_error = e;
  return e;
}

/* ---- injected failures ------------------------------------------------- */

static struct { char api[48]; cudaError_t e; } planned[8];

void fake_cuda_fail_next(const char *api, cudaError_t e)
{
  LOCK();
  for (int i = 0; i < 8; i++)
    if (!planned[i].api[0]) {
      snprintf(planned[i].api, sizeof planned[i].api, "%s", api);
      planned[i].e = e;
      break;
    }
  UNLOCK();
}

/* The error planned for this call of `api`, or cudaSuccess. Lock held. */
static cudaError_t planned_failure(const char *api)
{
  for (int i = 0; i < 8; i++)
    if (planned[i].api[0] && !strcmp(planned[i].api, api)) {
      planned[i].api[0] = '\0';
      return planned[i].e;
    }
  return cudaSuccess;
}

/* ---- memory ---------------------------------------------------------------- */

typedef struct alloc {
  unsigned char *p;
  size_t size;
  uint64_t ctx_id;
  int freed;
} alloc;

static alloc *allocs;
static int n_allocs, cap_allocs;

static alloc *find_alloc(const void *p)
{
  const unsigned char *q = p;
  for (int i = n_allocs - 1; i >= 0; i--)
    if (q >= allocs[i].p && q < allocs[i].p + allocs[i].size) return &allocs[i];
  return NULL;
}

static void *new_alloc(size_t size, uint64_t ctx_id)
{
  if (n_allocs == cap_allocs) {
    cap_allocs = cap_allocs ? 2 * cap_allocs : 64;
    allocs = realloc(allocs, (size_t)cap_allocs * sizeof *allocs);
  }
  unsigned char *p = calloc(1, size ? size : 1);
  allocs[n_allocs++] = (alloc){ p, size ? size : 1, ctx_id, 0 };
  return p;
}

/* A pointer some work uses: live memory of a live context, or not ours at
 * all (host memory, which the tests also pass). Lock held. */
static int usable(const void *p)
{
  alloc *a = find_alloc(p);
  if (!a) return 1;
  if (a->freed || a->ctx_id != primary.id) {
    fake_stats.dead_uses++;
    return 0;
  }
  return 1;
}

int fake_cuda_is_live(const void *p)
{
  LOCK();
  alloc *a = find_alloc(p);
  int live = a && !a->freed && a->ctx_id == primary.id;
  UNLOCK();
  return live;
}

/* ---- streams, events, pools ------------------------------------------------- */

typedef struct fake_stream {
  uint64_t ctx_id;
  int capturing;
} fake_stream;

typedef struct fake_event {
  uint64_t ctx_id;
  unsigned long recorded, done;   /* sequence numbers */
  double at_ms;                   /* the GPU's clock when it ran */
} fake_event;

/* The "GPU"'s clock: each kernel (OP_WORK) takes work_ms of it. */
static double gpu_clock_ms, work_ms = 0.5;

typedef struct fake_pool {
  uint64_t ctx_id;
  unsigned long long threshold;
  int allocs;
} fake_pool;

unsigned long long fake_pool_release_threshold(void *pool) { return ((fake_pool *)pool)->threshold; }
int fake_pool_allocs_from(void *pool) { return ((fake_pool *)pool)->allocs; }

static int capture_elsewhere;

static int is_default_stream(cudaStream_t s)
{
  return s == NULL || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

/* The context a stream's work runs in (the current one for the default
 * streams); NULL when it is gone. */
static uint64_t stream_ctx_id(cudaStream_t s)
{
  if (is_default_stream(s)) {
    fake_ctx *c = current_ctx();
    return c ? c->id : 0;
  }
  return ((fake_stream *)s)->ctx_id;
}

cudaStream_t fake_stream_new(void)
{
  fake_stream *s = calloc(1, sizeof *s);
  fake_ctx *c = current_ctx();
  s->ctx_id = c ? c->id : primary.id;
  return (cudaStream_t)s;
}

void fake_stream_set_capturing(cudaStream_t s, int capturing)
{
  ((fake_stream *)s)->capturing = capturing;
}

void fake_cuda_set_capture_elsewhere(int global_elsewhere) { capture_elsewhere = global_elsewhere; }

/* ---- the queue ------------------------------------------------------------------ */

typedef enum { OP_WORK, OP_COPY2D, OP_EVENT, OP_FREE } op_kind;

typedef struct op {
  op_kind kind;
  uint64_t ctx_id;
  fake_work_fn fn;
  void *arg;
  const void *touches[8];
  int n_touches;
  unsigned char *dst;
  const unsigned char *src;
  size_t dpitch, spitch, width, height;
  fake_event *ev;
  unsigned long seq;
  void *ptr;
} op;

static op *queue;
static int n_queued, cap_queued;
static unsigned long seq;

static void enqueue(op o)
{
  if (n_queued == cap_queued) {
    cap_queued = cap_queued ? 2 * cap_queued : 64;
    queue = realloc(queue, (size_t)cap_queued * sizeof *queue);
  }
  queue[n_queued++] = o;
}

/* Lock held; work functions run without it (they may call fake_* helpers). */
static int run_locked(void)
{
  int ran = 0;
  while (n_queued) {
    op o = queue[0];
    memmove(queue, queue + 1, (size_t)(n_queued - 1) * sizeof *queue);
    n_queued--;
    ran++;
    if (o.ctx_id != primary.id) {   /* its context died before it ran */
      fake_stats.dead_uses++;
      free(o.arg);
      continue;
    }
    switch (o.kind) {
    case OP_WORK: {
      int ok = 1;
      for (int i = 0; i < o.n_touches; i++) ok &= usable(o.touches[i]);
      if (ok) {
        UNLOCK();
        o.fn(o.arg);
        LOCK();
      }
      gpu_clock_ms += work_ms;
      free(o.arg);
      break;
    }
    case OP_COPY2D:
      if (usable(o.dst) && usable(o.src))
        for (size_t r = 0; r < o.height; r++)
          memcpy(o.dst + r * o.dpitch, o.src + r * o.spitch, o.width);
      break;
    case OP_EVENT:
      o.ev->done = o.seq;
      o.ev->at_ms = gpu_clock_ms;
      break;
    case OP_FREE: {
      alloc *a = find_alloc(o.ptr);
      if (a && !a->freed) {
        a->freed = 1;
        fake_stats.pool_frees++;
        fake_stats.pool_bytes_live -= a->size;
      }
      break;
    }
    }
  }
  return ran;
}

int fake_cuda_run(void)
{
  LOCK();
  int ran = run_locked();
  UNLOCK();
  return ran;
}

int fake_cuda_queued(void)
{
  LOCK();
  int n = n_queued;
  UNLOCK();
  return n;
}

/* Checks every enqueueing call makes: the stream's context lives and is
 * this thread's current one (the runtime launches into the current
 * context), and no failure was planned. Lock held. */
static cudaError_t stream_ready(cudaStream_t s, const char *api, uint64_t *ctx_id)
{
  cudaError_t e = planned_failure(api);
  if (e != cudaSuccess) return e;
  uint64_t id = stream_ctx_id(s);
  if (id != primary.id) {
    fake_stats.dead_uses++;
    return cudaErrorContextIsDestroyed;
  }
  *ctx_id = id;
  if (!is_default_stream(s) && ((fake_stream *)s)->capturing) {
    /* captured into a graph, not run: a kernel may be; the shim's checks
     * and copies must not be */
    if (strcmp(api, "launch") != 0) {
      fake_stats.capture_violations++;
      return cudaErrorStreamCaptureUnsupported;
    }
    fake_stats.captured_launches++;
    return cudaErrorStreamCaptureImplicit;   /* internal: "captured" */
  }
  return cudaSuccess;
}

cudaError_t fake_launch(cudaStream_t s, fake_work_fn fn, const void *arg, size_t arg_size,
                        const void *const *touches, int n_touches)
{
  LOCK();
  uint64_t id = 0;
  cudaError_t e = stream_ready(s, "launch", &id);
  if (e == cudaErrorStreamCaptureImplicit) {
    UNLOCK();
    return cudaSuccess;   /* captured */
  }
  if (e == cudaSuccess) {
    op o;
    memset(&o, 0, sizeof o);
    o.kind = OP_WORK;
    o.ctx_id = id;
    o.fn = fn;
    o.arg = malloc(arg_size ? arg_size : 1);
    memcpy(o.arg, arg, arg_size);
    for (int i = 0; i < n_touches && i < 8; i++) o.touches[o.n_touches++] = touches[i];
    enqueue(o);
    fake_stats.launches++;
  }
  UNLOCK();
  return fail(e);
}

/* ---- set-up for tests ------------------------------------------------------------ */

void fake_cuda_reset(void)
{
  LOCK();
  for (int i = 0; i < n_allocs; i++) free(allocs[i].p);
  free(allocs);
  allocs = NULL;
  n_allocs = cap_allocs = 0;
  for (int i = 0; i < n_queued; i++) free(queue[i].arg);
  n_queued = 0;
  memset(&fake_stats, 0, sizeof fake_stats);
  memset(planned, 0, sizeof planned);
  primary.id = next_ctx_id++;
  primary.device = 0;
  device_count = 1;
  driver_version = 13000;
  no_device_error = cudaSuccess;
  capture_elsewhere = 0;
  gpu_clock_ms = 0;
  work_ms = 0.5;
  UNLOCK();
  ctx_depth = 0;
  last_error = cudaSuccess;
}

void fake_cuda_no_device(cudaError_t error, int version)
{
  device_count = 0;
  no_device_error = error;
  driver_version = version;
}

void fake_ctx_make_current(void)
{
  ctx_depth = 1;
  ctx_stack[0] = &primary;
}

uint64_t fake_ctx_id(void) { return primary.id; }

void *fake_ctx_handle(void) { return &primary; }

void fake_cuda_reset_device(void)
{
  LOCK();
  /* the old context's memory goes back to the system: a later use of it
   * is a use of someone else's memory */
  for (int i = 0; i < n_allocs; i++)
    if (allocs[i].ctx_id == primary.id && !allocs[i].freed) allocs[i].freed = 1;
  primary.id = next_ctx_id++;
  UNLOCK();
}

void fake_cuda_leave_error(cudaError_t e) { last_error = e; }

/* ---- the runtime API ------------------------------------------------------------ */

cudaError_t cudaGetLastError(void)
{
  cudaError_t e = last_error;
  last_error = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError(void) { return last_error; }

const char *cudaGetErrorString(cudaError_t e)
{
  static __thread char buf[64];
  snprintf(buf, sizeof buf, "fake CUDA error %d", (int)e);
  return buf;
}

const char *cudaGetErrorName(cudaError_t e) { return cudaGetErrorString(e); }

cudaError_t cudaGetDeviceCount(int *count)
{
  *count = device_count;
  if (!device_count) return fail(no_device_error != cudaSuccess ? no_device_error : cudaErrorNoDevice);
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v)
{
  *v = driver_version;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
  *v = 13000;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
  LOCK();
  cudaError_t e = planned_failure("cudaDeviceGetAttribute");
  UNLOCK();
  if (e != cudaSuccess) return fail(e);
  if (device < 0 || device >= device_count) return fail(cudaErrorInvalidDevice);
  switch (attr) {
  case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
  case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
  case cudaDevAttrMultiProcessorCount: *value = 132; break;
  case cudaDevAttrMemoryPoolsSupported: *value = 1; break;
  default: *value = 0; break;
  }
  return cudaSuccess;
}

/* What the route tables' validators read: an H200 by name, with a UUID
 * that names the device. */
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device)
{
  if (device < 0 || device >= device_count) return fail(cudaErrorInvalidDevice);
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "NVIDIA H200");
  for (int i = 0; i < 16; i++) p->uuid.bytes[i] = (char)(0x10 * device + i);
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = 132;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char *bus, int len, int device)
{
  if (device < 0 || device >= device_count) return fail(cudaErrorInvalidDevice);
  snprintf(bus, (size_t)len, "00000000:%02X:00.0", 0x10 + device);
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
  fake_ctx *c = current_ctx();
  *device = c ? c->device : 0;
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *status)
{
  LOCK();
  cudaError_t e = planned_failure("cudaStreamIsCapturing");
  UNLOCK();
  if (e != cudaSuccess) return fail(e);
  if (s == NULL || s == cudaStreamLegacy) {
    /* documented: the legacy stream cannot be queried while another
     * stream captures in global mode */
    if (capture_elsewhere) return fail(cudaErrorStreamCaptureImplicit);
    *status = cudaStreamCaptureStatusNone;
    return cudaSuccess;
  }
  *status = !is_default_stream(s) && ((fake_stream *)s)->capturing ? cudaStreamCaptureStatusActive
                                                                    : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
  enum cudaStreamCaptureMode old = thread_mode;
  thread_mode = *mode;
  *mode = old;
  fake_stats.mode_exchanges++;
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *ev, unsigned int flags)
{
  (void)flags;
  LOCK();
  cudaError_t e = planned_failure("cudaEventCreate");
  fake_ctx *c = current_ctx();
  if (e == cudaSuccess && !c) e = cudaErrorDeviceUninitialized;
  if (e == cudaSuccess) {
    fake_event *f = calloc(1, sizeof *f);
    f->ctx_id = c->id;
    *ev = (cudaEvent_t)f;
    fake_stats.events_created++;
  }
  UNLOCK();
  return fail(e);
}

cudaError_t cudaEventCreate(cudaEvent_t *ev) { return cudaEventCreateWithFlags(ev, 0); }

cudaError_t cudaEventDestroy(cudaEvent_t ev)
{
  (void)ev;  /* kept: queued records may still name it */
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t s)
{
  LOCK();
  fake_event *f = (fake_event *)ev;
  uint64_t id = 0;
  cudaError_t e = stream_ready(s, "cudaEventRecord", &id);
  if (e == cudaSuccess && f->ctx_id != id) {
    fake_stats.dead_uses += f->ctx_id != primary.id;
    e = cudaErrorInvalidResourceHandle;
  }
  if (e == cudaSuccess) {
    op o;
    memset(&o, 0, sizeof o);
    o.kind = OP_EVENT;
    o.ctx_id = id;
    o.ev = f;
    o.seq = ++seq;
    f->recorded = o.seq;
    enqueue(o);
  }
  UNLOCK();
  return fail(e);
}

cudaError_t cudaEventQuery(cudaEvent_t ev)
{
  LOCK();
  fake_event *f = (fake_event *)ev;
  cudaError_t e = planned_failure("cudaEventQuery");
  if (e == cudaSuccess && f->ctx_id != primary.id) {
    fake_stats.dead_uses++;
    e = cudaErrorContextIsDestroyed;
  }
  if (e == cudaSuccess && f->done < f->recorded) e = cudaErrorNotReady;
  UNLOCK();
  return fail(e);
}

void fake_cuda_set_work_ms(double ms)
{
  LOCK();
  work_ms = ms;
  UNLOCK();
}

/* As documented: both events must have completed (else cudaErrorNotReady)
 * and belong to a live context. */
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
  LOCK();
  fake_event *fa = (fake_event *)a, *fb = (fake_event *)b;
  cudaError_t e = planned_failure("cudaEventElapsedTime");
  if (e == cudaSuccess && (fa->ctx_id != primary.id || fb->ctx_id != primary.id)) {
    fake_stats.dead_uses++;
    e = cudaErrorContextIsDestroyed;
  }
  if (e == cudaSuccess && (!fa->recorded || !fb->recorded)) e = cudaErrorInvalidResourceHandle;
  if (e == cudaSuccess && (fa->done < fa->recorded || fb->done < fb->recorded)) e = cudaErrorNotReady;
  if (e == cudaSuccess) *ms = (float)(fb->at_ms - fa->at_ms);
  UNLOCK();
  return fail(e);
}

cudaError_t cudaEventSynchronize(cudaEvent_t ev)
{
  (void)ev;
  LOCK();
  fake_stats.host_waits++;
  run_locked();
  UNLOCK();
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
  (void)s;
  LOCK();
  fake_stats.host_waits++;
  run_locked();
  UNLOCK();
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) { return cudaStreamSynchronize(NULL); }

/* Whether rows [p, p + width) at pitch stay inside p's allocation (memory
 * the fake did not allocate is the test's host memory: not checked). */
static int rows_inside(const void *p, size_t pitch, size_t width, size_t height)
{
  alloc *a = find_alloc(p);
  if (!a || !height) return 1;
  const unsigned char *last = (const unsigned char *)p + (height - 1) * pitch + width;
  return last <= a->p + a->size;
}

static cudaError_t copy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                          size_t height, cudaStream_t s, const char *api)
{
  LOCK();
  uint64_t id = 0;
  cudaError_t e = stream_ready(s, api, &id);
  /* the runtime refuses a copy from or to memory it does not know */
  if (e == cudaSuccess) {
    alloc *d = find_alloc(dst), *r = find_alloc(src);
    if ((d && (d->freed || d->ctx_id != id)) || (r && (r->freed || r->ctx_id != id))) {
      fake_stats.dead_uses++;
      e = cudaErrorInvalidValue;
    } else if (!rows_inside(dst, dpitch, width, height) || !rows_inside(src, spitch, width, height)) {
      fake_stats.bad_pointers++;   /* past the end of an allocation */
      e = cudaErrorInvalidValue;
    }
  }
  if (e == cudaSuccess) {
    op o;
    memset(&o, 0, sizeof o);
    o.kind = OP_COPY2D;
    o.ctx_id = id;
    o.dst = dst;
    o.src = src;
    o.dpitch = dpitch;
    o.spitch = spitch;
    o.width = width;
    o.height = height;
    enqueue(o);
  }
  UNLOCK();
  return fail(e);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t s)
{
  (void)kind;
  return copy2d(dst, count, src, count, count, 1, s, "cudaMemcpyAsync");
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height, enum cudaMemcpyKind kind,
                              cudaStream_t s)
{
  (void)kind;
  if (width > dpitch || width > spitch) return fail(cudaErrorInvalidPitchValue);
  return copy2d(dst, dpitch, src, spitch, width, height, s, "cudaMemcpy2DAsync");
}

cudaError_t cudaMalloc(void **p, size_t size)
{
  LOCK();
  cudaError_t e = planned_failure("cudaMalloc");
  fake_ctx *c = current_ctx();
  if (e == cudaSuccess) {
    *p = new_alloc(size, c ? c->id : primary.id);
    fake_stats.mallocs++;
  }
  UNLOCK();
  return fail(e);
}

cudaError_t cudaFree(void *p)
{
  LOCK();
  fake_stats.host_waits++;   /* cudaFree synchronizes the device */
  run_locked();
  alloc *a = p ? find_alloc(p) : NULL;
  cudaError_t e = cudaSuccess;
  if (a && a->ctx_id != primary.id) {
    fake_stats.dead_uses++;
    e = cudaErrorInvalidValue;
  } else if (a) {
    a->freed = 1;
    fake_stats.frees++;
  }
  UNLOCK();
  return fail(e);
}

cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags)
{
  (void)flags;
  LOCK();
  cudaError_t e = planned_failure("cudaHostAlloc");
  fake_ctx *c = current_ctx();
  if (e == cudaSuccess) {
    *p = new_alloc(size, c ? c->id : primary.id);
    fake_stats.host_allocs++;
  }
  UNLOCK();
  return fail(e);
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
  (void)props;
  LOCK();
  cudaError_t e = planned_failure("cudaMemPoolCreate");
  if (e == cudaSuccess) {
    fake_pool *p = calloc(1, sizeof *p);
    fake_ctx *c = current_ctx();
    p->ctx_id = c ? c->id : primary.id;
    p->threshold = ~0ull;
    *pool = (cudaMemPool_t)p;
  }
  UNLOCK();
  return fail(e);
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
  if (attr == cudaMemPoolAttrReleaseThreshold)
    ((fake_pool *)pool)->threshold = *(unsigned long long *)value;
  return cudaSuccess;
}

cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t s)
{
  LOCK();
  fake_pool *p = (fake_pool *)pool;
  uint64_t id = 0;
  cudaError_t e = stream_ready(s, "cudaMallocFromPoolAsync", &id);
  if (e == cudaSuccess && p->ctx_id != id) {
    fake_stats.dead_uses += p->ctx_id != primary.id;
    e = cudaErrorInvalidValue;
  }
  if (e == cudaSuccess) {
    *ptr = new_alloc(size, id);
    fake_stats.pool_allocs++;
    fake_stats.pool_bytes_live += size;
    p->allocs++;
  }
  UNLOCK();
  return fail(e);
}

cudaError_t cudaFreeAsync(void *ptr, cudaStream_t s)
{
  LOCK();
  uint64_t id = 0;
  cudaError_t e = stream_ready(s, "cudaFreeAsync", &id);
  if (e == cudaSuccess) {
    op o;
    memset(&o, 0, sizeof o);
    o.kind = OP_FREE;
    o.ctx_id = id;
    o.ptr = ptr;
    enqueue(o);
  }
  UNLOCK();
  return fail(e);
}

/* ---- driver entry points ------------------------------------------------------------- */

static CUresult drv_stream_get_ctx(CUstream s, CUcontext *out)
{
  uint64_t id = stream_ctx_id((cudaStream_t)s);
  if (id != primary.id) return CUDA_ERROR_INVALID_HANDLE;
  *out = (CUcontext)&primary;
  return CUDA_SUCCESS;
}

static CUresult drv_ctx_get_current(CUcontext *out)
{
  *out = (CUcontext)current_ctx();
  return CUDA_SUCCESS;
}

static CUresult drv_ctx_push(CUcontext c)
{
  if (ctx_depth == 8) return CUDA_ERROR_INVALID_VALUE;
  ctx_stack[ctx_depth++] = (fake_ctx *)c;
  return CUDA_SUCCESS;
}

static CUresult drv_ctx_pop(CUcontext *out)
{
  if (!ctx_depth) return CUDA_ERROR_INVALID_CONTEXT;
  *out = (CUcontext)ctx_stack[--ctx_depth];
  return CUDA_SUCCESS;
}

static CUresult drv_ctx_get_device(CUdevice *dev)
{
  fake_ctx *c = current_ctx();
  if (!c) return CUDA_ERROR_INVALID_CONTEXT;
  *dev = c->device;
  return CUDA_SUCCESS;
}

static CUresult drv_ctx_get_id(CUcontext c, unsigned long long *id)
{
  fake_ctx *f = c ? (fake_ctx *)c : current_ctx();
  if (!f) return CUDA_ERROR_INVALID_CONTEXT;
  *id = f->id;
  return CUDA_SUCCESS;
}

/* The tensor-map encoder: never called by the unit tests, only looked up. */
static CUresult drv_tensor_map_encode_tiled(void)
{
  return CUDA_ERROR_NOT_SUPPORTED;
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version,
                                             unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *status)
{
  (void)version; (void)flags;
  static const struct { const char *name; void *fn; } table[] = {
    { "cuStreamGetCtx", (void *)drv_stream_get_ctx },
    { "cuCtxGetCurrent", (void *)drv_ctx_get_current },
    { "cuCtxPushCurrent", (void *)drv_ctx_push },
    { "cuCtxPopCurrent", (void *)drv_ctx_pop },
    { "cuCtxGetDevice", (void *)drv_ctx_get_device },
    { "cuCtxGetId", (void *)drv_ctx_get_id },
    { "cuTensorMapEncodeTiled", (void *)drv_tensor_map_encode_tiled },
  };
  LOCK();
  cudaError_t e = planned_failure("cudaGetDriverEntryPointByVersion");
  UNLOCK();
  if (e != cudaSuccess) return fail(e);
  for (size_t i = 0; i < sizeof table / sizeof *table; i++)
    if (!strcmp(table[i].name, symbol)) {
      *fn = table[i].fn;
      if (status) *status = cudaDriverEntryPointSuccess;
      return cudaSuccess;
    }
  *fn = NULL;
  if (status) *status = cudaDriverEntryPointSymbolNotFound;
  return cudaSuccess;
}
