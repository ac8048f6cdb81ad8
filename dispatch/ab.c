/* Both paths of a routed call, compared on the device.
 *
 * The caller's output is written by one path (ours in A/B "use" mode,
 * cuBLAS for the self-check and "shadow" mode); the other path writes a
 * per-device scratch buffer. When C is also the output (every BLAS entry)
 * and beta may be nonzero, C is first copied into the scratch, and the
 * other path runs in place there. The order of the two paths alternates,
 * so neither always finds a warm L2. Timing uses events on the caller's
 * stream and a host wait: A/B is a measurement mode. Nothing here runs
 * while the stream is capturing, and what could disturb another thread's
 * capture (allocation, waits) runs in relaxed capture mode. */
#include "ab.h"

#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <library_types.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/compare.h"
#include "config.h"
#include "dispatch.h"
#include "gpu.h"
#include "health.h"
#include "names.h"

/* ---- self-check state -------------------------------------------------- */

#define MAX_VARIANTS 32

/* One state per (variant, device, layout, epilogue). */
static atomic_uchar checked[MAX_VARIANTS][GS_MAX_DEVICES][4][2];

static atomic_uchar *check_slot(const gs_gemm *g, const gs_variant *v, int device)
{
  size_t vi = 0;
  while (vi < gs_n_variants && gs_variants[vi] != v) vi++;
  if (vi >= MAX_VARIANTS || device < 0 || device >= GS_MAX_DEVICES) return NULL;
  int lay = (g->trans_a == CUBLAS_OP_T) + 2 * (g->trans_b == CUBLAS_OP_T);
  int epi = g->is_lt && g->epilogue == CUBLASLT_EPILOGUE_BIAS;
  return &checked[vi][device][lay][epi];
}

/* ---- per-device scratch -------------------------------------------------- */

typedef struct ab_device {
  pthread_mutex_t lock;   /* one comparison at a time per device */
  int ready, broken;
  void *scratch;
  size_t scratch_bytes;
  void *partials;
  gs_compare_result *result;
  cudaEvent_t ev[4];
} ab_device;

static ab_device devices[GS_MAX_DEVICES];
static pthread_once_t devices_once = PTHREAD_ONCE_INIT;

static void devices_init(void)
{
  for (int i = 0; i < GS_MAX_DEVICES; i++) pthread_mutex_init(&devices[i].lock, NULL);
}

/* Calls that could disturb another thread's graph capture (allocation,
 * waiting) run with this thread in relaxed capture mode. */
typedef struct relaxed { enum cudaStreamCaptureMode saved; } relaxed;
static void relax(relaxed *r)
{
  r->saved = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&r->saved);
}
static void unrelax(relaxed *r) { cudaThreadExchangeStreamCaptureMode(&r->saved); }

/* Make sure dev has `need` bytes of scratch (grown, never beyond the
 * bound). Returns 0, or the reason the call cannot be compared. */
static gs_reason ensure_scratch(ab_device *dev, size_t need)
{
  size_t bound = (size_t)gs_config()->ab_scratch_mb << 20;
  if (!gs_ab_fits(need, gs_config()->ab_scratch_mb)) return GS_R_AB_SKIPPED_SCRATCH;
  if (dev->broken) return GS_R_AB_SKIPPED_ALLOC;
  relaxed r;
  relax(&r);
  gs_reason out = GS_R_ROUTED;
  if (!dev->ready) {
    int ok = cudaMalloc(&dev->partials, gs_compare_scratch_bytes()) == cudaSuccess &&
             cudaMalloc((void **)&dev->result, sizeof *dev->result) == cudaSuccess;
    for (int i = 0; ok && i < 4; i++) ok = cudaEventCreate(&dev->ev[i]) == cudaSuccess;
    if (!ok) {
      dev->broken = 1;   /* never retried: an allocation failure is not the app's */
      cudaGetLastError();
      out = GS_R_AB_SKIPPED_ALLOC;
    } else {
      dev->ready = 1;
    }
  }
  if (out == GS_R_ROUTED && dev->scratch_bytes < need) {
    size_t want = need < ((size_t)64 << 20) ? ((size_t)64 << 20) : need;
    if (want > bound) want = bound;
    if (dev->scratch) cudaFree(dev->scratch);
    dev->scratch = NULL;
    dev->scratch_bytes = 0;
    if (cudaMalloc(&dev->scratch, want) == cudaSuccess) {
      dev->scratch_bytes = want;
    } else {
      cudaGetLastError();
      out = GS_R_AB_SKIPPED_ALLOC;
    }
  }
  unrelax(&r);
  return out;
}

