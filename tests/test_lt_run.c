/* The route cublaslt's run (dispatch/lt_run.c) against the fake cuBLASLt,
 * loaded as interpose/ loads the real one: what cublasLtMatmul receives
 * for a BLAS call and for a cuBLASLt call (the algorithm, built or raw,
 * the pointers, the workspace, and each argument's meaning as the
 * descriptor and layouts say it), how its statuses map to a launcher's,
 * and the shim's one handle per device and context. The descriptors live
 * on gs_lt_run's stack: the fake copies them while cublasLtMatmul runs,
 * and the test reads them back with the fake's own getters. */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <cublasLt.h>
#include <cublas_api.h>

#include "../dispatch/lt_run.h"
#include "fake/fake.h"
#include "support/fake_cudart.h"

typedef cublasStatus_t (*desc_get_fn)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void *,
                                      size_t, size_t *);
typedef cublasStatus_t (*layout_get_fn)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t,
                                        void *, size_t, size_t *);

static struct {
  void *lib;
  gs_lt_fns fns;
  fake_count_fn count;
  fake_last_fn last;
  fake_set_status_fn set_status;
  fake_reset_fn reset;
  fake_lt_last_matmul_fn matmul;
  fake_lt_keep_matmul_fn keep_matmul;
  fake_lt_fail_fn make_fail;
  fake_lt_clear_fn clear;
  desc_get_fn desc_get;
  layout_get_fn layout_get;
} F;

static cudaStream_t stream;

static void *need(const char *name)
{
  void *p = dlsym(F.lib, name);
  if (!p) fail_msg("the fake cuBLASLt has no %s", name);
  return p;
}

