/* The real kernel table (dispatch/variants.c) and routing policy
 * (dispatch/routes.c), checked as data: every kernel has one route and
 * every route a kernel of the table; the fields make sense; each win box
 * holds calls of its kernel's class; and over a grid of calls, whatever the
 * table says a kernel accepts, the kernel's own launcher accepts too (the
 * launcher's supports(), linked from the library's kernel objects; no GPU
 * is touched). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cublas_api.h>
#include <library_types.h>

#include "../dispatch/config.h"
#include "../dispatch/lt_algo.h"
#include "../dispatch/route_table.h"
#include "../dispatch/routes.h"
#include "../dispatch/tables.h"
#include "../dispatch/tally.h"
#include "../dispatch/variants.h"
#include "../kernels/gemm_bf16_wgmma_persistent.h"
#include "../kernels/gemm_decode.h"
#include "../kernels/gemm_f32_3xtf32.h"
#include "../kernels/gemm_f32_bf16x6.h"
#include "../kernels/sgemm_simt.h"

typedef int (*supports_fn)(int64_t, int64_t, int64_t, int, int, const void *, int64_t,
                           const void *, int64_t, const void *, int64_t, int);

/* Each kernel's launcher check, by table name. */
static supports_fn launcher_check(const char *name)
{
  if (!strcmp(name, "sgemm_simt")) return gs_sgemm_simt_supports;
  if (!strcmp(name, "gemm_bf16_wgmma_persistent")) return gs_gemm_bf16_wgmma_persistent_supports;
  if (!strcmp(name, "gemm_f32_3xtf32")) return gs_gemm_f32_3xtf32_supports;
  if (!strcmp(name, "gemm_f32_bf16x6")) return gs_gemm_f32_bf16x6_supports;
  if (!strcmp(name, "gemm_decode_bf16")) return gs_gemm_decode_supports;
  if (!strcmp(name, "gemm_decode_f16")) return gs_gemm_decode_supports;
  if (!strcmp(name, "gemm_decode_f32")) return gs_gemm_decode_f32_supports;
  return NULL;
}

/* The sizes calls are built from: a kernel's multiple, or for a kernel that
 * takes every size (multiple 1) a natural one, so that the calls are not
 * tiny and their leading dimensions can be aligned. */
static int64_t m_unit(const gs_variant *v) { return v->m_mult > 1 ? v->m_mult : 64; }
static int64_t k_unit(const gs_variant *v)
{
  int64_t u = v->k_mult > 1 ? v->k_mult : 64;
  while (2 * u - 8 < v->k_min) u *= 2;   /* 2 u - 8 .. 2 u + 8: above k_min */
  return u;
}

/* count * n_mult, held to the kernel's n_max. */
static int64_t n_of(const gs_variant *v, int64_t count)
{
  int64_t n = count * v->n_mult;
  return v->n_max && n > v->n_max ? v->n_max : n;
}

static void test_every_kernel_has_one_route(void **s)
{
  (void)s;
  assert_true(gs_n_variants > 0);
  assert_true(gs_n_variants < GS_TALLY_ROUTES);   /* the counters keep each apart */
  for (size_t i = 0; i < gs_n_variants; i++) {
    int routes = 0;
    for (size_t r = 0; r < gs_n_routes; r++) routes += gs_routes[r].kernel == gs_variants[i];
    assert_int_equal(routes, 1);
    assert_ptr_equal(gs_variant_named(gs_variants[i]->name), gs_variants[i]);
    for (size_t j = 0; j < i; j++) assert_string_not_equal(gs_variants[i]->name, gs_variants[j]->name);
  }
  for (size_t r = 0; r < gs_n_routes; r++) {
    int in_table = 0;
    for (size_t i = 0; i < gs_n_variants; i++) in_table += gs_routes[r].kernel == gs_variants[i];
    assert_int_equal(in_table, 1);
  }
  assert_null(gs_variant_named("no_such_kernel"));
}

