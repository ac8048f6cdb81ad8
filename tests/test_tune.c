/* gemmshim tune's logic (tools/tune.c) through a stand-in measurer and a
 * fake clock: which calls are measured, the verdict from two passes and
 * the noise, the table it writes (read back by the library's parser), and
 * that a run cut by its budget, or stopped, then resumed, writes the same
 * table as one uninterrupted run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <cublasLt.h>
#include <cublas_api.h>

#include "../dispatch/route_table.h"
#include "../tools/tune.h"

static char dir[256];

static void path_in(const char *name, char *out, size_t len)
{
  snprintf(out, len, "%s/%s", dir, name);
}

static char *slurp(const char *path)
{
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return strdup(buf);
}

static void spit(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int setup(void **s)
{
  (void)s;
  snprintf(dir, sizeof dir, "%s/test_tune.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  assert_non_null(mkdtemp(dir));
  return 0;
}

static int teardown(void **s)
{
  (void)s;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
  return 0;
}

static tn_key gemm_key(const char *dt, const char *layout, long long m, long long n, long long k)
{
  tn_key key;
  memset(&key, 0, sizeof key);
  snprintf(key.entry, sizeof key.entry, "gemm");
  snprintf(key.a_type, sizeof key.a_type, "%s", dt);
  snprintf(key.b_type, sizeof key.b_type, "%s", dt);
  snprintf(key.c_type, sizeof key.c_type, "%s", dt);
  snprintf(key.compute, sizeof key.compute, "%s", strcmp(dt, "f32") ? "32f" : "-");
  snprintf(key.layout, sizeof key.layout, "%s", layout);
  snprintf(key.epilogue, sizeof key.epilogue, "-");
  key.m = m, key.n = n, key.k = k, key.batch = 1, key.align = 16, key.math_mode = 0;
  key.workspace = key.workspace_max = -1;
  return key;
}

/* ---- which calls ---------------------------------------------------------- */

static void test_measurable_is_the_call_the_bench_makes(void **s)
{
  (void)s;
  char why[TN_WHY_LEN];
  tn_key k = gemm_key("bf16", "TN", 4096, 8, 4096);
  assert_true(tn_measurable(&k, why, sizeof why));
  assert_string_equal(why, "");
  /* the strided-batched entry: 16-bit batches, and FP32 with one item
   * (only the route cublaslt takes a batch, and it routes 16-bit data) */
  tn_key b = k;
  snprintf(b.entry, sizeof b.entry, "gemm_batched");
  b.batch = 4;
  assert_true(tn_measurable(&b, why, sizeof why));
  b.batch = 0;
  assert_false(tn_measurable(&b, why, sizeof why));
  tn_key bf = gemm_key("f32", "NN", 1024, 1024, 1024);
  snprintf(bf.entry, sizeof bf.entry, "gemm_batched");
  assert_true(tn_measurable(&bf, why, sizeof why));
  bf.batch = 4;
  assert_false(tn_measurable(&bf, why, sizeof why));
  assert_non_null(strstr(why, "no candidate takes a batch of FP32"));
  b = k;   /* the plain entry has no batch */
  b.batch = 4;
  assert_false(tn_measurable(&b, why, sizeof why));
  /* cublasLtMatmul: BF16 or FP16, epilogue default or bias, its
   * workspace known */
  tn_key l = k;
  snprintf(l.entry, sizeof l.entry, "lt");
  snprintf(l.epilogue, sizeof l.epilogue, "bias");
  l.math_mode = -1;
  l.workspace = l.workspace_max = 0;
  assert_true(tn_measurable(&l, why, sizeof why));
  snprintf(l.epilogue, sizeof l.epilogue, "default");
  l.workspace = l.workspace_max = 32 << 20;
  assert_true(tn_measurable(&l, why, sizeof why));
  b = l;
  b.workspace = b.workspace_max = -1;
  assert_false(tn_measurable(&b, why, sizeof why));
  assert_non_null(strstr(why, "workspace"));
  b = l;
  snprintf(b.epilogue, sizeof b.epilogue, "gelu_bias");
  assert_false(tn_measurable(&b, why, sizeof why));
  assert_non_null(strstr(why, "epilogue"));
  b = l;
  snprintf(b.epilogue, sizeof b.epilogue, "-");
  assert_false(tn_measurable(&b, why, sizeof why));
  b = l;
  b.batch = 2;   /* a batch in cuBLASLt's layouts */
  assert_true(tn_measurable(&b, why, sizeof why));
  tn_key lf = gemm_key("f32", "NN", 1024, 1024, 1024);
  snprintf(lf.entry, sizeof lf.entry, "lt");
  snprintf(lf.compute, sizeof lf.compute, "32f");
  snprintf(lf.epilogue, sizeof lf.epilogue, "default");
  lf.workspace = lf.workspace_max = 0;
  lf.math_mode = -1;
  assert_true(tn_measurable(&lf, why, sizeof why));   /* FP32 too (compute 32F) */
  snprintf(lf.compute, sizeof lf.compute, "-");        /* Sgemm's key: not a cuBLASLt call's */
  assert_false(tn_measurable(&lf, why, sizeof why));
  snprintf(lf.compute, sizeof lf.compute, "32f_fast_tf32");
  assert_false(tn_measurable(&lf, why, sizeof why));
  b = k;
  b.align = 8;
  assert_false(tn_measurable(&b, why, sizeof why));
  b = k;
  snprintf(b.c_type, sizeof b.c_type, "f32");
  assert_false(tn_measurable(&b, why, sizeof why));
  b = k;
  snprintf(b.epilogue, sizeof b.epilogue, "bias");
  assert_false(tn_measurable(&b, why, sizeof why));
  b = k;
  snprintf(b.compute, sizeof b.compute, "32f_fast_tf32");
  assert_false(tn_measurable(&b, why, sizeof why));
  tn_key f = gemm_key("f32", "NN", 1024, 1024, 1024);
  assert_true(tn_measurable(&f, why, sizeof why));
  f.math_mode = 3;   /* TF32 tensor-op math: cuBLAS would not run SGEMM */
  assert_false(tn_measurable(&f, why, sizeof why));
  f.math_mode = -1;  /* not said: as the default */
  assert_true(tn_measurable(&f, why, sizeof why));
}