/* ---- the A/B log ----------------------------------------------------------- */

static int ab_fd = -1;
static pthread_once_t ab_fd_once = PTHREAD_ONCE_INIT;

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
  pthread_once(&ab_fd_once, ab_open);
  if (ab_fd < 0) return;
  char line[1024];
  if (len >= (int)sizeof line - 1) return;
  memcpy(line, row, (size_t)len);
  line[len] = '\n';
  if (write(ab_fd, line, (size_t)len + 1) < 0) {}
}

/* ---- running both paths ---------------------------------------------------- */

typedef struct outcome {
  int ours_ok, cublas_status;
  float ours_ms, cublas_ms;
  gs_compare_result cmp;
} outcome;

static atomic_ulong routed_seq, order_seq;

/* ours_serves: our result goes to the caller (A/B use mode); otherwise
 * cuBLAS's does. Requires the stream's context entered and dev locked with
 * enough scratch. Returns 0 when both ran and were compared, -1 when they
 * ran (see o) but were not compared, -2 when neither ran. */
static int both_paths(const gs_gemm *g, const gs_variant *v, ab_device *dev, int ours_serves,
                      outcome *o)
{
  cudaStream_t s = (cudaStream_t)g->stream;
  o->ours_ok = 0;
  o->cublas_status = -1;
  size_t out_bytes = gs_ab_scratch_needed(g);
  int aliased = g->is_lt ? g->D == g->C : 1;
  int beta_matters = g->pointer_mode == 1 || *(const float *)g->beta != 0.0f;
  if (aliased && beta_matters &&
      cudaMemcpyAsync(dev->scratch, g->C, out_bytes, cudaMemcpyDeviceToDevice, s) != cudaSuccess)
    return -2;
  const void *other_c = aliased ? dev->scratch : g->C;
  void *other_d = dev->scratch;
  int ours_first = (int)(atomic_fetch_add(&order_seq, 1) & 1);
  for (int step = 0; step < 2; step++) {
    int ours_now = (step == 0) == ours_first;
    int to_caller = ours_now == ours_serves;
    const void *c = to_caller ? g->C : other_c;
    void *d = to_caller ? g->D : other_d;
    cudaEvent_t *ev = &dev->ev[ours_now ? 0 : 2];
    cudaEventRecord(ev[0], s);
    if (ours_now)
      o->ours_ok = gs_launch_variant(g, v, c, d) == GS_K_OK;
    else
      o->cublas_status = g->reissue(g, c, d);
    cudaEventRecord(ev[1], s);
  }
  if (!o->ours_ok || o->cublas_status != CUBLAS_STATUS_SUCCESS) return -1;
  const void *ours_out = ours_serves ? g->D : other_d;
  const void *cublas_out = ours_serves ? other_d : g->D;
  int out_type = g->is_lt ? g->d_type : g->c_type;
  if (gs_compare(out_type == CUDA_R_16BF ? GS_CMP_BF16 : GS_CMP_F32, ours_out, g->ldd, cublas_out,
                 g->ldd, g->m, g->n, dev->partials, dev->result, s) != 0)
    return -1;
  relaxed r;
  relax(&r);
  int ok = cudaMemcpyAsync(&o->cmp, dev->result, sizeof o->cmp, cudaMemcpyDeviceToHost, s) ==
               cudaSuccess &&
           cudaStreamSynchronize(s) == cudaSuccess &&
           cudaEventElapsedTime(&o->ours_ms, dev->ev[0], dev->ev[1]) == cudaSuccess &&
           cudaEventElapsedTime(&o->cublas_ms, dev->ev[2], dev->ev[3]) == cudaSuccess;
  unrelax(&r);
  return ok ? 0 : -1;
}

static double rel_fro(const gs_compare_result *c)
{
  return c->ref_sq > 0 ? sqrt(c->diff_sq / c->ref_sq) : sqrt(c->diff_sq);
}

static void record(const gs_gemm *g, const gs_variant *v, const char *mode, const outcome *o,
                   int device)
{
  if (!gs_config()->ab_log_path[0]) return;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  char row[1024];
  int len = gs_ab_format_row(row, sizeof row, now.tv_sec + now.tv_nsec * 1e-9, (long)getpid(), g,
                             v->name, mode, o->ours_ms * 1e3, o->cublas_ms * 1e3, o->cmp.max_abs,
                             o->cmp.max_rel, rel_fro(&o->cmp), device);
  if (len > 0) ab_write(row, len);
}

