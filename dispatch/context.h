/* What the shim keeps per CUDA context: which kernels are disabled there,
 * where each kernel's first-use self-check stands, and the device resources
 * the checks and A/B mode use (a private memory pool, pinned verdict slots,
 * events).
 *
 * Keyed by the context's identity (cuCtxGetId), not by device ordinal or
 * CUcontext handle: after the application's cudaDeviceReset the primary
 * context comes back with the same handle and a new identity, and nothing
 * made in the old one (memory, events, pinned memory) may be used again. A
 * second context on the same device (cuCtxCreate) gets its own state. */
#ifndef GS_CONTEXT_H
#define GS_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define GS_MAX_VARIANTS 32
#define GS_MAX_DEVICES 64
#define GS_MAX_CONTEXTS 64

/* A self-check key: the launcher's code path, the output type, the layout
 * and the epilogue (gs_check_key). */
#define GS_CHECK_PATHS 16
#define GS_CHECK_KEYS (GS_CHECK_PATHS * 4 * 4 * 2)

/* Inconclusive self-checks of one key (cuBLAS's own sums overflowed where
 * ours holds FP64's kinds) before the kernel counts as failing it. */
#define GS_CHECK_INCONCLUSIVE_MAX 4
/* Checks in flight at once per context (one verdict slot each). */
#define GS_CHECK_SLOTS 32

typedef enum gs_check_state {
  GS_CHECK_NONE = 0,   /* not checked yet on this context */
  GS_CHECK_PENDING,    /* compared on the GPU; the verdict is not read yet */
  GS_CHECK_PASSED,
  GS_CHECK_FAILED
} gs_check_state;

typedef struct gs_ctx {
  uint64_t id;         /* cuCtxGetId */
  int device;
  void *handle;        /* the CUcontext (for the loader thread to make current) */
  atomic_int kernels;  /* our kernels in this context (loader.c): 0 not
                          loaded, 1 loading, 2 loaded, 3 failed; set with
                          release once settled */
  atomic_uchar disabled[GS_MAX_VARIANTS];
  atomic_uchar check[GS_MAX_VARIANTS][GS_CHECK_KEYS];   /* gs_check_state */

  /* Everything below is guarded by lock, which is only ever taken with
   * trylock on a call path and never held while waiting for the GPU. */
  pthread_mutex_t lock;
  unsigned char check_slot[GS_MAX_VARIANTS][GS_CHECK_KEYS];  /* of a PENDING check */
  unsigned char check_inconclusive[GS_MAX_VARIANTS][GS_CHECK_KEYS];  /* checks so far that
                            could not judge (selfcheck.c); at GS_CHECK_INCONCLUSIVE_MAX, fails */
  atomic_int resources;  /* 0 not made yet, 1 made, -1 could not be made;
                            set (release) once the fields below are */
  void *pool;          /* cudaMemPool_t: stream-ordered scratch of the
                          comparisons (gives its memory back at each
                          synchronization) */
  void *kernel_pool;   /* cudaMemPool_t: our kernels' own scratch
                          (gs_variant.scratch_bytes); keeps up to
                          GEMMSHIM_SCRATCH_KEEP_MB across synchronizations */
  void *verdicts;      /* pinned host memory: GS_CHECK_SLOTS gs_compare_result */
  void *slot_event[GS_CHECK_SLOTS];   /* cudaEvent_t, recorded after a verdict's copy */
  uint64_t slots_busy; /* bit i: slot i belongs to a pending check */
  _Atomic size_t scratch_refused;  /* smallest request the pool refused (0: none) */

  /* A/B mode, which may wait: one comparison at a time per context. */
  pthread_mutex_t ab_lock;
  void *ab_event[4];   /* cudaEvent_t: start and end of each path */
  int ab_events;       /* 0 not made yet, 1 made, -1 could not be made */
  double ab_hold_us;   /* how long the next pair's stream is held
                          (gs_ab_next_hold_us; 0: none measured yet) */
} gs_ctx;

/* The state of a context, made on first sight (never freed: a thread may
 * still hold it). NULL only when it cannot be allocated. When more than
 * GS_MAX_CONTEXTS identities have been seen, the oldest entry is forgotten
 * (its context is most likely gone; if not, it starts over). */
gs_ctx *gs_ctx_of(uint64_t id, int device, void *handle);

/* Forget every context (tests; the child after fork keeps the parent's). */
void gs_ctx_forget_all(void);

#endif
