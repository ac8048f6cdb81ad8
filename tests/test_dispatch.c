/* The real dispatch, self-check and A/B code (the .c files of dispatch/) against a
 * stand-in CUDA runtime (support/fake_cudart.c): kernels and cuBLAS are
 * host functions queued on fake streams, so a test sees what a call
 * enqueued, whether it waited, what it wrote into the caller's C, and what
 * memory it touched. Each test is named after what it proves. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <cublas_api.h>
#include <library_types.h>

#include "../dispatch/ab.h"
#include "../dispatch/config.h"
#include "../dispatch/context.h"
#include "../dispatch/dispatch.h"
#include "../dispatch/health.h"
#include "../dispatch/loader.h"
#include "../dispatch/tally.h"
#include "../dispatch/timing.h"
#include "../kernels/gs_launch.h"
#include "support/fake_cudart.h"
#include "support/fake_variants.h"

/* ---- a GEMM on the fake GPU: our kernel and cuBLAS alike ---------------- */

typedef struct gemm_work {
  int64_t m, n, k, lda, ldb, ldc, ldd;
  int ta, tb;
  const float *A, *B, *C, *bias;
  float *D;
  float alpha, beta;
  const float *alpha_dev, *beta_dev;   /* read when the work runs */
  int drop_k;                          /* a wrong kernel: leaves out the last k */
  int in_double;                       /* sums in double: FP64's Inf/NaN, as BF16x6 */
  int finite_only;                     /* a wrong kernel: 0 where the result is Inf or NaN */
  int64_t batch;                       /* items (0: one), each stride_x further on */
  int64_t sa, sb, sc, sd;
} gemm_work;

static void gemm_run(void *arg)
{
  const gemm_work *w = arg;
  float alpha = w->alpha_dev ? *w->alpha_dev : w->alpha;
  float beta = w->beta_dev ? *w->beta_dev : w->beta;
  for (int64_t item = 0; item < (w->batch > 1 ? w->batch : 1); item++) {
    const float *A = w->A + item * w->sa, *B = w->B + item * w->sb, *C = w->C + item * w->sc;
    float *D = w->D + item * w->sd;
    for (int64_t j = 0; j < w->n; j++)
      for (int64_t i = 0; i < w->m; i++) {
        float acc = 0;
        double acc64 = 0;
        for (int64_t p = 0; p < w->k - w->drop_k; p++) {
          float a = w->ta ? A[p + i * w->lda] : A[i + p * w->lda];
          float b = w->tb ? B[j + p * w->ldb] : B[p + j * w->ldb];
          acc += a * b;
          acc64 += (double)a * b;
        }
        if (w->in_double) acc = (float)acc64;
        float v = alpha * acc + (w->bias ? w->bias[i] : 0.0f);
        if (beta != 0.0f) v += beta * C[i + j * w->ldc];
        if (w->finite_only && !isfinite(v)) v = 0;
        D[i + j * w->ldd] = v;
      }
  }
}

static cudaError_t enqueue_gemm(cudaStream_t s, const gemm_work *w)
{
  const void *touches[] = { w->A, w->B, w->C, w->D };
  return fake_launch(s, gemm_run, w, sizeof *w, touches, w->beta != 0.0f || w->beta_dev ? 4 : 3);
}

/* ---- our kernel --------------------------------------------------------- */

enum { RUN_OK, RUN_REFUSE, RUN_FAIL_FIRST, RUN_FAIL_SECOND, RUN_WRONG, RUN_IN_DOUBLE,
       RUN_FINITE_ONLY, RUN_FAIL_WITH_PDL, RUN_FAIL_ALWAYS };
static int kernel_mode;
static int ours_launched;
static int launches_tried, last_no_pdl;

static void nothing(void *arg) { (void)arg; }

/* A launcher written like the real ones (kernels/gs_launch.h around each
 * launch, whose own return is ignored, as <<<>>> gives none). */
static void *last_scratch;   /* what the last launch was given */

static gs_kstatus test_launch(const gs_variant *v, const gs_kernel_args *a)
{
  (void)v;
  last_scratch = a->scratch;
  launches_tried++;
  last_no_pdl = a->no_pdl;
  if (kernel_mode == RUN_REFUSE) return GS_K_UNSUPPORTED;
  gemm_work w = { a->m, a->n, a->k, a->lda, a->ldb, a->ldc, a->ldd, a->trans_a, a->trans_b,
                  a->A, a->B, a->C, a->bias, a->D, a->alpha, a->beta, a->alpha_dev, a->beta_dev,
                  kernel_mode == RUN_WRONG, kernel_mode == RUN_IN_DOUBLE,
                  kernel_mode == RUN_FINITE_ONLY, a->batch, a->stride_a, a->stride_b,
                  a->stride_c, a->stride_d };
  /* launched with programmatic dependent launch, as the decode kernels
   * are where they may (gs_launch_result_pdl then judges the launch) */
  const int pdl_attr = fake_launches_pdl && !a->no_pdl;
  gs_launch_begin();
  if (kernel_mode == RUN_FAIL_FIRST)
    fake_cuda_fail_next("launch", cudaErrorLaunchOutOfResources);
  else if (kernel_mode == RUN_FAIL_ALWAYS || (kernel_mode == RUN_FAIL_WITH_PDL && pdl_attr))
    fake_cuda_fail_next("launch", cudaErrorNotSupported);
  (void)enqueue_gemm(a->stream, &w);
  gs_kstatus st = pdl_attr ? gs_launch_result_pdl(cudaPeekAtLastError()) : gs_launch_end(0);
  if (st != GS_K_OK) return st;
  if (a->scratch) {   /* work that uses the scratch: dead if it was freed before it ran */
    const void *uses[] = { a->scratch };
    gs_launch_begin();
    (void)fake_launch(a->stream, nothing, NULL, 0, uses, 1);
    st = gs_launch_end(1);
    if (st != GS_K_OK) return st;
  }
  ours_launched++;
  if (kernel_mode != RUN_FAIL_SECOND) return st;
  /* a second kernel (a split-K reduction, say) that fails */
  gs_launch_begin();
  fake_cuda_fail_next("launch", cudaErrorLaunchOutOfResources);
  (void)fake_launch(a->stream, nothing, NULL, 0, NULL, 0);
  return gs_launch_end(1);
}

/* ---- cuBLAS --------------------------------------------------------------- */

static atomic_int cublas_calls;   /* threads call cuBLAS too */

static int fake_cublas(const gs_gemm *g, const void *c, void *d)
{
  cublas_calls++;
  gemm_work w = { g->m, g->n, g->k, g->lda, g->ldb, g->ldc, g->is_lt ? g->ldd : g->ldc,
                  g->trans_a == CUBLAS_OP_T, g->trans_b == CUBLAS_OP_T, g->A, g->B, c, NULL,
                  g->is_lt ? d : (float *)c, 0, 0, NULL, NULL, 0, 0, 0, g->batch,
                  g->stride_a, g->stride_b, g->stride_c, g->is_lt ? g->stride_d : g->stride_c };
  if (g->pointer_mode == 1) {
    w.alpha_dev = g->alpha;
    w.beta_dev = g->beta;
  } else {
    w.alpha = *(const float *)g->alpha;
    w.beta = *(const float *)g->beta;
  }
  return enqueue_gemm((cudaStream_t)g->stream, &w) == cudaSuccess ? CUBLAS_STATUS_SUCCESS
                                                                   : CUBLAS_STATUS_EXECUTION_FAILED;
}

/* ---- calls ----------------------------------------------------------------- */

#define M 128
#define N 128
#define K 32

static cudaStream_t stream;
static int pointer_mode;

static int load_state(gs_gemm *g)
{
  g->stream = stream;
  g->pointer_mode = pointer_mode;
  g->math_mode = CUBLAS_DEFAULT_MATH;
  g->sm_count_target = 0;
  return 0;
}

typedef struct problem {
  float *A, *B, *C;      /* "device" memory of the current context */
  float h_C0[M * N];     /* what C starts as */
  float alpha, beta;
} problem;

static float *dev_alloc(size_t n)
{
  void *p;
  assert_int_equal(cudaMalloc(&p, n * sizeof(float)), cudaSuccess);
  return p;
}

