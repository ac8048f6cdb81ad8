/* What `gemmshim run` and `record` say at the end (tools/run_summary.c):
 * the calls, the FLOP share of each route, the time a route table says was
 * saved, logs of either version, and FILE:LINE for a bad log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../tools/run_summary.h"

#define V1_HEADER \
  "pid,entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,route,reason,count,device\n"
#define V2_HEADER                                                                              \
  "# gemmshim log v2\n"                                                                        \
  "pid,entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,route,reason,count,"    \
  "device,entry_class,lda,ldb,ldc,ldd,stride_a,stride_b,stride_c,stride_d,align_a,align_b,"   \
  "align_c,align_d,align_lda,align_ldb,align_ldc,align_ldd,pointer_mode,math_mode,gpu_name,"  \
  "gpu_uuid\n"
#define GPU "NVIDIA H200,GPU-1"
#define ALIGNED ",0,0,0,0,16,16,16,16,16,16,16,16,host,0,"

/* Two GPUs' calls. FLOPs: 2*m*n*k*batch*count.
 *   bf16p 4096^3 x 10 on GPU-1:  1.374e12   (routed)
 *   bf16p 2048^3 x 4  on GPU-1:  6.87e10    (routed, a 2-aligned B: no row)
 *   cublas 1024^3 x 100 on -:    2.147e11   (not_tuned)
 *   bf16p 4096^3 x 5  on GPU-1:  ab_skipped_scratch: sampled, not compared,
 *                                still served by ours
 *   bad_args x 2: no FLOPs; (other) x 3: unknown shape */
static const char log_v2[] =
  V2_HEADER
  "10,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,4096,4096,4096,1,bf16p,routed,10,0,gemm,"
  "4096,4096,4096,4096" ALIGNED GPU "\n"
  "10,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,2048,2048,2048,1,bf16p,routed,4,0,gemm,"
  "2048,2048,2048,2048,0,0,0,0,16,2,16,16,16,16,16,16,host,0," GPU "\n"
  "10,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,1024,1024,1024,1,cublas,not_tuned,100,-1,gemm,"
  "1024,1024,1024,1024" ALIGNED "-,-\n"
  "10,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,-1,8,8,1,cublas,bad_args,2,-1,gemm,"
  "8,8,8,8" ALIGNED "-,-\n"
  "10,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,4096,4096,4096,1,bf16p,ab_skipped_scratch,5,0,gemm,"
  "4096,4096,4096,4096" ALIGNED GPU "\n"
  "10,(other),-,-,-,-,-,-,-1,-1,-1,-1,-,too_many_distinct_rows,3,-1,-,-1,-1,-1,-1,-1,-1,-1,-1,"
  "-1,-1,-1,-1,-1,-1,-1,-1,-,-,-,-\n"
  /* another process appended its block */
  V2_HEADER
  "11,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,4096,4096,4096,1,bf16p,routed,10,0,gemm,"
  "4096,4096,4096,4096" ALIGNED GPU "\n";

/* GPU-1's table: 4096^3 measured 100 us at 1.25x; 2048^3 only for 16-byte
 * aligned calls. */
static const char table_text[] =
  "Validator,gpu_name,NVIDIA H200\n"
  "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio\n"
  "gemm,bf16,bf16,bf16,32f,TN,-,4096,4096,4096,1,16,bf16p,100,1.25\n"
  "gemm,bf16,bf16,bf16,32f,TN,-,2048,2048,2048,1,16,bf16p,20,1.5\n"
  "gemm,bf16,bf16,bf16,32f,TN,-,1024,1024,1024,1,16,cublas,10,1\n";

static gs_route_table *table;

static const gs_route_table *table_for(const char *uuid, void *ctx)
{
  (void)ctx;
  return !strcmp(uuid, "GPU-1") ? table : NULL;
}

static void load_ok(rs_summary *s, const char *text)
{
  char err[RS_ERR_LEN];
  if (rs_load_text(s, text, strlen(text), "test.csv", 0, err)) fail_msg("%s", err);
}

static char *written(void (*write)(const rs_summary *, FILE *), const rs_summary *s)
{
  static char *buf;
  size_t len;
  free(buf);
  FILE *f = open_memstream(&buf, &len);
  write(s, f);
  fclose(f);
  return buf;
}

