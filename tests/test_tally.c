/* The in-memory call log: per-thread counting, merging, the CSV rows, and
 * appending to GEMMSHIM_LOG without losing another process's rows. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cublasLt.h>
#include <cublas_api.h>
#include <library_types.h>

#include "../dispatch/config.h"
#include "../dispatch/tally.h"
#include "support/fake_variants.h"
#include "../tools/run_summary.h"

static gs_gemm call(int64_t m, int64_t n, int64_t k)
{
  gs_gemm g;
  memset(&g, 0, sizeof g);
  g.entry_name = "cublasSgemm_v2";
  g.a_type = g.b_type = g.c_type = g.d_type = 0; /* CUDA_R_32F */
  g.compute_type = GS_NONE;
  g.trans_a = CUBLAS_OP_T;
  g.trans_b = CUBLAS_OP_N;
  g.m = m; g.n = n; g.k = k;
  g.batch = 1;
  g.epilogue = GS_NONE;
  return g;
}

static const gs_decision forwarded = { GS_R_NOT_TUNED, NULL, -1, NULL, 0, 0 };

static int reset(void **s)
{
  (void)s;
  gs_tally_reset();
  return 0;
}

static char *csv(void)
{
  static char *buf;
  size_t len;
  free(buf);
  buf = NULL;
  FILE *f = open_memstream(&buf, &len);
  gs_tally_write_csv(f);
  fclose(f);
  return buf;
}

static void test_rows_and_counts(void **s)
{
  (void)s;
  gs_gemm a = call(128, 256, 512), b = call(1, 2, 3);
  gs_decision routed = { GS_R_ROUTED, &f32_variant, 3, NULL, 0, 0 };
  for (int i = 0; i < 5; i++) gs_tally_add(&a, &forwarded);
  gs_tally_add(&b, &forwarded);
  gs_tally_add(&a, &routed);
  char *out = csv();
  char expect[256];
  long pid = (long)getpid();
  const char head[] = GS_LOG_VERSION "\n" GS_LOG_HEADER "\n";
  assert_true(!strncmp(out, head, strlen(head)));
  snprintf(expect, sizeof expect, "\n%ld,cublasSgemm_v2,f32,f32,f32,-,TN,-,128,256,512,1,cublas,not_tuned,5,-1,gemm,", pid);
  assert_non_null(strstr(out, expect));
  snprintf(expect, sizeof expect, "\n%ld,cublasSgemm_v2,f32,f32,f32,-,TN,-,128,256,512,1,f32_test,routed,1,3,gemm,", pid);
  assert_non_null(strstr(out, expect));
  snprintf(expect, sizeof expect, "\n%ld,cublasSgemm_v2,f32,f32,f32,-,TN,-,1,2,3,1,cublas,not_tuned,1,-1,gemm,", pid);
  assert_non_null(strstr(out, expect));
  assert_int_equal(gs_tally_count(NULL, -1), 7);
  assert_int_equal(gs_tally_count("f32_test", -1), 1);
  assert_int_equal(gs_tally_count("cublas", GS_R_NOT_TUNED), 6);
  assert_int_equal(gs_tally_count("cublas", GS_R_DTYPE), 0);
}

#define THREADS 16
#define PER_THREAD 10000

static void *count_many(void *arg)
{
  (void)arg;
  gs_gemm a = call(4096, 4096, 4096);
  gs_gemm b = call(64, 64, 64);
  for (int i = 0; i < PER_THREAD; i++) gs_tally_add(i % 4 ? &a : &b, &forwarded);
  return NULL;
}

static void test_threads_merge_into_one_row(void **s)
{
  (void)s;
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, count_many, NULL), 0);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  char *out = csv();
  char expect[256];
  snprintf(expect, sizeof expect, ",TN,-,4096,4096,4096,1,cublas,not_tuned,%d,-1,", THREADS * PER_THREAD * 3 / 4);
  assert_non_null(strstr(out, expect));
  snprintf(expect, sizeof expect, ",TN,-,64,64,64,1,cublas,not_tuned,%d,-1,", THREADS * PER_THREAD / 4);
  assert_non_null(strstr(out, expect));
  int lines = 0;
  for (char *p = out; *p; p++) lines += *p == '\n';
  assert_int_equal(lines, 4);   /* version, header, two rows */
  /* the finished threads' tables are reused, not multiplied */
  for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, count_many, NULL), 0);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  assert_int_equal(gs_tally_count(NULL, -1), 2 * THREADS * PER_THREAD);
}