static void test_fields_make_sense(void **s)
{
  (void)s;
  for (size_t i = 0; i < gs_n_variants; i++) {
    const gs_variant *v = gs_variants[i];
    print_message("%s\n", v->name);
    assert_non_null(v->types_ok);
    assert_non_null(v->math_ok);
    if (v->runs_cublaslt) {
      /* cuBLASLt runs it: no launcher, nothing to load, any GPU, 16-bit data */
      assert_null(v->launch);
      /* its paths: one product, or a batch (checked apart) */
      assert_non_null(v->path_of);
      assert_true(v->takes_batch);
      assert_null(v->preload);
      assert_int_equal(v->cc_major, 0);
      assert_int_equal(v->data_type, GS_NONE);
      assert_int_equal(v->elem_bytes, 2);
      assert_true(v->selfcheck_tol > 0 && v->selfcheck_tol < 0.1);
      continue;
    }
    assert_non_null(launcher_check(v->name));   /* this test knows it */
    /* our kernels take one product a call */
    assert_false(v->takes_batch);
    assert_non_null(v->launch);
    assert_true(v->data_type == CUDA_R_32F || v->data_type == CUDA_R_16BF ||
                v->data_type == CUDA_R_16F);
    assert_int_equal(v->elem_bytes, v->data_type == CUDA_R_32F ? 4 : 2);
    assert_true(v->align_bytes >= v->elem_bytes && v->align_bytes % v->elem_bytes == 0);
    /* the output's alignment: none of its own, or the element's multiple
     * up to align_bytes */
    assert_true(v->out_align_bytes == 0 ||
                (v->out_align_bytes >= v->elem_bytes && v->out_align_bytes % v->elem_bytes == 0 &&
                 v->out_align_bytes <= v->align_bytes));
    assert_true(v->m_mult > 0 && v->n_mult > 0 && v->k_mult > 0);
    /* 0, or a bound that some n of the class lies under */
    assert_true(v->n_max == 0 || (v->n_max >= v->n_mult && v->n_max % v->n_mult == 0));
    /* few rows: layouts and a bound together, the bound in the class */
    assert_true((v->layouts_few_rows & ~GS_LAYOUT_ALL) == 0);
    assert_int_equal(v->layouts_few_rows == 0, v->m_max == 0);
    assert_true(v->m_max == 0 || (v->m_max >= v->m_mult && v->m_max % v->m_mult == 0));
    assert_true(v->k_min >= 0);
    assert_true(v->layouts != 0 && (v->layouts & ~GS_LAYOUT_ALL) == 0);
    assert_true(v->epilogues & GS_EPI_NONE);
    assert_true(v->selfcheck_tol > 0 && v->selfcheck_tol < 0.1);
    assert_true(v->err_vs_cublas >= 1.0 && v->err_floor >= 0);
    assert_true(v->cc_major >= 7);
  }
}

/* pad for call_of: each leading dimension rounded up to the kernel's
 * alignment rather than padded by a fixed count. */
#define PAD_TO_ALIGNMENT (-1)

static int64_t ld_of(const gs_variant *v, int64_t rows, int64_t pad)
{
  if (pad != PAD_TO_ALIGNMENT) return rows + pad;
  int64_t per = v->align_bytes / v->elem_bytes;
  return (rows + per - 1) / per * per;
}

/* The data types an entry takes: its own, or for the route cublaslt both
 * 16-bit types. */
static int data_types_of(const gs_variant *v, int out[2])
{
  if (v->data_type != GS_NONE) {
    out[0] = v->data_type;
    return 1;
  }
  out[0] = CUDA_R_16BF;
  out[1] = CUDA_R_16F;
  return 2;
}

static gs_gemm call_of_type(const gs_variant *v, int type, int ta, int tb, int64_t m, int64_t n,
                            int64_t k, int64_t pad, uintptr_t a_off);

/* A plain, valid BLAS call of v's data type; aligned unless pad or a_off
 * says otherwise. */
static gs_gemm call_of(const gs_variant *v, int ta, int tb, int64_t m, int64_t n, int64_t k,
                       int64_t pad, uintptr_t a_off)
{
  int types[2];
  data_types_of(v, types);
  return call_of_type(v, types[0], ta, tb, m, n, k, pad, a_off);
}

/* The same, of the given data type. */
static gs_gemm call_of_type(const gs_variant *v, int type, int ta, int tb, int64_t m, int64_t n,
                            int64_t k, int64_t pad, uintptr_t a_off)
{
  static float one = 1.0f;
  gs_gemm g;
  memset(&g, 0, sizeof g);
  g.entry_name = "test";
  g.a_type = g.b_type = g.c_type = g.d_type = type;
  /* the BLAS entries of 16-bit data (GemmEx) give FP32 accumulation as
   * COMPUTE_32F; Sgemm gives none */
  g.compute_type = type == CUDA_R_32F ? GS_NONE : CUBLAS_COMPUTE_32F;
  g.scale_type = CUDA_R_32F;
  g.trans_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.trans_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.algo = GS_NONE;
  g.epilogue = GS_NONE;
  g.m = m; g.n = n; g.k = k; g.batch = 1;
  g.lda = ld_of(v, ta ? k : m, pad);
  g.ldb = ld_of(v, tb ? n : k, pad);
  g.ldc = g.ldd = ld_of(v, m, pad);
  g.A = (const void *)(uintptr_t)(0x10000000 + a_off);
  g.B = (const void *)(uintptr_t)0x20000000;
  g.C = (const void *)(uintptr_t)0x30000000;
  g.D = (void *)(uintptr_t)0x30000000;
  g.alpha = g.beta = &one;
  return g;
}