#define V3_HEADER                                                                              \
  "# gemmshim log v3\n"                                                                        \
  "pid,entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,route,reason,count,"    \
  "device,entry_class,lda,ldb,ldc,ldd,stride_a,stride_b,stride_c,stride_d,align_a,align_b,"   \
  "align_c,align_d,align_lda,align_ldb,align_ldc,align_ldd,pointer_mode,math_mode,gpu_name,"  \
  "gpu_uuid,timed,median_us,est_total_us,captured,time_dropped\n"
#define ALIGN16 ",16,16,16,16,16,16,16,16,host,"
#define A16 ",0,0,0,0" ALIGN16
#define TAIL ",NVIDIA H200,GPU-1,-,-,-,-,-\n"

static void test_plan_from_a_log_distinct_and_measurable(void **s)
{
  (void)s;
  char log[512];
  path_in("calls.csv", log, sizeof log);
  spit(log, V3_HEADER
       /* the same call from two processes: once */
       "1,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,4096,8,4096,1,cublas,routing_off,30,0,gemm,"
       "4096,4096,4096,4096" A16 "0" TAIL
       "2,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,4096,8,4096,1,cublas,routing_off,30,0,gemm,"
       "4096,4096,4096,4096" A16 "0" TAIL
       "1,cublasSgemm_v2,f32,f32,f32,-,NN,-,1024,1024,1024,1,cublas,routing_off,5,0,gemm,"
       "1024,1024,1024,1024" A16 "0" TAIL
       /* TF32 math: not the SGEMM the bench times */
       "1,cublasSgemm_v2,f32,f32,f32,-,NT,-,1024,1024,1024,1,cublas,routing_off,5,0,gemm,"
       "1024,1024,1024,1024" A16 "3" TAIL
       "1,cublasGemmStridedBatchedEx,bf16,bf16,bf16,32f,NN,-,256,256,64,128,cublas,routing_off,"
       "5,0,gemm_batched,256,256,256,256,65536,16384,65536,65536" ALIGN16 "0" TAIL
       "1,cublasLtMatmul,bf16,bf16,bf16,32f,TN,bias,4096,2048,1024,1,cublas,routing_off,5,0,lt,"
       "1024,1024,4096,4096" A16 "-" TAIL);
  tn_plan p;
  tn_plan_init(&p);
  char err[TN_ERR_LEN];
  assert_int_equal(tn_plan_add_log(&p, log, err), 0);
  assert_int_equal(p.n, 3);
  assert_int_equal(p.n_skipped, 2);
  tn_plan_sort(&p);
  int batched = 0, lt = 0, tf32 = 0, bf16 = 0, f32 = 0;
  for (size_t i = 0; i < p.n; i++) {
    batched |= !strcmp(p.keys[i].entry, "gemm_batched") && p.keys[i].batch == 128;
    bf16 |= !strcmp(p.keys[i].entry, "gemm") && !strcmp(p.keys[i].a_type, "bf16") &&
            p.keys[i].m == 4096 && p.keys[i].n == 8;
    f32 |= !strcmp(p.keys[i].entry, "gemm") && !strcmp(p.keys[i].a_type, "f32");
  }
  for (size_t i = 0; i < p.n_skipped; i++) {
    lt |= !strcmp(p.skipped[i].entry, "lt");
    tf32 |= p.skipped[i].math_mode == 3 && strstr(p.skip_why[i], "math mode") != NULL;
  }
  assert_true(batched && bf16 && f32 && lt && tf32);
  tn_plan_free(&p);
}

#define V4_HEADER                                                                              \
  "# gemmshim log v4\n"                                                                        \
  "pid,entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,route,reason,count,"    \
  "device,entry_class,lda,ldb,ldc,ldd,stride_a,stride_b,stride_c,stride_d,align_a,align_b,"   \
  "align_c,align_d,align_lda,align_ldb,align_ldc,align_ldd,pointer_mode,math_mode,gpu_name,"  \
  "gpu_uuid,timed,median_us,est_total_us,captured,time_dropped,workspace\n"
#define LT_ROW(pid, epi, m, ws)                                                                  \
  #pid ",cublasLtMatmul,bf16,bf16,bf16,32f,TN," epi "," #m ",8,1024,1,cublas,routing_off,5,0,lt," \
  "1024,1024," #m "," #m A16 "-,NVIDIA H200,GPU-1,-,-,-,-,-," ws "\n"

/* A cuBLASLt call is measured with the least and the most workspace its
 * calls gave; one whose workspace a row (an older log's) does not say is
 * not. */
