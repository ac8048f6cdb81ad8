/* What dispatch needs to know about the GPU a call runs on. Implemented in
 * gpu.c on the shim's own CUDA runtime and driver entry points; unit tests
 * link gpu.c against a stand-in runtime, or a fake of this interface. */
#ifndef GS_GPU_H
#define GS_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "route_table.h"

typedef struct gs_gpu_place {
  int device;               /* ordinal of the stream's device */
  int cc_major, cc_minor;   /* its compute capability */
  int sm_count;
  uint64_t ctx_id;          /* the identity of the stream's context */
  gs_ctx *ctx;              /* the shim's state for that context */
} gs_gpu_place;

/* Where a stream's work runs. 0 on success; -1 when the shim's CUDA runtime
 * cannot start (no GPU, driver too old: said once on stderr) or the stream
 * cannot be placed. Cheap after the first call per device. */
int gs_gpu_place_stream(void *stream, gs_gpu_place *out);

/* What the route table's validators and the log need to know about a
 * device (its name, UUID, compute capability, SM count, driver, power
 * limit; the shim and kernel-table fields filled in), read once,
 * on the first call placed there. NULL while it is not known (no call
 * placed on the device yet). Lock-free and async-signal-safe: the log
 * reads it from a signal handler. */
const gs_rt_identity *gs_gpu_identity(int device);

/* Whether a device the shim's runtime can see has this name (the name
 * gs_gpu_identity reports): 1 yes, 0 no, -1 when no device could be read
 * (no GPU, or the runtime cannot start: placing a call then says why). A
 * built-in route table counts only in a process with a GPU of its name.
 * The names are read once, before any call is placed, and quietly. */
int gs_gpu_name_present(const char *gpu_name);

/* The version of the real cuBLAS in use ("13.1.0"), from interpose/ once it
 * has found the library; the first one given is kept. gs_gpu_identity's
 * cublas_version is "": a device may be placed before the library is found
 * (a check that waits for our kernels), so the validators ask for it when
 * they compare, "" while unknown. */
void gs_gpu_set_cublas_version(const char *version);
const char *gs_gpu_cublas_version(void);

/* Nonzero when the stream is capturing a CUDA graph (or the query fails,
 * as it does on the legacy stream while another thread captures in global
 * mode: then the caller must assume it is). */
int gs_gpu_stream_capturing(void *stream);

/* Make the stream's context current on this thread for a launch by the
 * shim's runtime; gs_gpu_leave restores what was current (the app's runtime
 * reads the driver's current context, so we leave it as we found it).
 * 0 on success. */
typedef struct gs_gpu_entered { void *previous; int pushed; } gs_gpu_entered;
int gs_gpu_enter(void *stream, gs_gpu_entered *e);
void gs_gpu_leave(gs_gpu_entered *e);

/* Make a context (a CUcontext) current on this thread, and pop it again
 * (the loader thread). 0 on success. */
int gs_gpu_push(void *cu_ctx);
void gs_gpu_pop(void);

/* Why the shim's runtime has no GPU, in words, from what it found:
 * count_error (a cudaError_t, with the runtime's text for it) and count
 * from cudaGetDeviceCount, the driver's CUDA version (0: no driver
 * installed), the runtime's, and CUDA_VISIBLE_DEVICES (NULL when unset).
 * A pure function. Writes into buf; returns it. */
const char *gs_gpu_absent_cause(char *buf, size_t size, int count_error,
                                const char *count_error_text, int count, int driver_version,
                                int runtime_version, const char *visible_devices);

#endif