/* The first layout of NN, TN, NT, TT that v takes. */
static void first_layout(const gs_variant *v, int *ta, int *tb)
{
  int l = 0;
  while (l < 3 && !((v->layouts >> l) & 1)) l++;
  *ta = l & 1;
  *tb = l >> 1;
}

static void test_each_type_is_accepted_by_its_kernel(void **s)
{
  (void)s;
  for (size_t i = 0; i < gs_n_variants; i++) {
    const gs_variant *v = gs_variants[i];
    int ta, tb;
    first_layout(v, &ta, &tb);
    int types[2];
    int n_types = data_types_of(v, types);
    for (int t = 0; t < n_types; t++) {
      gs_gemm g = call_of_type(v, types[t], ta, tb, 4 * m_unit(v), n_of(v, 4), 4 * k_unit(v), 0, 0);
      print_message("%s, data type %d\n", v->name, types[t]);
      /* the opt-in FP32 kernel takes FP32 with compute type 32F (cuBLASLt's
       * way) as every FP32 kernel does */
      if (types[t] == CUDA_R_32F) g.compute_type = CUBLAS_COMPUTE_32F;
      assert_int_equal(gs_variant_fits_args(v, &g), GS_R_ROUTED);
      assert_int_equal(gs_variant_fits_state(v, &g), GS_R_ROUTED);
    }
  }
}

static void check_default_table(const char *text);

/* The built-in route tables: each parses without a bad line, its
 * validators are this build's (a kernel-table change means measuring
 * again, or at least saying so here), no two are for one GPU, every row
 * routes a kernel whose class holds some call of the row's box, and every
 * row of the route cublaslt names its algorithm for one exact call. */
static void test_default_tables(void **s)
{
  (void)s;
  assert_true(gs_n_default_route_tables >= 1);
  for (size_t d = 0; d < gs_n_default_route_tables; d++) {
    const char *text = gs_default_route_tables[d];
    print_message("built-in table %zu\n", d);
    check_default_table(text);
    for (size_t e = 0; e < d; e++) {
      gs_route_table *x = gs_rt_parse(text, strlen(text), "a", gs_variants, gs_n_variants, NULL);
      gs_route_table *y = gs_rt_parse(gs_default_route_tables[e], strlen(gs_default_route_tables[e]),
                                      "b", gs_variants, gs_n_variants, NULL);
      assert_string_not_equal(x->value[GS_V_GPU_NAME], y->value[GS_V_GPU_NAME]);
      gs_rt_free(x);
      gs_rt_free(y);
    }
  }
}