static int load_fake(void **s)
{
  (void)s;
  const char *dir = getenv("GS_FAKE_DIR");
  if (!dir) {
    fprintf(stderr, "GS_FAKE_DIR is not set (make check sets it)\n");
    return -1;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/libcublasLt.so.13", dir);
  F.lib = dlopen(path, RTLD_LOCAL | RTLD_NOW);
  if (!F.lib) {
    fprintf(stderr, "%s\n", dlerror());
    return -1;
  }
  *(void **)&F.fns.create = need("cublasLtCreate");
  *(void **)&F.fns.desc_init = need("cublasLtMatmulDescInit_internal");
  *(void **)&F.fns.desc_set = need("cublasLtMatmulDescSetAttribute");
  *(void **)&F.fns.layout_init = need("cublasLtMatrixLayoutInit_internal");
  *(void **)&F.fns.layout_set = need("cublasLtMatrixLayoutSetAttribute");
  *(void **)&F.fns.algo_init = need("cublasLtMatmulAlgoInit");
  *(void **)&F.fns.algo_set = need("cublasLtMatmulAlgoConfigSetAttribute");
  *(void **)&F.fns.algo_get = need("cublasLtMatmulAlgoConfigGetAttribute");
  *(void **)&F.fns.matmul = need("cublasLtMatmul");
  *(void **)&F.count = need("fake_count");
  *(void **)&F.last = need("fake_last");
  *(void **)&F.set_status = need("fake_set_status");
  *(void **)&F.reset = need("fake_reset");
  *(void **)&F.matmul = need("fake_lt_last_matmul");
  *(void **)&F.keep_matmul = need("fake_lt_keep_matmul");
  *(void **)&F.make_fail = need("fake_lt_fail");
  *(void **)&F.clear = need("fake_lt_clear");
  *(void **)&F.desc_get = need("cublasLtMatmulDescGetAttribute");
  *(void **)&F.layout_get = need("cublasLtMatrixLayoutGetAttribute");
  fake_cuda_reset();
  fake_ctx_make_current();
  stream = fake_stream_new();
  return 0;
}

static void reset_fake(void)
{
  F.reset();
  F.clear();
  F.keep_matmul(1);
  fake_stream_set_capturing(stream, 0);
}

/* Every test but the first runs with the library's functions given (the
 * first table given is kept, so giving it again changes nothing). */
static int setup(void **s)
{
  (void)s;
  gs_lt_set_fns(&F.fns);
  /* the loader thread's part: the handle of args_of's context */
  gs_lt_forget_handles();
  assert_int_equal(gs_lt_prepare(1), 0);
  reset_fake();
  return 0;
}

static int setup_without_fns(void **s)
{
  (void)s;
  reset_fake();
  return 0;
}

/* ---- calls -------------------------------------------------------------- */

/* Sizes and leading dimensions all different, so a swap shows. */
enum { M = 96, N = 40, K = 200 };
#define A_PTR ((const void *)0xa000)
#define B_PTR ((const void *)0xb000)
#define C_PTR ((const void *)0xc000)
#define D_PTR ((void *)0xd000)
#define BIAS_PTR ((const void *)0xe000)
#define WS_PTR ((void *)0xf000)
#define ALPHA_DEV ((const float *)0x1a000)
#define BETA_DEV ((const float *)0x1b000)

/* cublasGemmEx, BF16 with COMPUTE_32F, as interpose/ describes it (D is C). */
static gs_gemm blas_call(int ta, int tb)
{
  gs_gemm g;
  memset(&g, 0, sizeof g);
  g.entry_name = "cublasGemmEx";
  g.a_type = g.b_type = g.c_type = g.d_type = CUDA_R_16BF;
  g.compute_type = CUBLAS_COMPUTE_32F;
  g.scale_type = GS_NONE;
  g.trans_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.trans_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.m = M; g.n = N; g.k = K;
  g.lda = ta ? 216 : 100;
  g.ldb = tb ? 48 : 208;
  g.ldc = g.ldd = 104;
  g.batch = 1;
  g.A = A_PTR; g.B = B_PTR; g.C = C_PTR; g.D = (void *)C_PTR;
  g.math_mode = CUBLAS_DEFAULT_MATH;
  g.pointer_mode = 0;
  g.epilogue = g.bias_type = GS_NONE;
  return g;
}

/* cublasLtMatmul, the same but D apart (its own ld), a bias epilogue and
 * a workspace. */
static gs_gemm lt_call(int ta, int tb)
{
  gs_gemm g = blas_call(ta, tb);
  g.entry_name = "cublasLtMatmul";
  g.is_lt = 1;
  g.scale_type = CUDA_R_32F;
  g.math_mode = GS_NONE;
  g.D = D_PTR;
  g.ldd = 112;
  g.epilogue = CUBLASLT_EPILOGUE_BIAS;
  g.bias = BIAS_PTR;
  g.bias_type = CUDA_R_16BF;
  g.workspace = WS_PTR;
  g.workspace_size = 1 << 20;
  return g;
}

/* The arguments dispatch/launch.c makes of a call (host scalars). */
static gs_kernel_args args_of(const gs_gemm *g)
{
  gs_kernel_args a;
  memset(&a, 0, sizeof a);
  a.m = g->m; a.n = g->n; a.k = g->k;
  a.trans_a = g->trans_a == CUBLAS_OP_T;
  a.trans_b = g->trans_b == CUBLAS_OP_T;
  a.A = g->A; a.lda = g->lda;
  a.B = g->B; a.ldb = g->ldb;
  a.C = g->C; a.ldc = g->ldc;
  a.D = g->D; a.ldd = g->ldd;
  a.batch = g->batch;
  a.stride_a = g->stride_a; a.stride_b = g->stride_b;
  a.stride_c = g->stride_c; a.stride_d = g->stride_d;
  a.alpha = 1.5f;
  a.beta = -0.25f;
  a.bias = g->is_lt && g->epilogue == CUBLASLT_EPILOGUE_BIAS ? g->bias : NULL;
  a.stream = stream;
  a.device = 0;
  a.ctx_id = 1;
  return a;
}

static gs_lt_algo algo_66(void)
{
  gs_lt_algo al;
  memset(&al, 0, sizeof al);
  al.id = 66; al.tile = 20; al.splitk = 3; al.reduction = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  al.swizzle = 1; al.custom = 5; al.stages = 12; al.inner = 7; al.cluster = 2;
  al.workspace = 4096;
  return al;
}

/* ---- reading back what cublasLtMatmul got --------------------------------- */

/* The words fake_last holds for cublasLtMatmul, in prototype order. */
enum { W_HANDLE, W_DESC, W_ALPHA, W_A, W_ADESC, W_B, W_BDESC, W_BETA, W_C, W_CDESC, W_D, W_DDESC,
       W_ALGO, W_WS, W_WS_SIZE, W_STREAM, W_COUNT };

static const fake_call *last_matmul_call(void)
{
  const fake_call *c = F.last();
  assert_string_equal(c->name, "cublasLtMatmul");
  assert_int_equal(c->n, W_COUNT);
  return c;
}

static int64_t desc_attr(const fake_lt_matmul *m, cublasLtMatmulDescAttributes_t attr)
{
  size_t size = 0;
  assert_int_equal(F.desc_get((cublasLtMatmulDesc_t)m->desc, attr, NULL, 0, &size), 0);
  assert_true(size == 4 || size == 8);
  int64_t v = 0;
  if (size == 4) {
    int32_t v32;
    assert_int_equal(F.desc_get((cublasLtMatmulDesc_t)m->desc, attr, &v32, 4, NULL), 0);
    v = v32;
  } else {
    assert_int_equal(F.desc_get((cublasLtMatmulDesc_t)m->desc, attr, &v, 8, NULL), 0);
  }
  return v;
}

/* Every attribute of the copied descriptor equals that of one made here,
 * Init'ed alike and given only the attributes listed: nothing else was set,
 * nothing listed was missed. */
typedef struct attr_value { cublasLtMatmulDescAttributes_t attr; int64_t v; } attr_value;

static void assert_desc_is(const fake_lt_matmul *m, int compute, const attr_value *set, int n_set)
{
  cublasLtMatmulDescOpaque_t want;
  assert_int_equal(F.fns.desc_init((cublasLtMatmulDesc_t)&want, sizeof want,
                                   (cublasComputeType_t)compute, CUDA_R_32F), 0);
  for (int i = 0; i < n_set; i++) {
    size_t size = 0;
    F.desc_get((cublasLtMatmulDesc_t)&want, set[i].attr, NULL, 0, &size);
    int32_t v32 = (int32_t)set[i].v;
    assert_int_equal(F.fns.desc_set((cublasLtMatmulDesc_t)&want, set[i].attr,
                                    size == 4 ? (const void *)&v32 : (const void *)&set[i].v, size),
                     0);
  }
  for (int attr = 0; attr < 64; attr++) {
    size_t size = 0;
    assert_int_equal(F.desc_get((cublasLtMatmulDesc_t)&want, attr, NULL, 0, &size), 0);
    unsigned char got_v[8], want_v[8];
    assert_int_equal(F.desc_get((cublasLtMatmulDesc_t)m->desc, attr, got_v, size, NULL), 0);
    assert_int_equal(F.desc_get((cublasLtMatmulDesc_t)&want, attr, want_v, size, NULL), 0);
    if (memcmp(got_v, want_v, size)) fail_msg("descriptor attribute %d differs", attr);
  }
}

/* batch: the items (1: one product, whose stride is Init's 0). */
static void assert_layout_is(const fake_lt_matmul *m, int which, int type, uint64_t rows,
                             uint64_t cols, int64_t ld, int32_t want_batch, int64_t want_stride)
{
  cublasLtMatrixLayout_t l = (cublasLtMatrixLayout_t)m->layout[which];
  uint32_t t = 0;
  uint64_t r = 0, c = 0;
  int64_t d = 0, stride = -1;
  int32_t order = -1, batch = 0;
  assert_int_equal(F.layout_get(l, CUBLASLT_MATRIX_LAYOUT_TYPE, &t, sizeof t, NULL), 0);
  assert_int_equal(F.layout_get(l, CUBLASLT_MATRIX_LAYOUT_ROWS, &r, sizeof r, NULL), 0);
  assert_int_equal(F.layout_get(l, CUBLASLT_MATRIX_LAYOUT_COLS, &c, sizeof c, NULL), 0);
  assert_int_equal(F.layout_get(l, CUBLASLT_MATRIX_LAYOUT_LD, &d, sizeof d, NULL), 0);
  assert_int_equal(F.layout_get(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order, NULL), 0);
  assert_int_equal(F.layout_get(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch, NULL),
                   0);
  assert_int_equal(
      F.layout_get(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride, NULL), 0);
  print_message("layout %d: type %u, %llu x %llu, ld %lld\n", which, t, (unsigned long long)r,
                (unsigned long long)c, (long long)d);
  assert_int_equal(t, type);
  assert_true(r == rows && c == cols && d == ld);
  assert_int_equal(order, CUBLASLT_ORDER_COL);
  assert_int_equal(batch, want_batch);
  assert_int_equal(stride, want_batch > 1 ? want_stride : 0);
}

/* The operands as cuBLAS means them: op(A) is m x k, so A is stored k x m
 * when transposed; op(B) is k x n; C and D are m x n. */
static void assert_layouts_of(const fake_lt_matmul *m, const gs_gemm *g, const gs_kernel_args *a)
{
  const int32_t items = a->batch > 1 ? (int32_t)a->batch : 1;
  assert_layout_is(m, 0, g->a_type, a->trans_a ? K : M, a->trans_a ? M : K, a->lda, items,
                   a->stride_a);
  assert_layout_is(m, 1, g->b_type, a->trans_b ? N : K, a->trans_b ? K : N, a->ldb, items,
                   a->stride_b);
  assert_layout_is(m, 2, g->c_type, M, N, a->ldc, items, a->stride_c);
  assert_layout_is(m, 3, g->d_type, M, N, a->ldd, items, a->stride_d);
}

static const fake_lt_algo *algo_of(const fake_lt_matmul *m)
{
  assert_true(m->has_algo);
  return (const fake_lt_algo *)m->algo;
}

/* The algorithm built with Init for the call's types, then every field. */
static void assert_algo_built(const fake_lt_matmul *m, const gs_lt_algo *want, const gs_gemm *g)
{
  const fake_lt_algo *got = algo_of(m);
  assert_int_equal(got->magic, FAKE_LT_ALGO_MAGIC);
  assert_int_equal(got->id, want->id);
  assert_int_equal(got->compute, CUBLAS_COMPUTE_32F);
  assert_int_equal(got->scale, CUDA_R_32F);
  assert_int_equal(got->a_type, g->a_type);
  assert_int_equal(got->b_type, g->b_type);
  assert_int_equal(got->c_type, g->c_type);
  assert_int_equal(got->d_type, g->d_type);
  assert_int_equal(got->tile, want->tile);
  assert_int_equal(got->splitk, want->splitk);
  assert_int_equal(got->reduction, want->reduction);
  assert_int_equal(got->swizzle, want->swizzle);
  assert_int_equal(got->custom, want->custom);
  assert_int_equal(got->stages, want->stages);
  assert_int_equal(got->inner, want->inner);
  assert_int_equal(got->cluster, want->cluster);
  const uint32_t every_field = 1u << CUBLASLT_ALGO_CONFIG_TILE_ID |
                               1u << CUBLASLT_ALGO_CONFIG_SPLITK_NUM |
                               1u << CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME |
                               1u << CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING |
                               1u << CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION |
                               1u << CUBLASLT_ALGO_CONFIG_STAGES_ID |
                               1u << CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID |
                               1u << CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID;
  assert_int_equal(got->set, every_field);
}

/* ---- tests ----------------------------------------------------------------- */

/* Before the library is bound the route runs nothing (interpose/ gives the
 * functions when it binds cuBLAS or cuBLASLt). Must run first: the first
 * table given is kept. */
static void test_without_the_library_nothing_runs(void **s)
{
  (void)s;
  gs_gemm g = blas_call(0, 0);
  gs_kernel_args a = args_of(&g);
  gs_lt_algo al = algo_66();
  assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_LAUNCH_FAILED);
  assert_int_equal(F.count("cublasLtCreate"), 0);
  assert_int_equal(F.count("cublasLtMatmul"), 0);
}

