/* Samples in flight live in a ring of slots, handed out in record order
 * under a lock that call paths only ever try (a busy lock drops the
 * sample, counted, rather than wait). Each slot keeps the two events it
 * was made with, for the context it was made in. */
#include "timing.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "config.h"
#include "context.h"
#include "gpu.h"
#include "scratch.h"

#define TIME_SLOTS 1024u   /* samples in flight at once */
#define POLL_MAX 64u       /* samples one call reads at most */
#define EXIT_WAIT_MS 1000

enum { SLOT_FREE, SLOT_BEGUN, SLOT_PENDING, SLOT_ABANDONED };

typedef struct slot {
  atomic_int state;
  /* its events' context (NULL: no events) and that context's identity;
   * atomic: a poller compares them while a failing call forgets them */
  _Atomic(gs_ctx *) ctx;
  _Atomic uint64_t ctx_id;
  cudaEvent_t ev[2];        /* start, end */
  gs_tally_row *row;        /* set before the release store of PENDING */
} slot;

static slot ring[TIME_SLOTS];
static unsigned head, tail;   /* [head, tail) in flight; guarded by lock */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int exit_armed;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void drain_at_exit(void) { gs_time_drain(EXIT_WAIT_MS); }

static void at_fork_child(void)
{
  /* the parent's events are not the child's to read */
  pthread_mutex_init(&lock, NULL);
  gs_time_reset();
}

static void arm_fork(void) { pthread_atfork(NULL, NULL, at_fork_child); }

/* Events for the slot in ctx, which is current. The events of another
 * context are left as they are: that context may be gone. */
static int is_of(slot *s, gs_ctx *ctx)
{
  return atomic_load_explicit(&s->ctx, memory_order_relaxed) == ctx &&
         atomic_load_explicit(&s->ctx_id, memory_order_relaxed) == ctx->id;
}

static int give_events(slot *s, gs_ctx *ctx)
{
  if (is_of(s, ctx)) return 0;
  cudaEvent_t a, b;
  gs_relaxed r;
  gs_relax(&r);
  int ok = cudaEventCreate(&a) == cudaSuccess;
  if (ok && cudaEventCreate(&b) != cudaSuccess) {
    cudaEventDestroy(a);
    ok = 0;
  }
  gs_unrelax(&r);
  if (!ok) {
    (void)cudaGetLastError();
    return -1;
  }
  s->ev[0] = a;
  s->ev[1] = b;
  atomic_store_explicit(&s->ctx, ctx, memory_order_relaxed);
  atomic_store_explicit(&s->ctx_id, ctx->id, memory_order_relaxed);
  /* The shim's runtime has started (it made these events), and registered
   * its teardown at exit: registered now, the drain runs before it. */
  if (!atomic_exchange(&exit_armed, 1)) atexit(drain_at_exit);
  return 0;
}

/* A slot for a sample in ctx (current), BEGUN; -1 when none can be had. */
static int take_slot(gs_ctx *ctx)
{
  if (pthread_mutex_trylock(&lock) != 0) return -1;
  int got = -1;
  if (tail - head < TIME_SLOTS) {
    slot *s = &ring[tail % TIME_SLOTS];
    if (atomic_load_explicit(&s->state, memory_order_acquire) == SLOT_FREE &&
        give_events(s, ctx) == 0) {
      s->row = NULL;
      atomic_store_explicit(&s->state, SLOT_BEGUN, memory_order_relaxed);
      got = (int)(tail % TIME_SLOTS);
      tail++;
    }
  }
  pthread_mutex_unlock(&lock);
  return got;
}

/* A slot whose events cannot be trusted again: made anew next time. */
static void forget_events(slot *s)
{
  atomic_store_explicit(&s->ctx, NULL, memory_order_relaxed);
  atomic_store_explicit(&s->ctx_id, 0, memory_order_relaxed);
}

/* Read one in-flight slot. Returns 1 when it is done with (read, dropped,
 * or abandoned), 0 while its events are pending. The caller holds lock,
 * and has entered the slot's context. */
static int read_slot(slot *s)
{
  int st = atomic_load_explicit(&s->state, memory_order_acquire);
  if (st == SLOT_FREE) return 1;
  if (st == SLOT_BEGUN) return 0;
  if (st == SLOT_ABANDONED) {
    atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
    return 1;
  }
  cudaError_t q = cudaEventQuery(s->ev[1]);
  if (q == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return 0;
  }
  float ms = 0;
  if (q == cudaSuccess && cudaEventElapsedTime(&ms, s->ev[0], s->ev[1]) == cudaSuccess && ms >= 0) {
    gs_tally_timed(s->row, (uint64_t)((double)ms * 1e6 + 0.5));
  } else {
    (void)cudaGetLastError();
    gs_tally_time_dropped(s->row);
    forget_events(s);
  }
  atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
  return 1;
}

/* Read the samples of ctx (current) that have completed, at most max of
 * them, oldest first; the ring's head moves past those done with. A slot
 * of another context waits for a call there, or for the drain. */
