/* Parsing of the GEMMSHIM_* environment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../dispatch/config.h"

static const char *env_names[8], *env_values[8];
static int env_n;

static const char *table_getenv(const char *name)
{
  for (int i = 0; i < env_n; i++)
    if (!strcmp(env_names[i], name)) return env_values[i];
  return NULL;
}

static void set(const char *name, const char *value)
{
  for (int i = 0; i < env_n; i++)
    if (!strcmp(env_names[i], name)) {
      env_values[i] = value;
      return;
    }
  env_names[env_n] = name;
  env_values[env_n++] = value;
}

static int reset(void **s)
{
  (void)s;
  env_n = 0;
  return 0;
}

static void test_defaults(void **s)
{
  (void)s;
  gs_config_t c;
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 0);
  assert_int_equal(c.disable, 0);
  assert_int_equal(c.route, 1);
  assert_int_equal(c.verbose, 0);
  assert_int_equal(c.pdl, 1);
  assert_string_equal(c.log_path, "");
  assert_string_equal(c.cublas_lib, "");
}

static void test_fp32_tensor_core_opt_in(void **s)
{
  (void)s;
  gs_config_t c;
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 0);
  assert_int_equal(c.fp32_tc, 0);
  assert_int_equal(c.emulate_single, 0);
  set("GEMMSHIM_FP32", "tc");
  set("CUBLAS_EMULATE_SINGLE_PRECISION", "1");
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 0);
  assert_int_equal(c.fp32_tc, 1);
  assert_int_equal(c.fp32_tc_fast, 0);
  assert_int_equal(c.emulate_single, 1);
  env_n = 0;
  set("GEMMSHIM_FP32", "tc-fast");
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 0);
  assert_int_equal(c.fp32_tc, 0);
  assert_int_equal(c.fp32_tc_fast, 1);
  env_n = 0;
  set("GEMMSHIM_FP32", "strict");
  set("CUBLAS_EMULATE_SINGLE_PRECISION", "0");
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 0);
  assert_int_equal(c.fp32_tc, 0);
  assert_int_equal(c.fp32_tc_fast, 0);
  assert_int_equal(c.emulate_single, 0);
}

static void test_force_one_kernel(void **s)
{
  (void)s;
  gs_config_t c;
  set("GEMMSHIM_FORCE", "gemm_f32_3xtf32");
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 0);
  assert_int_equal(c.force, 1);
  assert_string_equal(c.force_kernel, "gemm_f32_3xtf32");
  env_n = 0;
  set("GEMMSHIM_FORCE", "yes");
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 0);
  assert_int_equal(c.force, 1);
  assert_string_equal(c.force_kernel, "");
  env_n = 0;
  set("GEMMSHIM_FORCE", "sgemm simt!");
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 1);
  assert_int_equal(c.force, 0);
}

static void test_fp32_malformed(void **s)
{
  (void)s;
  gs_config_t c;
  char buf[512] = "";
  FILE *warn = fmemopen(buf, sizeof buf, "w");
  set("GEMMSHIM_FP32", "TC32");
  assert_int_equal(gs_config_parse(&c, table_getenv, warn), 1);
  fclose(warn);
  assert_int_equal(c.fp32_tc, 0);
  assert_int_equal(c.fp32_tc_fast, 0);
  assert_non_null(strstr(buf, "GEMMSHIM_FP32=\"TC32\" is not tc, tc-fast or strict; using strict"));
}

static void test_booleans(void **s)
{
  (void)s;
  gs_config_t c;
  set("GEMMSHIM_DISABLE", "yes");
  set("GEMMSHIM_ROUTE", "OFF");
  set("GEMMSHIM_VERBOSE", "1");
  set("GEMMSHIM_PDL", "0");
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 0);
  assert_int_equal(c.disable, 1);
  assert_int_equal(c.route, 0);
  assert_int_equal(c.verbose, 1);
  assert_int_equal(c.pdl, 0);
}

static void test_malformed_values_warn_and_default(void **s)
{
  (void)s;
  gs_config_t c;
  char *buf = NULL;
  size_t len = 0;
  FILE *warn = open_memstream(&buf, &len);
  set("GEMMSHIM_DISABLE", "maybe");
  set("GEMMSHIM_ROUTE", "2");
  assert_int_equal(gs_config_parse(&c, table_getenv, warn), 2);
  fclose(warn);
  assert_int_equal(c.disable, 0);
  assert_int_equal(c.route, 1);
  assert_non_null(strstr(buf, "GEMMSHIM_DISABLE=\"maybe\" is not a boolean"));
  assert_non_null(strstr(buf, "GEMMSHIM_ROUTE=\"2\""));
  free(buf);
}

static void test_paths(void **s)
{
  (void)s;
  gs_config_t c;
  set("GEMMSHIM_CUBLAS_LIB", "/opt/x/libcublas.so.13");
  set("GEMMSHIM_CUBLASLT_LIB", "/opt/x/libcublasLt.so.13");
  set("GEMMSHIM_LOG", "/tmp/log.csv");
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 0);
  assert_string_equal(c.cublas_lib, "/opt/x/libcublas.so.13");
  assert_string_equal(c.cublaslt_lib, "/opt/x/libcublasLt.so.13");
  assert_string_equal(c.log_path, "/tmp/log.csv");
}

static void test_expand_pid(void **s)
{
  (void)s;
  char out[64];
  gs_path_tokens t = { .pid = 4242, .rank = "", .host = "node7" };
  assert_int_equal(gs_expand_path("/tmp/gs.%p.csv", &t, out, sizeof out), 0);
  assert_string_equal(out, "/tmp/gs.4242.csv");
  t.pid = 7;
  assert_int_equal(gs_expand_path("a%%p-%p-%i", &t, out, sizeof out), 0);
  assert_string_equal(out, "a%p-7-7");
  assert_int_equal(gs_expand_path("%x%", &t, out, sizeof out), 0);   /* others stay */
  assert_string_equal(out, "%x%");
  t.pid = 123456;
  assert_int_equal(gs_expand_path("0123456789%p", &t, out, 12), -1);
  assert_string_equal(out, "");
  t.pid = 1;
  assert_int_equal(gs_expand_path("0123456789a", &t, out, 12), 0);    /* exactly fits */
  assert_int_equal(gs_expand_path("0123456789ab", &t, out, 12), -1);
}