/* A library without one of the functions (an older cuBLASLt): the table
 * is kept, and the route refuses every call without touching the library.
 * In a child, since the first table given is kept for good. */
static void test_a_missing_function_refuses_every_call(void **s)
{
  (void)s;
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    gs_lt_fns partial = F.fns;
    partial.algo_set = NULL;
    gs_lt_set_fns(&partial);
    gs_lt_set_fns(&F.fns);   /* too late: the first is kept */
    gs_gemm g = blas_call(0, 0);
    gs_kernel_args a = args_of(&g);
    gs_lt_algo al = algo_66();
    int bad = gs_lt_run(&g, &al, &a) != GS_K_LAUNCH_FAILED;
    bad |= (F.count("cublasLtCreate") != 0) << 1;
    bad |= (F.count("cublasLtMatmul") != 0) << 2;
    _exit(bad);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

/* A BLAS call, each layout: the algorithm exactly, the pointers, the
 * stream, no workspace, and every argument's meaning. */
static void test_a_blas_call_becomes_its_matmul(void **s)
{
  (void)s;
  const gs_lt_algo al = algo_66();
  const gs_lt_fns none = { 0 };
  gs_lt_set_fns(&none);   /* a later table changes nothing */
  for (int layout = 0; layout < 4; layout++) {
    const int ta = layout & 1, tb = layout >> 1;
    print_message("%c%c\n", ta ? 'T' : 'N', tb ? 'T' : 'N');
    gs_gemm g = blas_call(ta, tb);
    /* the workspace fields are a cuBLASLt call's: a BLAS call runs with
     * none whatever they hold */
    g.workspace = WS_PTR;
    g.workspace_size = 1 << 20;
    gs_kernel_args a = args_of(&g);
    const int before = F.count("cublasLtMatmul");
    assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_OK);
    assert_int_equal(F.count("cublasLtMatmul"), before + 1);
    const fake_call *c = last_matmul_call();
    const fake_lt_matmul *m = F.matmul();
    assert_true(c->w[W_HANDLE] != 0);
    assert_true(c->w[W_A] == (uintptr_t)A_PTR);
    assert_true(c->w[W_B] == (uintptr_t)B_PTR);
    assert_true(c->w[W_C] == (uintptr_t)C_PTR);
    assert_true(c->w[W_D] == (uintptr_t)C_PTR);   /* a BLAS call writes C */
    assert_true(c->w[W_WS] == 0 && c->w[W_WS_SIZE] == 0);
    assert_true(c->w[W_STREAM] == (uintptr_t)stream);
    assert_true(c->w[W_ALGO] != 0);
    assert_true(m->host_scalars);
    assert_true(m->alpha == 1.5f && m->beta == -0.25f);
    const attr_value set[] = {
      { CUBLASLT_MATMUL_DESC_TRANSA, ta ? CUBLAS_OP_T : CUBLAS_OP_N },
      { CUBLASLT_MATMUL_DESC_TRANSB, tb ? CUBLAS_OP_T : CUBLAS_OP_N },
      { CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_HOST },
    };
    assert_desc_is(m, CUBLAS_COMPUTE_32F, set, 3);
    assert_int_equal(desc_attr(m, CUBLASLT_MATMUL_DESC_SCALE_TYPE), CUDA_R_32F);
    assert_int_equal(desc_attr(m, CUBLASLT_MATMUL_DESC_EPILOGUE), CUBLASLT_EPILOGUE_DEFAULT);
    assert_layouts_of(m, &g, &a);
    assert_algo_built(m, &al, &g);
  }
}