/* A GEMM called from a thread-exit destructor that runs after the shim's
 * own (its key made later): the thread's table was released, and another
 * thread may have claimed it. Every call must still be counted, exactly. */
#define WAVES 8
#define WAVE_THREADS 16
#define CALLS 2000
static pthread_key_t late_key;

static void late_calls(void *arg)
{
  (void)arg;
  gs_gemm a = call(4096, 4096, 4096);
  for (int i = 0; i < CALLS; i++) gs_tally_add(&a, &forwarded);
}

static void *count_then_exit(void *arg)
{
  (void)arg;
  gs_gemm a = call(4096, 4096, 4096);
  for (int i = 0; i < CALLS; i++) gs_tally_add(&a, &forwarded);
  pthread_setspecific(late_key, (void *)1);
  return NULL;
}

static void test_calls_from_thread_exit_destructors_are_all_counted(void **s)
{
  (void)s;
  gs_gemm a = call(4096, 4096, 4096);
  gs_tally_add(&a, &forwarded);   /* the shim's thread key exists first */
  assert_int_equal(pthread_key_create(&late_key, late_calls), 0);
  for (int w = 0; w < WAVES; w++) {
    pthread_t t[WAVE_THREADS];
    for (int i = 0; i < WAVE_THREADS; i++)
      assert_int_equal(pthread_create(&t[i], NULL, count_then_exit, NULL), 0);
    for (int i = 0; i < WAVE_THREADS; i++) pthread_join(t[i], NULL);
  }
  pthread_key_delete(late_key);
  assert_int_equal(gs_tally_count(NULL, -1), 1 + (uint64_t)WAVES * WAVE_THREADS * 2 * CALLS);
}

static void test_distinct_rows_overflow_is_counted(void **s)
{
  (void)s;
  for (int i = 1; i <= 3000; i++) {
    gs_gemm g = call(i, 1, 1);
    gs_tally_add(&g, &forwarded);
  }
  /* the counters are exact, however many rows the log could keep */
  assert_int_equal(gs_tally_count(NULL, -1), 3000);
  assert_int_equal(gs_tally_count("cublas", GS_R_NOT_TUNED), 3000);
  char *out = csv();
  char *other = strstr(out, ",(other),");
  assert_non_null(other);
  /* rows + overflow account for every call */
  /* ...,too_many_distinct_rows,COUNT,-1 */
  uint64_t overflow = strtoull(strstr(other, ",too_many_distinct_rows,") + 24, NULL, 10);
  uint64_t in_rows = 0;
  for (const char *line = strchr(strchr(out, '\n') + 1, '\n') + 1; *line;
       line = strchr(line, '\n') + 1) {
    const char *c = line;
    for (int i = 0; i < 14; i++) c = strchr(c, ',') + 1;
    if (strncmp(strchr(line, ','), ",(other),", 9)) in_rows += strtoull(c, NULL, 10);
  }
  assert_true(overflow > 0);
  assert_int_equal(in_rows + overflow, 3000);
}

static void test_log_file_appends_without_second_header(void **s)
{
  (void)s;
  char path[64];
  snprintf(path, sizeof path, "/tmp/gs-tally-%ld.csv", (long)getpid());
  unlink(path);
  setenv("GEMMSHIM_LOG", path, 1);
  gs_config_reload();
  assert_string_equal(gs_config()->log_path, path);
  assert_int_equal(gs_tally_flush_log(), 0);     /* nothing counted: no file */
  assert_int_equal(access(path, F_OK), -1);
  gs_gemm a = call(128, 128, 128);
  gs_tally_add(&a, &forwarded);
  assert_int_equal(gs_tally_flush_log(), 0);
  assert_int_equal(gs_tally_flush_log(), 0);     /* nothing new: nothing written */
  gs_tally_add(&a, &forwarded);
  gs_tally_add(&a, &forwarded);
  assert_int_equal(gs_tally_flush_log(), 0);     /* what came since, once */
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[1024];
  int versions = 0, headers = 0, rows = 0;
  long counted = 0;
  while (fgets(line, sizeof line, f)) {
    if (!strcmp(line, GS_LOG_VERSION "\n")) {
      versions++;
    } else if (!strncmp(line, "pid,", 4)) {
      headers++;
    } else {
      rows++;
      const char *c = line;
      for (int i = 0; i < 14; i++) c = strchr(c, ',') + 1;
      counted += strtol(c, NULL, 10);
    }
  }
  fclose(f);
  assert_int_equal(versions, 1);
  assert_int_equal(headers, 1);
  assert_int_equal(rows, 2);
  assert_int_equal(counted, 3);
  unlink(path);
  gs_tally_reset();   /* nothing left for the exit flush */
}

