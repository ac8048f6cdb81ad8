/* gemmshim-report: parsing, aggregation and rendering on fixture CSVs
 * (tests/fixtures/report/, found through GS_SRCDIR). */
#include <math.h>
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

#include "../tools/report.h"

/* ---- helpers ------------------------------------------------------------ */

static const char *fixture(const char *name)
{
  static char path[4][1024];
  static int next;
  const char *srcdir = getenv("GS_SRCDIR");
  char *p = path[next++ % 4]; /* a few live at once */
  snprintf(p, sizeof path[0], "%s/tests/fixtures/report/%s", srcdir ? srcdir : ".", name);
  return p;
}

static void load_ok(report *r, const char *name)
{
  char err[REPORT_ERR_LEN] = "";
  int rc = report_load(r, fixture(name), err);
  if (rc) fail_msg("%s", err);
}

static void finish_ok(report *r)
{
  char err[REPORT_ERR_LEN] = "";
  assert_int_equal(report_finish(r, err), 0);
}

/* The class with this shape and layout, or fail. */
static const report_class *find(const report *r, long long m, long long n, long long k,
                                const char *layout)
{
  for (size_t i = 0; i < r->nclasses; i++) {
    const report_class *c = &r->classes[i];
    if (c->m == m && c->n == n && c->k == k && !strcmp(c->layout, layout)) return c;
  }
  fail_msg("no class %lldx%lldx%lld %s", m, n, k, layout);
  return NULL;
}

/* Render with a writer into a string the caller frees. */
static char *render(int (*writer)(const report *, FILE *), const report *r)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  assert_int_equal(writer(r, f), 0);
  fclose(f);
  return buf;
}

/* Run report_run; returns the status, stdout and stderr into *out, *err. */
static int run(const report_options *opt, char **out, char **err)
{
  size_t out_len = 0, err_len = 0;
  FILE *o = open_memstream(out, &out_len), *e = open_memstream(err, &err_len);
  assert_non_null(o);
  assert_non_null(e);
  int status = report_run(opt, o, e);
  fclose(o);
  fclose(e);
  return status;
}