/* A strided batch (cublasGemmStridedBatchedEx, or a cuBLASLt call's
 * batched layouts): every layout carries the count and its operand's own
 * stride, whatever the self-check or A/B mode made of C's and D's; past
 * cuBLASLt's int32 count nothing runs. */
static void test_a_strided_batch_carries_its_count_and_strides(void **s)
{
  (void)s;
  const gs_lt_algo al = algo_66();
  for (int lt = 0; lt < 2; lt++) {
    gs_gemm g = lt ? lt_call(1, 0) : blas_call(1, 0);
    g.is_batched_api = !lt;
    g.batch = 6;
    g.stride_a = 216 * M + 3;   /* A's items apart by more than one matrix */
    g.stride_b = 0;             /* one B for every item */
    g.stride_c = g.ldc * N;
    g.stride_d = g.ldd * N;
    gs_kernel_args a = args_of(&g);
    a.stride_d = 128 * N;       /* as the self-check redirects D */
    assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_OK);
    const fake_lt_matmul *m = F.matmul();
    assert_layouts_of(m, &g, &a);
    assert_algo_built(m, &al, &g);
    const int before = F.count("cublasLtMatmul");
    a.batch = (int64_t)INT32_MAX + 1;
    assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_UNSUPPORTED);
    assert_int_equal(F.count("cublasLtMatmul"), before);
  }
}