static void test_plan_lt_calls_take_the_least_workspace(void **s)
{
  (void)s;
  char v4[512], v3[512];
  path_in("lt-v4.csv", v4, sizeof v4);
  path_in("lt-v3.csv", v3, sizeof v3);
  spit(v4, V4_HEADER LT_ROW(1, "bias", 4096, "33554432") LT_ROW(2, "bias", 4096, "1048576")
           LT_ROW(3, "bias", 4096, "4194304") LT_ROW(1, "default", 2048, "0")
           LT_ROW(1, "bias", 1024, "8388608") LT_ROW(1, "gelu_bias", 3072, "0")
           "1,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,4096,8,4096,1,cublas,routing_off,30,0,gemm,"
           "4096,4096,4096,4096" A16 "0,NVIDIA H200,GPU-1,-,-,-,-,-,-\n");
  /* the 1024 call again, from a log that does not give its workspace */
  spit(v3, V3_HEADER "1,cublasLtMatmul,bf16,bf16,bf16,32f,TN,bias,1024,8,1024,1,cublas,routing_off,"
           "5,0,lt,1024,1024,1024,1024" A16 "-" TAIL);
  tn_plan p;
  tn_plan_init(&p);
  char err[TN_ERR_LEN];
  assert_int_equal(tn_plan_add_log(&p, v4, err), 0);
  assert_int_equal(p.n, 4);
  assert_int_equal(tn_plan_add_log(&p, v3, err), 0);
  assert_int_equal(p.n, 3);
  assert_int_equal(p.n_skipped, 2);
  tn_plan_sort(&p);
  long long ws_4096 = -2, max_4096 = -2, ws_2048 = -2, max_2048 = -2, ws_gemm = -2;
  for (size_t i = 0; i < p.n; i++) {
    const tn_key *k = &p.keys[i];
    if (!strcmp(k->entry, "lt") && k->m == 4096) ws_4096 = k->workspace, max_4096 = k->workspace_max;
    if (!strcmp(k->entry, "lt") && k->m == 2048) ws_2048 = k->workspace, max_2048 = k->workspace_max;
    if (!strcmp(k->entry, "gemm")) ws_gemm = k->workspace;
  }
  assert_int_equal(ws_4096, 1048576);
  assert_int_equal(max_4096, 33554432);
  assert_int_equal(ws_2048, 0);
  assert_int_equal(max_2048, 0);
  assert_int_equal(ws_gemm, -1);
  int gelu = 0, unknown = 0;
  for (size_t i = 0; i < p.n_skipped; i++) {
    gelu |= !strcmp(p.skipped[i].epilogue, "gelu_bias") && strstr(p.skip_why[i], "epilogue");
    unknown |= p.skipped[i].m == 1024 && strstr(p.skip_why[i], "workspace") != NULL;
  }
  assert_true(gelu && unknown);
  /* and in the other order: the call stays unmeasured */
  tn_plan q;
  tn_plan_init(&q);
  assert_int_equal(tn_plan_add_log(&q, v3, err), 0);
  assert_int_equal(tn_plan_add_log(&q, v4, err), 0);
  assert_int_equal(q.n, 3);
  assert_int_equal(q.n_skipped, 2);
  tn_plan_free(&q);
  tn_plan_free(&p);
}

/* The table's key does not hold the math mode: the same FP32 call in the
 * default mode (measured) and in TF32 math (not) are each kept, in either
 * order. */
static void test_plan_keeps_each_math_mode_in_its_list(void **s)
{
  (void)s;
  for (int order = 0; order < 2; order++) {
    tn_key plain = gemm_key("f32", "NN", 1024, 1024, 1024), tf32 = plain;
    tf32.math_mode = 3;
    tn_plan p;
    tn_plan_init(&p);
    assert_int_equal(tn_plan_add(&p, order ? &tf32 : &plain), 0);
    assert_int_equal(tn_plan_add(&p, order ? &plain : &tf32), 0);
    assert_int_equal(p.n, 1);
    assert_int_equal(p.n_skipped, 1);
    assert_int_equal(p.keys[0].math_mode, 0);
    tn_plan_free(&p);
  }
  /* a cuBLASLt call's workspace over what the bench gives: not measured */
  tn_key l = gemm_key("bf16", "TN", 4096, 8, 4096);
  snprintf(l.entry, sizeof l.entry, "lt");
  snprintf(l.epilogue, sizeof l.epilogue, "bias");
  l.math_mode = -1;
  l.workspace = 0;
  l.workspace_max = TN_MAX_WORKSPACE + 1;
  char why[TN_WHY_LEN];
  assert_false(tn_measurable(&l, why, sizeof why));
  assert_non_null(strstr(why, "workspace"));
  l.workspace_max = TN_MAX_WORKSPACE;
  assert_true(tn_measurable(&l, why, sizeof why));
}

static void test_plan_from_a_shape_file(void **s)
{
  (void)s;
  char path[512], err[TN_ERR_LEN];
  path_in("shapes.txt", path, sizeof path);
  spit(path, "# weights\n4096 1 4096 TN bf16\n 1024 8 4096 tn bf16 # GQA k/v\n\n"
             "4096 4096 4096 NN f32\n4096 1 4096 TN bf16\n");
  tn_plan p;
  tn_plan_init(&p);
  assert_int_equal(tn_plan_add_shapes(&p, path, err), 0);
  assert_int_equal(p.n, 3);
  tn_plan_sort(&p);
  assert_string_equal(p.keys[0].layout, "TN");
  assert_int_equal(p.keys[0].m, 1024);
  assert_string_equal(p.keys[2].compute, "-");   /* f32: cublasSgemm_v2's key */
  tn_plan_free(&p);

  spit(path, "4096 1 4096 TN bf16\n4096 1 4096 XN bf16\n");
  tn_plan_init(&p);
  assert_int_equal(tn_plan_add_shapes(&p, path, err), -1);
  assert_non_null(strstr(err, "shapes.txt:2: expected"));
  tn_plan_free(&p);
  spit(path, "4096 1 TN bf16\n");
  tn_plan_init(&p);
  assert_int_equal(tn_plan_add_shapes(&p, path, err), -1);
  assert_non_null(strstr(err, "shapes.txt:1:"));
  tn_plan_free(&p);
  /* cuBLASLt calls: the workspace a whole number of bytes up to 2^31 - 1 */
  spit(path, "4096 8 4096 TN bf16 lt 2147483647 bias\n4096 8 4096 TN bf16 lt 0\n");
  tn_plan_init(&p);
  assert_int_equal(tn_plan_add_shapes(&p, path, err), 0);
  assert_int_equal(p.n, 2);
  tn_plan_sort(&p);
  assert_string_equal(p.keys[0].entry, "lt");
  assert_string_equal(p.keys[0].epilogue, "bias");
  assert_int_equal(p.keys[0].workspace, 2147483647LL);
  assert_string_equal(p.keys[1].epilogue, "default");
  assert_int_equal(p.keys[1].workspace, 0);
  tn_plan_free(&p);
  const char *bad[] = { "4096 8 4096 TN bf16 lt 2147483648\n", "4096 8 4096 TN bf16 lt\n",
                        "4096 8 4096 TN bf16 lt 99999999999999999999999\n",
                        "4096 8 4096 TN bf16 lt 5x\n", "4096 8 4096 TN bf16 lt 5 relu\n",
                        "4096 8 4096 TN bf16 lt 5 bias extra\n", "4096 8 4096 TN bf16 gemm 5\n" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    spit(path, bad[i]);
    tn_plan_init(&p);
    assert_int_equal(tn_plan_add_shapes(&p, path, err), -1);
    assert_non_null(strstr(err, "lt WORKSPACE"));
    tn_plan_free(&p);
  }
}