static void check_default_table(const char *text)
{
  gs_route_table *t = gs_rt_parse(text, strlen(text), "defaults", gs_variants, gs_n_variants,
                                  stderr);
  assert_non_null(t);
  assert_int_equal(t->n_bad, 0);
  char hash[17];
  gs_rt_kernel_table_hash(gs_variants, gs_n_variants, hash);
  print_message("kernel table hash %s\n", hash);
  for (int v = 0; v < GS_V_COUNT; v++) assert_true(t->has[v]);
  assert_string_equal(t->value[GS_V_KERNEL_TABLE], hash);
  assert_string_equal(t->value[GS_V_SHIM_VERSION], PACKAGE_VERSION);
  assert_true(t->n_rows > 0);
  for (size_t i = 0; i < t->n_rows; i++) {
    const gs_rt_row *r = &t->rows[i];
    print_message("row at line %d: %s\n", r->line, r->route);
    assert_non_null(r->kernel);
    assert_true(gs_rt_row_routes(r));
    const gs_variant *v = r->kernel;
    if (v->runs_cublaslt) {
      /* cuBLASLt's own algorithm for one measured BLAS call (its
       * workspace none, as the shim gives a BLAS call): 16-bit data with
       * FP32 accumulation, every field exact, launched plainly; the route's
       * class takes that call and the algorithm fits it, under any math
       * mode */
      assert_true(r->has_algo);
      assert_true(r->a_type == CUDA_R_16BF || r->a_type == CUDA_R_16F);
      assert_true(r->b_type == r->a_type && r->c_type == r->a_type);
      assert_int_equal(r->compute, CUBLAS_COMPUTE_32F);
      assert_true(r->exact);
      assert_false(r->needs_pdl);
      assert_true(r->entry_class == GS_EC_GEMM || r->entry_class == GS_EC_BATCHED);
      gs_gemm g = call_of_type(v, r->a_type, r->layout[0] == 'T', r->layout[1] == 'T', r->m.lo,
                               r->n.lo, r->k.lo, 0, 0);
      if (r->entry_class == GS_EC_BATCHED) {
        g.is_batched_api = 1;
        g.batch = r->batch.lo;
        g.stride_a = g.lda * (r->layout[0] == 'T' ? g.m : g.k);
        g.stride_b = g.ldb * (r->layout[1] == 'T' ? g.k : g.n);
        g.stride_c = g.stride_d = g.ldc * g.n;
      }
      assert_int_equal(gs_variant_fits_args(v, &g), GS_R_ROUTED);
      gs_rt_key key;
      gs_rt_key_of(&g, &key);
      assert_int_equal(key.align, r->align);
      for (int strict = 0; strict < 2; strict++) {
        g.math_mode = strict ? CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION : CUBLAS_DEFAULT_MATH;
        assert_true(gs_lt_algo_fits_call(&r->algo, &g));
      }
      continue;
    }
    assert_true(r->a_type == v->data_type);
    unsigned lay = 0;
    if (!r->layout[0]) lay = v->layouts | v->layouts_few_rows;
    else lay = 1u << ((r->layout[0] == 'T') + 2 * (r->layout[1] == 'T'));
    assert_true((lay & (v->layouts | v->layouts_few_rows)) != 0);
    /* few columns, or few rows */
    assert_true(((lay & v->layouts) && (v->n_max == 0 || r->n.lo <= v->n_max)) ||
                ((lay & v->layouts_few_rows) && r->m.lo <= v->m_max));
    /* some call of the class lies in the box */
    int64_t m = (r->m.lo + v->m_mult - 1) / v->m_mult * v->m_mult;
    int64_t n = (r->n.lo + v->n_mult - 1) / v->n_mult * v->n_mult;
    int64_t k = (r->k.lo + v->k_mult - 1) / v->k_mult * v->k_mult;
    assert_true(m <= r->m.hi && n <= r->n.hi && k <= r->k.hi);
  }
  gs_rt_free(t);
}

/* Whatever the table accepts, the launcher does: over layouts, sizes at and
 * off the multiples (n up to n_max; m up to m_max and just over it, with n
 * small and large), padded leading dimensions (each rounded up to the
 * alignment too, so that a tail in m or k can be in the class) and a
 * misaligned A. */
static void test_table_never_accepts_what_the_launcher_refuses(void **s)
{
  (void)s;
  const int64_t deltas[] = { 0, 1, 8, -8 };
  const int64_t pads[] = { 0, 1, 4, 8, 12, PAD_TO_ALIGNMENT };
  const size_t n_pads = sizeof pads / sizeof *pads;
  const uintptr_t offs[] = { 0, 4, 8, 16 };
  for (size_t i = 0; i < gs_n_variants; i++) {
    const gs_variant *v = gs_variants[i];
    if (v->runs_cublaslt) {
      print_message("%s: no launcher of ours (cuBLASLt checks its own calls)\n", v->name);
      continue;
    }
    supports_fn supports = launcher_check(v->name);
    /* n of the class; n = 1 and n = n_max where they are in it; a large n */
    const int64_t ns[] = { n_of(v, 3), 1, v->n_max, 2 * m_unit(v) + 8 };
    /* m around a few tiles; m = 1, m_max and m_max + 1 (few rows) */
    const int64_t ms[] = { 2 * m_unit(v), 2 * m_unit(v) + 1, 2 * m_unit(v) + 8, 2 * m_unit(v) - 8,
                           v->m_mult, v->m_max, v->m_max + v->m_mult };
    long accepted = 0, few_rows = 0;
    for (int lay = 0; lay < 4; lay++)
      for (size_t dm = 0; dm < sizeof ms / sizeof *ms; dm++)
        for (size_t dn = 0; dn < sizeof ns / sizeof *ns; dn++)
          for (size_t dk = 0; dk < 4; dk++)
            for (size_t p = 0; p < n_pads; p++)
              for (size_t o = 0; o < 4; o++) {
                int ta = lay & 1, tb = lay >> 1;
                int64_t m = ms[dm], n = ns[dn], k = 2 * k_unit(v) + deltas[dk];
                /* the router refuses these before any table (gs_args_invalid,
                 * GS_R_EMPTY) */
                if (m <= 0 || n <= 0 || k <= 0) continue;
                if (dn > 0 && n == ns[0]) continue;   /* the same n again */
                if (dm > 3 && !v->m_max) continue;      /* no few rows */
                gs_gemm g = call_of(v, ta, tb, m, n, k, pads[p], offs[o]);
                if (gs_variant_fits_args(v, &g) != GS_R_ROUTED ||
                    gs_variant_fits_state(v, &g) != GS_R_ROUTED)
                  continue;
                accepted++;
                few_rows += v->n_max && n > v->n_max;
                if (!supports(g.m, g.n, g.k, ta, tb, g.A, g.lda, g.B, g.ldb, g.C, g.ldc, 1))
                  fail_msg("%s: the table accepts %s%s %lldx%lldx%lld lda %lld ldb %lld ldc %lld, "
                           "A at +%zu, which its launcher refuses",
                           v->name, ta ? "T" : "N", tb ? "T" : "N", (long long)g.m,
                           (long long)g.n, (long long)g.k, (long long)g.lda, (long long)g.ldb,
                           (long long)g.ldc, (size_t)offs[o]);
              }
    print_message("%s: %ld calls the table accepts (%ld of few rows, n over n_max), all accepted "
                  "by the launcher\n", v->name, accepted, few_rows);
    assert_true(accepted > 0);
    assert_int_equal(few_rows > 0, v->m_max > 0);
  }
}