static void make_problem(problem *p, float alpha, float beta)
{
  p->A = dev_alloc(M * K);
  p->B = dev_alloc(K * N);
  p->C = dev_alloc(M * N);
  uint64_t s = 7;
  for (int i = 0; i < M * K; i++) p->A[i] = (float)((s = s * 6364136223846793005ull + 1) >> 40) / (1 << 24) - 0.5f;
  for (int i = 0; i < K * N; i++) p->B[i] = (float)((s = s * 6364136223846793005ull + 1) >> 40) / (1 << 24) - 0.5f;
  for (int i = 0; i < M * N; i++) p->h_C0[i] = (float)((s = s * 6364136223846793005ull + 1) >> 40) / (1 << 24);
  memcpy(p->C, p->h_C0, sizeof p->h_C0);
  p->alpha = alpha;
  p->beta = beta;
}

/* cublasSgemm_v2, NN, M x N x K, as interpose describes it (D is C). */
static gs_gemm sgemm_call(float *A, float *B, float *C, float *alpha, float *beta)
{
  gs_gemm g;
  memset(&g, 0, sizeof g);
  g.entry_name = "cublasSgemm_v2";
  g.a_type = g.b_type = g.c_type = g.d_type = CUDA_R_32F;
  g.compute_type = GS_NONE;
  g.scale_type = GS_NONE;
  g.trans_a = g.trans_b = CUBLAS_OP_N;
  g.algo = GS_NONE;
  g.m = M; g.n = N; g.k = K;
  g.lda = M; g.ldb = K; g.ldc = g.ldd = M;
  g.batch = 1;
  g.A = A; g.B = B; g.C = C; g.D = C;
  g.alpha = alpha; g.beta = beta;
  g.pointer_mode = g.math_mode = g.epilogue = g.bias_type = GS_NONE;
  g.load_state = load_state;
  g.reissue = fake_cublas;
  return g;
}

static gs_gemm blas_call(problem *p)
{
  return sgemm_call(p->A, p->B, p->C, &p->alpha, &p->beta);
}

/* What interpose's wrapper does with a call. */
static int call(gs_gemm g, gs_decision *d)
{
  int status;
  if (gs_dispatch(&g, d, &status)) return status;
  status = fake_cublas(&g, g.C, g.D);
  gs_dispatch_forwarded(&g, d);
  return status;
}

/* C after k applications of C = alpha*A*B + beta*C from C0, as the fake
 * computes it (same order, same rounding). */
static void expected(const problem *p, int times, float *out)
{
  memcpy(out, p->h_C0, sizeof p->h_C0);
  for (int t = 0; t < times; t++) {
    gemm_work w = { M, N, K, M, K, M, M, 0, 0, p->A, p->B, out, NULL, out, p->alpha, p->beta,
                    NULL, NULL, 0, 0, 0, 1, 0, 0, 0, 0 };
    gemm_run(&w);
  }
}

static int c_is(const problem *p, int times)
{
  static float want[M * N];
  expected(p, times, want);
  return !memcmp(p->C, want, sizeof want);
}

/* Run C = alpha*A*B + beta*C through the shim until our kernel serves it
 * (its first call starts the self-check); the GPU runs between calls. */
static void until_served(problem *p)
{
  gs_decision d;
  for (int i = 0; i < 4; i++) {
    memcpy(p->C, p->h_C0, sizeof p->h_C0);
    assert_int_equal(call(blas_call(p), &d), CUBLAS_STATUS_SUCCESS);
    fake_cuda_run();
    if (d.reason == GS_R_ROUTED || d.reason == GS_R_AB_COMPARED) return;
  }
  fail_msg("the kernel never served (last reason %s)", gs_reason_name(d.reason));
}

/* Our kernels load into a context on a thread of the shim's: wait for
 * that, as a program's first calls would (they forward meanwhile). */
static void wait_loaded(void)
{
  gs_ctx *c = gs_ctx_of(fake_ctx_id(), 0, fake_ctx_handle());
  for (int i = 0; i < 5000 && !gs_kernels_ready(c); i++) usleep(1000);
  assert_true(gs_kernels_ready(c));
}

static int setup(void **s)
{
  (void)s;
  fake_cuda_reset();
  fake_ctx_make_current();
  gs_ctx_forget_all();
  fake_variant_preload = NULL;
  fake_scratch_bytes = 0;
  last_scratch = NULL;
  gs_tally_reset();
  stream = fake_stream_new();
  pointer_mode = 0;
  kernel_mode = RUN_OK;
  ours_launched = cublas_calls = 0;
  launches_tried = last_no_pdl = 0;
  fake_launches_pdl = 0;
  gs_pdl_forget_refusal();
  fake_variant_launch = test_launch;
  setenv("GEMMSHIM_FORCE", "f32_test", 1);
  unsetenv("GEMMSHIM_AB");
  unsetenv("GEMMSHIM_AB_MODE");
  gs_config_reload();
  wait_loaded();
  return 0;
}

/* Setup without waiting for the kernels to load. */
static int setup_cold(void **s)
{
  (void)s;
  fake_cuda_reset();
  fake_ctx_make_current();
  gs_ctx_forget_all();
  gs_tally_reset();
  stream = fake_stream_new();
  pointer_mode = 0;
  kernel_mode = RUN_OK;
  ours_launched = cublas_calls = 0;
  fake_variant_launch = test_launch;
  setenv("GEMMSHIM_FORCE", "f32_test", 1);
  gs_config_reload();
  return 0;
}

/* ---- loading our kernels ------------------------------------------------------ */

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_open, loads;

/* A load that waits (for the device, really) until the test lets it go. */
static int held_load(void)
{
  pthread_mutex_lock(&gate_lock);
  loads++;
  while (!gate_open) pthread_cond_wait(&gate_cond, &gate_lock);
  pthread_mutex_unlock(&gate_lock);
  return 0;
}

static void open_gate(void)
{
  pthread_mutex_lock(&gate_lock);
  gate_open = 1;
  pthread_cond_broadcast(&gate_cond);
  pthread_mutex_unlock(&gate_lock);
}

static void test_kernels_load_on_a_thread_of_their_own(void **s)
{
  (void)s;
  gate_open = 0;
  loads = 0;
  fake_variant_preload = held_load;
  problem p;
  make_problem(&p, 1.0f, 0.5f);
  gs_decision d;
  int waits = fake_stats.host_waits;
  for (int i = 0; i < 3; i++) {   /* the load is held: every call forwards, none waits */
    memcpy(p.C, p.h_C0, sizeof p.h_C0);
    assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(d.reason, GS_R_LOADING);
    fake_cuda_run();
    assert_true(c_is(&p, 1));
  }
  assert_int_equal(fake_stats.host_waits, waits);
  assert_int_equal(ours_launched, 0);
  open_gate();
  wait_loaded();
  assert_int_equal(loads, 1);   /* one loader for the context */
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_SELFCHECK);
  fake_variant_preload = NULL;
}

static int failing_load(void) { return -1; }

static void test_kernels_that_fail_to_load_are_disabled(void **s)
{
  (void)s;
  fake_variant_preload = failing_load;
  problem p;
  make_problem(&p, 1.0f, 0.5f);
  gs_decision d;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_LOADING);
  gs_ctx *c = gs_ctx_of(fake_ctx_id(), 0, fake_ctx_handle());
  /* the loader's verdict, settled (an acquire of its release) */
  for (int i = 0; i < 5000 && atomic_load_explicit(&c->kernels, memory_order_acquire) < 2; i++)
    usleep(1000);
  assert_int_equal(atomic_load_explicit(&c->kernels, memory_order_acquire), 3);
  assert_false(gs_variant_usable(&f32_variant, c));
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_DISABLED);
  fake_variant_preload = NULL;
}

/* ---- item 1: judge a launch by its own result ------------------------------ */

static void test_stale_error_does_not_make_a_served_call_run_twice(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.25f, 0.5f);
  until_served(&p);
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  /* an error some earlier call left unread in the runtime */
  fake_cuda_leave_error(cudaErrorInvalidValue);
  gs_decision d;
  int before = cublas_calls;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  fake_cuda_run();
  assert_int_equal(d.reason, GS_R_ROUTED);
  assert_ptr_equal(d.variant, &f32_variant);
  assert_int_equal(cublas_calls, before);   /* cuBLAS did not run into C */
  assert_true(c_is(&p, 1));                 /* alpha*A*B + beta*C once */
  assert_true(gs_variant_usable(&f32_variant, d.ctx));
  assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
}