/* A cuBLASLt call: D apart, the bias epilogue with its pointer and type,
 * the caller's workspace; each layout. */
static void test_a_cublaslt_call_becomes_its_matmul(void **s)
{
  (void)s;
  const gs_lt_algo al = algo_66();
  for (int layout = 0; layout < 4; layout++) {
    const int ta = layout & 1, tb = layout >> 1;
    gs_gemm g = lt_call(ta, tb);
    gs_kernel_args a = args_of(&g);
    assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_OK);
    const fake_call *c = last_matmul_call();
    const fake_lt_matmul *m = F.matmul();
    assert_true(c->w[W_C] == (uintptr_t)C_PTR);
    assert_true(c->w[W_D] == (uintptr_t)D_PTR);
    assert_true(c->w[W_WS] == (uintptr_t)WS_PTR);
    assert_true(c->w[W_WS_SIZE] == (size_t)1 << 20);
    assert_true(c->w[W_STREAM] == (uintptr_t)stream);
    const attr_value set[] = {
      { CUBLASLT_MATMUL_DESC_TRANSA, ta ? CUBLAS_OP_T : CUBLAS_OP_N },
      { CUBLASLT_MATMUL_DESC_TRANSB, tb ? CUBLAS_OP_T : CUBLAS_OP_N },
      { CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_HOST },
      { CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS },
      { CUBLASLT_MATMUL_DESC_BIAS_POINTER, (int64_t)(uintptr_t)BIAS_PTR },
      { CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, CUDA_R_16BF },
    };
    assert_desc_is(m, CUBLAS_COMPUTE_32F, set, 6);
    assert_layouts_of(m, &g, &a);
    assert_algo_built(m, &al, &g);
  }
  /* each operand's type reaches its own layout and the algorithm's Init
   * (types the route never mixes, so that a swap shows) */
  gs_gemm g = lt_call(1, 0);
  g.a_type = CUDA_R_16F;
  g.b_type = CUDA_R_8F_E4M3;
  g.c_type = CUDA_R_32F;
  g.d_type = CUDA_R_8F_E5M2;
  g.bias_type = CUDA_R_16F;
  gs_kernel_args a = args_of(&g);
  assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_OK);
  const fake_lt_matmul *m = F.matmul();
  assert_layouts_of(m, &g, &a);
  assert_algo_built(m, &al, &g);
  assert_int_equal(desc_attr(m, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE), CUDA_R_16F);
}