/* %r is the rank (RANK, else LOCAL_RANK, else the pid), %h the host; a
 * value a file name should not hold counts as not set. */
static void test_rank_and_host_tokens(void **s)
{
  (void)s;
  char out[128];
  gs_path_tokens t = { .pid = 99, .rank = "", .host = "node7" };
  assert_int_equal(gs_expand_path("/l/gs.%h.%r.%p.csv", &t, out, sizeof out), 0);
  assert_string_equal(out, "/l/gs.node7.99.99.csv");   /* no rank: the pid */
  snprintf(t.rank, sizeof t.rank, "3");
  assert_int_equal(gs_expand_path("/l/gs.%h.%r.csv", &t, out, sizeof out), 0);
  assert_string_equal(out, "/l/gs.node7.3.csv");

  set("LOCAL_RANK", "5");
  gs_path_tokens_read(&t, table_getenv);
  assert_string_equal(t.rank, "5");
  set("RANK", "12");
  gs_path_tokens_read(&t, table_getenv);
  assert_string_equal(t.rank, "12");   /* RANK first */
  set("RANK", "../../etc");
  gs_path_tokens_read(&t, table_getenv);
  assert_string_equal(t.rank, "");     /* not a name part: the pid stands in */
  assert_true(t.host[0]);
  assert_null(strchr(t.host, '/'));

  /* and through the configuration, as the log sees it */
  set("RANK", "2");
  set("GEMMSHIM_LOG", "/tmp/gs.%r.%h.csv");
  gs_config_t c;
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 0);
  char want[160];
  snprintf(want, sizeof want, "/tmp/gs.2.%s.csv", c.tokens.host);
  assert_string_equal(c.log_path, want);
  assert_string_equal(c.log_template, "/tmp/gs.%r.%h.csv");
}