static void test_calls_and_shares(void **st)
{
  (void)st;
  rs_summary s;
  rs_init(&s);
  load_ok(&s, log_v2);
  assert_int_equal(s.version, 2);
  assert_int_equal(s.calls, 10 + 4 + 100 + 2 + 5 + 3 + 10);
  assert_int_equal(s.unknown_calls, 3);
  assert_int_equal(s.bad_args_calls, 2);
  assert_int_equal(s.processes, 2);
  assert_int_equal(s.distinct, 5);   /* the same call in two processes is one */
  double big = 2.0 * 4096 * 4096 * 4096 * 25, mid = 2.0 * 2048 * 2048 * 2048 * 4,
         small = 2.0 * 1024 * 1024 * 1024 * 100;
  assert_float_equal(s.flops, big + mid + small, 1);
  assert_float_equal(rs_share(&s, "bf16p"), (big + mid) / (big + mid + small), 1e-12);
  assert_float_equal(rs_share(&s, "cublas"), small / (big + mid + small), 1e-12);
  assert_float_equal(rs_share(&s, "nobody"), 0, 0);
  assert_int_equal(s.estimated_calls, 0);   /* no table: no estimate */
  char *text = written(rs_write_run, &s);
  char want[256];
  snprintf(want, sizeof want,
           "gemmshim: 134 GEMM calls in 2 processes (3 of unknown shape); share of GEMM FLOPs: "
           "bf16p %.1f%%, cublas %.1f%%\n",
           100 * (big + mid) / (big + mid + small), 100 * small / (big + mid + small));
  assert_string_equal(text, want);
  rs_free(&s);
}

/* Saved: count * time_us * (ratio - 1), over routed rows whose table row
 * names the same route and gives a time, in the table of the row's GPU. */
static void test_time_saved(void **st)
{
  (void)st;
  table = gs_rt_parse(table_text, strlen(table_text), "table.csv", NULL, 0, NULL);
  assert_non_null(table);
  assert_int_equal(table->n_bad, 0);
  rs_summary s;
  rs_init(&s);
  s.table_for = table_for;
  load_ok(&s, log_v2);
  /* 4096^3: 25 calls * 100 us * 0.25; 2048^3 is 2-aligned: another key */
  assert_int_equal(s.estimated_calls, 25);
  assert_float_equal(s.saved_us, 25 * 100 * 0.25, 1e-9);
  char *text = written(rs_write_run, &s);
  assert_non_null(strstr(text, "\ngemmshim: estimated time saved: 625.0 us over 25 routed calls "
                               "(the route table's times)\n"));
  rs_free(&s);

  /* a table that measured the route slower: time lost */
  const char slower[] =
    "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio\n"
    "gemm,bf16,bf16,bf16,32f,TN,-,4096,4096,4096,1,16,bf16p,2000,0.5\n";
  gs_rt_free(table);
  table = gs_rt_parse(slower, strlen(slower), "slower.csv", NULL, 0, NULL);
  rs_init(&s);
  s.table_for = table_for;
  load_ok(&s, log_v2);
  assert_float_equal(s.saved_us, 25 * 2000 * -0.5, 1e-9);
  text = written(rs_write_run, &s);
  assert_non_null(strstr(text, "estimated time lost: 25.00 ms over 25 routed calls"));
  rs_free(&s);

  /* a row naming another route, or without a time, gives no estimate */
  const char other[] =
    "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio\n"
    "gemm,bf16,bf16,bf16,32f,TN,-,4096,4096,4096,1,16,other_kernel,100,1.25\n"
    "gemm,bf16,bf16,bf16,32f,TN,-,2048,2048,2048,1,*,bf16p,-,1.5\n";
  gs_rt_free(table);
  table = gs_rt_parse(other, strlen(other), "other.csv", NULL, 0, NULL);
  rs_init(&s);
  s.table_for = table_for;
  load_ok(&s, log_v2);
  assert_int_equal(s.estimated_calls, 0);
  assert_null(strstr(written(rs_write_run, &s), "estimated"));
  rs_free(&s);
  gs_rt_free(table);
  table = NULL;
}

/* A v1 log (no version line, no v2 columns) reads: the entry class from
 * the entry's name, no GPU (no estimate). */
static void test_v1_log(void **st)
{
  (void)st;
  static const char v1[] =
    V1_HEADER
    "7,cublasLtMatmul,bf16,bf16,bf16,32f,TN,default,512,512,512,1,cublas,not_faster,3,-1\n"
    "7,cublasSgemmStridedBatched,f32,f32,f32,-,NN,-,64,64,64,8,cublas,batched,2,-1\n";
  rs_summary s;
  rs_init(&s);
  load_ok(&s, v1);
  assert_int_equal(s.version, 1);
  assert_int_equal(s.calls, 5);
  assert_float_equal(s.flops, 2.0 * 512 * 512 * 512 * 3 + 2.0 * 64 * 64 * 64 * 8 * 2, 1);
  assert_float_equal(rs_share(&s, "cublas"), 1, 0);
  rs_free(&s);
}