/* Device pointer mode: alpha and beta are the caller's device pointers. */
static void test_device_scalars_are_passed_as_pointers(void **s)
{
  (void)s;
  const gs_lt_algo al = algo_66();
  gs_gemm g = blas_call(1, 0);
  gs_kernel_args a = args_of(&g);
  a.scalars_on_device = 1;
  a.alpha = a.beta = 0.0f;
  a.alpha_dev = ALPHA_DEV;
  a.beta_dev = BETA_DEV;
  assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_OK);
  const fake_call *c = last_matmul_call();
  const fake_lt_matmul *m = F.matmul();
  assert_true(c->w[W_ALPHA] == (uintptr_t)ALPHA_DEV);
  assert_true(c->w[W_BETA] == (uintptr_t)BETA_DEV);
  assert_false(m->host_scalars);
  assert_int_equal(desc_attr(m, CUBLASLT_MATMUL_DESC_POINTER_MODE), CUBLASLT_POINTER_MODE_DEVICE);
}

/* The caller's SM-count target reaches cuBLASLt; none leaves the default. */
static void test_sm_count_target_is_passed(void **s)
{
  (void)s;
  const gs_lt_algo al = algo_66();
  gs_gemm g = lt_call(1, 0);
  gs_kernel_args a = args_of(&g);
  a.sm_limit = 66;
  assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_OK);
  const fake_lt_matmul *m = F.matmul();
  assert_int_equal(desc_attr(m, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET), 66);
  const attr_value set[] = {
    { CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T },
    { CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N },
    { CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_HOST },
    { CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS },
    { CUBLASLT_MATMUL_DESC_BIAS_POINTER, (int64_t)(uintptr_t)BIAS_PTR },
    { CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, CUDA_R_16BF },
    { CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, 66 },
  };
  assert_desc_is(m, CUBLAS_COMPUTE_32F, set, 7);
  a.sm_limit = 0;
  assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_OK);
  assert_int_equal(desc_attr(F.matmul(), CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET), 0);
}

/* The raw form: the heuristic's own bytes reach cublasLtMatmul as they
 * are, and no algorithm is built from the fields. */
static void test_raw_bytes_reach_the_matmul_unchanged(void **s)
{
  (void)s;
  gs_lt_algo al = algo_66();
  /* bytes whose fields read back as algo_66's, the rest of them set too:
   * they reach the matmul as they are */
  fake_lt_algo raw;
  memset(&raw, 0xc3, sizeof raw);
  raw.id = al.id, raw.tile = al.tile, raw.splitk = al.splitk, raw.reduction = al.reduction;
  raw.swizzle = al.swizzle, raw.custom = al.custom, raw.stages = al.stages;
  raw.inner = al.inner, raw.cluster = al.cluster;
  al.has_raw = 1;
  memset(al.raw, 0x5a, sizeof al.raw);
  memcpy(al.raw, &raw, sizeof raw);
  gs_gemm g = blas_call(0, 1);
  gs_kernel_args a = args_of(&g);
  assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_OK);
  const fake_lt_matmul *m = F.matmul();
  assert_true(m->has_algo);
  assert_memory_equal(m->algo, al.raw, 64);
  assert_int_equal(F.count("cublasLtMatmulAlgoInit"), 0);
  assert_layouts_of(m, &g, &a);
}

/* Raw bytes whose fields are not the row's (a hand-edited or stale row):
 * the router judged the call by the fields, so the bytes are not run; the
 * call goes to cuBLAS. */
static void test_raw_bytes_that_disagree_with_the_fields_do_not_run(void **s)
{
  (void)s;
  const gs_lt_algo base = algo_66();
  for (int field = 0; field < 9; field++) {
    gs_lt_algo al = base;
    fake_lt_algo raw;
    memset(&raw, 0, sizeof raw);
    raw.id = al.id, raw.tile = al.tile, raw.splitk = al.splitk, raw.reduction = al.reduction;
    raw.swizzle = al.swizzle, raw.custom = al.custom, raw.stages = al.stages;
    raw.inner = al.inner, raw.cluster = al.cluster;
    switch (field) {
    case 0: raw.id++; break;
    case 1: raw.tile++; break;
    case 2: raw.splitk++; break;
    case 3: raw.reduction++; break;
    case 4: raw.swizzle++; break;
    case 5: raw.custom++; break;
    case 6: raw.stages++; break;
    case 7: raw.inner++; break;
    default: raw.cluster++; break;
    }
    al.has_raw = 1;
    memset(al.raw, 0, sizeof al.raw);
    memcpy(al.raw, &raw, sizeof raw);
    gs_gemm g = blas_call(0, 1);
    gs_kernel_args a = args_of(&g);
    assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_UNSUPPORTED);
  }
  assert_int_equal(F.count("cublasLtMatmul"), 0);
}

