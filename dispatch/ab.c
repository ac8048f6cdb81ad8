/* A/B mode: both paths of a sampled routed call, timed and compared.
 *
 * The caller's output is written by one path (ours in "use" mode, cuBLAS in
 * "shadow" mode); the other writes a compact m x n copy in stream-ordered
 * scratch. When C is also the output (every BLAS entry) and beta may count,
 * C's m x n is first copied into the scratch, and the other path runs in
 * place there. The order of the two paths alternates, so neither always
 * finds a warm L2. Both are queued behind a short hold of the stream, so
 * each is timed on the GPU alone, not from an idle GPU waiting on the
 * host. Timing uses events on the caller's stream and a host wait: this
 * is the one place where the shim waits inside a call, and only because
 * the user asked for measurements. Nothing here runs while the
 * stream is capturing, and what could disturb another thread's capture
 * (allocation, waits) runs in relaxed capture mode. */
#include "ab.h"

#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/compare.h"
#include "../kernels/hold.h"
#include "config.h"
#include "context.h"
#include "gpu.h"
#include "health.h"
#include "launch.h"
#include "scratch.h"

/* ---- the A/B log ----------------------------------------------------------- */

static void register_ab_after_fork(void);

/* Opened on the first row; a forked child closes the parent's and opens
 * its own (its %p path) on its first row. */
static int ab_fd = -1, ab_opened;
static pthread_mutex_t ab_fd_lock = PTHREAD_MUTEX_INITIALIZER;

static void ab_after_fork(void)
{
  if (ab_fd >= 0) close(ab_fd);
  ab_fd = -1;
  ab_opened = 0;
  pthread_mutex_init(&ab_fd_lock, NULL);
}

static void register_ab_after_fork(void) { pthread_atfork(NULL, NULL, ab_after_fork); }

static void ab_open(void)
{
  const char *path = gs_config()->ab_log_path;
  if (!path[0]) return;
  ab_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (ab_fd < 0) {
    fprintf(stderr, "gemmshim: cannot open GEMMSHIM_AB_LOG %s; comparisons are not written\n", path);
    return;
  }
  flock(ab_fd, LOCK_EX);
  struct stat st;
  if (fstat(ab_fd, &st) == 0 && st.st_size == 0) {
    const char header[] = GS_AB_HEADER "\n";
    if (write(ab_fd, header, sizeof header - 1) < 0) {}
  }
  flock(ab_fd, LOCK_UN);
}

/* One row, one write: several processes may append to one file. */
static void ab_write(const char *row, int len)
{
  static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
  pthread_once(&atfork_once, register_ab_after_fork);
  pthread_mutex_lock(&ab_fd_lock);
  if (!ab_opened) {
    ab_open();
    ab_opened = 1;
  }
  int fd = ab_fd;
  pthread_mutex_unlock(&ab_fd_lock);
  if (fd < 0) return;
  char line[1024];
  if (len >= (int)sizeof line - 1) return;
  memcpy(line, row, (size_t)len);
  line[len] = '\n';
  if (write(fd, line, (size_t)len + 1) < 0) {}
}

static void record(const gs_gemm *g, const gs_variant *v, const char *mode, double ours_us,
                   double cublas_us, const gs_compare_result *cmp, int device)
{
  if (!gs_config()->ab_log_path[0]) return;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  char row[1024];
  int len = gs_ab_format_row(row, sizeof row, now.tv_sec + now.tv_nsec * 1e-9, (long)getpid(), g,
                             v->name, mode, ours_us, cublas_us, cmp->max_abs, cmp->max_rel,
                             gs_compare_rel_fro(cmp), device);
  if (len > 0) ab_write(row, len);
}

/* ---- sampling ---------------------------------------------------------------- */

static atomic_ulong routed_seq, order_seq;