static void test_ab_settings(void **s)
{
  (void)s;
  gs_config_t c;
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 0);
  assert_int_equal(c.ab_every, 0);
  assert_int_equal(c.ab_shadow, 0);
  assert_int_equal(c.ab_scratch_mb, GS_AB_SCRATCH_MB_DEFAULT);
  assert_int_equal(c.scratch_keep_mb, 0);
  set("GEMMSHIM_SCRATCH_KEEP_MB", "2048");
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 0);
  assert_int_equal(c.scratch_keep_mb, 2048);
  set("GEMMSHIM_SCRATCH_KEEP_MB", "-1");
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 1);
  assert_int_equal(c.scratch_keep_mb, 0);
  env_n = 0;
  set("GEMMSHIM_AB", "10");
  set("GEMMSHIM_AB_MODE", "shadow");
  set("GEMMSHIM_AB_SCRATCH_MB", "64");
  set("GEMMSHIM_AB_LOG", "/tmp/ab.%p.csv");
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 0);
  assert_int_equal(c.ab_every, 10);
  assert_int_equal(c.ab_shadow, 1);
  assert_int_equal(c.ab_scratch_mb, 64);
  assert_non_null(strstr(c.ab_log_path, "/tmp/ab."));
  assert_null(strstr(c.ab_log_path, "%p"));
}

static void test_ab_malformed(void **s)
{
  (void)s;
  gs_config_t c;
  set("GEMMSHIM_AB", "-1");
  set("GEMMSHIM_AB_MODE", "both");
  set("GEMMSHIM_AB_SCRATCH_MB", "12abc");
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 3);
  assert_int_equal(c.ab_every, 0);
  assert_int_equal(c.ab_shadow, 0);
  assert_int_equal(c.ab_scratch_mb, GS_AB_SCRATCH_MB_DEFAULT);
}

static void test_time_settings(void **s)
{
  (void)s;
  gs_config_t c;
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 0);
  assert_int_equal(c.time_every, 0);
  set("GEMMSHIM_TIME", "1");
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 0);
  assert_int_equal(c.time_every, 1);
  set("GEMMSHIM_TIME", "250");
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 0);
  assert_int_equal(c.time_every, 250);
  const char *bad[] = { "-3", "often", "2x", "" };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    set("GEMMSHIM_TIME", bad[i]);
    assert_int_equal(gs_config_parse(&c, table_getenv, NULL), bad[i][0] ? 1 : 0);
    assert_int_equal(c.time_every, 0);
  }
}

static void test_too_long_path(void **s)
{
  (void)s;
  static char longp[GS_PATH_MAX + 10];
  memset(longp, 'a', sizeof longp - 1);
  longp[sizeof longp - 1] = '\0';
  gs_config_t c;
  set("GEMMSHIM_LOG", longp);
  assert_int_equal(gs_config_parse(&c, table_getenv, NULL), 1);
  assert_string_equal(c.log_path, "");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_defaults, reset),
    cmocka_unit_test_setup(test_booleans, reset),
    cmocka_unit_test_setup(test_malformed_values_warn_and_default, reset),
    cmocka_unit_test_setup(test_paths, reset),
    cmocka_unit_test_setup(test_expand_pid, reset),
    cmocka_unit_test_setup(test_rank_and_host_tokens, reset),
    cmocka_unit_test_setup(test_too_long_path, reset),
    cmocka_unit_test_setup(test_ab_settings, reset),
    cmocka_unit_test_setup(test_time_settings, reset),
    cmocka_unit_test_setup(test_ab_malformed, reset),
    cmocka_unit_test_setup(test_fp32_tensor_core_opt_in, reset),
    cmocka_unit_test_setup(test_fp32_malformed, reset),
    cmocka_unit_test_setup(test_force_one_kernel, reset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