/* ---- the verdict ------------------------------------------------------------ */

static tn_sample measured(double ratio, double ours_us)
{
  tn_sample s;
  memset(&s, 0, sizeof s);
  s.outcome = TN_MEASURED;
  s.ratio = ratio;
  s.ours_us = ours_us;
  s.cublas_us = ours_us * ratio;
  return s;
}

static const tn_kernel two[2] = { { "kern_a", "bf16", 0, "" }, { "kern_b", "bf16", 0, "" } };

static void test_decide_needs_both_passes_above_the_noise(void **s)
{
  (void)s;
  tn_sample self[2] = { measured(1.004, 10), measured(0.99, 10.1) };
  tn_sample cand[4] = { measured(1.05, 9.5), measured(1.03, 9.7),     /* kern_a */
                        measured(1.20, 8.3), measured(1.01, 9.9) };   /* kern_b: one pass low */
  tn_verdict v;
  tn_decide(self, two, 2, cand, &v);
  assert_string_equal(v.route, "kern_a");
  assert_true(fabs(v.ratio - 1.03) < 1e-12);      /* the lower pass */
  assert_true(fabs(v.time_us - 9.7) < 1e-12);     /* the slower pass */
  assert_true(fabs(v.noise - 0.01) < 1e-12);
  assert_true(fabs(v.threshold - 1.02) < 1e-12);

  /* noise of 4%: 1.03 is not enough */
  self[1] = measured(0.96, 10);
  tn_decide(self, two, 2, cand, &v);
  assert_string_equal(v.route, "cublas");
  assert_true(fabs(v.threshold - 1.04) < 1e-12);
  assert_true(v.ratio == 1);
  assert_non_null(strstr(v.why, "kern_a"));

  /* the better of two winners by its lower pass */
  self[1] = measured(1.0, 10);
  cand[3] = measured(1.10, 9.0);
  tn_decide(self, two, 2, cand, &v);
  assert_string_equal(v.route, "kern_b");
  assert_true(fabs(v.ratio - 1.10) < 1e-12);

  /* a kernel wrong in one pass is out */
  cand[3].outcome = TN_WRONG;
  tn_decide(self, two, 2, cand, &v);
  assert_string_equal(v.route, "kern_a");

  /* launch pdl only where the winner launched so in both passes */
  cand[0].pdl = cand[1].pdl = 1;
  tn_decide(self, two, 2, cand, &v);
  assert_string_equal(v.route, "kern_a");
  assert_int_equal(v.pdl, 1);
  cand[1].pdl = 0;
  tn_decide(self, two, 2, cand, &v);
  assert_int_equal(v.pdl, 0);
  /* a cuBLAS verdict holds however our kernels launch */
  cand[0] = measured(0.9, 11);
  cand[0].pdl = cand[1].pdl = 1;
  tn_decide(self, two, 2, cand, &v);
  assert_string_equal(v.route, "cublas");
  assert_int_equal(v.pdl, 0);

  /* no noise measured: no route at all */
  self[0].outcome = TN_FAILED;
  tn_decide(self, two, 2, cand, &v);
  assert_string_equal(v.route, "cublas");
  assert_true(isinf(v.threshold));
}

/* ---- the run --------------------------------------------------------------- */

/* The stand-in: kern_a wins on m = 4096 (1.10x, 1.08x), loses elsewhere
 * (0.95x); kern_b takes only n <= 8 and is at 1.01x there; cuBLAS against
 * itself 1.002 / 0.998. Each measurement takes 10 fake seconds. */
typedef struct fake {
  double clock;
  int measures;
  int stop_after;     /* stop() answers 1 once measures reaches it (0: never) */
  int fatal_at;       /* measure fails fatally at this count (0: never) */
  int self_fails;     /* cuBLAS against itself fails (a bench that cannot run here) */
  long long self_outside_m;   /* cuBLAS does not make calls of this m (no algorithm) */
  int tc_asked;       /* times kern_tc (opt-in, GEMMSHIM_FP32=tc) was measured */
  int fast_asked;     /* times kern_fast (opt-in, GEMMSHIM_FP32=tc-fast) was measured */
} fake;

static int fake_measure(void *ctx, const tn_key *k, const char *kernel, int self, int pass,
                        tn_sample *out, char err[TN_ERR_LEN])
{
  fake *f = ctx;
  f->clock += 10;
  f->measures++;
  if (f->fatal_at && f->measures == f->fatal_at) {
    snprintf(err, TN_ERR_LEN, "the GPU fell off the bus");
    return -1;
  }
  double r;
  if (self && f->self_outside_m == k->m) {
    memset(out, 0, sizeof *out);
    out->outcome = TN_OUTSIDE;
    snprintf(out->why, sizeof out->why, "cuBLASLt has no algorithm for the call");
    return 0;
  }
  if (self && f->self_fails) {
    memset(out, 0, sizeof *out);
    out->outcome = TN_FAILED;
    snprintf(out->why, sizeof out->why, "bench: kern_a is built for sm_90; device 0 is sm_80");
    return 0;
  }
  if (!self && !strcmp(kernel, "kern_tc")) {
    f->tc_asked++;
    *out = measured(3.0, 10);
    return 0;
  }
  if (!self && !strcmp(kernel, "kern_fast")) {
    f->fast_asked++;
    *out = measured(4.0, 7.5);
    return 0;
  }
  if (self) r = pass ? 0.998 : 1.002;
  else if (!strcmp(kernel, "kern_a")) r = k->m == 4096 ? (pass ? 1.08 : 1.10) : 0.95;
  else {
    if (k->n > 8) {
      memset(out, 0, sizeof *out);
      out->outcome = TN_OUTSIDE;
      snprintf(out->why, sizeof out->why, "outside its class: size_class");
      return 0;
    }
    r = 1.01;
  }
  *out = measured(r, 100.0 / r);
  out->sm_mhz = 1755;
  out->pdl = !self && !strcmp(kernel, "kern_a");   /* kern_a launches as the decode kernels */
  return 0;
}
static double fake_now(void *ctx) { return ((fake *)ctx)->clock; }
static int fake_stop(void *ctx)
{
  fake *f = ctx;
  return f->stop_after && f->measures >= f->stop_after;
}