static double monotonic_us(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

int gs_ab_wanted(void)
{
  long every = gs_config()->ab_every;
  /* the shared counter is touched only in A/B mode */
  return every > 0 && gs_ab_sampled(every, atomic_fetch_add(&routed_seq, 1));
}

/* ---- both paths ---------------------------------------------------------------- */

static int make_events(gs_ctx *ctx)
{
  if (ctx->ab_events == 0) {
    int ok = 1;
    for (int i = 0; ok && i < 4; i++) {
      cudaEvent_t ev;
      ok = cudaEventCreate(&ev) == cudaSuccess;
      if (ok) ctx->ab_event[i] = ev;
    }
    if (!ok) (void)cudaGetLastError();
    ctx->ab_events = ok ? 1 : -1;
  }
  return ctx->ab_events == 1 ? 0 : -1;
}

/* What ran, once both paths were enqueued. */
typedef struct outcome {
  int ran;                  /* 0: neither path ran (C could not be copied) */
  gs_kstatus ours;          /* GS_K_OK or why not */
  int ours_to_caller;       /* ours targeted the caller's output */
  int cublas_status;        /* -1: cuBLAS did not run */
  int cublas_to_caller;
} outcome;

/* Enqueue both paths, timed. Holding ctx->ab_lock, in relaxed capture
 * mode, with scratch laid out as `lay`. */
static outcome run_both(gs_gemm *g, const gs_decision *d, const gs_kernel_args *a, gs_ctx *ctx,
                        unsigned char *base, const gs_scratch_layout *lay, int ours_serves)
{
  cudaStream_t s = a->stream;
  int elem = gs_output_elem_bytes(g);
  /* the path that does not serve the caller writes the copy; where C is
   * the output it reads C from the copy too */
  int aliased = g->is_lt ? g->C == g->D : 1;
  int beta_matters = a->scalars_on_device || a->beta != 0.0f;
  void *other_d = base + lay->out;
  const void *other_c = aliased ? other_d : g->C;
  int64_t other_ldc = aliased ? lay->ld : g->ldc;
  /* a packed batch's items lie in the copy as in the caller's output */
  int64_t other_stride_d = lay->ld * g->n;
  int64_t other_stride_c = aliased ? other_stride_d : g->stride_c;
  outcome o = { 0, GS_K_UNSUPPORTED, ours_serves, -1, !ours_serves };
  if (aliased && beta_matters &&
      cudaMemcpy2DAsync(other_d, (size_t)lay->ld * elem, g->C, (size_t)g->ldc * elem,
                        (size_t)g->m * elem, (size_t)gs_output_cols(g), cudaMemcpyDeviceToDevice,
                        s) != cudaSuccess) {
    (void)cudaGetLastError();
    return o;
  }
  o.ran = 1;
  int ours_first = (int)(atomic_fetch_add(&order_seq, 1) & 1);
  /* the stream held while both paths are queued (gs_ab_next_hold_us) */
  const double hold_us = ctx->ab_hold_us > 0 ? ctx->ab_hold_us : GS_AB_HOLD_FIRST_US;
  const double t0 = monotonic_us();
  const int hold_err = gs_hold_stream(s, hold_us);
  for (int step = 0; step < 2; step++) {
    int ours_now = (step == 0) == ours_first;
    int to_caller = ours_now == ours_serves;
    cudaEvent_t *ev = (cudaEvent_t *)&ctx->ab_event[ours_now ? 0 : 2];
    if (cudaEventRecord(ev[0], s) != cudaSuccess) (void)cudaGetLastError();
    if (ours_now) {
      gs_kernel_args x = *a;
      if (!to_caller) {
        x.C = other_c;
        x.ldc = other_ldc;
        x.stride_c = other_stride_c;
        x.D = other_d;
        x.ldd = lay->ld;
        x.stride_d = other_stride_d;
      }
      o.ours = gs_launch_route(g, d, &x);
    } else if (to_caller) {
      o.cublas_status = g->reissue(g, g->C, g->D);
    } else {
      /* cuBLAS into scratch: the call as the caller made it, with C and D
       * replaced by the copy (a BLAS call takes its ldc from the
       * descriptor; a cuBLASLt call keeps its layouts, which the copy's
       * leading dimension follows) */
      gs_gemm other = *g;
      other.C = other_c;
      other.ldc = other_ldc;
      other.stride_c = other_stride_c;
      other.D = other_d;
      other.ldd = lay->ld;
      other.stride_d = other_stride_d;
      o.cublas_status = g->reissue(&other, other_c, other_d);
    }
    if (cudaEventRecord(ev[1], s) != cudaSuccess) (void)cudaGetLastError();
  }
  const double queued_us = monotonic_us() - t0;
  ctx->ab_hold_us = gs_ab_next_hold_us(queued_us);
  /* the GPU's own word on it: the first path's start already passed when
   * the host had queued both, so the hold ended first (the host was slow,
   * or a path waited on the GPU) */
  cudaError_t first = cudaEventQuery((cudaEvent_t)ctx->ab_event[ours_first ? 0 : 2]);
  if (first != cudaSuccess) (void)cudaGetLastError();   /* not ready: held */
  if (hold_err || first == cudaSuccess) {
    static atomic_int said;
    if (!atomic_exchange(&said, 1)) {
      if (hold_err)
        fprintf(stderr, "gemmshim: A/B: the stream could not be held (%s); pairs are timed "
                        "unheld, their times may include the host's queueing (said once)\n",
                cudaGetErrorString((cudaError_t)hold_err));
      else
        fprintf(stderr, "gemmshim: A/B: the GPU reached a pair before the host had queued it "
                        "(%.0f us to queue, %.0f us held); such a pair's times may include "
                        "the host's queueing (said once)\n",
                queued_us, hold_us);
    }
  }
  return o;
}

int gs_ab_compare(gs_gemm *g, gs_decision *d, const gs_kernel_args *a, int *status)
{
  const gs_variant *v = d->variant;
  gs_ctx *ctx = d->ctx;
  cudaStream_t s = a->stream;
  const gs_config_t *cfg = gs_config();
  int ours_serves = !cfg->ab_shadow;
  gs_scratch_layout lay;
  if (gs_scratch_layout_of(g, gs_compare_scratch_bytes(), ours_serves, &lay) != 0 ||
      !gs_ab_fits(lay.total, cfg->ab_scratch_mb)) {
    d->reason = GS_R_AB_SKIPPED_SCRATCH;
    return 0;
  }
  if (gs_gpu_stream_capturing(g->stream)) {
    d->reason = GS_R_AB_SKIPPED_CAPTURING;
    return 0;
  }
  pthread_mutex_lock(&ctx->ab_lock);
  gs_relaxed r;
  gs_relax(&r);
  void *scratch = NULL;
  /* A/B mode may wait: for the lock the self-check holds briefly, too (the
   * self-check never takes ab_lock, so the order cannot deadlock) */
  pthread_mutex_lock(&ctx->lock);
  int ready = gs_ctx_make_resources(ctx) == 0;
  pthread_mutex_unlock(&ctx->lock);
  ready = ready && make_events(ctx) == 0 && gs_scratch_get(ctx, lay.total, s, &scratch) == 0;
  if (!ready) {
    gs_unrelax(&r);
    pthread_mutex_unlock(&ctx->ab_lock);
    d->reason = GS_R_AB_SKIPPED_ALLOC;
    return 0;
  }
  unsigned char *base = scratch;
  outcome o = run_both(g, d, a, ctx, base, &lay, ours_serves);
  int served = 1;
  if (!o.ran) {
    d->reason = GS_R_AB_SKIPPED_ALLOC;
    served = 0;
  } else if (o.ours != GS_K_OK) {
    d->reason = gs_launch_refused(v, ctx, o.ours, a);
    if (o.ours == GS_K_FAILED_AFTER_ENQUEUE && o.ours_to_caller) {
      /* an earlier kernel of ours may be writing the caller's output:
       * cuBLAS must not run into it */
      *status = CUBLAS_STATUS_EXECUTION_FAILED;
    } else {
      /* ours wrote nothing the caller sees: the caller's result is
       * cuBLAS's, from the run just made if it went there */
      *status = o.cublas_to_caller && o.cublas_status >= 0 ? o.cublas_status
                                                          : g->reissue(g, g->C, g->D);
      d->variant = NULL;
    }
  } else if (o.cublas_status != CUBLAS_STATUS_SUCCESS) {
    /* cuBLAS failed: whoever served the caller has served it; nothing to
     * compare */
    *status = ours_serves ? CUBLAS_STATUS_SUCCESS : o.cublas_status;
    d->reason = ours_serves ? GS_R_ROUTED : GS_R_AB_SHADOW;
    if (!ours_serves) d->variant = NULL;
  } else {
    const void *ours_out = ours_serves ? g->D : base + lay.out;
    int64_t ours_ld = ours_serves ? g->ldd : lay.ld;
    const void *cublas_out = ours_serves ? base + lay.out : g->D;
    int64_t cublas_ld = ours_serves ? lay.ld : g->ldd;
    gs_compare_result cmp;
    float ours_ms = 0, cublas_ms = 0;
    int compared =
        gs_compare((gs_compare_type)gs_output_compare_type(g), ours_out, ours_ld,
                   cublas_out, cublas_ld, g->m, gs_output_cols(g), NULL, base + lay.partials,
                   (gs_compare_result *)(base + lay.result), s) == 0 &&
        cudaMemcpyAsync(&cmp, base + lay.result, sizeof cmp, cudaMemcpyDeviceToHost, s) ==
            cudaSuccess &&
        cudaStreamSynchronize(s) == cudaSuccess &&
        cudaEventElapsedTime(&ours_ms, (cudaEvent_t)ctx->ab_event[0],
                             (cudaEvent_t)ctx->ab_event[1]) == cudaSuccess &&
        cudaEventElapsedTime(&cublas_ms, (cudaEvent_t)ctx->ab_event[2],
                             (cudaEvent_t)ctx->ab_event[3]) == cudaSuccess;
    if (!compared) (void)cudaGetLastError();
    if (compared) record(g, v, ours_serves ? "use" : "shadow", ours_ms * 1e3, cublas_ms * 1e3, &cmp,
                         d->device);
    *status = ours_serves ? CUBLAS_STATUS_SUCCESS : o.cublas_status;
    d->reason = !compared ? (ours_serves ? GS_R_ROUTED : GS_R_AB_SHADOW)
                          : ours_serves ? GS_R_AB_COMPARED : GS_R_AB_SHADOW;
    if (!ours_serves) d->variant = NULL;
  }
  gs_scratch_put(scratch, s);
  gs_unrelax(&r);
  pthread_mutex_unlock(&ctx->ab_lock);
  return served;
}