/* n_max is a bound of the size class: n = n_max is taken, n = n_max + 1
 * refused (GS_R_SIZE_CLASS), by a made-up entry and by every entry that has
 * one; and it is the launcher's own bound, not one below what it takes. */
static void test_n_max_bounds_the_class(void **s)
{
  (void)s;
  gs_variant bounded = *gs_variants[0];
  bounded.n_max = 4 * bounded.n_mult;
  const gs_variant *vs[64] = { &bounded };
  size_t n_vs = 1;
  for (size_t i = 0; i < gs_n_variants && n_vs < 64; i++)
    if (gs_variants[i]->n_max) vs[n_vs++] = gs_variants[i];
  for (size_t i = 0; i < n_vs; i++) {
    const gs_variant *v = vs[i];
    int ta, tb;
    first_layout(v, &ta, &tb);
    print_message("%s%s: n_max %lld\n", v->name, v == &bounded ? " (made up)" : "",
                  (long long)v->n_max);
    gs_gemm at = call_of(v, ta, tb, 2 * m_unit(v), v->n_max, 2 * k_unit(v), 0, 0);
    gs_gemm over = call_of(v, ta, tb, 2 * m_unit(v), v->n_max + 1, 2 * k_unit(v), 0, 0);
    gs_gemm over_by_mult = call_of(v, ta, tb, 2 * m_unit(v), v->n_max + v->n_mult,
                                   2 * k_unit(v), 0, 0);
    assert_int_equal(gs_variant_fits_args(v, &at), GS_R_ROUTED);
    assert_int_equal(gs_variant_fits_state(v, &at), GS_R_ROUTED);
    assert_int_equal(gs_variant_fits_args(v, &over), GS_R_SIZE_CLASS);
    assert_int_equal(gs_variant_fits_args(v, &over_by_mult), GS_R_SIZE_CLASS);
    if (v == &bounded) continue;
    supports_fn supports = launcher_check(v->name);
    assert_true(supports(at.m, at.n, at.k, ta, tb, at.A, at.lda, at.B, at.ldb, at.C, at.ldc, 1));
    /* the next n of the class, so only the bound can refuse it */
    assert_false(supports(over_by_mult.m, over_by_mult.n, over_by_mult.k, ta, tb, over_by_mult.A,
                          over_by_mult.lda, over_by_mult.B, over_by_mult.ldb, over_by_mult.C,
                          over_by_mult.ldc, 1));
  }
}

/* The built-in table's rows for the two FP32 tensor-core kernels overlap
 * (4096^3 lies in both boxes, 3xTF32's first): each kernel finds its own
 * row there, since a row of one opt-in says nothing about the other's
 * calls; a kernel without an opt-in sees neither; 2048 x 2048 x 8192 lies
 * in BF16x6's box alone. */