static const char validators[] =
  "Validator,gpu_name,NVIDIA H200\nValidator,compute_capability,9.0\nValidator,sm_count,132\n"
  "Validator,cublas_version,13.1.0\nValidator,shim_version,0.1.0\n"
  "Validator,kernel_table,0123456789abcdef\nValidator,driver_version,580.159.04\n"
  "Validator,power_limit_w,700\n";

static void make_plan(tn_plan *p)
{
  tn_plan_init(p);
  const long long ms[4] = { 4096, 1024, 4096, 2048 };
  const long long ns[4] = { 8, 8, 4096, 1 };
  for (int i = 0; i < 4; i++) {
    tn_key k = gemm_key("bf16", i & 1 ? "NN" : "TN", ms[i], ns[i], 4096);
    assert_int_equal(tn_plan_add(p, &k), 0);
  }
  tn_key f = gemm_key("f32", "NN", 4096, 4096, 4096);   /* no f32 kernel here */
  assert_int_equal(tn_plan_add(p, &f), 0);
}

typedef int (*measure_lt_fn)(void *, const tn_key *, int, const tn_lt_cand *, size_t,
                             tn_lt_cand *, size_t, size_t *, char[TN_ERR_LEN]);

/* make_plan's calls tuned into table over kernels (measure_lt: NULL, or
 * the cuBLASLt stand-in for TN_LT_ROUTE). */
static int run_over(const char *table, fake *f, double budget, int resume, tn_run_result *res,
                    char err[TN_ERR_LEN], const tn_kernel *kernels, size_t n_kernels,
                    measure_lt_fn measure_lt)
{
  char csv[512];
  snprintf(csv, sizeof csv, "%.400s.measurements", table);
  tn_plan p;
  make_plan(&p);
  tn_run_opts o = { .table_path = table, .csv_path = csv, .validators = validators,
                    .budget_s = budget, .resume = resume };
  tn_ops ops = { .measure = fake_measure, .measure_lt = measure_lt, .now = fake_now,
                 .stop = fake_stop, .ctx = f };
  int rc = tn_run(&p, kernels, n_kernels, &o, &ops, res, err);
  tn_plan_free(&p);
  return rc;
}

static int run(const char *table, fake *f, double budget, int resume, tn_run_result *res,
               char err[TN_ERR_LEN])
{
  return run_over(table, f, budget, resume, res, err, two, 2, NULL);
}

/* The two files hold the same text. */
static void assert_same_file(const char *x, const char *y)
{
  char *a = slurp(x), *b = slurp(y);
  assert_non_null(a);
  assert_non_null(b);
  assert_string_equal(a, b);
  free(a);
  free(b);
}

static void test_run_writes_a_table_the_library_reads(void **s)
{
  (void)s;
  char table[512], err[TN_ERR_LEN];
  path_in("routes.csv", table, sizeof table);
  fake f = { 0 };
  tn_run_result res;
  assert_int_equal(run(table, &f, 0, 0, &res, err), 0);
  assert_int_equal(res.tuned, 4);
  assert_int_equal(res.failed, 1);   /* f32: no kernel of that type */
  assert_int_equal(res.routed, 2);
  assert_int_equal(res.stopped, 0);
  /* per bf16 key: (self + 2 kernels) x 2 passes, kern_b's pass 2 skipped
   * where it is outside */
  assert_int_equal(f.measures, 6 + 6 + 5 + 6);
  char *text = slurp(table);
  assert_non_null(text);
  gs_route_table *t = gs_rt_parse(text, strlen(text), table, NULL, 0, NULL);
  assert_non_null(t);
  assert_int_equal(t->n_bad, 0);
  assert_int_equal(t->n_rows, 4);
  assert_string_equal(t->value[GS_V_GPU_NAME], "NVIDIA H200");
  assert_string_equal(t->value[GS_V_POWER_LIMIT_W], "700");
  int routed = 0;
  for (size_t i = 0; i < t->n_rows; i++) {
    const gs_rt_row *r = &t->rows[i];
    assert_true(r->exact);
    if (r->m.lo == 4096) {
      assert_string_equal(r->route, "kern_a");
      assert_true(fabs(r->ratio - 1.08) < 1e-9);
      assert_int_equal(r->needs_pdl, 1);   /* measured launched with PDL: says so */
      routed++;
    } else {
      assert_string_equal(r->route, "cublas");
      assert_int_equal(r->needs_pdl, 0);
    }
  }
  assert_int_equal(routed, 2);
  gs_rt_free(t);
  /* every measurement and verdict in the CSV */
  char csv[512];
  snprintf(csv, sizeof csv, "%.400s.measurements", table);
  char *c = slurp(csv);
  assert_non_null(c);
  int lines = 0, verdicts = 0;
  for (char *p = c; *p; p++) lines += *p == '\n';
  for (char *p = c; (p = strstr(p, ",verdict,")); p++) verdicts++;
  assert_int_equal(verdicts, 4);
  assert_int_equal(lines, 1 + 4 + 6 + 6 + 6 + 6);   /* header, verdicts, samples */
  free(c);
  free(text);

  /* a second run into the same table without --resume: refused, the table kept */
  fake g = { 0 };
  assert_int_equal(run(table, &g, 0, 0, &res, err), -1);
  assert_non_null(strstr(err, "exists: --resume"));
  assert_int_equal(g.measures, 0);
}

