/* A stand-in for the CUDA runtime (and the few driver functions the shim
 * reaches through cudaGetDriverEntryPointByVersion), on the host, for the
 * unit tests of dispatch/: the real dispatch, self-check and A/B code runs
 * against it in CI.
 *
 * - "Device memory" is host memory; every allocation belongs to a context.
 * - Stream work (copies, kernels, events, frees) is queued, not run: the
 *   "GPU" runs it when the test calls fake_cuda_run (or when something
 *   synchronizes). So a test sees what a call enqueued, and that it
 *   returned before any of it ran.
 * - Errors behave as documented: a failing call sets the calling thread's
 *   last error, which stays until cudaGetLastError reads it.
 * - A device reset (fake_cuda_reset_device) gives the primary context a new
 *   identity and frees everything the old one owned, as cudaDeviceReset
 *   does. Any later use of the old context's memory, events or pools is
 *   refused and counted in fake_stats.dead_uses. */
#ifndef GS_FAKE_CUDART_H
#define GS_FAKE_CUDART_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fake_cuda_stats {
  int host_waits;        /* stream/device/event synchronizations */
  int dead_uses;         /* a dead context's memory, event or pool touched */
  int bad_pointers;      /* a copy or kernel touched memory nobody allocated */
  int launches;          /* kernels enqueued (fake_launch) */
  int pool_allocs, pool_frees, mallocs, frees, host_allocs, events_created;
  size_t pool_bytes_live;  /* stream-ordered allocations not yet freed */
  int mode_exchanges;    /* cudaThreadExchangeStreamCaptureMode calls */
  int captured_launches; /* kernels launched into a capturing stream */
  int capture_violations;  /* anything else enqueued on a capturing stream */
} fake_cuda_stats;

extern fake_cuda_stats fake_stats;

/* Back to a fresh machine: one device, one primary context (current on no
 * thread until fake_ctx_make_current), nothing allocated or queued. */
void fake_cuda_reset(void);

/* No device at all: cudaGetDeviceCount fails with `error` and
 * cudaDriverGetVersion reports `driver_version` (0: no driver). */
void fake_cuda_no_device(cudaError_t error, int driver_version);

/* The primary context of the device: current on this thread. */
void fake_ctx_make_current(void);
uint64_t fake_ctx_id(void);
void *fake_ctx_handle(void);   /* its CUcontext */

/* cudaDeviceReset as the application's runtime does it: the primary
 * context is destroyed with everything it owned, and comes back with a new
 * identity (the same handle value, as the driver's primary context keeps). */
void fake_cuda_reset_device(void);

/* A stream of the current context. */
cudaStream_t fake_stream_new(void);

/* Capture state of a stream; global_elsewhere: another thread is capturing
 * in global mode, so a query on the legacy stream fails with
 * cudaErrorStreamCaptureImplicit. */
void fake_stream_set_capturing(cudaStream_t s, int capturing);
void fake_cuda_set_capture_elsewhere(int global_elsewhere);

/* Leave `e` pending as the calling thread's last error, as an earlier
 * failing call would. */
void fake_cuda_leave_error(cudaError_t e);

/* The next call of the named runtime function (e.g. "cudaEventRecord",
 * "cudaMallocFromPoolAsync", "launch" for fake_launch) fails with e. */
void fake_cuda_fail_next(const char *api, cudaError_t e);

/* How long each kernel (fake_launch) takes on the fake GPU's clock, which
 * events read (default 0.5 ms; fake_cuda_reset restores it). */
void fake_cuda_set_work_ms(double ms);

/* Run everything queued, in order. Returns how many operations ran. */
int fake_cuda_run(void);
int fake_cuda_queued(void);

/* Kernels and cuBLAS's work in the tests: a host function with its
 * arguments (copied), queued on the stream; `touches` are the device
 * pointers it uses, checked when it runs. Returns cudaSuccess or the
 * error a failed launch gives (and sets the last error). */
typedef void (*fake_work_fn)(void *arg);
cudaError_t fake_launch(cudaStream_t s, fake_work_fn fn, const void *arg, size_t arg_size,
                        const void *const *touches, int n_touches);

/* kernels/hold.cu's stand-in (fake_compare.c): holds launched, and the
 * last one's length in microseconds. */
extern int fake_holds;
extern double fake_hold_last_us;

/* Whether p is inside memory some live context owns. */
int fake_cuda_is_live(const void *p);

/* A pool's release threshold (cudaMemPoolAttrReleaseThreshold), and the
 * allocations made from it so far. */
unsigned long long fake_pool_release_threshold(void *pool);
int fake_pool_allocs_from(void *pool);

#endif