static void test_default_rows_of_each_opt_in(void **s)
{
  (void)s;
  gs_route_table *t = gs_rt_parse(gs_default_route_tables[0], strlen(gs_default_route_tables[0]), "defaults",
                                  gs_variants, gs_n_variants, stderr);
  assert_non_null(t);
  static const struct { int64_t m, n, k; int ta, tb; int fast_row; } calls[] = {
    { 4096, 4096, 4096, 0, 0, 1 }, { 8192, 8192, 8192, 1, 0, 1 }, { 1024, 2048, 1024, 0, 1, 1 },
    { 2048, 2048, 8192, 1, 1, 0 },
  };
  for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
    gs_gemm g = call_of(&gs_kernel_f32_bf16x6, calls[i].ta, calls[i].tb, calls[i].m, calls[i].n,
                        calls[i].k, 0, 0);
    gs_rt_key k;
    gs_rt_key_of(&g, &k);
    print_message("%lldx%lldx%lld %s%s\n", (long long)k.m, (long long)k.n, (long long)k.k,
                  calls[i].ta ? "T" : "N", calls[i].tb ? "T" : "N");
    const gs_rt_row *acc = gs_rt_find_for(t, &k, &gs_kernel_f32_bf16x6, gs_routes, gs_n_routes, 0);
    const gs_rt_row *fast = gs_rt_find_for(t, &k, &gs_kernel_f32_3xtf32, gs_routes, gs_n_routes, 0);
    const gs_rt_row *plain = gs_rt_find_for(t, &k, &gs_kernel_sgemm_simt, gs_routes, gs_n_routes, 0);
    assert_non_null(acc);
    assert_ptr_equal(acc->kernel, &gs_kernel_f32_bf16x6);
    assert_true(gs_rt_row_routes(acc));
    if (calls[i].fast_row) {
      assert_non_null(fast);
      assert_ptr_equal(fast->kernel, &gs_kernel_f32_3xtf32);
    } else {
      assert_null(fast);
    }
    assert_null(plain);
  }
  gs_rt_free(t);
}

/* Both FP32 tensor-core kernels run one 128 x 128 tile per CTA, one wave of
 * CTAs per 132 SMs: a call just past a wave of tiles (the last wave nearly
 * empty) took BF16x6 to 0.85-0.97x SGEMM on an H100
 * (bench/results/f32-wave-edges-h100-2026-12-06/). No built-in table may
 * route such calls: their boxes start where two waves are full. */
static void test_default_rows_leave_out_wave_edges(void **s)
{
  (void)s;
  static const struct { int64_t m, n, k; int ta, tb; } edges[] = {
    { 1152, 2048, 1024, 0, 1 }, { 1024, 2176, 1024, 1, 0 }, { 1152, 2048, 4096, 1, 0 },
    { 1152, 2176, 1024, 1, 1 }, { 1024, 2048, 2048, 0, 0 },
  };
  for (size_t d = 0; d < gs_n_default_route_tables; d++) {
    gs_route_table *t = gs_rt_parse(gs_default_route_tables[d], strlen(gs_default_route_tables[d]),
                                    "defaults", gs_variants, gs_n_variants, stderr);
    assert_non_null(t);
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) {
      gs_gemm g = call_of(&gs_kernel_f32_bf16x6, edges[i].ta, edges[i].tb, edges[i].m, edges[i].n,
                          edges[i].k, 0, 0);
      gs_rt_key k;
      gs_rt_key_of(&g, &k);
      const gs_rt_row *acc = gs_rt_find_for(t, &k, &gs_kernel_f32_bf16x6, gs_routes, gs_n_routes, 0);
      print_message("table %zu, %lldx%lldx%lld: %s\n", d, (long long)k.m, (long long)k.n,
                    (long long)k.k, acc ? "a BF16x6 row" : "none");
      /* 1024 x 2048 x 2048 (one full wave, between the measured K) is
       * 3xTF32's alone, by its K range */
      assert_true(!acc || !gs_rt_row_routes(acc));
      if (i < 4) {
        const gs_rt_row *fast = gs_rt_find_for(t, &k, &gs_kernel_f32_3xtf32, gs_routes, gs_n_routes, 0);
        assert_true(!fast || !gs_rt_row_routes(fast));
      }
    }
    gs_rt_free(t);
  }
}

/* The FP32 tensor-core kernels' opt-ins in the real policy: GEMMSHIM_FP32=tc
 * asks for the accurate kernel (BF16x6) only, tc-fast for 3xTF32 only,
 * strict (the default) for neither; a program's request for emulation
 * (math mode BF16X9) asks for the accurate one whatever the variable. */
static int opted(const gs_variant *v, const gs_gemm *g)
{
  for (size_t r = 0; r < gs_n_routes; r++)
    if (gs_routes[r].kernel == v) return gs_routes[r].opted_in ? gs_routes[r].opted_in(g) : 1;
  fail_msg("%s has no route", v->name);
  return -2;
}