static void test_budget_then_resume_writes_the_same_table(void **s)
{
  (void)s;
  char whole[512], cut[512], err[TN_ERR_LEN];
  path_in("whole.csv", whole, sizeof whole);
  path_in("cut.csv", cut, sizeof cut);
  fake f = { 0 };
  tn_run_result res;
  assert_int_equal(run(whole, &f, 0, 0, &res, err), 0);

  /* 130 fake seconds: the first key takes 60, the second would end at 120,
   * the third would pass the budget: two keys, then stop */
  fake g = { 0 };
  assert_int_equal(run(cut, &g, 130, 0, &res, err), 0);
  assert_int_equal(res.stopped, 2);
  assert_int_equal(res.tuned, 2);
  assert_int_equal(res.left, 3);
  assert_true(g.clock <= 130);
  char *part = slurp(cut);
  assert_non_null(part);
  gs_route_table *t = gs_rt_parse(part, strlen(part), cut, NULL, 0, NULL);
  assert_int_equal(t->n_rows, 2);
  gs_rt_free(t);
  free(part);
  /* resumed in pieces of one key */
  for (int i = 0; i < 10 && res.left; i++) {
    fake h = { 0 };
    assert_int_equal(run(cut, &h, 1, 1, &res, err), 0);
  }
  assert_int_equal(res.left, 0);
  assert_same_file(whole, cut);
}

/* cuBLASLt's algorithms as candidates (TN_LT_ROUTE): the stand-in offers
 * three for every call: #1 at 0.97x, #2 at 1.05x where n = 4096 (0.99x
 * elsewhere), #3 at 1.06x in the first pass and 1.00x in the second (a
 * lucky sample). The second pass must be asked for exactly the first
 * pass's algorithms, in their order. Each run takes 10 fake seconds. */
static const char *const lt_algos[3] = {
  "id=1;tile=18;splitk=1;reduction=0;swizzle=0;custom=0;stages=10;inner=0;cluster=0;workspace=0",
  "id=2;tile=20;splitk=1;reduction=0;swizzle=1;custom=0;stages=12;inner=0;cluster=0;workspace=0",
  "id=3;tile=24;splitk=2;reduction=2;swizzle=0;custom=1;stages=12;inner=0;cluster=3;workspace=0",
};

static int fake_measure_lt(void *ctx, const tn_key *k, int pass, const tn_lt_cand *given,
                           size_t n_given, tn_lt_cand *out, size_t max, size_t *n_out,
                           char err[TN_ERR_LEN])
{
  (void)err;
  fake *f = ctx;
  f->clock += 10;
  f->measures++;
  if (pass == 0) {
    assert_null(given);
    assert_true(max >= 3);
  } else {
    assert_int_equal(n_given, 3);
    for (int i = 0; i < 3; i++) assert_string_equal(given[i].algo, lt_algos[i]);
  }
  const double r[3] = { 0.97, k->n == 4096 ? 1.05 : 0.99, pass ? 1.00 : 1.06 };
  for (int i = 0; i < 3; i++) {
    memset(&out[i], 0, sizeof out[i]);
    snprintf(out[i].algo, sizeof out[i].algo, "%s", lt_algos[i]);
    out[i].rank = i + 1;
    out[i].s = measured(r[i], 100.0 / r[i]);
    snprintf(out[i].s.why, sizeof out[i].s.why, "%s", lt_algos[i]);
  }
  *n_out = 3;
  return 0;
}

static const tn_kernel with_lt[3] = { { "kern_a", "bf16", 0, "" }, { "kern_b", "bf16", 0, "" },
                                      { TN_LT_ROUTE, "bf16", 0, "" } };

static int run_lt(const char *table, fake *f, double budget, int resume, tn_run_result *res,
                  char err[TN_ERR_LEN])
{
  return run_over(table, f, budget, resume, res, err, with_lt, 3, fake_measure_lt);
}

/* The algorithm that won both passes gets the row, written out in
 * lt_algo; one that won only the first does not; kern_a keeps its calls
 * (1.08x beats 1.05x where both win); the library reads the table, with
 * the algorithm on the row; --budget then --resume writes the same table. */
static void test_cublaslt_algorithms_are_candidates(void **s)
{
  (void)s;
  char whole[512], cut[512], err[TN_ERR_LEN];
  path_in("lt-whole.csv", whole, sizeof whole);
  path_in("lt-cut.csv", cut, sizeof cut);
  fake f = { 0 };
  tn_run_result res;
  assert_int_equal(run_lt(whole, &f, 0, 0, &res, err), 0);
  char *text = slurp(whole);
  assert_non_null(text);
  /* 4096x4096x4096 TN: kern_a 1.08 against #2 1.05 */
  assert_non_null(strstr(text, "gemm,bf16,bf16,bf16,32f,TN,-,4096,4096,4096,1,16,kern_a,"));
  /* 1024x8x4096 NN: kern_a 0.95, kern_b 1.01, #2 0.99, #3 1.06 then 1.00: cublas */
  assert_non_null(strstr(text, "gemm,bf16,bf16,bf16,32f,NN,-,1024,8,4096,1,16,cublas,"));
  assert_null(strstr(text, lt_algos[2]));
  free(text);
  /* a call only #2 wins: n = 4096, m not 4096 */
  char table[512];
  path_in("lt-one.csv", table, sizeof table);
  tn_plan p;
  tn_plan_init(&p);
  tn_key k = gemm_key("bf16", "NT", 2048, 4096, 4096);
  assert_int_equal(tn_plan_add(&p, &k), 0);
  char csv[600];
  snprintf(csv, sizeof csv, "%s.measurements", table);
  tn_run_opts o = { .table_path = table, .csv_path = csv, .validators = validators };
  fake g = { 0 };
  tn_ops ops = { .measure = fake_measure, .measure_lt = fake_measure_lt, .now = fake_now,
                 .ctx = &g };
  assert_int_equal(tn_run(&p, with_lt, 3, &o, &ops, &res, err), 0);
  tn_plan_free(&p);
  text = slurp(table);
  char want[512];
  snprintf(want, sizeof want, "gemm,bf16,bf16,bf16,32f,NT,-,2048,4096,4096,1,16,cublaslt,95.24,1.0500,%s,plain\n",
           lt_algos[1]);
  assert_non_null(strstr(text, want));
  gs_route_table *t = gs_rt_parse(text, strlen(text), table, NULL, 0, NULL);
  assert_int_equal(t->n_bad, 0);
  assert_int_equal(t->n_rows, 1);
  assert_true(t->rows[0].has_algo);
  assert_int_equal(t->rows[0].algo.id, 2);
  assert_int_equal(t->rows[0].algo.swizzle, 1);
  gs_rt_free(t);
  free(text);
  /* the measurements name each algorithm measured, both passes */
  text = slurp(csv);
  assert_non_null(strstr(text, ",cublaslt#2,2,measured,"));
  assert_non_null(strstr(text, lt_algos[1]));
  free(text);

  /* in pieces: the same table */
  fake h = { 0 };
  assert_int_equal(run_lt(cut, &h, 100, 0, &res, err), 0);
  assert_int_equal(res.stopped, 2);
  for (int i = 0; i < 10 && res.left; i++) {
    fake r = { 0 };
    assert_int_equal(run_lt(cut, &r, 1, 1, &res, err), 0);
  }
  assert_int_equal(res.left, 0);
  assert_same_file(whole, cut);
}