static void test_first_launch_failing_forwards_and_disables(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.0f, 1.0f);
  until_served(&p);
  kernel_mode = RUN_FAIL_FIRST;
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  gs_decision d;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  fake_cuda_run();
  assert_int_equal(d.reason, GS_R_LAUNCH_FAILED);
  assert_null(d.variant);
  assert_true(c_is(&p, 1));                 /* cuBLAS's result, once */
  assert_false(gs_variant_usable(&f32_variant, d.ctx));
  kernel_mode = RUN_OK;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_DISABLED);
}

/* stderr while f runs, into text (f asserts nothing: a failed assertion
 * would leave stderr redirected). */
static void stderr_of(void (*f)(void *), void *arg, char *text, size_t size)
{
  char path[] = "/tmp/gs-said-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  f(arg);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  ssize_t got = pread(fd, text, size - 1, 0);
  text[got > 0 ? got : 0] = 0;
  close(fd);
  unlink(path);
}

/* Two calls through the shim, what became of each written down. */
typedef struct two_calls {
  problem *p;
  gs_reason reason[2];
  int cublas_ran[2], c_right[2], usable[2];
} two_calls;

static void make_two_calls(void *arg)
{
  two_calls *t = arg;
  for (int i = 0; i < 2; i++) {
    memcpy(t->p->C, t->p->h_C0, sizeof t->p->h_C0);
    gs_decision d;
    int before = cublas_calls;
    (void)call(blas_call(t->p), &d);
    fake_cuda_run();
    t->reason[i] = d.reason;
    t->cublas_ran[i] = cublas_calls != before;
    t->c_right[i] = c_is(t->p, 1);
    t->usable[i] = gs_variant_usable(&f32_variant, d.ctx);
  }
}

static const char pdl_refused_said[] =
  "gemmshim: kernel f32_test could not launch a 128x128x32 call with programmatic dependent "
  "launch but could without it; kernels launch without it from now on, and route-table rows "
  "measured with it are passed over\n";

/* A kernel whose launch with programmatic dependent launch the runtime
 * refuses with an error that attribute can cause, where the same launch
 * without it works: the call is served plainly, PDL is off for the
 * process from then on (said once), the kernel keeps serving; with
 * scratch from the pool too (one allocation, given back once). */
static void refused_pdl_served_plainly(size_t scratch)
{
  problem p;
  make_problem(&p, 1.25f, 0.5f);
  until_served(&p);
  fake_scratch_bytes = scratch;
  fake_launches_pdl = 1;
  kernel_mode = RUN_FAIL_WITH_PDL;
  launches_tried = ours_launched = 0;
  two_calls t = { .p = &p };
  char text[1024];
  stderr_of(make_two_calls, &t, text, sizeof text);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(t.reason[i], GS_R_ROUTED);
    assert_false(t.cublas_ran[i]);
    assert_true(t.c_right[i]);                /* our kernel's result, once */
    assert_true(t.usable[i]);
  }
  /* the first call: with PDL (refused), then plainly; the second plainly */
  assert_int_equal(launches_tried, 3);
  assert_int_equal(ours_launched, 2);
  assert_int_equal(last_no_pdl, 1);
  assert_false(gs_pdl_usable());
  assert_string_equal(text, pdl_refused_said);
  assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
  if (scratch) {
    assert_non_null(last_scratch);
    assert_int_equal(fake_stats.pool_bytes_live, 0);
    assert_int_equal(fake_stats.bad_pointers + fake_stats.dead_uses, 0);
  }
}

static void test_a_refused_pdl_launch_is_served_plainly(void **s)
{
  (void)s;
  refused_pdl_served_plainly(0);
}

static void test_a_refused_pdl_launch_with_scratch_is_served_plainly(void **s)
{
  (void)s;
  refused_pdl_served_plainly(1 << 20);
}

/* A launch with PDL that fails in kernel_mode `mode`: the kernel is
 * disabled on that context as any failed launch, after `tries` launches,
 * the call goes to cuBLAS, and PDL stays on. */
static void failed_pdl_launch_disables(int mode, int tries)
{
  problem p;
  make_problem(&p, 1.0f, 1.0f);
  until_served(&p);
  fake_launches_pdl = 1;
  kernel_mode = mode;
  launches_tried = 0;
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  gs_decision d;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  fake_cuda_run();
  assert_int_equal(d.reason, GS_R_LAUNCH_FAILED);
  assert_int_equal(launches_tried, tries);
  assert_true(c_is(&p, 1));                 /* cuBLAS's result, once */
  assert_false(gs_variant_usable(&f32_variant, d.ctx));
  assert_true(gs_pdl_usable());
}

/* Where the plain launch fails as well, the failure is the kernel's. */
static void test_a_launch_failing_with_and_without_pdl_disables_the_kernel(void **s)
{
  (void)s;
  failed_pdl_launch_disables(RUN_FAIL_ALWAYS, 2);
}

/* A launch with PDL that fails with an error the attribute cannot cause
 * is no PDL refusal: no plain retry. */
static void test_another_error_of_a_pdl_launch_is_not_retried(void **s)
{
  (void)s;
  failed_pdl_launch_disables(RUN_FAIL_FIRST, 1);
}

static void test_later_kernel_failing_returns_execution_failed_without_cublas(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.0f, 1.0f);
  until_served(&p);
  kernel_mode = RUN_FAIL_SECOND;
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  gs_decision d;
  int before = cublas_calls;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_EXECUTION_FAILED);
  fake_cuda_run();
  assert_int_equal(d.reason, GS_R_KERNEL_FAILED);
  assert_int_equal(cublas_calls, before);   /* never cuBLAS into that C */
  assert_true(c_is(&p, 1));                 /* only our first kernel wrote it */
  assert_false(gs_variant_usable(&f32_variant, d.ctx));
  assert_int_equal(gs_tally_count("f32_test", GS_R_KERNEL_FAILED), 1);
}

/* ---- item 3: the self-check never waits ------------------------------------- */

static void test_first_call_checks_without_waiting(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.0f, 0.5f);
  int waits = fake_stats.host_waits;
  gs_decision d;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_SELFCHECK);
  assert_null(d.variant);
  assert_int_equal(fake_stats.host_waits, waits);   /* nothing waited */
  assert_true(fake_cuda_queued() > 0);              /* and nothing has run yet */
  assert_int_equal(cublas_calls, 1);
  assert_int_equal(ours_launched, 1);
  /* before the GPU gets to it, the next call of the class forwards */
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_CHECKING);
  assert_int_equal(fake_stats.host_waits, waits);
  fake_cuda_run();
  /* both calls were cuBLAS's, in order: the second one started from the
   * first one's result */
  assert_true(c_is(&p, 2));
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_ROUTED);
  fake_cuda_run();
  assert_true(c_is(&p, 1));
  assert_int_equal(fake_stats.host_waits, waits);
  assert_int_equal(fake_stats.pool_bytes_live, 0);  /* the check's scratch went back */
  assert_int_equal(fake_stats.dead_uses + fake_stats.bad_pointers, 0);
}

static void test_failed_check_disables_the_kernel_on_that_context(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.0f, 0.0f);
  kernel_mode = RUN_WRONG;
  gs_decision d;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_SELFCHECK);
  fake_cuda_run();
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_SELFCHECK_FAILED);
  fake_cuda_run();
  assert_true(c_is(&p, 1));                 /* the caller always had cuBLAS's */
  assert_false(gs_variant_usable(&f32_variant, d.ctx));
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_DISABLED);
}

/* Row 0 of A times every column of B overflows FP32 in two products of
 * opposite signs: SGEMM's sum is NaN there, FP64's is finite. */
static void make_overflow(problem *p)
{
  p->A[0] = 1e30f;
  p->A[M] = -1e30f;   /* (0, 1): column-major, lda = M */
  for (int j = 0; j < N; j++) p->B[0 + j * K] = p->B[1 + j * K] = 1e10f;
}