static void test_fp32_tensor_core_opt_ins(void **s)
{
  (void)s;
  static const struct { const char *env; int accurate, fast; } cases[] = {
    { NULL, 0, 0 }, { "strict", 0, 0 }, { "tc", 1, 0 }, { "tc-fast", 0, 1 },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    if (cases[i].env) setenv("GEMMSHIM_FP32", cases[i].env, 1);
    else unsetenv("GEMMSHIM_FP32");
    unsetenv("CUBLAS_EMULATE_SINGLE_PRECISION");
    gs_config_reload();
    gs_gemm g = call_of(&gs_kernel_f32_bf16x6, 1, 0, 256, 256, 256, 0, 0);
    g.state_loaded = 1;
    g.math_mode = CUBLAS_DEFAULT_MATH;
    print_message("GEMMSHIM_FP32=%s\n", cases[i].env ? cases[i].env : "(unset)");
    assert_int_equal(opted(&gs_kernel_f32_bf16x6, &g), cases[i].accurate);
    assert_int_equal(opted(&gs_kernel_f32_3xtf32, &g), cases[i].fast);
    g.math_mode = CUBLAS_FP32_EMULATED_BF16X9_MATH;
    assert_int_equal(opted(&gs_kernel_f32_bf16x6, &g), 1);
    assert_int_equal(opted(&gs_kernel_f32_3xtf32, &g), cases[i].fast);
  }
  unsetenv("GEMMSHIM_FP32");
  gs_config_reload();
}

/* Few rows: in layouts_few_rows, m = m_max is taken whatever n, by the
 * class and the launcher, and m = m_max + 1 with n over n_max refused by
 * both; a layout of few columns only (NN) with few rows and n over n_max,
 * and one of neither (NT), are refused by both. */
static void test_few_rows_class(void **s)
{
  (void)s;
  int bounded = 0;
  for (size_t i = 0; i < gs_n_variants; i++) {
    const gs_variant *v = gs_variants[i];
    if (!v->m_max) continue;
    bounded++;
    supports_fn supports = launcher_check(v->name);
    const int64_t wide = v->n_max ? v->n_max + 4093 : 4093, k = 2 * k_unit(v) + 1;
    for (int lay = 0; lay < 4; lay++) {
      int ta = lay & 1, tb = lay >> 1;
      gs_gemm at = call_of(v, ta, tb, v->m_max, wide, k, PAD_TO_ALIGNMENT, 0);
      gs_gemm one = call_of(v, ta, tb, 1, wide, k, PAD_TO_ALIGNMENT, 0);
      gs_gemm over = call_of(v, ta, tb, v->m_max + v->m_mult, wide, k, PAD_TO_ALIGNMENT, 0);
      print_message("%s %s%s: m_max %lld, n %lld\n", v->name, ta ? "T" : "N", tb ? "T" : "N",
                    (long long)v->m_max, (long long)wide);
      int takes = (v->layouts_few_rows >> lay) & 1;
      gs_reason refused = ((v->layouts | v->layouts_few_rows) >> lay) & 1 ? GS_R_SIZE_CLASS
                                                                         : GS_R_LAYOUT;
      assert_int_equal(gs_variant_fits_args(v, &at), takes ? GS_R_ROUTED : refused);
      assert_int_equal(gs_variant_fits_args(v, &one), takes ? GS_R_ROUTED : refused);
      assert_int_equal(gs_variant_fits_args(v, &over), refused);
      assert_int_equal(supports(at.m, at.n, at.k, ta, tb, at.A, at.lda, at.B, at.ldb, at.C, at.ldc, 1),
                       takes);
      assert_int_equal(
          supports(one.m, one.n, one.k, ta, tb, one.A, one.lda, one.B, one.ldb, one.C, one.ldc, 1),
          takes);
      assert_false(supports(over.m, over.n, over.k, ta, tb, over.A, over.lda, over.B, over.ldb,
                            over.C, over.ldc, 1));
      if (takes) assert_int_equal(gs_variant_fits_state(v, &at), GS_R_ROUTED);
      if (!takes) continue;
      /* one token's D is one row, ldc = 1: a class of few rows takes it
       * (the output needs only the element's alignment) */
      gs_gemm row = one;
      row.ldc = row.ldd = 1;
      assert_int_equal(v->out_align_bytes, v->elem_bytes);
      assert_int_equal(gs_variant_fits_state(v, &row), GS_R_ROUTED);
      assert_int_equal(supports(row.m, row.n, row.k, ta, tb, row.A, row.lda, row.B, row.ldb, row.C,
                                row.ldc, 1), 1);
      /* n past int (few rows), or k: neither */
      gs_gemm past = one;
      past.n = (int64_t)1 << 31;
      past.ldb = tb ? past.n : past.ldb;
      assert_int_equal(gs_variant_fits_args(v, &past), GS_R_SIZE_CLASS);
      assert_false(supports(past.m, past.n, past.k, ta, tb, past.A, past.lda, past.B, past.ldb,
                            past.C, past.ldc, 1));
      gs_gemm deep = call_of(v, ta, tb, 1, wide, (int64_t)1 << 31, PAD_TO_ALIGNMENT, 0);
      assert_int_equal(gs_variant_fits_args(v, &deep), GS_R_SIZE_CLASS);
      assert_false(supports(deep.m, deep.n, deep.k, ta, tb, deep.A, deep.lda, deep.B, deep.ldb,
                            deep.C, deep.ldc, 1));
    }
  }
  assert_true(bounded > 0);   /* the decode kernels */
}