/* The columns a replay needs: leading dimensions, batch strides, the
 * alignment class of each pointer and leading dimension (in bytes), the
 * pointer and math mode once read, and the GPU of a routed call. */
static void test_replay_columns(void **s)
{
  (void)s;
  gs_gemm g = call(64, 32, 128);
  g.entry_name = "cublasGemmStridedBatchedEx";
  g.is_batched_api = 1;
  g.batch = 4;
  g.a_type = g.b_type = g.c_type = g.d_type = CUDA_R_16BF;
  g.compute_type = CUBLAS_COMPUTE_32F;
  g.lda = 136; g.ldb = 129; g.ldc = 64;
  g.stride_a = 136 * 64; g.stride_b = 129 * 32; g.stride_c = 64 * 32;
  g.A = (const void *)(uintptr_t)0x7f0000001000;   /* 16-byte aligned */
  g.B = (const void *)(uintptr_t)0x7f0000002002;   /* 2 */
  g.C = (const void *)(uintptr_t)0x7f0000003008;   /* 8 */
  g.state_loaded = 1;
  g.pointer_mode = 1;
  g.math_mode = CUBLAS_DEFAULT_MATH;
  gs_decision on_gpu = { GS_R_ROUTED, &f32_variant, 0, NULL, 0, 0 };
  fake_gpu.present = 1;
  fake_gpu.device = 0;
  gs_tally_add(&g, &on_gpu);
  char *out = csv();
  /* lda..ldd, strides A..D, align A..D (ldd, stride_d and D are C's),
   * align lda..ldd (136*2 = 272 = 16*17, 129*2 = 258, 64*2 = 128) */
  const char *want = ",routed,1,0,gemm_batched,136,129,64,64,8704,4128,2048,2048,16,2,8,8,"
                     "16,2,16,16,device,0,NVIDIA H200,GPU-00000000-1111-2222-3333-444444444444,"
                     "-,-,-,-,-,-\n";   /* GEMMSHIM_TIME off; no workspace (BLAS) */
  assert_non_null(strstr(out, want));
  /* decided before the device (and the handle's state) was known, as
   * the interposer describes a call */
  gs_tally_reset();
  g.state_loaded = 0;
  g.pointer_mode = g.math_mode = GS_NONE;
  gs_tally_add(&g, &forwarded);
  out = csv();
  assert_non_null(strstr(out, ",not_tuned,1,-1,gemm_batched,136,129,64,64,8704,4128,2048,2048,"
                              "16,2,8,8,16,2,16,16,-,-,-,-,-,-,-,-,-,-\n"));
  /* the header names every column of the row */
  int header_cols = 1, row_cols = 1;
  for (const char *p = GS_LOG_HEADER; *p; p++) header_cols += *p == ',';
  const char *row = strchr(strchr(out, '\n') + 1, '\n') + 1;
  for (const char *p = row; *p && *p != '\n'; p++) row_cols += *p == ',';
  assert_int_equal(row_cols, header_cols);
}

/* Each row's workspace, as the log's reader gives it, added up. */
static int sum_workspace(const rs_row *r, void *ctx)
{
  *(long long *)ctx += r->workspace;
  return 0;
}

/* A cuBLASLt call's row holds the workspace it gave (what the tuner
 * measures it with); calls that differ only in it are rows of their own. */
static void test_lt_workspace_column(void **s)
{
  (void)s;
  gs_gemm g = call(64, 32, 128);
  g.entry_name = "cublasLtMatmul";
  g.is_lt = 1;
  g.a_type = g.b_type = g.c_type = g.d_type = CUDA_R_16BF;
  g.compute_type = CUBLAS_COMPUTE_32F;
  g.epilogue = CUBLASLT_EPILOGUE_BIAS;
  g.ldd = 64;
  g.workspace_size = 33554432;
  gs_tally_add(&g, &forwarded);
  gs_tally_add(&g, &forwarded);
  g.workspace_size = 0;
  gs_tally_add(&g, &forwarded);
  char *out = csv();
  /* each row: its count, and its workspace at the end of the same line */
  const struct { const char *count, *tail; } want[2] = { { "not_tuned,2,", ",-,-,-,-,-,33554432" },
                                                         { "not_tuned,1,", ",-,-,-,-,-,0" } };
  for (int i = 0; i < 2; i++) {
    char head[160];
    snprintf(head, sizeof head, ",cublasLtMatmul,bf16,bf16,bf16,32f,TN,bias,64,32,128,1,cublas,%s",
             want[i].count);
    const char *row = strstr(out, head);
    assert_non_null(row);
    const char *end = strchr(row, '\n');
    assert_non_null(end);
    const size_t tl = strlen(want[i].tail);
    assert_true((size_t)(end - row) > tl && !strncmp(end - tl, want[i].tail, tl));
  }
  assert_true(!strncmp(out, GS_LOG_VERSION "\n" GS_LOG_HEADER "\n",
                       strlen(GS_LOG_VERSION "\n" GS_LOG_HEADER "\n")));
  assert_true(!strcmp(GS_LOG_HEADER + strlen(GS_LOG_HEADER) - strlen(",workspace"), ",workspace"));
  /* read back: the two cuBLASLt rows, and -1 for a BLAS row */
  gs_gemm blas = call(8, 8, 8);
  gs_tally_add(&blas, &forwarded);
  out = csv();
  long long total = 0;
  char err[RS_ERR_LEN];
  if (rs_read_text(out, strlen(out), "log", 0, sum_workspace, &total, NULL, err))
    fail_msg("%s", err);
  assert_int_equal(total, 33554432LL + 0 - 1);
}