/* A kernel holding FP64's Inf/NaN (f32_variant says nonfinite_as_fp64) on
 * a call where cuBLAS's own sums overflow (the operands finite): the check
 * cannot judge, so the call that reads it starts the next one (cuBLAS
 * serves both); after GS_CHECK_INCONCLUSIVE_MAX inconclusive checks that
 * class stays cuBLAS's, and the kernel stays usable. */
static void test_overflow_in_cublas_leaves_the_check_inconclusive(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.0f, 0.0f);
  make_overflow(&p);
  kernel_mode = RUN_IN_DOUBLE;
  gs_decision d;
  for (int check = 0; check < GS_CHECK_INCONCLUSIVE_MAX; check++) {
    assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(d.reason, GS_R_SELFCHECK);     /* the first, or read and started again */
    fake_cuda_run();
    assert_true(isnan(p.C[0]));                     /* cuBLAS's result, as SGEMM has it */
  }
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_SELFCHECK_FAILED);
  fake_cuda_run();
  assert_true(gs_variant_usable(&f32_variant, d.ctx));   /* the class, not the kernel */
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_DISABLED);
  fake_cuda_run();
  assert_int_equal(ours_launched, GS_CHECK_INCONCLUSIVE_MAX);
  assert_int_equal(fake_stats.pool_bytes_live, 0);
}

static void test_an_inconclusive_check_then_a_clean_one_serves(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.0f, 0.0f);
  float a0 = p.A[0], a1 = p.A[M];
  float b0[N], b1[N];
  for (int j = 0; j < N; j++) b0[j] = p.B[j * K], b1[j] = p.B[1 + j * K];
  make_overflow(&p);
  kernel_mode = RUN_IN_DOUBLE;
  gs_decision d;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_SELFCHECK);
  fake_cuda_run();
  /* the program's data without the overflow: this call reads the verdict
   * and is checked itself; it passes, the next call is served */
  p.A[0] = a0, p.A[M] = a1;
  for (int j = 0; j < N; j++) p.B[j * K] = b0[j], p.B[1 + j * K] = b1[j];
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_SELFCHECK);
  fake_cuda_run();
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_ROUTED);
  assert_int_equal(ours_launched, 3);   /* two checks, then serving */
  fake_cuda_run();
  /* ours, summed in double: SGEMM's result to rounding */
  static float want[M * N];
  expected(&p, 1, want);
  for (int i = 0; i < M * N; i++) assert_true(fabsf(p.C[i] - want[i]) <= 1e-5f);
}

/* An Inf in the operands: there a kernel holding FP64's kinds must match
 * cuBLAS's, so a finite output where cuBLAS has Inf or NaN is a failure,
 * not an overflow the check cannot judge. */
static void test_a_mismatch_on_infinite_operands_fails_the_check(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.0f, 0.0f);
  p.A[0] = INFINITY;
  kernel_mode = RUN_FINITE_ONLY;
  gs_decision d;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_SELFCHECK);
  fake_cuda_run();
  assert_false(isfinite(p.C[0]));
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_SELFCHECK_FAILED);
  assert_false(gs_variant_usable(&f32_variant, d.ctx));
  fake_cuda_run();
}

static void test_each_layout_is_checked_before_it_serves(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.0f, 0.0f);
  until_served(&p);
  gs_gemm g = blas_call(&p);
  g.trans_a = CUBLAS_OP_T;
  g.lda = K;
  gs_decision d;
  assert_int_equal(call(g, &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_SELFCHECK);
}

static void test_capture_before_the_check_forwards_and_touches_nothing(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.0f, 0.5f);
  fake_stream_set_capturing(stream, 1);
  gs_decision d;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_UNCHECKED);
  assert_int_equal(fake_stats.capture_violations, 0);
  assert_int_equal(ours_launched, 0);
  /* checked outside the capture, the kernel then serves captured calls */
  fake_stream_set_capturing(stream, 0);
  until_served(&p);
  fake_stream_set_capturing(stream, 1);
  int captured = fake_stats.captured_launches;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_ROUTED);
  assert_int_equal(fake_stats.captured_launches, captured + 1);
  assert_int_equal(fake_stats.capture_violations, 0);
}

/* The legacy stream cannot be queried while another thread captures in
 * global mode (cudaErrorStreamCaptureImplicit): the call forwards and the
 * error is not left for a later launch to trip on. */
static void test_capture_query_failure_is_read_not_left_pending(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.0f, 0.5f);
  stream = NULL;   /* the legacy stream */
  fake_cuda_set_capture_elsewhere(1);
  gs_decision d;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_UNCHECKED);
  assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
  fake_cuda_set_capture_elsewhere(0);
  until_served(&p);
}

/* ---- item 2: a context made again ------------------------------------------ */

static void test_device_reset_gets_a_fresh_check_and_no_dead_memory(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.0f, 0.5f);
  until_served(&p);
  uint64_t old_id = fake_ctx_id();
  fake_cuda_reset_device();   /* the application's cudaDeviceReset */
  assert_true(fake_ctx_id() != old_id);
  problem q;
  make_problem(&q, 1.0f, 0.5f);
  stream = fake_stream_new();
  wait_loaded();   /* the new context loads our kernels anew */
  gs_decision d;
  assert_int_equal(call(blas_call(&q), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_SELFCHECK);   /* checked again, on the new context */
  assert_true(d.ctx && d.ctx->id == fake_ctx_id());
  fake_cuda_run();
  until_served(&q);
  assert_true(c_is(&q, 1));
  assert_int_equal(fake_stats.dead_uses, 0);
  assert_int_equal(fake_stats.bad_pointers, 0);
}

/* ---- item 5: exactly the m x n block -------------------------------------- */