/* Our kernels take int-sized dimensions: m = 2^31 with few columns is
 * refused by the class (GS_R_SIZE_CLASS), as by the launcher. */
static void test_int_dimensions(void **s)
{
  (void)s;
  for (size_t i = 0; i < gs_n_variants; i++) {
    const gs_variant *v = gs_variants[i];
    if (v->runs_cublaslt) continue;
    int ta, tb;
    first_layout(v, &ta, &tb);
    const int64_t big = ((int64_t)1 << 31) / v->m_mult * v->m_mult + v->m_mult;
    gs_gemm g = call_of(v, ta, tb, big, n_of(v, 2), 2 * k_unit(v), PAD_TO_ALIGNMENT, 0);
    print_message("%s: m %lld\n", v->name, (long long)big);
    assert_int_equal(gs_variant_fits_args(v, &g), GS_R_SIZE_CLASS);
    assert_false(launcher_check(v->name)(g.m, g.n, g.k, ta, tb, g.A, g.lda, g.B, g.ldb, g.C,
                                         g.ldc, 1));
  }
}

/* k_min is a bound of the size class and the launcher's own: k = k_min is
 * taken by both, k = k_min - 1 refused by both (GS_R_SIZE_CLASS). */
static void test_k_min_bounds_the_class(void **s)
{
  (void)s;
  int bounded = 0;
  for (size_t i = 0; i < gs_n_variants; i++) {
    const gs_variant *v = gs_variants[i];
    if (!v->k_min) continue;
    bounded++;
    supports_fn supports = launcher_check(v->name);
    for (int lay = 0; lay < 4; lay++) {
      int ta = lay & 1, tb = lay >> 1;
      if (!(v->layouts & (1u << lay))) continue;
      int64_t k_at = (v->k_min + v->k_mult - 1) / v->k_mult * v->k_mult;
      gs_gemm at = call_of(v, ta, tb, 2 * m_unit(v), n_of(v, 2), k_at, 0, 0);
      gs_gemm under = call_of(v, ta, tb, 2 * m_unit(v), n_of(v, 2), k_at - v->k_mult, 0, 0);
      print_message("%s %s%s: k_min %lld\n", v->name, ta ? "T" : "N", tb ? "T" : "N",
                    (long long)v->k_min);
      assert_int_equal(gs_variant_fits_args(v, &at), GS_R_ROUTED);
      assert_int_equal(gs_variant_fits_state(v, &at), GS_R_ROUTED);
      assert_true(supports(at.m, at.n, at.k, ta, tb, at.A, at.lda, at.B, at.ldb, at.C, at.ldc, 1));
      assert_int_equal(gs_variant_fits_args(v, &under), GS_R_SIZE_CLASS);
      assert_false(supports(under.m, under.n, under.k, ta, tb, under.A, under.lda, under.B,
                            under.ldb, under.C, under.ldc, 1));
    }
  }
  assert_true(bounded > 0);   /* the BF16x6 kernel's K >= 512 */
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_every_kernel_has_one_route),
    cmocka_unit_test(test_fields_make_sense),
    cmocka_unit_test(test_each_type_is_accepted_by_its_kernel),
    cmocka_unit_test(test_default_tables),
    cmocka_unit_test(test_table_never_accepts_what_the_launcher_refuses),
    cmocka_unit_test(test_n_max_bounds_the_class),
    cmocka_unit_test(test_k_min_bounds_the_class),
    cmocka_unit_test(test_few_rows_class),
    cmocka_unit_test(test_int_dimensions),
    cmocka_unit_test(test_fp32_tensor_core_opt_ins),
    cmocka_unit_test(test_default_rows_of_each_opt_in),
    cmocka_unit_test(test_default_rows_leave_out_wave_edges),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