static void test_stop_leaves_no_half_measured_call(void **s)
{
  (void)s;
  char whole[512], cut[512], err[TN_ERR_LEN];
  path_in("w2.csv", whole, sizeof whole);
  path_in("c2.csv", cut, sizeof cut);
  fake f = { 0 };
  tn_run_result res;
  assert_int_equal(run(whole, &f, 0, 0, &res, err), 0);
  /* Ctrl-C during the second key's first pass */
  fake g = { .stop_after = 8 };
  assert_int_equal(run(cut, &g, 0, 0, &res, err), 0);
  assert_int_equal(res.stopped, 1);
  assert_int_equal(res.tuned, 1);
  char *part = slurp(cut);
  gs_route_table *t = gs_rt_parse(part, strlen(part), cut, NULL, 0, NULL);
  assert_int_equal(t->n_rows, 1);
  gs_rt_free(t);
  free(part);
  fake h = { 0 };
  assert_int_equal(run(cut, &h, 0, 1, &res, err), 0);
  assert_int_equal(res.kept, 1);
  assert_int_equal(res.tuned, 3);
  assert_same_file(whole, cut);
}

static void test_resume_refuses_another_gpus_table(void **s)
{
  (void)s;
  char table[512], err[TN_ERR_LEN];
  path_in("other.csv", table, sizeof table);
  spit(table, "Validator,gpu_name,NVIDIA H100 80GB HBM3\nValidator,compute_capability,9.0\n"
              "Validator,sm_count,132\nValidator,cublas_version,13.1.0\n"
              "Validator,shim_version,0.1.0\nValidator,kernel_table,0123456789abcdef\n"
              "Validator,driver_version,580.159.04\nValidator,power_limit_w,700\n"
              "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,"
              "time_us,ratio\n");
  fake f = { 0 };
  tn_run_result res;
  assert_int_equal(run(table, &f, 0, 1, &res, err), -1);
  assert_non_null(strstr(err, "gpu_name is 'NVIDIA H100 80GB HBM3', 'NVIDIA H200' here"));
  assert_int_equal(f.measures, 0);
  /* nothing to resume */
  path_in("none.csv", table, sizeof table);
  assert_int_equal(run(table, &f, 0, 1, &res, err), -1);
  assert_non_null(strstr(err, "nothing to resume"));
  /* a hand-made row with a range is not one to go on with */
  path_in("ranged.csv", table, sizeof table);
  char text[2048];
  snprintf(text, sizeof text, "%sentry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,"
           "align,route,time_us,ratio,lt_algo,launch\ngemm,bf16,bf16,bf16,32f,TN,-,1024-4096,8,4096,"
           "1,16,cublas,-,1,-,plain\n", validators);
  spit(table, text);
  assert_int_equal(run(table, &f, 0, 1, &res, err), -1);
  assert_non_null(strstr(err, "ranged.csv:10: not a row gemmshim tune writes"));
}

static void test_a_fatal_measurement_keeps_the_finished_rows(void **s)
{
  (void)s;
  char table[512], err[TN_ERR_LEN];
  path_in("fatal.csv", table, sizeof table);
  fake f = { .fatal_at = 9 };   /* in the second key */
  tn_run_result res;
  assert_int_equal(run(table, &f, 0, 0, &res, err), -1);
  assert_string_equal(err, "the GPU fell off the bus");
  char *text = slurp(table);
  gs_route_table *t = gs_rt_parse(text, strlen(text), table, NULL, 0, NULL);
  assert_int_equal(t->n_rows, 1);
  gs_rt_free(t);
  free(text);
}

static void test_no_cublas_measurement_no_table(void **s)
{
  (void)s;
  char table[512], err[TN_ERR_LEN];
  path_in("nogpu.csv", table, sizeof table);
  fake f = { .self_fails = 1 };
  tn_run_result res;
  assert_int_equal(run(table, &f, 0, 0, &res, err), -1);
  assert_non_null(strstr(err, "cuBLAS could not be measured"));
  assert_non_null(strstr(err, "sm_80"));
  assert_int_equal(f.measures, 1);   /* no kernel measured without the noise */
  struct stat st;
  assert_int_not_equal(stat(table, &st), 0);
}

/* A call cuBLAS itself does not make here (no cuBLASLt algorithm for it)
 * gets no row, said, and the run goes on, even when it is the first. */