static void test_copy_of_c_reads_only_its_m_by_n_block(void **s)
{
  (void)s;
  /* C: rows 64..191 of a 192-row parent whose last column ends the
   * allocation; copying ldc x n from C would read 64 elements past it */
  problem p;
  make_problem(&p, 1.0f, 0.5f);
  const int parent_rows = 192, r0 = 64;
  float *parent = dev_alloc((size_t)parent_rows * N);
  for (int j = 0; j < N; j++)
    for (int i = 0; i < M; i++) parent[r0 + i + j * parent_rows] = p.h_C0[i + j * M];
  gs_gemm g = blas_call(&p);
  g.C = g.D = parent + r0;
  g.ldc = g.ldd = parent_rows;
  gs_decision d;
  assert_int_equal(call(g, &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_SELFCHECK);
  fake_cuda_run();
  assert_int_equal(fake_stats.bad_pointers, 0);
  assert_int_equal(call(g, &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_ROUTED);   /* the check passed */
}

/* ---- a strided batch --------------------------------------------------------- */

/* batch_test (takes batches) forced; BATCH items of M x N x K, each
 * matrix right after the one before; C's ld above the compact scratch ld
 * (M), so a redirect that kept the caller's stride would write past the
 * scratch or compare the wrong columns. */
#define BATCH 3
#define BLDC (M + 16)
typedef struct batch_problem {
  float *A, *B, *C;
  float h_C0[BLDC * N * BATCH], want[BLDC * N * BATCH];
  float alpha, beta;
} batch_problem;

static void make_batch(batch_problem *p, float alpha, float beta)
{
  p->A = dev_alloc((size_t)M * K * BATCH);
  p->B = dev_alloc((size_t)K * N * BATCH);
  p->C = dev_alloc(((size_t)BLDC * N + 16) * BATCH);   /* room for a call with gaps */
  uint64_t s = 11;
  for (int i = 0; i < M * K * BATCH; i++) p->A[i] = (float)((s = s * 6364136223846793005ull + 1) >> 40) / (1 << 24) - 0.5f;
  for (int i = 0; i < K * N * BATCH; i++) p->B[i] = (float)((s = s * 6364136223846793005ull + 1) >> 40) / (1 << 24) - 0.5f;
  for (int i = 0; i < BLDC * N * BATCH; i++) p->h_C0[i] = (float)((s = s * 6364136223846793005ull + 1) >> 40) / (1 << 24);
  memcpy(p->C, p->h_C0, sizeof p->h_C0);
  p->alpha = alpha;
  p->beta = beta;
  /* every item once, as the fake computes it */
  memcpy(p->want, p->h_C0, sizeof p->h_C0);
  gemm_work w = { M, N, K, M, K, BLDC, BLDC, 0, 0, p->A, p->B, p->want, NULL, p->want, alpha,
                  beta, NULL, NULL, 0, 0, 0, BATCH, (int64_t)M * K, (int64_t)K * N,
                  (int64_t)BLDC * N, (int64_t)BLDC * N };
  gemm_run(&w);
}

/* cublasGemmStridedBatchedEx as interpose describes it (FP32, compute
 * 32F_FAST_16BF: batch_test's class); stride_c: C's item stride. */
static gs_gemm batch_call(batch_problem *p, int64_t stride_c)
{
  gs_gemm g = sgemm_call(p->A, p->B, p->C, &p->alpha, &p->beta);
  g.entry_name = "cublasGemmStridedBatchedEx";
  g.is_batched_api = 1;
  g.compute_type = CUBLAS_COMPUTE_32F_FAST_16BF;
  g.ldc = g.ldd = BLDC;
  g.batch = BATCH;
  g.stride_a = (int64_t)M * K; g.stride_b = (int64_t)K * N;
  g.stride_c = g.stride_d = stride_c;
  return g;
}

static int batch_is_right(const batch_problem *p)
{
  return !memcmp(p->C, p->want, sizeof p->want);
}

/* Checked first (every item compared, cuBLAS serving), then served; a
 * kernel wrong on the last item alone fails the check; in A/B mode, use
 * and shadow, every item is right and no scratch is overrun. */
static void test_a_packed_batch_is_checked_and_compared_whole(void **s)
{
  (void)s;
  setenv("GEMMSHIM_FORCE", "batch_test", 1);
  gs_config_reload();
  batch_problem *p = malloc(sizeof *p);
  make_batch(p, 1.0f, 0.5f);
  gs_decision d;
  assert_int_equal(call(batch_call(p, (int64_t)BLDC * N), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_SELFCHECK);
  fake_cuda_run();
  assert_true(batch_is_right(p));   /* cuBLAS's, every item */
  memcpy(p->C, p->h_C0, sizeof p->h_C0);
  assert_int_equal(call(batch_call(p, (int64_t)BLDC * N), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_ROUTED);
  assert_ptr_equal(d.variant, &batch_variant);
  fake_cuda_run();
  assert_true(batch_is_right(p));
  /* A/B, both modes */
  const char *modes[] = { "use", "shadow" };
  const gs_reason want[] = { GS_R_AB_COMPARED, GS_R_AB_SHADOW };
  for (int i = 0; i < 2; i++) {
    setenv("GEMMSHIM_AB", "1", 1);
    setenv("GEMMSHIM_AB_MODE", modes[i], 1);
    gs_config_reload();
    memcpy(p->C, p->h_C0, sizeof p->h_C0);
    assert_int_equal(call(batch_call(p, (int64_t)BLDC * N), &d), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(d.reason, want[i]);
    fake_cuda_run();
    assert_true(batch_is_right(p));
  }
  unsetenv("GEMMSHIM_AB");
  unsetenv("GEMMSHIM_AB_MODE");
  gs_config_reload();
  /* outputs with a gap between items: cuBLAS's, nothing of ours ran */
  const int before = ours_launched;
  assert_int_equal(call(batch_call(p, (int64_t)BLDC * N + 16), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_BATCHED);
  assert_int_equal(ours_launched, before);
  fake_cuda_run();
  assert_int_equal(fake_stats.pool_bytes_live, 0);
  assert_int_equal(fake_stats.bad_pointers + fake_stats.dead_uses, 0);
  free(p);
}

/* A kernel whose last item alone is wrong: the check compares every item. */
static int wrong_item_launches;
static gs_kstatus last_item_wrong(const gs_variant *v, const gs_kernel_args *a)
{
  (void)v;
  wrong_item_launches++;
  gemm_work w = { a->m, a->n, a->k, a->lda, a->ldb, a->ldc, a->ldd, a->trans_a, a->trans_b,
                  a->A, a->B, a->C, NULL, a->D, a->alpha, a->beta, a->alpha_dev, a->beta_dev,
                  0, 0, 0, a->batch - 1, a->stride_a, a->stride_b, a->stride_c, a->stride_d };
  gemm_work last = w;   /* the last item, short of a k-slice */
  last.batch = 1;
  last.drop_k = 8;
  last.A = a->A ? (const float *)a->A + (a->batch - 1) * a->stride_a : NULL;
  last.B = (const float *)a->B + (a->batch - 1) * a->stride_b;
  last.C = (const float *)a->C + (a->batch - 1) * a->stride_c;
  last.D = (float *)a->D + (a->batch - 1) * a->stride_d;
  gs_launch_begin();
  (void)enqueue_gemm(a->stream, &w);
  (void)enqueue_gemm(a->stream, &last);
  return gs_launch_end(0);
}

static void test_a_batch_wrong_on_its_last_item_fails_the_check(void **s)
{
  (void)s;
  setenv("GEMMSHIM_FORCE", "batch_test", 1);
  gs_config_reload();
  fake_variant_launch = last_item_wrong;
  batch_problem *p = malloc(sizeof *p);
  make_batch(p, 1.0f, 0.5f);
  gs_decision d;
  assert_int_equal(call(batch_call(p, (int64_t)BLDC * N), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_SELFCHECK);
  fake_cuda_run();
  memcpy(p->C, p->h_C0, sizeof p->h_C0);
  assert_int_equal(call(batch_call(p, (int64_t)BLDC * N), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_SELFCHECK_FAILED);
  fake_cuda_run();
  assert_true(batch_is_right(p));   /* the caller had cuBLAS's */
  assert_int_equal(wrong_item_launches, 1);
  assert_false(gs_variant_usable(&batch_variant, d.ctx));
  free(p);
}

/* ---- item 6: a refusal is about one call -------------------------------------- */

static void test_refusal_in_ab_mode_affects_that_call_only(void **s)
{
  (void)s;
  setenv("GEMMSHIM_AB", "1", 1);
  gs_config_reload();
  problem p;
  make_problem(&p, 1.0f, 0.5f);
  until_served(&p);          /* A/B use mode: ours serves, compared */
  kernel_mode = RUN_REFUSE;
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  gs_decision d;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  fake_cuda_run();
  assert_int_equal(d.reason, GS_R_SIZE_CLASS);
  assert_true(c_is(&p, 1));
  assert_true(gs_variant_usable(&f32_variant, d.ctx));
  kernel_mode = RUN_OK;
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  fake_cuda_run();
  assert_int_equal(d.reason, GS_R_AB_COMPARED);
  assert_true(c_is(&p, 1));
}

/* A/B mode holds the stream before each compared pair (kernels/hold.h),
 * so both paths are queued before the GPU reaches them: one hold a pair,
 * the first 200 us, later ones sized from the host's queueing time (on
 * this fake, microseconds: the least hold); a hold that cannot launch
 * leaves the pair compared and the call served. */
static void test_ab_holds_the_stream_before_each_pair(void **s)
{
  (void)s;
  setenv("GEMMSHIM_AB", "1", 1);
  gs_config_reload();
  problem p;
  make_problem(&p, 1.0f, 0.5f);
  const int before = fake_holds;
  until_served(&p);            /* the self-check (no hold), then a pair */
  assert_int_equal(fake_holds, before + 1);
  assert_true(fake_hold_last_us == GS_AB_HOLD_FIRST_US);
  gs_decision d;
  for (int i = 0; i < 3; i++) {
    memcpy(p.C, p.h_C0, sizeof p.h_C0);
    assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
    fake_cuda_run();
    assert_int_equal(d.reason, GS_R_AB_COMPARED);
    assert_true(c_is(&p, 1));
  }
  assert_int_equal(fake_holds, before + 4);
  /* later holds come from the host's last queueing time (4q + 50 us, at
   * most 5 ms), not the first pair's fixed length; q is this machine's, so
   * only the rule's range is known here (a loaded host queues slowly) */
  assert_true(fake_hold_last_us >= 50.0 && fake_hold_last_us <= 5000.0 &&
              fake_hold_last_us != GS_AB_HOLD_FIRST_US);
  fake_cuda_fail_next("launch", cudaErrorLaunchOutOfResources);   /* the hold's */
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  fake_cuda_run();
  assert_int_equal(d.reason, GS_R_AB_COMPARED);
  assert_true(c_is(&p, 1));
  assert_int_equal(fake_holds, before + 4);
  assert_true(gs_variant_usable(&f32_variant, d.ctx));
}

static void test_ab_failure_after_enqueue_into_c_never_runs_cublas_there(void **s)
{
  (void)s;
  setenv("GEMMSHIM_AB", "1", 1);
  gs_config_reload();
  problem p;
  make_problem(&p, 1.0f, 1.0f);
  until_served(&p);
  kernel_mode = RUN_FAIL_SECOND;
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  gs_decision d;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_EXECUTION_FAILED);
  fake_cuda_run();
  assert_int_equal(d.reason, GS_R_KERNEL_FAILED);
  assert_true(c_is(&p, 1));   /* ours once; cuBLAS ran only into scratch */
}

static void test_ab_shadow_gives_cublas_bits_and_scratch_goes_back(void **s)
{
  (void)s;
  setenv("GEMMSHIM_AB", "1", 1);
  setenv("GEMMSHIM_AB_MODE", "shadow", 1);
  gs_config_reload();
  problem p;
  make_problem(&p, 1.0f, 0.5f);
  gs_decision d;
  for (int i = 0; i < 3; i++) {
    memcpy(p.C, p.h_C0, sizeof p.h_C0);
    assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
    fake_cuda_run();
    assert_true(c_is(&p, 1));
  }
  assert_int_equal(d.reason, GS_R_AB_SHADOW);
  assert_int_equal(fake_stats.pool_bytes_live, 0);
  assert_int_equal(fake_stats.bad_pointers + fake_stats.dead_uses, 0);
}

/* A forked child's A/B rows go to its own %p file, not the parent's. */
static int ab_rows_in(long pid)
{
  char path[64];
  snprintf(path, sizeof path, "/tmp/gs-test-ab.%ld.csv", pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[1024];
  int rows = 0;
  while (fgets(line, sizeof line, f)) rows += strncmp(line, "time_s,", 7) != 0;
  fclose(f);
  unlink(path);
  return rows;
}

static void test_forked_child_writes_its_own_ab_log(void **s)
{
  (void)s;
  setenv("GEMMSHIM_AB", "1", 1);
  setenv("GEMMSHIM_AB_LOG", "/tmp/gs-test-ab.%p.csv", 1);
  gs_config_reload();
  problem p;
  make_problem(&p, 1.0f, 0.5f);
  until_served(&p);   /* the check, then one compared call: one row */
  fflush(NULL);
  pid_t kid = fork();
  assert_true(kid >= 0);
  if (kid == 0) {
    gs_decision d;
    memcpy(p.C, p.h_C0, sizeof p.h_C0);
    int st = call(blas_call(&p), &d);
    fake_cuda_run();
    _exit(st == CUBLAS_STATUS_SUCCESS && d.reason == GS_R_AB_COMPARED ? 0 : 1);
  }
  int status;
  assert_int_equal(waitpid(kid, &status, 0), kid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(ab_rows_in((long)getpid()), 1);
  assert_int_equal(ab_rows_in((long)kid), 1);
  unsetenv("GEMMSHIM_AB_LOG");
}

/* ---- item 7: scratch from a private pool ------------------------------------ */

static void test_scratch_comes_from_the_pool_not_cudamalloc(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.0f, 0.5f);
  int mallocs = fake_stats.mallocs, frees = fake_stats.frees, waits = fake_stats.host_waits;
  until_served(&p);
  assert_int_equal(fake_stats.mallocs, mallocs);
  assert_int_equal(fake_stats.frees, frees);
  assert_true(fake_stats.pool_allocs >= 1);
  assert_int_equal(fake_stats.pool_allocs, fake_stats.pool_frees);
  assert_int_equal(fake_stats.host_waits, waits);
}

static void test_pool_refusal_is_remembered(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.0f, 0.5f);
  fake_cuda_fail_next("cudaMallocFromPoolAsync", cudaErrorMemoryAllocation);
  gs_decision d;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_UNCHECKED);
  assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
  fake_cuda_run();
  assert_true(c_is(&p, 1));
  int tries = fake_stats.pool_allocs;
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_UNCHECKED);
  assert_int_equal(fake_stats.pool_allocs, tries);   /* the same size is not asked again */
  fake_cuda_run();
  assert_true(c_is(&p, 1));
}

/* A kernel that needs scratch (gs_variant.scratch_bytes) gets it from the
 * same pool, on the call's stream, and gives it back there; none for a
 * kernel that asks for none. */
static void test_kernel_scratch_comes_from_the_pool(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.0f, 0.5f);
  until_served(&p);
  assert_null(last_scratch);
  fake_scratch_bytes = 1 << 20;
  int mallocs = fake_stats.mallocs, allocs = fake_stats.pool_allocs, waits = fake_stats.host_waits;
  int dead = fake_stats.dead_uses;
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  gs_decision d;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_ROUTED);
  assert_non_null(last_scratch);
  assert_int_equal(fake_stats.pool_allocs, allocs + 1);
  assert_int_equal(fake_stats.mallocs, mallocs);
  assert_int_equal(fake_stats.host_waits, waits);
  fake_cuda_run();   /* the free is stream-ordered: done once the stream has run */
  assert_int_equal(fake_stats.pool_allocs, fake_stats.pool_frees);
  assert_int_equal(fake_stats.dead_uses, dead);   /* freed after the kernel that used it */
  assert_true(c_is(&p, 1));
}

/* Scratch the pool refuses: the call goes to cuBLAS (reason no_scratch,
 * nothing of ours enqueued, no error left behind), the kernel is not
 * disabled, and the next call asks again (a kernel's scratch is not
 * denied for good by one refusal, as the comparisons' is). */
static void test_kernel_scratch_refused_forwards(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.0f, 0.5f);
  until_served(&p);
  fake_scratch_bytes = 1 << 20;
  int launched = ours_launched;
  fake_cuda_fail_next("cudaMallocFromPoolAsync", cudaErrorMemoryAllocation);
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  gs_decision d;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_NO_SCRATCH);
  assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
  fake_cuda_run();
  assert_true(c_is(&p, 1));
  assert_int_equal(ours_launched, launched);
  int tries = fake_stats.pool_allocs;
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_ROUTED);
  assert_int_equal(fake_stats.pool_allocs, tries + 1);
  assert_int_equal(ours_launched, launched + 1);
  fake_cuda_run();
  assert_true(c_is(&p, 1));
}