/* An older shim's log (v1: no version line) is never mixed with v4 rows:
 * it is left alone and the rows go to PATH.v4. */
static void test_v1_log_is_left_alone(void **s)
{
  (void)s;
  char path[64], other[80];
  snprintf(path, sizeof path, "/tmp/gs-tally-v1-%ld.csv", (long)getpid());
  snprintf(other, sizeof other, "%s%s", path, GS_LOG_OTHER_FORMAT_SUFFIX);
  unlink(other);
  const char v1[] = "pid,entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,route,"
                    "reason,count,device\n1,cublasSgemm_v2,f32,f32,f32,-,NN,-,8,8,8,1,cublas,"
                    "not_faster,1,-1\n";
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(v1, f);
  fclose(f);
  setenv("GEMMSHIM_LOG", path, 1);
  gs_config_reload();
  gs_gemm a = call(128, 128, 128);
  gs_tally_add(&a, &forwarded);
  assert_int_equal(gs_tally_flush_log(), 0);
  char buf[4096];
  f = fopen(path, "r");
  size_t got = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[got] = 0;
  assert_string_equal(buf, v1);
  f = fopen(other, "r");
  assert_non_null(f);
  got = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[got] = 0;
  assert_true(!strncmp(buf, GS_LOG_VERSION "\n" GS_LOG_HEADER "\n",
                       strlen(GS_LOG_VERSION GS_LOG_HEADER) + 2));
  assert_non_null(strstr(buf, ",128,128,128,1,cublas,not_tuned,1,-1,gemm,"));
  unlink(path);
  unlink(other);
  unsetenv("GEMMSHIM_LOG");
  gs_config_reload();
  gs_tally_reset();
}

/* What the shim writes, the command reads back: every call, the overflow
 * row included. */
static void test_log_reads_back(void **s)
{
  (void)s;
  gs_gemm g = call(64, 64, 64);
  gs_decision routed = { GS_R_ROUTED, &f32_variant, 0, NULL, 0, 0 };
  for (int i = 0; i < 7; i++) gs_tally_add(&g, &routed);   /* first: a row of its own */
  for (int i = 1; i <= 3000; i++) {
    gs_gemm h = call(i, 1, 1);
    gs_tally_add(&h, &forwarded);
  }
  char *out = csv();
  rs_summary sum;
  char err[RS_ERR_LEN];
  rs_init(&sum);
  if (rs_load_text(&sum, out, strlen(out), "log", 0, err)) fail_msg("%s", err);
  assert_int_equal(sum.version, 4);
  assert_int_equal(sum.calls, 3007);
  assert_true(sum.unknown_calls > 0);
  assert_float_equal(rs_share(&sum, "f32_test") * sum.flops, 2.0 * 64 * 64 * 64 * 7, 1e-3);
  rs_free(&sum);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_rows_and_counts, reset),
    cmocka_unit_test_setup(test_threads_merge_into_one_row, reset),
    cmocka_unit_test_setup(test_calls_from_thread_exit_destructors_are_all_counted, reset),
    cmocka_unit_test_setup(test_distinct_rows_overflow_is_counted, reset),
    cmocka_unit_test_setup(test_log_file_appends_without_second_header, reset),
    cmocka_unit_test_setup(test_replay_columns, reset),
    cmocka_unit_test_setup(test_lt_workspace_column, reset),
    cmocka_unit_test_setup(test_v1_log_is_left_alone, reset),
    cmocka_unit_test_setup(test_log_reads_back, reset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