/* cublasLtMatmul's statuses as a launcher's: a refusal before anything
 * ran sends the call to cuBLAS; a failure after may have written D. */
static void test_matmul_status_maps_to_a_launch_status(void **s)
{
  (void)s;
  static const struct { cublasStatus_t st; gs_kstatus want; } cases[] = {
    { CUBLAS_STATUS_SUCCESS, GS_K_OK },
    { CUBLAS_STATUS_NOT_SUPPORTED, GS_K_UNSUPPORTED },
    { CUBLAS_STATUS_INVALID_VALUE, GS_K_UNSUPPORTED },
    { CUBLAS_STATUS_ARCH_MISMATCH, GS_K_UNSUPPORTED },
    { CUBLAS_STATUS_NOT_INITIALIZED, GS_K_LAUNCH_FAILED },
    { CUBLAS_STATUS_ALLOC_FAILED, GS_K_LAUNCH_FAILED },
    { CUBLAS_STATUS_EXECUTION_FAILED, GS_K_FAILED_AFTER_ENQUEUE },
    { CUBLAS_STATUS_INTERNAL_ERROR, GS_K_FAILED_AFTER_ENQUEUE },
  };
  const gs_lt_algo al = algo_66();
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    F.set_status(cases[i].st);
    gs_gemm g = blas_call(0, 0);
    gs_kernel_args a = args_of(&g);
    print_message("status %d\n", cases[i].st);
    assert_int_equal(gs_lt_run(&g, &al, &a), cases[i].want);
  }
  assert_int_equal(F.count("cublasLtMatmul"), (int)(sizeof cases / sizeof *cases));
  F.set_status(CUBLAS_STATUS_SUCCESS);
}

/* cuBLASLt refusing the algorithm or a descriptor while the matmul is
 * built: nothing runs, the call goes to cuBLAS. */
static void test_a_refusal_while_building_runs_nothing(void **s)
{
  (void)s;
  static const char *const fns[] = {
    "cublasLtMatmulAlgoInit", "cublasLtMatmulAlgoConfigSetAttribute",
    "cublasLtMatmulDescInit_internal", "cublasLtMatmulDescSetAttribute",
    "cublasLtMatrixLayoutInit_internal",
  };
  const gs_lt_algo al = algo_66();
  for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
    print_message("%s\n", fns[i]);
    F.make_fail(fns[i], CUBLAS_STATUS_NOT_SUPPORTED);
    gs_gemm g = lt_call(0, 0);
    gs_kernel_args a = args_of(&g);
    assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_UNSUPPORTED);
    /* any other failure while building: nothing ran either, so the call
     * is not failed (the route is disabled, cuBLAS serves it) */
    F.make_fail(fns[i], CUBLAS_STATUS_INTERNAL_ERROR);
    assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_LAUNCH_FAILED);
  }
  assert_int_equal(F.count("cublasLtMatmul"), 0);
  F.make_fail(NULL, 0);
}

/* One handle per context, made by gs_lt_prepare (the loader thread) and
 * kept; a context made again (cudaDeviceReset) has a new identity and
 * gets its own; a context nobody prepared gets none, and a call never
 * makes one. */
static void test_one_handle_per_context(void **s)
{
  (void)s;
  gs_lt_forget_handles();
  const gs_lt_algo al = algo_66();
  gs_gemm g = blas_call(0, 0);
  gs_kernel_args a = args_of(&g);
  assert_int_equal(gs_lt_prepare(10), 0);
  assert_int_equal(gs_lt_prepare(10), 0);
  assert_int_equal(F.count("cublasLtCreate"), 1);
  a.ctx_id = 10;
  assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_OK);
  const uint64_t h0 = last_matmul_call()->w[W_HANDLE];
  assert_int_equal(gs_lt_prepare(11), 0);
  assert_int_equal(F.count("cublasLtCreate"), 2);
  a.ctx_id = 11;
  assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_OK);
  const uint64_t h1 = last_matmul_call()->w[W_HANDLE];
  assert_true(h1 != h0);
  a.ctx_id = 10;   /* contexts in turn: each keeps its own */
  assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_OK);
  assert_true(last_matmul_call()->w[W_HANDLE] == h0);
  assert_int_equal(F.count("cublasLtCreate"), 2);
  /* the algorithm is built on the handle it runs on */
  assert_int_equal(F.count("cublasLtMatmulAlgoInit"), 3);
  const int runs = F.count("cublasLtMatmul");
  a.ctx_id = 12;   /* not prepared */
  assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_LAUNCH_FAILED);
  assert_int_equal(F.count("cublasLtCreate"), 2);
  assert_int_equal(F.count("cublasLtMatmul"), runs);
}