/* A kernel's scratch comes from a pool of its own, which keeps
 * GEMMSHIM_SCRATCH_KEEP_MB across synchronizations (default 0); the
 * comparisons' pool keeps nothing either way. */
static void test_kernel_scratch_pool_keeps_what_it_is_told(void **s)
{
  (void)s;
  for (int keep = 0; keep < 2; keep++) {
    fake_cuda_reset();
    fake_ctx_make_current();
    gs_ctx_forget_all();
    stream = fake_stream_new();
    if (keep) setenv("GEMMSHIM_SCRATCH_KEEP_MB", "64", 1);
    else unsetenv("GEMMSHIM_SCRATCH_KEEP_MB");
    gs_config_reload();
    wait_loaded();
    problem p;
    make_problem(&p, 1.0f, 0.5f);
    until_served(&p);
    gs_ctx *c = gs_ctx_of(fake_ctx_id(), 0, fake_ctx_handle());
    assert_non_null(c->kernel_pool);
    assert_ptr_not_equal(c->kernel_pool, c->pool);
    assert_int_equal(fake_pool_release_threshold(c->pool), 0);
    assert_true(fake_pool_release_threshold(c->kernel_pool) == (keep ? 64ull << 20 : 0));
    fake_scratch_bytes = 1 << 20;
    int from_kernel_pool = fake_pool_allocs_from(c->kernel_pool), from_pool = fake_pool_allocs_from(c->pool);
    gs_decision d;
    memcpy(p.C, p.h_C0, sizeof p.h_C0);
    assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(d.reason, GS_R_ROUTED);
    assert_int_equal(fake_pool_allocs_from(c->kernel_pool), from_kernel_pool + 1);
    assert_int_equal(fake_pool_allocs_from(c->pool), from_pool);
    fake_cuda_run();
    assert_true(c_is(&p, 1));
    fake_scratch_bytes = 0;
  }
  unsetenv("GEMMSHIM_SCRATCH_KEEP_MB");
  gs_config_reload();
}