static void poll(gs_ctx *ctx, unsigned max)
{
  if (pthread_mutex_trylock(&lock) != 0) return;
  gs_relaxed r;
  gs_relax(&r);
  unsigned seen = 0;
  for (unsigned i = head; i != tail && seen < max; i++) {
    slot *s = &ring[i % TIME_SLOTS];
    if (!is_of(s, ctx)) continue;
    seen++;
    read_slot(s);
  }
  while (head != tail &&
         atomic_load_explicit(&ring[head % TIME_SLOTS].state, memory_order_acquire) == SLOT_FREE)
    head++;
  gs_unrelax(&r);
  pthread_mutex_unlock(&lock);
}

void gs_time_begin(gs_gemm *g, gs_decision *d)
{
  d->time_slot = 0;
  d->time_note = GS_TIME_NOTHING;
  const gs_config_t *cfg = gs_config();
  if (!cfg->time_every || !cfg->log_path[0]) return;
  pthread_once(&fork_once, arm_fork);
  /* The BLAS entry points name their stream only through the handle: a
   * handle whose state could not be read (pointer mode still unknown)
   * has no stream to time on. */
  if (!g->is_lt && !g->state_loaded && g->load_state) {
    g->state_loaded = 1;
    (void)g->load_state(g);
  }
  if (!g->is_lt && g->pointer_mode == GS_NONE) return;
  gs_gpu_entered e;
  if (gs_gpu_enter(g->stream, &e) != 0) return;
  if (gs_gpu_stream_capturing(g->stream)) {
    d->time_note = GS_TIME_CAPTURED;
  } else if ((gs_tally_calls_before(g, d) + 1) % (uint64_t)cfg->time_every == 0) {
    /* the N-th, 2N-th, ... call of the row: a row's first call carries its
     * one-time costs (cuBLAS loading a kernel, choosing an algorithm), which
     * one sample in N would multiply by N in the estimate */
    gs_gpu_place place;
    gs_ctx *ctx = d->ctx;
    if (!ctx && gs_gpu_place_stream(g->stream, &place) == 0) ctx = place.ctx;
    int s = ctx ? take_slot(ctx) : -1;
    if (s >= 0 && cudaEventRecord(ring[s].ev[0], (cudaStream_t)g->stream) != cudaSuccess) {
      (void)cudaGetLastError();
      forget_events(&ring[s]);
      atomic_store_explicit(&ring[s].state, SLOT_ABANDONED, memory_order_release);
      s = -1;
    }
    if (s >= 0) d->time_slot = s + 1;
    else d->time_note = GS_TIME_DROPPED;
  }
  gs_gpu_leave(&e);
}

void gs_time_end(gs_tally_row *row, const gs_gemm *g, gs_decision *d)
{
  if (d->time_note == GS_TIME_CAPTURED) gs_tally_time_captured(row);
  if (d->time_note == GS_TIME_DROPPED) gs_tally_time_dropped(row);
  if (!d->time_slot) return;
  slot *s = &ring[d->time_slot - 1];
  d->time_slot = 0;
  gs_gpu_entered e;
  int entered = gs_gpu_enter(g->stream, &e) == 0;
  if (row && entered && cudaEventRecord(s->ev[1], (cudaStream_t)g->stream) == cudaSuccess) {
    s->row = row;
    atomic_store_explicit(&s->state, SLOT_PENDING, memory_order_release);
    poll(atomic_load_explicit(&s->ctx, memory_order_relaxed), POLL_MAX);
  } else {
    if (entered) (void)cudaGetLastError();
    gs_tally_time_dropped(row);
    atomic_store_explicit(&s->state, SLOT_ABANDONED, memory_order_release);
  }
  if (entered) gs_gpu_leave(&e);
}

static void sleep_ms(long ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
  nanosleep(&ts, NULL);
}

void gs_time_drain(int wait_ms)
{
  /* a call in another thread holds the lock only briefly */
  int locked = 0;
  for (int i = 0; i < 1000 && !locked; i++) {
    locked = pthread_mutex_trylock(&lock) == 0;
    if (!locked) sleep_ms(1);
  }
  if (!locked) return;
  gs_relaxed r;
  gs_relax(&r);
  for (int waited = 0;; waited++) {
    int pending = 0;
    for (unsigned i = head; i != tail; i++) {
      slot *s = &ring[i % TIME_SLOTS];
      int st = atomic_load_explicit(&s->state, memory_order_acquire);
      /* a call still under way in another thread is not waited for */
      if (st == SLOT_FREE || st == SLOT_BEGUN) continue;
      gs_ctx *ctx = atomic_load_explicit(&s->ctx, memory_order_relaxed);
      if (!ctx || gs_gpu_push(ctx->handle) != 0) {
        gs_tally_time_dropped(s->row);
        atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
        continue;
      }
      if (!read_slot(s)) pending++;
      gs_gpu_pop();
    }
    if (!pending || waited >= wait_ms) break;
    sleep_ms(1);
  }
  /* what is still pending (or still being called) is lost: counted */
  for (; head != tail; head++) {
    slot *s = &ring[head % TIME_SLOTS];
    int st = atomic_load_explicit(&s->state, memory_order_acquire);
    if (st == SLOT_PENDING) gs_tally_time_dropped(s->row);
    if (st != SLOT_BEGUN) atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
  }
  gs_unrelax(&r);
  pthread_mutex_unlock(&lock);
}

void gs_time_reset(void)
{
  for (unsigned i = 0; i < TIME_SLOTS; i++) {
    atomic_store(&ring[i].state, SLOT_FREE);
    ring[i].row = NULL;
    forget_events(&ring[i]);
  }
  head = tail = 0;
}