/* A handle that could not be made is not remembered: preparing again
 * tries again. */
static void test_a_failed_create_is_tried_again(void **s)
{
  (void)s;
  gs_lt_forget_handles();
  const gs_lt_algo al = algo_66();
  gs_gemm g = blas_call(0, 0);
  gs_kernel_args a = args_of(&g);
  F.make_fail("cublasLtCreate", CUBLAS_STATUS_ALLOC_FAILED);
  assert_int_equal(gs_lt_prepare(a.ctx_id), -1);
  assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_LAUNCH_FAILED);
  assert_int_equal(F.count("cublasLtMatmul"), 0);
  F.make_fail(NULL, 0);
  assert_int_equal(gs_lt_prepare(a.ctx_id), 0);
  assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_OK);
  assert_int_equal(F.count("cublasLtCreate"), 2);
}

/* A capturing stream is served like any other: the handle was made
 * before, nothing is made or asked during the call. */
static void test_a_capturing_stream_is_served(void **s)
{
  (void)s;
  const gs_lt_algo al = algo_66();
  gs_gemm g = blas_call(0, 0);
  gs_kernel_args a = args_of(&g);
  fake_stream_set_capturing(stream, 1);
  assert_int_equal(gs_lt_run(&g, &al, &a), GS_K_OK);
  assert_int_equal(F.count("cublasLtCreate"), 0);
  assert_int_equal(F.count("cublasLtMatmul"), 1);
  assert_true(last_matmul_call()->w[W_STREAM] == (uintptr_t)stream);
  assert_int_equal(cudaGetLastError(), cudaSuccess);
}

/* Threads calling on a context while another context's handle is being
 * made: every call served with its own context's handle (the
 * ThreadSanitizer build checks the records' publication). */
enum { THREADS = 8, RUNS = 50 };
static void *run_many(void *arg)
{
  const intptr_t ctx = (intptr_t)arg;
  const gs_lt_algo al = algo_66();
  gs_gemm g = blas_call(1, 0);
  gs_kernel_args a = args_of(&g);
  a.ctx_id = (uint64_t)ctx;
  intptr_t failed = gs_lt_prepare(a.ctx_id) != 0;
  for (int i = 0; i < RUNS; i++) failed += gs_lt_run(&g, &al, &a) != GS_K_OK;
  return (void *)failed;
}

static void test_threads_share_one_handle_per_context(void **s)
{
  (void)s;
  gs_lt_forget_handles();
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++)
    assert_int_equal(pthread_create(&t[i], NULL, run_many, (void *)(intptr_t)(50 + i % 2)), 0);
  for (int i = 0; i < THREADS; i++) {
    void *failed;
    assert_int_equal(pthread_join(t[i], &failed), 0);
    assert_true(failed == NULL);
  }
  assert_int_equal(F.count("cublasLtCreate"), 2);
  assert_int_equal(F.count("cublasLtMatmul"), THREADS * RUNS);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_without_the_library_nothing_runs, setup_without_fns),
    cmocka_unit_test_setup(test_a_missing_function_refuses_every_call, setup_without_fns),
    cmocka_unit_test_setup(test_a_blas_call_becomes_its_matmul, setup),
    cmocka_unit_test_setup(test_a_cublaslt_call_becomes_its_matmul, setup),
    cmocka_unit_test_setup(test_a_strided_batch_carries_its_count_and_strides, setup),
    cmocka_unit_test_setup(test_device_scalars_are_passed_as_pointers, setup),
    cmocka_unit_test_setup(test_sm_count_target_is_passed, setup),
    cmocka_unit_test_setup(test_raw_bytes_reach_the_matmul_unchanged, setup),
    cmocka_unit_test_setup(test_raw_bytes_that_disagree_with_the_fields_do_not_run, setup),
    cmocka_unit_test_setup(test_matmul_status_maps_to_a_launch_status, setup),
    cmocka_unit_test_setup(test_a_refusal_while_building_runs_nothing, setup),
    cmocka_unit_test_setup(test_one_handle_per_context, setup),
    cmocka_unit_test_setup(test_a_failed_create_is_tried_again, setup),
    cmocka_unit_test_setup(test_a_capturing_stream_is_served, setup),
    cmocka_unit_test_setup(test_threads_share_one_handle_per_context, setup),
  };
  return cmocka_run_group_tests(tests, load_fake, NULL);
}