/* A kernel that needs scratch does not serve a call on a capturing stream
 * (the allocation would become a memory node of the program's graph): the
 * call goes to cuBLAS, captured, and nothing of ours is enqueued. */
static void test_kernel_scratch_not_taken_in_capture(void **s)
{
  (void)s;
  problem p;
  make_problem(&p, 1.0f, 0.5f);
  until_served(&p);
  fake_scratch_bytes = 1 << 20;
  int launched = ours_launched, allocs = fake_stats.pool_allocs;
  fake_stream_set_capturing(stream, 1);
  gs_decision d;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_NO_SCRATCH);
  assert_int_equal(ours_launched, launched);
  assert_int_equal(fake_stats.pool_allocs, allocs);
  assert_int_equal(fake_stats.capture_violations, 0);
  fake_stream_set_capturing(stream, 0);
  /* outside the capture it serves again */
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  fake_cuda_run();
  memcpy(p.C, p.h_C0, sizeof p.h_C0);
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(d.reason, GS_R_ROUTED);
  assert_non_null(last_scratch);
  fake_cuda_run();
  assert_true(c_is(&p, 1));
}

/* ---- GEMMSHIM_TIME: events on the call's stream, read later ------------- */

static int setup_timed(void **s)
{
  setup(s);
  gs_time_reset();
  /* the log must be on for anything to be timed; it is written only by
   * gs_tally_write_csv here (the variables are gone again before exit) */
  setenv("GEMMSHIM_LOG", "/nonexistent-dir/gemmshim-test.csv", 1);
  setenv("GEMMSHIM_TIME", "3", 1);
  gs_config_reload();
  return 0;
}

static int teardown_timed(void **s)
{
  (void)s;
  unsetenv("GEMMSHIM_LOG");
  unsetenv("GEMMSHIM_TIME");
  gs_config_reload();
  gs_tally_reset();
  gs_time_reset();
  return 0;
}

/* The five time columns of the log row whose route and reason are given
 * (", route, reason," in the row), found by the header's names; fails
 * when there is no such row. */
typedef struct time_cols { char f[5][32]; } time_cols;

/* The commas of GS_LOG_HEADER from the one that starts the column name
 * (",name,") to the end: how far back from a row's end that column
 * starts. */
static int commas_from(const char *name)
{
  const char *h = GS_LOG_HEADER, *at = strstr(h, name);
  assert_non_null(at);
  int after = 0;
  for (const char *p = at; *p; p++) after += *p == ',';
  return after;
}

static time_cols time_of_row(const char *route_reason)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  gs_tally_write_csv(f);
  fclose(f);
  const char *row = strstr(buf, route_reason);
  if (!row) fail_msg("no row with %s in:\n%s", route_reason, buf);
  const char *end = strchr(row, '\n');
  const char *p = end;
  const int skip = commas_from(",timed,");
  for (int commas = 0; p > row && commas < skip; p--)
    if (p[-1] == ',') commas++;
  time_cols t;
  memset(&t, 0, sizeof t);
  int i = 0;
  for (const char *q = p + 1; i < 5; i++) {
    const char *c = memchr(q, ',', (size_t)(end - q));
    size_t n = (size_t)((c ? c : end) - q);
    memcpy(t.f[i], q, n < 31 ? n : 31);
    q = c ? c + 1 : end;
  }
  free(buf);
  return t;
}

static void test_time_samples_one_call_in_n_of_a_row_and_never_waits(void **s)
{
  (void)s;
  unsetenv("GEMMSHIM_FORCE");   /* f32_test is not tuned for it: every call forwards */
  gs_config_reload();
  problem p;
  make_problem(&p, 1.0f, 0.0f);
  /* calls 3, 6, 9 are timed (the N-th, 2N-th, ...: never a row's first) */
  const double work_ms[9] = { 9, 9, 0.25, 9, 9, 0.5, 9, 9, 2.0 };
  int waits = fake_stats.host_waits;
  gs_decision d;
  for (int i = 0; i < 9; i++) {
    fake_cuda_set_work_ms(work_ms[i]);
    assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(d.reason, GS_R_NOT_TUNED);
    fake_cuda_run();   /* the GPU runs between calls */
  }
  assert_int_equal(fake_stats.host_waits, waits);   /* no call waited for an event */
  /* calls 3 and 6 were read by the calls after them; call 9's is pending
   * until the drain reads it */
  time_cols t = time_of_row(",cublas,not_tuned,9,");
  assert_string_equal(t.f[0], "2");
  gs_time_drain(0);
  assert_int_equal(fake_stats.host_waits, waits);
  t = time_of_row(",cublas,not_tuned,9,");
  assert_string_equal(t.f[0], "3");
  double median = atof(t.f[1]);
  assert_true(fabs(median - 500) <= 500.0 / 32);   /* within a bin of 0.5 ms */
  /* the mean of the samples (0.25 + 0.5 + 2 ms) / 3, for all 9 calls */
  assert_string_equal(t.f[2], "8250.000");
  assert_string_equal(t.f[3], "0");
  assert_string_equal(t.f[4], "0");
}

static void test_time_of_a_served_call_spans_our_kernel(void **s)
{
  (void)s;
  setenv("GEMMSHIM_TIME", "1", 1);
  gs_config_reload();
  problem p;
  make_problem(&p, 1.0f, 0.0f);
  until_served(&p);
  gs_time_drain(0);
  gs_tally_reset();   /* the check's calls, and their samples, aside */
  fake_cuda_set_work_ms(1.5);
  gs_decision d;
  for (int i = 0; i < 4; i++) {
    assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(d.reason, GS_R_ROUTED);
  }
  fake_cuda_run();
  gs_time_drain(0);
  time_cols t = time_of_row(",f32_test,routed,4,");
  assert_string_equal(t.f[0], "4");
  assert_true(fabs(atof(t.f[1]) - 1500) <= 1500.0 / 32);
  assert_string_equal(t.f[2], "6000.000");
}

static void test_time_counts_captured_calls_and_records_nothing_into_the_graph(void **s)
{
  (void)s;
  setenv("GEMMSHIM_TIME", "1", 1);
  gs_config_reload();
  problem p;
  make_problem(&p, 1.0f, 0.0f);
  fake_stream_set_capturing(stream, 1);
  gs_decision d;
  for (int i = 0; i < 2; i++) assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(fake_stats.capture_violations, 0);   /* no event went into the capture */
  fake_stream_set_capturing(stream, 0);
  fake_cuda_run();
  gs_time_drain(0);
  time_cols t = time_of_row(",cublas,unchecked,2,");
  assert_string_equal(t.f[0], "0");
  assert_string_equal(t.f[1], "-");
  assert_string_equal(t.f[2], "-");
  assert_string_equal(t.f[3], "2");
  assert_string_equal(t.f[4], "0");
}

static void test_time_still_pending_at_exit_is_dropped_and_counted(void **s)
{
  (void)s;
  unsetenv("GEMMSHIM_FORCE");
  setenv("GEMMSHIM_TIME", "1", 1);   /* the row's first call sampled */
  gs_config_reload();
  problem p;
  make_problem(&p, 1.0f, 0.0f);
  gs_decision d;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  int waits = fake_stats.host_waits;
  gs_time_drain(0);   /* the GPU never ran the call */
  assert_int_equal(fake_stats.host_waits, waits);
  time_cols t = time_of_row(",cublas,not_tuned,1,");
  assert_string_equal(t.f[0], "0");
  assert_string_equal(t.f[2], "-");
  assert_string_equal(t.f[4], "1");
  fake_cuda_run();
  gs_time_drain(0);   /* nothing left to read or to count twice */
  t = time_of_row(",cublas,not_tuned,1,");
  assert_string_equal(t.f[4], "1");
}

static void test_time_events_that_fail_drop_the_sample_not_the_call(void **s)
{
  (void)s;
  unsetenv("GEMMSHIM_FORCE");
  setenv("GEMMSHIM_TIME", "1", 1);
  gs_config_reload();
  problem p;
  make_problem(&p, 1.0f, 0.0f);
  gs_decision d;
  fake_cuda_fail_next("cudaEventRecord", cudaErrorInvalidResourceHandle);
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(cudaPeekAtLastError(), cudaSuccess);   /* the shim's error, read */
  fake_cuda_run();
  assert_true(c_is(&p, 1));
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  fake_cuda_run();
  gs_time_drain(0);
  time_cols t = time_of_row(",cublas,not_tuned,2,");
  assert_string_equal(t.f[0], "1");
  assert_string_equal(t.f[4], "1");
}