/* Bytes before skip (earlier runs in the user's own log) are not counted. */
static void test_skip_earlier_runs(void **st)
{
  (void)st;
  char text[4096];
  static const char later[] =
    "12,cublasSgemm_v2,f32,f32,f32,-,NN,-,8,8,8,1,cublas,not_tuned,6,-1,gemm,8,8,8,8" ALIGNED
    "-,-\n";
  snprintf(text, sizeof text, "%s%s", log_v2, later);
  rs_summary s;
  char err[RS_ERR_LEN];
  rs_init(&s);
  assert_int_equal(rs_load_text(&s, text, strlen(text), "t.csv", (long long)strlen(log_v2), err),
                   0);
  assert_int_equal(s.calls, 6);
  assert_int_equal(s.processes, 1);
  rs_free(&s);
}

static const char *record_text(const rs_summary *s)
{
  static char b[1024];
  FILE *f = fmemopen(b, sizeof b, "w");
  rs_write_record(s, "out.csv", "python", f);
  fclose(f);
  return b;
}

static void test_record_line(void **st)
{
  (void)st;
  rs_summary s;
  rs_init(&s);
  assert_string_equal(record_text(&s),
                      "gemmshim: python made no GEMM call: nothing recorded (out.csv is empty)\n");
  load_ok(&s, log_v2);
  const char *b = record_text(&s);
  const char first[] = "gemmshim: recorded 5 distinct calls (134 calls) in out.csv\n";
  assert_true(!strncmp(b, first, strlen(first)));
  assert_non_null(strstr(b, "3 of those calls are in (other) rows"));
  rs_free(&s);
}

static void test_bad_logs_say_file_and_line(void **st)
{
  (void)st;
  static const struct { const char *text; const char *says; } bad[] = {
    { V2_HEADER "1,cublasSgemm_v2,f32\n", "test.csv:3: 3 fields, the header has 37" },
    { V1_HEADER "1,cublasSgemm_v2,f32,f32,f32,-,NN,-,8,8,8,1,cublas,not_tuned,4e1,-1\n",
      "test.csv:2: count: '4e1' is not an integer" },
    { V1_HEADER "1,cublasSgemm_v2,f32,f32,f32,-,NN,-,8,-1,8,1,cublas,not_tuned,1,-1\n",
      "test.csv:2: n is -1 in a row that is neither (other) nor bad_args" },
    { "# gemmshim log v2\n", "test.csv:2: no header line after the version line" },
    { "# gemmshim log vX\n" V1_HEADER, "test.csv:1: the log version: 'X' is not an integer" },
    { "time_s,pid,entry\n1,2,3\n", "test.csv:1: this is the A/B CSV" },
    { "Validator,gpu_name,X\n", "test.csv:1: this is a route table" },
    { V2_HEADER "1,cublasSgemm_v2,f32,f32,f32,-,NN,-,8,8,8,1,cublas,not_tuned,1,-1,gemm,8,8,8,8,"
                "0,0,0,0,16,3,16,16,16,16,16,16,host,0,-,-\n",
      "test.csv:3: align_b is 3 (a power of two, in bytes)" },
    { V2_HEADER "1,cublasSgemm_v2,f32,f32,f32,-,NN,-,8,8,8,1,cublas,not_tuned,1,-1,blas,8,8,8,8"
                ALIGNED "-,-\n",
      "test.csv:3: entry_class: 'blas' is not gemm, gemm_batched, lt or -" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    rs_summary s;
    char err[RS_ERR_LEN];
    rs_init(&s);
    assert_int_equal(rs_load_text(&s, bad[i].text, strlen(bad[i].text), "test.csv", 0, err), -1);
    if (strncmp(err, bad[i].says, strlen(bad[i].says)))
      fail_msg("case %zu: expected '%s...', got '%s'", i, bad[i].says, err);
    rs_free(&s);
  }
  rs_summary s;
  char err[RS_ERR_LEN];
  rs_init(&s);
  assert_int_equal(rs_load(&s, "/nonexistent/log.csv", 0, err), -1);
  assert_string_equal(err, "/nonexistent/log.csv: No such file or directory");
  rs_free(&s);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_calls_and_shares),
    cmocka_unit_test(test_time_saved),
    cmocka_unit_test(test_v1_log),
    cmocka_unit_test(test_skip_earlier_runs),
    cmocka_unit_test(test_record_line),
    cmocka_unit_test(test_bad_logs_say_file_and_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