static void test_a_call_cublas_does_not_make_is_that_calls_alone(void **s)
{
  (void)s;
  char table[512], err[TN_ERR_LEN];
  path_in("outside.csv", table, sizeof table);
  fake f = { .self_outside_m = 1024 };   /* the first call in the table's order */
  tn_run_result res;
  assert_int_equal(run(table, &f, 0, 0, &res, err), 0);
  assert_int_equal(res.tuned, 3);
  assert_int_equal(res.failed, 2);       /* that call, and f32 (no kernel of its type) */
  char *text = slurp(table);
  assert_non_null(text);
  assert_null(strstr(text, ",NN,-,1024,8,4096,"));
  assert_non_null(strstr(text, ",TN,-,4096,8,4096,1,16,kern_a,"));
  free(text);
  char csv[600];
  snprintf(csv, sizeof csv, "%s.measurements", table);
  text = slurp(csv);
  assert_non_null(strstr(text, "cuBLAS itself does not make the call here (cuBLASLt has no "
                               "algorithm for the call)"));
  free(text);
}

/* A kernel that serves only opted-in calls is a candidate only when its own
 * opt-in is asked for (--fp32-tc, --fp32-tc-fast): a plain call's log does
 * not say the program opted in, and a table made for one mode must not name
 * the other mode's kernel (it would not serve there). */
static void test_opt_in_kernels_only_when_asked(void **s)
{
  (void)s;
  const tn_kernel kernels[3] = { { "kern_f32", "f32", 0, "" },
                                 { "kern_tc", "f32", TN_OPT_IN_TC, "" },
                                 { "kern_fast", "f32", TN_OPT_IN_TC_FAST, "" } };
  static const char *const want[3] = { ",cublas,", ",kern_tc,10.00,3.0000,-,plain\n",
                                       ",kern_fast,7.50,4.0000,-,plain\n" };
  char table[512], csv[512], err[TN_ERR_LEN];
  for (int asked = 0; asked < 3; asked++) {
    snprintf(table, sizeof table, "%s/optin%d.csv", dir, asked);
    snprintf(csv, sizeof csv, "%s/optin%d.m", dir, asked);
    tn_plan p;
    tn_plan_init(&p);
    tn_key k = gemm_key("f32", "NN", 4096, 4096, 4096);
    assert_int_equal(tn_plan_add(&p, &k), 0);
    fake f = { 0 };
    tn_run_opts o = { .table_path = table, .csv_path = csv, .validators = validators,
                      .opt_in = asked };
    tn_ops ops = { .measure = fake_measure, .now = fake_now, .ctx = &f };
    tn_run_result res;
    assert_int_equal(tn_run(&p, kernels, 3, &o, &ops, &res, err), 0);
    tn_plan_free(&p);
    assert_int_equal(f.tc_asked, asked == TN_OPT_IN_TC ? 2 : 0);
    assert_int_equal(f.fast_asked, asked == TN_OPT_IN_TC_FAST ? 2 : 0);
    char *text = slurp(table);
    assert_non_null(strstr(text, want[asked]));
    assert_null(strstr(text, asked == TN_OPT_IN_TC ? "kern_fast" : "kern_tc"));
    free(text);
  }
}

/* The table's row is found by the library for the call it describes: the
 * key the tuner writes is the key gs_rt_key_of computes. */
static void test_a_written_row_is_found_for_the_call(void **s)
{
  (void)s;
  char table[512], err[TN_ERR_LEN];
  path_in("found.csv", table, sizeof table);
  fake f = { 0 };
  tn_run_result res;
  assert_int_equal(run(table, &f, 0, 0, &res, err), 0);
  char *text = slurp(table);
  gs_route_table *t = gs_rt_parse(text, strlen(text), table, NULL, 0, NULL);
  free(text);
  /* cublasGemmEx bf16 TN 4096 x 8 x 4096, as interpose.c describes it */
  gs_gemm g;
  memset(&g, 0, sizeof g);
  g.entry = GS_NONE;
  g.entry_name = "cublasGemmEx";
  g.a_type = g.b_type = g.c_type = g.d_type = CUDA_R_16BF;
  g.compute_type = CUBLAS_COMPUTE_32F;
  g.scale_type = g.epilogue = g.bias_type = GS_NONE;
  g.trans_a = CUBLAS_OP_T, g.trans_b = CUBLAS_OP_N;
  g.m = 4096, g.n = 8, g.k = 4096, g.batch = 1;
  g.lda = 4096, g.ldb = 4096, g.ldc = g.ldd = 4096;
  g.A = (const void *)0x10000, g.B = (const void *)0x20000;
  g.C = (const void *)0x30000, g.D = (void *)0x30000;
  gs_rt_key key;
  gs_rt_key_of(&g, &key);
  const gs_rt_row *row = gs_rt_find(t, &key);
  assert_non_null(row);
  assert_string_equal(row->route, "kern_a");
  assert_true(row->exact);
  g.ldb = 4100;   /* an 8-byte aligned leading dimension: another key, no row */
  gs_rt_key_of(&g, &key);
  assert_null(gs_rt_find(t, &key));
  gs_rt_free(t);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_measurable_is_the_call_the_bench_makes),
    cmocka_unit_test(test_plan_from_a_log_distinct_and_measurable),
    cmocka_unit_test(test_plan_lt_calls_take_the_least_workspace),
    cmocka_unit_test(test_plan_from_a_shape_file),
    cmocka_unit_test(test_plan_keeps_each_math_mode_in_its_list),
    cmocka_unit_test(test_decide_needs_both_passes_above_the_noise),
    cmocka_unit_test(test_run_writes_a_table_the_library_reads),
    cmocka_unit_test(test_budget_then_resume_writes_the_same_table),
    cmocka_unit_test(test_cublaslt_algorithms_are_candidates),
    cmocka_unit_test(test_stop_leaves_no_half_measured_call),
    cmocka_unit_test(test_resume_refuses_another_gpus_table),
    cmocka_unit_test(test_a_fatal_measurement_keeps_the_finished_rows),
    cmocka_unit_test(test_no_cublas_measurement_no_table),
    cmocka_unit_test(test_a_call_cublas_does_not_make_is_that_calls_alone),
    cmocka_unit_test(test_opt_in_kernels_only_when_asked),
    cmocka_unit_test(test_a_written_row_is_found_for_the_call),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