/* Threads calling at once: every sampled call is either timed or counted
 * as dropped (a busy ring), never lost, and the ring is shared safely
 * (the ThreadSanitizer build runs this too). */
#define TIME_THREADS 4
#define TIME_CALLS 50

static void *timed_caller(void *arg)
{
  problem *p = arg;
  fake_ctx_make_current();
  for (int i = 0; i < TIME_CALLS; i++) {
    gs_decision d;
    if (call(blas_call(p), &d) != CUBLAS_STATUS_SUCCESS) return (void *)1;
  }
  return NULL;
}

static void test_time_from_many_threads_loses_no_sample(void **s)
{
  (void)s;
  unsetenv("GEMMSHIM_FORCE");
  setenv("GEMMSHIM_TIME", "1", 1);
  gs_config_reload();
  problem p;
  make_problem(&p, 1.0f, 0.0f);
  pthread_t th[TIME_THREADS];
  for (int i = 0; i < TIME_THREADS; i++)
    assert_int_equal(pthread_create(&th[i], NULL, timed_caller, &p), 0);
  for (int i = 0; i < TIME_THREADS; i++) {
    void *rc;
    assert_int_equal(pthread_join(th[i], &rc), 0);
    assert_null(rc);
  }
  fake_cuda_run();
  gs_time_drain(0);
  char want[32];
  snprintf(want, sizeof want, ",cublas,not_tuned,%d,", TIME_THREADS * TIME_CALLS);
  time_cols t = time_of_row(want);
  long timed = atol(t.f[0]), dropped = atol(t.f[4]);
  assert_int_equal(timed + dropped, TIME_THREADS * TIME_CALLS);
  assert_true(timed > 0);
}

static void test_time_off_writes_dashes(void **s)
{
  (void)s;
  unsetenv("GEMMSHIM_TIME");
  unsetenv("GEMMSHIM_FORCE");
  gs_config_reload();
  problem p;
  make_problem(&p, 1.0f, 0.0f);
  gs_decision d;
  int events = fake_stats.events_created;
  assert_int_equal(call(blas_call(&p), &d), CUBLAS_STATUS_SUCCESS);
  assert_int_equal(fake_stats.events_created, events);
  time_cols t = time_of_row(",cublas,not_tuned,1,");
  for (int i = 0; i < 5; i++) assert_string_equal(t.f[i], "-");
}

/* ---- item 8: the no-GPU line names the cause ------------------------------- */

static void test_no_gpu_cause_names_what_is_missing(void **s)
{
  (void)s;
  char buf[256];
  assert_non_null(strstr(gs_gpu_absent_cause(buf, sizeof buf, cudaErrorInsufficientDriver, "x", 0,
                                             0, 13000, NULL),
                         "no CUDA driver is installed"));
  assert_non_null(strstr(gs_gpu_absent_cause(buf, sizeof buf, cudaErrorInsufficientDriver, "x", 0,
                                             12040, 13000, NULL),
                         "supports CUDA 12.4, older than the CUDA 13.0"));
  assert_non_null(strstr(gs_gpu_absent_cause(buf, sizeof buf, cudaErrorNoDevice, "x", 0, 13000,
                                             13000, ""),
                         "no CUDA device (CUDA_VISIBLE_DEVICES=\"\")"));
  assert_non_null(strstr(gs_gpu_absent_cause(buf, sizeof buf, cudaSuccess, "x", 0, 13000, 13000,
                                             NULL),
                         "sees no CUDA device"));
  assert_non_null(strstr(gs_gpu_absent_cause(buf, sizeof buf, cudaErrorUnknown, "unknown error", 0,
                                             13000, 13000, NULL),
                         "error 999 (unknown error)"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_kernels_load_on_a_thread_of_their_own, setup_cold),
    cmocka_unit_test_setup(test_kernels_that_fail_to_load_are_disabled, setup_cold),
    cmocka_unit_test_setup(test_stale_error_does_not_make_a_served_call_run_twice, setup),
    cmocka_unit_test_setup(test_first_launch_failing_forwards_and_disables, setup),
    cmocka_unit_test_setup(test_a_refused_pdl_launch_is_served_plainly, setup),
    cmocka_unit_test_setup(test_a_refused_pdl_launch_with_scratch_is_served_plainly, setup),
    cmocka_unit_test_setup(test_a_launch_failing_with_and_without_pdl_disables_the_kernel, setup),
    cmocka_unit_test_setup(test_another_error_of_a_pdl_launch_is_not_retried, setup),
    cmocka_unit_test_setup(test_later_kernel_failing_returns_execution_failed_without_cublas, setup),
    cmocka_unit_test_setup(test_first_call_checks_without_waiting, setup),
    cmocka_unit_test_setup(test_failed_check_disables_the_kernel_on_that_context, setup),
    cmocka_unit_test_setup(test_overflow_in_cublas_leaves_the_check_inconclusive, setup),
    cmocka_unit_test_setup(test_an_inconclusive_check_then_a_clean_one_serves, setup),
    cmocka_unit_test_setup(test_a_mismatch_on_infinite_operands_fails_the_check, setup),
    cmocka_unit_test_setup(test_each_layout_is_checked_before_it_serves, setup),
    cmocka_unit_test_setup(test_capture_before_the_check_forwards_and_touches_nothing, setup),
    cmocka_unit_test_setup(test_capture_query_failure_is_read_not_left_pending, setup),
    cmocka_unit_test_setup(test_device_reset_gets_a_fresh_check_and_no_dead_memory, setup),
    cmocka_unit_test_setup(test_copy_of_c_reads_only_its_m_by_n_block, setup),
    cmocka_unit_test_setup(test_a_packed_batch_is_checked_and_compared_whole, setup),
    cmocka_unit_test_setup(test_a_batch_wrong_on_its_last_item_fails_the_check, setup),
    cmocka_unit_test_setup(test_refusal_in_ab_mode_affects_that_call_only, setup),
    cmocka_unit_test_setup(test_ab_holds_the_stream_before_each_pair, setup),
    cmocka_unit_test_setup(test_ab_failure_after_enqueue_into_c_never_runs_cublas_there, setup),
    cmocka_unit_test_setup(test_ab_shadow_gives_cublas_bits_and_scratch_goes_back, setup),
    cmocka_unit_test_setup(test_forked_child_writes_its_own_ab_log, setup),
    cmocka_unit_test_setup(test_scratch_comes_from_the_pool_not_cudamalloc, setup),
    cmocka_unit_test_setup(test_pool_refusal_is_remembered, setup),
    cmocka_unit_test_setup(test_kernel_scratch_comes_from_the_pool, setup),
    cmocka_unit_test_setup(test_kernel_scratch_refused_forwards, setup),
    cmocka_unit_test_setup(test_kernel_scratch_not_taken_in_capture, setup),
    cmocka_unit_test_setup(test_kernel_scratch_pool_keeps_what_it_is_told, setup),
    cmocka_unit_test_setup_teardown(test_time_samples_one_call_in_n_of_a_row_and_never_waits,
                                    setup_timed, teardown_timed),
    cmocka_unit_test_setup_teardown(test_time_of_a_served_call_spans_our_kernel, setup_timed,
                                    teardown_timed),
    cmocka_unit_test_setup_teardown(test_time_counts_captured_calls_and_records_nothing_into_the_graph,
                                    setup_timed, teardown_timed),
    cmocka_unit_test_setup_teardown(test_time_still_pending_at_exit_is_dropped_and_counted,
                                    setup_timed, teardown_timed),
    cmocka_unit_test_setup_teardown(test_time_events_that_fail_drop_the_sample_not_the_call,
                                    setup_timed, teardown_timed),
    cmocka_unit_test_setup_teardown(test_time_from_many_threads_loses_no_sample, setup_timed,
                                    teardown_timed),
    cmocka_unit_test_setup_teardown(test_time_off_writes_dashes, setup_timed, teardown_timed),
    cmocka_unit_test(test_no_gpu_cause_names_what_is_missing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