int gs_ab_handle(gs_gemm *g, gs_decision *d, int *status)
{
  const gs_variant *v = d->variant;
  const gs_config_t *cfg = gs_config();
  atomic_uchar *slot = check_slot(g, v, d->device);
  int need_check = slot && atomic_load_explicit(slot, memory_order_acquire) != GS_SC_PASSED;
  /* the shared counter is touched only in A/B mode */
  int sampled = !need_check && cfg->ab_every > 0 &&
                gs_ab_sampled(cfg->ab_every, atomic_fetch_add(&routed_seq, 1));
  if (!need_check && !sampled) return 0;

  gs_reason skip = GS_R_ROUTED;
  size_t need = gs_ab_scratch_needed(g);
  if (need == 0) skip = GS_R_AB_SKIPPED_SCRATCH;
  else if (gs_gpu_stream_capturing(g->stream)) skip = GS_R_AB_SKIPPED_CAPTURING;
  gs_gpu_entered e;
  int entered = 0;
  ab_device *dev = NULL;
  if (skip == GS_R_ROUTED) {
    if (gs_gpu_enter(g->stream, &e) != 0) {
      skip = GS_R_AB_SKIPPED_ALLOC;
    } else {
      entered = 1;
      pthread_once(&devices_once, devices_init);
      dev = &devices[d->device];
      pthread_mutex_lock(&dev->lock);
      gs_reason r = ensure_scratch(dev, need);
      if (r != GS_R_ROUTED) skip = r;
    }
  }
  int result;
  if (skip != GS_R_ROUTED) {
    /* An unchecked kernel does not serve; a checked one just runs. */
    if (need_check) {
      d->reason = GS_R_UNCHECKED;
      d->variant = NULL;
      result = -1;
    } else {
      d->reason = skip;
      result = 0;
    }
  } else {
    int ours_serves = !need_check && !cfg->ab_shadow;
    outcome o;
    int rc = both_paths(g, v, dev, ours_serves, &o);
    if (rc == -2) {
      /* nothing ran: the call goes to cuBLAS as if never sampled */
      *status = g->reissue(g, g->C, g->D);
      d->reason = need_check ? GS_R_UNCHECKED : GS_R_AB_SKIPPED_ALLOC;
      d->variant = NULL;
      result = 1;
    } else if (!o.ours_ok) {
      /* Our launch failed, so it wrote nothing; the caller's result comes
       * from cuBLAS: the run just made, when it wrote the caller's output. */
      int cublas_wrote_caller = !ours_serves && o.cublas_status >= 0;
      *status = cublas_wrote_caller ? o.cublas_status : g->reissue(g, g->C, g->D);
      gs_variant_disable(v, d->device, "launch failed");
      d->reason = GS_R_LAUNCH_FAILED;
      d->variant = NULL;
      result = 1;
    } else if (rc != 0) {
      /* Both ran, but there is no comparison (cuBLAS's run or the compare
       * failed): whoever served the caller has served it; nothing is
       * recorded, and an unchecked kernel stays unchecked. */
      *status = ours_serves ? CUBLAS_STATUS_SUCCESS : o.cublas_status;
      d->reason = ours_serves ? GS_R_ROUTED : need_check ? GS_R_UNCHECKED : GS_R_AB_SHADOW;
      if (!ours_serves) d->variant = NULL;
      result = 1;
    } else if (need_check) {
      int pass = gs_selfcheck_passes(rel_fro(&o.cmp), o.cmp.mismatched_nonfinite, v->selfcheck_tol);
      atomic_store_explicit(slot, pass ? GS_SC_PASSED : GS_SC_FAILED, memory_order_release);
      record(g, v, "selfcheck", &o, d->device);
      if (!pass) {
        char why[160];
        snprintf(why, sizeof why, "first-use self-check: relative difference %.3g from cuBLAS, "
                 "tolerance %.3g", rel_fro(&o.cmp), v->selfcheck_tol);
        gs_variant_disable(v, d->device, why);
      }
      *status = o.cublas_status;
      d->reason = pass ? GS_R_SELFCHECK : GS_R_SELFCHECK_FAILED;
      d->variant = NULL;
      result = 1;
    } else {
      record(g, v, ours_serves ? "use" : "shadow", &o, d->device);
      *status = ours_serves ? CUBLAS_STATUS_SUCCESS : o.cublas_status;
      d->reason = ours_serves ? GS_R_AB_COMPARED : GS_R_AB_SHADOW;
      if (!ours_serves) d->variant = NULL;
      result = 1;
    }
  }
  if (dev) pthread_mutex_unlock(&dev->lock);
  if (entered) gs_gpu_leave(&e);
  return result;
}