static char *temp_file(const char *content, size_t len)
{
  static char path[64];
  snprintf(path, sizeof path, "/tmp/gs_report_XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, content, len), (ssize_t)len);
  close(fd);
  return path;
}

/* ---- the A/B CSV -------------------------------------------------------- */

static void test_median(void **s)
{
  (void)s;
  double odd[] = { 3, 1, 2 }, even[] = { 10, 13, 11, 12 }, one[] = { 7 };
  assert_float_equal(report_median(odd, 3), 2, 0);
  assert_float_equal(report_median(even, 4), 11.5, 0);
  assert_float_equal(report_median(one, 1), 7, 0);
  assert_true(isnan(report_median(NULL, 0)));
}

static void test_basic_aggregates(void **s)
{
  (void)s;
  report r;
  report_init(&r);
  load_ok(&r, "ab_basic.csv");
  finish_ok(&r);
  assert_int_equal(r.nclasses, 3);
  assert_int_equal(r.compared_calls, 9);
  assert_int_equal(r.shadow_calls, 1);
  assert_float_equal(r.sum_cublas_us, 410, 1e-9);
  assert_float_equal(r.sum_ours_us, 358, 1e-9);

  const report_class *a = find(&r, 4096, 4096, 4096, "NN");
  assert_int_equal(a->calls, 3);
  assert_float_equal(a->median_ours_us, 100, 1e-9);
  assert_float_equal(a->median_cublas_us, 120, 1e-9);
  assert_float_equal(a->speedup, 1.2, 1e-12);
  assert_float_equal(a->share, 360.0 / 410, 1e-12);
  assert_float_equal(a->worst_rel_fro, 3e-7, 1e-20);
  assert_float_equal(a->worst_max_rel, 5e-6, 1e-20);
  assert_float_equal(a->worst_max_abs, 3.1e-5, 1e-20);

  const report_class *b = find(&r, 1024, 1024, 512, "TN");
  assert_int_equal(b->calls, 4);
  assert_float_equal(b->median_ours_us, 11.5, 1e-9); /* even count: mean of the middle two */
  assert_float_equal(b->speedup, 10 / 11.5, 1e-12);
  assert_float_equal(b->share, 40.0 / 410, 1e-12);

  const report_class *c = find(&r, 64, 64, 64, "NT");
  assert_int_equal(c->batch, 32);
  assert_string_equal(c->a_type, "bf16");
  assert_string_equal(c->c_type, "f32");
  assert_string_equal(c->kernel, "bgemm_tc");
  assert_float_equal(c->speedup, 5.0 / 6, 1e-12);
  assert_int_equal(r.failing_classes, 0);
  report_free(&r);
}

/* A shape's first cuBLAS call carries its one-time setup: the totals use
 * medians x calls, so one such call does not turn 1.5x into 25x. */
static void test_steady_totals_ignore_first_call_setup(void **s)
{
  (void)s;
  report r;
  report_init(&r);
  load_ok(&r, "ab_first_call.csv");
  finish_ok(&r);
  assert_float_equal(r.sum_cublas_us, 2620, 1e-9);
  assert_float_equal(r.steady_cublas_us, 5 * 30.0, 1e-9);
  assert_float_equal(r.steady_ours_us, 5 * 20.0, 1e-9);
  char *text = render(report_write_text, &r);
  assert_non_null(strstr(text, "1.500x  (cuBLAS time / our time)"));
  free(text);
  report_free(&r);
}

static void test_sorted_by_share(void **s)
{
  (void)s;
  report r;
  report_init(&r);
  load_ok(&r, "ab_basic.csv");
  load_ok(&r, "ab_nan.csv");
  load_ok(&r, "ab_two_processes.csv");
  finish_ok(&r);
  assert_int_equal(r.nclasses, 5);
  for (size_t i = 1; i < r.nclasses; i++)
    assert_true(r.classes[i - 1].share >= r.classes[i].share);
  assert_int_equal(r.classes[0].m, 8192);
  double total = 0;
  for (size_t i = 0; i < r.nclasses; i++) total += r.classes[i].share;
  assert_float_equal(total, 1, 1e-12);
  report_free(&r);
}

static void test_repeated_headers(void **s)
{
  (void)s;
  report r;
  report_init(&r);
  load_ok(&r, "ab_two_processes.csv");
  finish_ok(&r);
  assert_int_equal(r.compared_calls, 3);
  assert_int_equal(find(&r, 4096, 4096, 4096, "NN")->calls, 2);
  assert_int_equal(find(&r, 4096, 1024, 4096, "TN")->calls, 1);
  report_free(&r);
}

static void test_multiple_files(void **s)
{
  (void)s;
  report r;
  report_init(&r);
  load_ok(&r, "ab_basic.csv");
  load_ok(&r, "ab_two_processes.csv");
  finish_ok(&r);
  assert_int_equal(r.ab_files, 2);
  assert_int_equal(r.compared_calls, 12);
  const report_class *a = find(&r, 4096, 4096, 4096, "NN");
  assert_int_equal(a->calls, 5); /* merged across files */
  assert_float_equal(a->median_cublas_us, 121, 1e-9); /* of 119 120 121 130 130 */
  assert_float_equal(a->median_ours_us, 100, 1e-9);
  /* total time saved: 410+320 cuBLAS, 358+250 ours */
  assert_float_equal(r.sum_cublas_us - r.sum_ours_us, 730 - 608, 1e-9);
  report_free(&r);
}

static void test_nan_is_a_failure(void **s)
{
  (void)s;
  report r;
  report_init(&r);
  load_ok(&r, "ab_nan.csv");
  finish_ok(&r);
  const report_class *e = find(&r, 8192, 8192, 8192, "TN");
  assert_int_equal(e->nonfinite_calls, 2);
  assert_true(isnan(e->worst_rel_fro));
  assert_true(isnan(e->worst_max_rel));
  assert_int_equal(r.nonfinite_calls, 2);
  assert_int_equal(r.failing_classes, 1);
  assert_int_equal(find(&r, 4096, 4096, 4096, "NN")->nonfinite_calls, 0);

  char *text = render(report_write_text, &r);
  const char *row = strstr(text, "\n8192x8192x8192");
  assert_non_null(row);
  const char *end = strchr(row + 1, '\n');
  char line[512];
  snprintf(line, sizeof line, "%.*s", (int)(end - row - 1), row + 1);
  assert_non_null(strstr(line, "nan"));
  assert_non_null(strstr(line, "FAIL: 2 nan/inf"));
  assert_non_null(strstr(text, "NUMERIC FAILURES"));
  free(text);
  report_free(&r);
}

static void test_complete_last_line_without_newline(void **s)
{
  (void)s;
  report r;
  report_init(&r);
  load_ok(&r, "ab_no_final_newline.csv");
  assert_int_equal(r.compared_calls, 1);
  report_free(&r);
}

static void test_crlf_lines(void **s)
{
  (void)s;
  const char csv[] = REPORT_AB_HEADER "\r\n"
                     "1.5,1,cublasSgemm_v2,f32,f32,NN,8,8,8,1,k,use,2,4,2,0,0,0,0\r\n";
  report r;
  char err[REPORT_ERR_LEN] = "";
  report_init(&r);
  char *path = temp_file(csv, sizeof csv - 1);
  int rc = report_load(&r, path, err);
  unlink(path);
  if (rc) fail_msg("%s", err);
  assert_int_equal(r.compared_calls, 1);
  report_free(&r);
}

static void test_header_only(void **s)
{
  (void)s;
  const char *paths[] = { fixture("ab_header_only.csv") };
  report_options opt = { .ab_paths = paths, .n_ab = 1 };
  char *out, *err;
  assert_int_equal(run(&opt, &out, &err), 0);
  assert_non_null(strstr(out, "no compared calls"));
  assert_string_equal(err, "");
  free(out);
  free(err);
}

/* ---- malformed input ---------------------------------------------------- */

typedef struct bad_case {
  const char *file;
  int line;
  const char *says;
} bad_case;

static const bad_case bad_ab[] = {
  { "bad_header.csv", 1, "wrong header" },
  { "bad_empty.csv", 1, "empty file" },
  { "bad_fields.csv", 4, "expected 19 fields, found 18" },
  { "bad_number.csv", 3, "ours_us: '10.0us' is not a number" },
  { "bad_truncated.csv", 5, "truncated" },
  { "bad_negative_dim.csv", 2, "m is negative (-4096)" },
  { "bad_mode.csv", 3, "mode: 'both' is not use, shadow or selfcheck" },
  { "bad_batch_zero.csv", 5, "batch must be at least 1" },
  { "bad_other_header.csv", 4, "a header that differs" },
  { "bad_negative_error.csv", 3, "max_rel is negative" },
  { "summary_basic.csv", 1, "pass it with --summary" },
};

static void expect_file_error(const char *err, const char *path, int line, const char *says)
{
  char prefix[1100];
  snprintf(prefix, sizeof prefix, "%s:%d: ", path, line);
  if (strncmp(err, prefix, strlen(prefix)) || !strstr(err, says))
    fail_msg("expected '%s...%s', got '%s'", prefix, says, err);
}

static void test_malformed_ab(void **s)
{
  (void)s;
  for (size_t i = 0; i < sizeof bad_ab / sizeof bad_ab[0]; i++) {
    report r;
    char err[REPORT_ERR_LEN] = "";
    const char *path = fixture(bad_ab[i].file);
    report_init(&r);
    assert_int_equal(report_load(&r, path, err), -1);
    expect_file_error(err, path, bad_ab[i].line, bad_ab[i].says);
    report_free(&r);
  }
}

static void test_malformed_exit_status(void **s)
{
  (void)s;
  for (size_t i = 0; i < sizeof bad_ab / sizeof bad_ab[0]; i++) {
    const char *paths[] = { fixture("ab_basic.csv"), fixture(bad_ab[i].file) };
    report_options opt = { .ab_paths = paths, .n_ab = 2 };
    char *out, *err;
    assert_int_equal(run(&opt, &out, &err), 2);
    char prefix[1100];
    snprintf(prefix, sizeof prefix, "gemmshim-report: %s:%d: ", paths[1], bad_ab[i].line);
    assert_int_equal(strncmp(err, prefix, strlen(prefix)), 0);
    assert_string_equal(out, ""); /* no half report */
    free(out);
    free(err);
  }
}

static void test_missing_file(void **s)
{
  (void)s;
  const char *paths[] = { "/nonexistent/ab.csv" };
  report_options opt = { .ab_paths = paths, .n_ab = 1 };
  char *out, *err;
  assert_int_equal(run(&opt, &out, &err), 2);
  assert_string_equal(err, "gemmshim-report: /nonexistent/ab.csv: cannot open: "
                           "No such file or directory\n");
  free(out);
  free(err);
}

static void test_nul_byte(void **s)
{
  (void)s;
  const char csv[] = REPORT_AB_HEADER "\n1.5,1,cublas\0gemm,f32\n";
  report r;
  char err[REPORT_ERR_LEN] = "";
  report_init(&r);
  char *path = temp_file(csv, sizeof csv - 1);
  assert_int_equal(report_load(&r, path, err), -1);
  expect_file_error(err, path, 2, "NUL byte");
  unlink(path);
  report_free(&r);
}

/* ---- the call log ------------------------------------------------------- */

static void test_summary_totals(void **s)
{
  (void)s;
  report r;
  char err[REPORT_ERR_LEN] = "";
  report_init(&r);
  load_ok(&r, "ab_basic.csv");
  if (report_load_summary(&r, fixture("summary_basic.csv"), err)) fail_msg("%s", err);
  finish_ok(&r);
  const report_summary *su = &r.summary;
  assert_int_equal(su->files, 1);
  /* ab_skipped_* rows: sampled calls our kernel served without a comparison */
  assert_int_equal(su->gemm_calls, 112);
  assert_int_equal(su->routed_calls, 86);
  assert_int_equal(su->forwarded_calls, 23);
  assert_int_equal(su->other_calls, 3);
  assert_int_equal(su->bad_args_calls, 1);
  assert_int_equal(su->routed.n, 1);
  assert_string_equal(su->routed.items[0].name, "sgemm_simt");
  assert_int_equal(su->routed.items[0].calls, 86);
  assert_string_equal(su->forwarded.items[0].name, "dtype"); /* most calls first */

  double ours = 2.0 * 4096 * 4096 * 4096 * 46 + 2.0 * 1024 * 1024 * 512 * 40;
  double known = ours + 2.0 * 8192 * 8192 * 8192 * 10 + 2.0 * 2048 * 2048 * 2048 * 5 +
                 2.0 * 4096 * 1024 * 4096 * 7;
  assert_float_equal(su->flops_ours, ours, 1);
  assert_float_equal(su->flops_known, known, 1);

  assert_int_equal(su->not_compared.n, 2);
  assert_string_equal(su->not_compared.items[0].name, "ab_skipped_capturing");
  assert_int_equal(su->not_compared.items[0].calls, 4);
  assert_string_equal(su->not_compared.items[1].name, "ab_skipped_scratch");
  assert_int_equal(su->not_compared.items[1].calls, 2);

  char *text = render(report_write_text, &r);
  char share[64];
  snprintf(share, sizeof share, "%.2f%%", 100 * ours / known);
  assert_non_null(strstr(text, "share of GEMM FLOPs on our kernels"));
  assert_non_null(strstr(text, share));
  assert_non_null(strstr(text, "Not compared by A/B"));
  assert_non_null(strstr(text, "ab_skipped_capturing"));
  assert_non_null(strstr(text, "(other) overflow row"));
  free(text);
  report_free(&r);
}

static void test_malformed_summary(void **s)
{
  (void)s;
  static const bad_case bad[] = {
    /* the log's one reader's words (tools/run_summary.c) */
    { "summary_bad_negative.csv", 3, "n is -1024" },
    { "summary_bad_count.csv", 3, "count: '4e1' is not an integer" },
    { "summary_bad_device.csv", 3, "device is -2" },
    { "ab_basic.csv", 1, "this is the A/B CSV" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    report r;
    char err[REPORT_ERR_LEN] = "";
    const char *path = fixture(bad[i].file);
    report_init(&r);
    assert_int_equal(report_load_summary(&r, path, err), -1);
    expect_file_error(err, path, bad[i].line, bad[i].says);
    report_free(&r);
  }
}

/* A v2 log (version line, appended columns, a block per process) holds the
 * same calls as its v1 twin and sums to the same totals; a later version's
 * further columns are read the same way. */
static void load_summary_text(report *r, const char *text, char err[REPORT_ERR_LEN])
{
  char *path = temp_file(text, strlen(text));
  int rc = report_load_summary(r, path, err);
  unlink(path);
  if (rc) fail_msg("%s", err);
}

static void test_summary_v2_matches_v1(void **s)
{
  (void)s;
  report v1, v2;
  char err[REPORT_ERR_LEN] = "";
  report_init(&v1);
  report_init(&v2);
  if (report_load_summary(&v1, fixture("summary_basic.csv"), err)) fail_msg("%s", err);
  if (report_load_summary(&v2, fixture("summary_basic_v2.csv"), err)) fail_msg("%s", err);
  assert_int_equal(v2.summary.gemm_calls, v1.summary.gemm_calls);
  assert_int_equal(v2.summary.routed_calls, v1.summary.routed_calls);
  assert_int_equal(v2.summary.forwarded_calls, v1.summary.forwarded_calls);
  assert_int_equal(v2.summary.other_calls, v1.summary.other_calls);
  assert_int_equal(v2.summary.not_compared.n, v1.summary.not_compared.n);
  assert_float_equal(v2.summary.flops_ours, v1.summary.flops_ours, 1);
  assert_float_equal(v2.summary.flops_known, v1.summary.flops_known, 1);
  report_free(&v1);
  report_free(&v2);

  report v3;
  report_init(&v3);
  load_summary_text(&v3,
                    "# gemmshim log v3\n" REPORT_SUMMARY_HEADER ",entry_class,later\n"
                    "7,cublasSgemm_v2,f32,f32,f32,-,NN,-,64,64,64,1,cublas,not_tuned,3,-1,gemm,x\n",
                    err);
  assert_int_equal(v3.summary.gemm_calls, 3);
  report_free(&v3);
}

/* Whose result the caller got: ours for routed, ab_compared (A/B use
 * mode) and ab_skipped_* rows; cuBLAS's for the rest (ab_shadow too). */
static void test_summary_counts_ours_by_reason(void **s)
{
  (void)s;
  report r;
  char err[REPORT_ERR_LEN] = "";
  report_init(&r);
  load_summary_text(&r,
                    REPORT_SUMMARY_HEADER "\n"
                    "7,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,64,64,64,1,k1,routed,1,0\n"
                    "7,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,64,64,64,1,k1,ab_compared,2,0\n"
                    "7,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,64,64,64,1,k1,ab_skipped_alloc,4,0\n"
                    "7,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,64,64,64,1,k1,ab_shadow,8,0\n",
                    err);
  assert_int_equal(r.summary.gemm_calls, 15);
  assert_int_equal(r.summary.routed_calls, 7);
  assert_int_equal(r.summary.forwarded_calls, 8);
  report_free(&r);
}

/* ---- the time view (GEMMSHIM_TIME's columns) ----------------------------- */

static void assert_well_formed_svg(const char *svg);

#define TIME_HEADER REPORT_SUMMARY_HEADER ",timed,median_us,est_total_us,captured,time_dropped"

static int write_time_svg(const report *r, FILE *out)
{
  return report_time_write_svg(&r->summary.time, out);
}

static void test_time_view_sums_rows_by_shape_and_route(void **s)
{
  (void)s;
  report r;
  char err[REPORT_ERR_LEN] = "";
  report_init(&r);
  load_summary_text(&r,
                    "# gemmshim log v3\n" TIME_HEADER "\n"
                    "7,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,4096,8,4096,1,gemm_decode_bf16,routed,"
                    "100,0,10,12.000,1200.000,0,0\n"
                    "7,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,4096,4096,4096,1,cublas,not_tuned,"
                    "10,0,10,300.000,3000.000,0,0\n"
                    "8,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,4096,4096,4096,1,cublas,not_tuned,"
                    "10,0,5,200.000,2000.000,2,1\n"
                    "8,cublasSgemm_v2,f32,f32,f32,-,NN,-,64,64,64,1,cublas,unchecked,4,0,0,-,-,4,0\n",
                    err);
  if (report_finish(&r, err)) fail_msg("%s", err);
  const report_time *t = &r.summary.time;
  assert_true(t->timed_logs);
  assert_int_equal(t->calls, 124);
  assert_int_equal(t->timed, 25);
  assert_int_equal(t->captured, 6);
  assert_int_equal(t->dropped, 1);
  assert_int_equal(t->unmeasured_calls, 4);
  assert_float_equal(t->total_us, 6200, 1e-6);
  assert_int_equal(t->n, 2);
  /* the two processes' rows of one shape and route are one group, first */
  assert_int_equal(t->groups[0].m, 4096);
  assert_int_equal(t->groups[0].n, 4096);
  assert_int_equal(t->groups[0].calls, 20);
  assert_float_equal(t->groups[0].total_us, 5000, 1e-6);
  char *text = render(report_write_text, &r);
  static const char *const says[] = {
    "GEMM time", "6.200 ms", "on cublas", "(80.65% of GEMM time, 20 calls)",
    "on gemm_decode_bf16", "(19.35% of GEMM time, 100 calls)", "calls captured",
    "samples lost", "calls without a time", "4096x4096x4096 TN bf16", "266.667", "5.000",
    "80.65%", "4096x8x4096 TN bf16", "12.000",
  };
  for (size_t i = 0; i < sizeof says / sizeof says[0]; i++)
    if (!strstr(text, says[i])) fail_msg("the text lacks '%s':\n%s", says[i], text);
  free(text);
  char *svg = render(write_time_svg, &r);
  assert_well_formed_svg(svg);
  static const char *const labels[] = { "Share of GEMM time", "4096x4096x4096 TN bf16",
                                        "gemm_decode_bf16", "80.6%", "19.4%" };
  for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
    if (!strstr(svg, labels[i])) fail_msg("the time chart lacks '%s'", labels[i]);
  free(svg);
  report_free(&r);
}

static void test_time_view_of_a_log_without_time(void **s)
{
  (void)s;
  report r;
  char err[REPORT_ERR_LEN] = "";
  report_init(&r);
  load_summary_text(&r,
                    "# gemmshim log v3\n" TIME_HEADER "\n"
                    "7,cublasSgemm_v2,f32,f32,f32,-,NN,-,64,64,64,1,cublas,not_tuned,3,-1,-,-,-,-,-\n",
                    err);
  if (report_finish(&r, err)) fail_msg("%s", err);
  assert_false(r.summary.time.timed_logs);
  assert_int_equal(r.summary.time.untimed_calls, 3);
  char *text = render(report_write_text, &r);
  assert_non_null(strstr(text, "not measured (the log was written without GEMMSHIM_TIME)"));
  free(text);
  report_free(&r);
  /* a time that is not one is an error in the log, named */
  report_init(&r);
  const char bad[] = "# gemmshim log v3\n" TIME_HEADER "\n"
                     "7,cublasSgemm_v2,f32,f32,f32,-,NN,-,64,64,64,1,cublas,not_tuned,3,-1,1,fast,-,0,0\n";
  char *path = temp_file(bad, strlen(bad));
  assert_int_equal(report_load_summary(&r, path, err), -1);
  expect_file_error(err, path, 3, "median_us: 'fast' is not a number of microseconds");
  unlink(path);
  report_free(&r);
}

static void test_malformed_v2_summary(void **s)
{
  (void)s;
  static const struct { const char *text; int line; const char *says; } bad[] = {
    { "# gemmshim log v2\n", 2, "no header line after the version line" },
    { "# gemmshim log v2x\n" REPORT_SUMMARY_HEADER "\n", 1, "the log version: '2x' is not an integer" },
    { "# gemmshim log v2\n" REPORT_SUMMARY_HEADER ",entry_class\n"
      "7,cublasSgemm_v2,f32,f32,f32,-,NN,-,64,64,64,1,cublas,not_tuned,3,-1\n",
      3, "16 fields, the header has 17" },
    { "# gemmshim log v2\npid,entry,route,count\n", 2, "the header has no column 'a_type'" },
    { "# gemmshim log v2\npid,entry,route\n", 2, "no header line (pid,entry,...)" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    report r;
    char err[REPORT_ERR_LEN] = "";
    report_init(&r);
    char *path = temp_file(bad[i].text, strlen(bad[i].text));
    assert_int_equal(report_load_summary(&r, path, err), -1);
    expect_file_error(err, path, bad[i].line, bad[i].says);
    unlink(path);
    report_free(&r);
  }
  /* the call log given as the A/B CSV: the hint, not a header complaint */
  report r;
  char err[REPORT_ERR_LEN] = "";
  report_init(&r);
  assert_int_equal(report_load(&r, fixture("summary_basic_v2.csv"), err), -1);
  assert_non_null(strstr(err, "pass it with --summary"));
  report_free(&r);
}

/* ---- rendering ---------------------------------------------------------- */

static void test_text_columns_align(void **s)
{
  (void)s;
  report r;
  report_init(&r);
  load_ok(&r, "ab_basic.csv");
  load_ok(&r, "ab_nan.csv");
  finish_ok(&r);
  char *text = render(report_write_text, &r);
  char *header = strstr(text, "shape m x n x k");
  assert_non_null(header);
  /* "speedup" is right-aligned: every row's value ends where the title does */
  size_t right = (size_t)(strstr(header, "speedup") - header) + strlen("speedup") - 1;
  char *line = strchr(header, '\n') + 1; /* the rule */
  for (size_t i = 0; i < r.nclasses; i++) {
    line = strchr(line, '\n') + 1;
    assert_int_equal(line[right], 'x');
    assert_int_equal(line[right + 1], ' ');
  }
  free(text);
  report_free(&r);
}

static void test_csv_output(void **s)
{
  (void)s;
  report r;
  report_init(&r);
  load_ok(&r, "ab_basic.csv");
  finish_ok(&r);
  char *csv = render(report_write_csv, &r);
  assert_int_equal(strncmp(csv, "m,n,k,batch,layout,a_type,c_type,kernel,calls,", 46), 0);
  const char *first = strchr(csv, '\n') + 1;
  assert_int_equal(strncmp(first, "4096,4096,4096,1,NN,f32,f32,sgemm_simt,3,1,87.8049,100,120,1.2,", 63), 0);
  int lines = 0;
  for (const char *p = csv; *p; p++) lines += *p == '\n';
  assert_int_equal(lines, 4);
  free(csv);
  report_free(&r);
}

/* Tags open and close in order, as XML requires. */
static int tags_balanced(const char *svg)
{
  char stack[64][32];
  int depth = 0;
  for (const char *p = strchr(svg, '<'); p; p = strchr(p + 1, '<')) {
    const char *end = strchr(p, '>');
    if (!end) return 0;
    if (p[1] == '?' || p[1] == '!') continue;
    int closing = p[1] == '/';
    const char *name = p + 1 + closing;
    size_t len = strcspn(name, " \t\n/>");
    if (len == 0 || len >= sizeof stack[0]) return 0;
    if (closing) {
      if (depth == 0 || strncmp(stack[depth - 1], name, len) || stack[depth - 1][len]) return 0;
      depth--;
    } else if (end[-1] != '/') {
      if (depth == 64) return 0;
      snprintf(stack[depth++], sizeof stack[0], "%.*s", (int)len, name);
    }
  }
  return depth == 0;
}

static void assert_well_formed_svg(const char *svg)
{
  assert_int_equal(strncmp(svg, "<svg ", 5), 0);
  size_t len = strlen(svg);
  assert_true(len > 8);
  assert_string_equal(svg + len - 7, "</svg>\n");
  assert_true(tags_balanced(svg));
}

static void test_svg(void **s)
{
  (void)s;
  report r;
  report_init(&r);
  load_ok(&r, "ab_basic.csv");
  load_ok(&r, "ab_nan.csv");
  finish_ok(&r);
  char *svg = render(report_write_svg, &r);
  assert_well_formed_svg(svg);
  static const char *const labels[] = {
    "4096x4096x4096", "1024x1024x512", "64x64x64 b32", "8192x8192x8192", "bf16-&gt;f32",
    "1.200x", "0.870x", "1.0 = cuBLAS", "nan/inf", "NUMERIC FAILURES", "rel_fro", "max_rel",
  };
  for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
    if (!strstr(svg, labels[i])) fail_msg("SVG lacks '%s'", labels[i]);
  free(svg);
  report_free(&r);
}

static void test_svg_escapes_names(void **s)
{
  (void)s;
  const char csv[] = REPORT_AB_HEADER "\n"
                     "1.5,1,cublasSgemm_v2,f32,f32,NN,8,8,8,1,k<1>&\"x\",use,2,4,2,0,0,0,0\n"
                     "1.5,1,cublasSgemm_v2,f32,f32,NN,8,8,8,1,plain,use,2,4,2,0,0,0,0\n";
  report r;
  char err[REPORT_ERR_LEN] = "";
  report_init(&r);
  char *path = temp_file(csv, sizeof csv - 1);
  int rc = report_load(&r, path, err);
  unlink(path);
  if (rc) fail_msg("%s", err);
  finish_ok(&r);
  char *svg = render(report_write_svg, &r);
  assert_well_formed_svg(svg);
  assert_non_null(strstr(svg, "k&lt;1&gt;&amp;&quot;x&quot;"));
  assert_null(strstr(svg, "k<1>"));
  free(svg);
  report_free(&r);
}

static void test_svg_without_calls(void **s)
{
  (void)s;
  report r;
  report_init(&r);
  load_ok(&r, "ab_header_only.csv");
  finish_ok(&r);
  char *svg = render(report_write_svg, &r);
  assert_well_formed_svg(svg);
  assert_non_null(strstr(svg, "no compared calls"));
  free(svg);
  report_free(&r);
}

static void test_svg_unwritable(void **s)
{
  (void)s;
  const char *paths[] = { fixture("ab_basic.csv") };
  report_options opt = { .ab_paths = paths, .n_ab = 1, .svg_path = "/nonexistent/dir/x.svg" };
  char *out, *err;
  assert_int_equal(run(&opt, &out, &err), 1);
  assert_non_null(strstr(err, "/nonexistent/dir/x.svg: cannot write"));
  free(out);
  free(err);
}

/* ---- the program itself ------------------------------------------------- */

static int exit_status(const char *command)
{
  int status = system(command);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Only under `make check`, where GS_BUILDDIR names the built tool. */
static void test_program_exit_status(void **s)
{
  (void)s;
  const char *builddir = getenv("GS_BUILDDIR");
  char tool[1024], cmd[3200];
  snprintf(tool, sizeof tool, "%s/tools/gemmshim-report", builddir ? builddir : "");
  if (!builddir || access(tool, X_OK)) skip();
  snprintf(cmd, sizeof cmd, "'%s' '%s' >/dev/null", tool, fixture("ab_basic.csv"));
  assert_int_equal(exit_status(cmd), 0);
  snprintf(cmd, sizeof cmd, "'%s' '%s' 2>/dev/null", tool, fixture("bad_truncated.csv"));
  assert_int_equal(exit_status(cmd), 2);
  snprintf(cmd, sizeof cmd, "'%s' 2>/dev/null", tool);
  assert_int_equal(exit_status(cmd), 2);
  snprintf(cmd, sizeof cmd, "'%s' --no-such-option x 2>/dev/null", tool);
  assert_int_equal(exit_status(cmd), 2);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_median),
    cmocka_unit_test(test_basic_aggregates),
    cmocka_unit_test(test_sorted_by_share),
    cmocka_unit_test(test_steady_totals_ignore_first_call_setup),
    cmocka_unit_test(test_repeated_headers),
    cmocka_unit_test(test_multiple_files),
    cmocka_unit_test(test_nan_is_a_failure),
    cmocka_unit_test(test_complete_last_line_without_newline),
    cmocka_unit_test(test_crlf_lines),
    cmocka_unit_test(test_header_only),
    cmocka_unit_test(test_malformed_ab),
    cmocka_unit_test(test_malformed_exit_status),
    cmocka_unit_test(test_missing_file),
    cmocka_unit_test(test_nul_byte),
    cmocka_unit_test(test_summary_totals),
    cmocka_unit_test(test_malformed_summary),
    cmocka_unit_test(test_summary_v2_matches_v1),
    cmocka_unit_test(test_malformed_v2_summary),
    cmocka_unit_test(test_summary_counts_ours_by_reason),
    cmocka_unit_test(test_text_columns_align),
    cmocka_unit_test(test_csv_output),
    cmocka_unit_test(test_svg),
    cmocka_unit_test(test_time_view_sums_rows_by_shape_and_route),
    cmocka_unit_test(test_time_view_of_a_log_without_time),
    cmocka_unit_test(test_svg_escapes_names),
    cmocka_unit_test(test_svg_without_calls),
    cmocka_unit_test(test_svg_unwritable),
    cmocka_unit_test(test_program_exit_status),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
