/* The route table as data (dispatch/route_table.c): parsing with its
 * complaints (FILE:LINE), validators hard and soft, lookup order, the call
 * key and the kernel-table hash. Against the test variants. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <locale.h>
#include <unistd.h>

#include <cmocka.h>
#include <cublasLt.h>
#include <cublas_api.h>

#include "../dispatch/route_table.h"
#include "support/fake_variants.h"

#define VALIDATORS                              \
  "Validator,gpu_name,NVIDIA H200\n"            \
  "Validator,compute_capability,9.0\n"          \
  "Validator,sm_count,132\n"                    \
  "Validator,cublas_version,13.1.0\n"           \
  "Validator,shim_version," PACKAGE_VERSION "\n" \
  "Validator,kernel_table," FAKE_KERNEL_TABLE "\n"
#define HEADER "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio\n"

static char warned[8192];

/* Parse text; what it said on its warning stream lands in warned. */
static gs_route_table *parse(const char *text)
{
  FILE *w = tmpfile();
  assert_non_null(w);
  gs_route_table *t = gs_rt_parse(text, strlen(text), "t.csv", gs_variants, gs_n_variants, w);
  rewind(w);
  size_t n = fread(warned, 1, sizeof warned - 1, w);
  warned[n] = '\0';
  fclose(w);
  assert_non_null(t);
  return t;
}

static gs_rt_key key(int entry_class, int type, const char *layout, int64_t m, int64_t n,
                     int64_t k)
{
  gs_rt_key kk;
  memset(&kk, 0, sizeof kk);
  kk.entry_class = entry_class;
  kk.a_type = kk.b_type = kk.c_type = type;
  kk.compute = GS_NONE;
  kk.epilogue = GS_NONE;
  kk.align = 16;
  snprintf(kk.layout, sizeof kk.layout, "%s", layout);
  kk.m = m; kk.n = n; kk.k = k; kk.batch = 1;
  return kk;
}

static void test_a_table_parses(void **s)
{
  (void)s;
  gs_route_table *t = parse("# a comment\n\n" VALIDATORS
                            "Validator,driver_version,580.159.04\n"
                            "Validator,power_limit_w,700\n" HEADER
                            "gemm,f32,f32,f32,-,NT,-,2048,2048,2048,1,16,f32_test,10.5,1.25\r\n"
                            "lt,bf16,bf16,bf16,32f,TN,default,1024,1-8,4096,1,16,cublas,-,-\n");
  assert_int_equal(t->n_bad, 0);
  assert_string_equal(warned, "");
  assert_int_equal(t->n_rows, 2);
  for (int v = 0; v < GS_V_COUNT; v++) assert_true(t->has[v]);
  assert_string_equal(t->value[GS_V_GPU_NAME], "NVIDIA H200");
  const gs_rt_row *r = &t->rows[0];
  assert_ptr_equal(r->kernel, &f32_variant);
  assert_true(r->exact);
  assert_int_equal(r->line, 12);
  assert_true(r->time_us == 10.5 && r->ratio == 1.25);
  assert_true(gs_rt_row_routes(r));
  r = &t->rows[1];
  assert_null(r->kernel);
  assert_string_equal(r->route, "cublas");
  assert_false(r->exact);
  assert_true(r->n.lo == 1 && r->n.hi == 8 && r->time_us < 0 && r->ratio == 0);
  assert_false(gs_rt_row_routes(r));
  gs_rt_free(t);
}

/* Every malformed line is named by FILE:LINE, ignored, and the rest kept. */
static void test_malformed_lines_are_named_and_ignored(void **s)
{
  (void)s;
  gs_route_table *t = parse(VALIDATORS
                            "Validator,colour,blue\n"                    /* 7: unknown key */
                            "Validator,gpu_name\n"                       /* 8: no value */
                            "gemm,f32,f32,f32,-,NN,-,1,1,1,1,16,f32_test,-,2\n" /* 9: before header */
                            HEADER                                       /* 10 */
                            "Validator,sm_count,132\n"                   /* 11: after header */
                            "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,f32_test,-,2\n" /* 12 ok */
                            "gemm,f32,f32,f32,-,NX,-,2048,2048,2048,1,16,f32_test,-,2\n" /* 13 */
                            "gemm,f33,f32,f32,-,NN,-,2048,2048,2048,1,16,f32_test,-,2\n" /* 14 */
                            "gemm,f32,f32,f32,-,NN,-,0,2048,2048,1,16,f32_test,-,2\n"    /* 15 */
                            "gemm,f32,f32,f32,-,NN,-,9-8,2048,2048,1,16,f32_test,-,2\n"  /* 16 */
                            "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,12,f32_test,-,2\n" /* 17 */
                            "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,f32 test,-,2\n" /* 18 */
                            "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,f32_test,-,x\n" /* 19 */
                            "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,f32_test,-1,2\n" /* 20 */
                            "gemm,f32,f32,f32,-,NN,-,2048,2048\n"                         /* 21 */
                            "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,f32_test,-,3\n"  /* 22 dup */
                            "blas,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,f32_test,-,2\n"  /* 23 */
                            "gemm,f32,f32,f32,-,NN,-,4096,4096,4096,1,16,f32_test,-,2\n"); /* 24 ok */
  assert_int_equal(t->n_rows, 2);
  assert_int_equal(t->rows[0].line, 12);
  assert_int_equal(t->rows[1].line, 24);
  const int bad_lines[] = { 7, 8, 9, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23 };
  assert_int_equal(t->n_bad, sizeof bad_lines / sizeof *bad_lines);
  for (size_t i = 0; i < sizeof bad_lines / sizeof *bad_lines; i++) {
    char where[32];
    snprintf(where, sizeof where, "t.csv:%d: ", bad_lines[i]);
    print_message("%s\n", where);
    assert_non_null(strstr(warned, where));
  }
  assert_non_null(strstr(warned, "t.csv:22: the same key as line 12; line ignored"));
  assert_non_null(strstr(warned, "t.csv:13: layout 'NX' is not NN, TN, NT, TT or *"));
  gs_rt_free(t);
}

static void test_a_header_without_a_column_reads_no_row(void **s)
{
  (void)s;
  gs_route_table *t = parse(VALIDATORS "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route\n"
                            "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,f32_test\n");
  assert_int_equal(t->n_rows, 0);
  assert_non_null(strstr(warned, "t.csv:7: the header has no column 'ratio'"));
  assert_non_null(strstr(warned, "t.csv:8: "));
  gs_rt_free(t);
  /* columns are found by name: another order, and one unknown, are fine */
  t = parse(VALIDATORS "route,ratio,entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,note\n"
            "f32_test,1.5,gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,tuned by hand\n");
  assert_int_equal(t->n_bad, 0);
  assert_int_equal(t->n_rows, 1);
  assert_ptr_equal(t->rows[0].kernel, &f32_variant);
  assert_true(t->rows[0].time_us < 0);
  gs_rt_free(t);
}

/* A person edits a route: another kernel name, a kernel this build lacks,
 * cuBLAS. Each reads as written. */
static void test_hand_edited_routes(void **s)
{
  (void)s;
  gs_route_table *t = parse(VALIDATORS HEADER
                            "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,bf16_test,-,1.5\n"
                            "gemm,f32,f32,f32,-,TN,-,2048,2048,2048,1,16,lt_algo:21,-,1.3\n"
                            "gemm,f32,f32,f32,-,NT,-,2048,2048,2048,1,16,cublas,-,1\n");
  assert_int_equal(t->n_bad, 0);
  gs_rt_key k = key(GS_EC_GEMM, CUDA_R_32F, "NN", 2048, 2048, 2048);
  assert_ptr_equal(gs_rt_find(t, &k)->kernel, &bf16_variant);
  k = key(GS_EC_GEMM, CUDA_R_32F, "TN", 2048, 2048, 2048);
  assert_null(gs_rt_find(t, &k)->kernel);
  assert_string_equal(gs_rt_find(t, &k)->route, "lt_algo:21");
  assert_false(gs_rt_row_routes(gs_rt_find(t, &k)));
  gs_rt_free(t);
}

static gs_rt_identity h200(void)
{
  gs_rt_identity id;
  memset(&id, 0, sizeof id);
  strcpy(id.gpu_name, "NVIDIA H200");
  strcpy(id.compute_capability, "9.0");
  strcpy(id.sm_count, "132");
  strcpy(id.cublas_version, "13.1.0");
  strcpy(id.shim_version, PACKAGE_VERSION);
  strcpy(id.kernel_table, FAKE_KERNEL_TABLE);
  strcpy(id.driver_version, "580.159.04");
  strcpy(id.power_limit_w, "700");
  return id;
}

static void test_validators(void **s)
{
  (void)s;
  char why[512], soft[512];
  gs_route_table *t = parse(VALIDATORS "Validator,driver_version,580.159.04\n"
                                       "Validator,power_limit_w,700\n" HEADER);
  gs_rt_identity id = h200();
  assert_int_equal(gs_rt_validate(t, &id, why, sizeof why, soft, sizeof soft), 0);
  assert_string_equal(why, "");
  assert_string_equal(soft, "");
  /* a table from another GPU: refused, naming the key and both values */
  strcpy(id.gpu_name, "NVIDIA H100 80GB HBM3");
  assert_int_equal(gs_rt_validate(t, &id, why, sizeof why, soft, sizeof soft), -1);
  assert_string_equal(why, "gpu_name is 'NVIDIA H200' in the table, 'NVIDIA H100 80GB HBM3' here");
  id = h200();
  strcpy(id.sm_count, "114");
  assert_int_equal(gs_rt_validate(t, &id, why, sizeof why, soft, sizeof soft), -1);
  assert_string_equal(why, "sm_count is '132' in the table, '114' here");
  id = h200();
  strcpy(id.kernel_table, "0123456789abcdef");
  assert_int_equal(gs_rt_validate(t, &id, why, sizeof why, soft, sizeof soft), -1);
  assert_non_null(strstr(why, "kernel_table is '"));
  id = h200();
  id.cublas_version[0] = '\0';   /* cuBLAS did not say: cannot match */
  assert_int_equal(gs_rt_validate(t, &id, why, sizeof why, soft, sizeof soft), -1);
  assert_string_equal(why, "cublas_version is '13.1.0' in the table, 'unknown' here");
  /* soft: a warning, the table used */
  id = h200();
  strcpy(id.driver_version, "590.10");
  strcpy(id.power_limit_w, "600");
  assert_int_equal(gs_rt_validate(t, &id, why, sizeof why, soft, sizeof soft), 0);
  assert_string_equal(soft, "driver_version is '580.159.04' in the table, '590.10' here; "
                            "power_limit_w is '700' in the table, '600' here");
  /* an unknown soft value is not checked */
  id = h200();
  id.power_limit_w[0] = '\0';
  assert_int_equal(gs_rt_validate(t, &id, why, sizeof why, soft, sizeof soft), 0);
  assert_string_equal(soft, "");
  gs_rt_free(t);
  /* a missing hard validator refuses the table */
  t = parse("Validator,gpu_name,NVIDIA H200\n" HEADER);
  id = h200();
  assert_int_equal(gs_rt_validate(t, &id, why, sizeof why, soft, sizeof soft), -1);
  assert_string_equal(why, "validator compute_capability is missing (this GPU: '9.0')");
  gs_rt_free(t);
  /* given twice */
  t = parse(VALIDATORS "Validator,gpu_name,NVIDIA H100\n" HEADER);
  assert_non_null(strstr(warned, "t.csv:7: validator gpu_name given twice"));
  assert_string_equal(t->value[GS_V_GPU_NAME], "NVIDIA H200");
  gs_rt_free(t);
}

/* Exact rows first (the most specific of them), then ranges and wildcards
 * in file order. */
static void test_lookup_order(void **s)
{
  (void)s;
  gs_route_table *t = parse(VALIDATORS HEADER
                            "*,f32,f32,f32,*,*,*,1024-8192,1024-8192,1024-8192,*,*,f32_test,-,1.1\n"   /* 8 */
                            "*,f32,f32,f32,*,NN,*,1024-8192,1024-8192,1024-8192,*,*,bf16_test,-,1.2\n" /* 9 */
                            "*,f32,f32,f32,*,NN,*,4096,4096,4096,1,*,opt_in_test,-,1.3\n"              /* 10 */
                            "gemm,f32,f32,f32,-,NN,-,4096,4096,4096,1,16,cublas,-,1\n"                 /* 11 */
                            "*,*,*,*,*,*,*,*,*,*,*,*,bf16_test,-,5\n");                                  /* 12 */
  assert_int_equal(t->n_bad, 0);
  gs_rt_key k = key(GS_EC_GEMM, CUDA_R_32F, "NN", 4096, 4096, 4096);
  assert_int_equal(gs_rt_find(t, &k)->line, 11);     /* exact, most specific */
  k.entry_class = GS_EC_LT;
  assert_int_equal(gs_rt_find(t, &k)->line, 10);     /* exact sizes, wildcard entry */
  k = key(GS_EC_GEMM, CUDA_R_32F, "NN", 2048, 2048, 2048);
  assert_int_equal(gs_rt_find(t, &k)->line, 8);      /* first range in file order */
  k = key(GS_EC_GEMM, CUDA_R_32F, "NN", 8192, 8192, 8193);
  assert_int_equal(gs_rt_find(t, &k)->line, 12);     /* outside the boxes: the wildcard */
  k = key(GS_EC_GEMM, CUDA_R_16BF, "TT", 1, 1, 1);
  assert_int_equal(gs_rt_find(t, &k)->line, 12);
  k = key(GS_EC_GEMM, CUDA_R_32F, "NN", 4096, 4096, 4096);
  k.align = 4;                                       /* the exact row wants 16 */
  assert_int_equal(gs_rt_find(t, &k)->line, 10);
  gs_rt_free(t);
  t = parse(VALIDATORS HEADER);
  assert_null(gs_rt_find(t, &k));
  gs_rt_free(t);
  assert_null(gs_rt_find(NULL, &k));
}

/* Many exact rows: each found by hash, none confused with another. */
static void test_many_rows(void **s)
{
  (void)s;
  size_t cap = 1 << 20, len = 0;
  char *text = malloc(cap);
  assert_non_null(text);
  len += (size_t)snprintf(text, cap, VALIDATORS HEADER);
  for (int i = 1; i <= 2000; i++)
    len += (size_t)snprintf(text + len, cap - len,
                            "gemm,f32,f32,f32,-,NN,-,%d,%d,64,1,16,%s,%d,1.5\n", i, 3 * i,
                            i % 2 ? "f32_test" : "bf16_test", i);
  gs_route_table *t = gs_rt_parse(text, len, "many.csv", gs_variants, gs_n_variants, stderr);
  free(text);
  assert_int_equal(t->n_rows, 2000);
  for (int i = 1; i <= 2000; i++) {
    gs_rt_key k = key(GS_EC_GEMM, CUDA_R_32F, "NN", i, 3 * i, 64);
    const gs_rt_row *r = gs_rt_find(t, &k);
    assert_non_null(r);
    assert_true(r->time_us == i);
    k.n++;
    assert_null(gs_rt_find(t, &k));
  }
  gs_rt_free(t);
}

static void test_key_of_a_call(void **s)
{
  (void)s;
  gs_gemm g;
  memset(&g, 0, sizeof g);
  g.a_type = g.b_type = g.c_type = g.d_type = CUDA_R_16BF;
  g.compute_type = CUBLAS_COMPUTE_32F;
  g.trans_a = CUBLAS_OP_T;
  g.trans_b = CUBLAS_OP_N;
  g.m = 1024; g.n = 3; g.k = 4096; g.batch = 1;
  g.lda = 4096; g.ldb = 4096; g.ldc = 1024; g.ldd = 1024;
  g.A = (void *)0x10000; g.B = (void *)0x20000; g.C = (void *)0x30000; g.D = (void *)0x30000;
  g.epilogue = CUBLASLT_EPILOGUE_BIAS;
  gs_rt_key k;
  gs_rt_key_of(&g, &k);
  assert_int_equal(k.entry_class, GS_EC_GEMM);
  assert_int_equal(k.epilogue, GS_NONE);   /* a BLAS call has none */
  assert_string_equal(k.layout, "TN");
  assert_int_equal(k.align, 16);
  g.ldb = 4095;                             /* 8190 bytes */
  gs_rt_key_of(&g, &k);
  assert_int_equal(k.align, 2);
  g.ldb = 4096;
  g.B = (void *)0x20004;
  gs_rt_key_of(&g, &k);
  assert_int_equal(k.align, 4);
  g.B = (void *)0x20000;
  g.is_lt = 1;
  g.ldd = 1028;                             /* 2056 bytes: 8 */
  gs_rt_key_of(&g, &k);
  assert_int_equal(k.entry_class, GS_EC_LT);
  assert_int_equal(k.epilogue, CUBLASLT_EPILOGUE_BIAS);
  assert_int_equal(k.align, 8);
  g.is_lt = 0;
  g.is_batched_api = 1;
  gs_rt_key_of(&g, &k);
  assert_int_equal(k.entry_class, GS_EC_BATCHED);
  assert_int_equal(gs_rt_align_of(0), 16);
  assert_int_equal(gs_rt_align_of(48), 16);
  assert_int_equal(gs_rt_align_of(24), 8);
  assert_int_equal(gs_rt_align_of(7), 1);
  for (int c = 0; c < GS_EC_COUNT; c++)
    assert_int_equal(gs_rt_entry_class_from_name(gs_rt_entry_class_name(c)), c);
  assert_int_equal(gs_rt_entry_class_from_name("blas"), -1);
}

static void test_kernel_table_hash(void **s)
{
  (void)s;
  char a[17], b[17];
  gs_rt_kernel_table_hash(gs_variants, gs_n_variants, a);
  assert_string_equal(a, FAKE_KERNEL_TABLE);
  assert_int_equal(strlen(a), 16);
  /* another table: another hash */
  gs_rt_kernel_table_hash(gs_variants, gs_n_variants - 1, b);
  assert_string_not_equal(a, b);
  gs_variant changed = f32_variant;
  changed.n_max = 64;
  const gs_variant *one[] = { &changed }, *orig[] = { &f32_variant };
  gs_rt_kernel_table_hash(one, 1, a);
  gs_rt_kernel_table_hash(orig, 1, b);
  assert_string_not_equal(a, b);
}

static void test_load_a_file(void **s)
{
  (void)s;
  FILE *w = tmpfile();
  assert_null(gs_rt_load("/nonexistent/routes.csv", gs_variants, gs_n_variants, w));
  rewind(w);
  size_t n = fread(warned, 1, sizeof warned - 1, w);
  warned[n] = '\0';
  fclose(w);
  assert_non_null(strstr(warned, "gemmshim: route table /nonexistent/routes.csv: No such file"));
  char path[] = "/tmp/gs-rt-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  const char text[] = VALIDATORS HEADER "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,f32_test,-,2\n"
                                        "oops\n";
  assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
  close(fd);
  w = tmpfile();
  gs_route_table *t = gs_rt_load(path, gs_variants, gs_n_variants, w);
  rewind(w);
  n = fread(warned, 1, sizeof warned - 1, w);
  warned[n] = '\0';
  fclose(w);
  assert_non_null(t);
  assert_int_equal(t->n_rows, 1);
  char where[64];
  snprintf(where, sizeof where, "%s:9: ", path);
  assert_non_null(strstr(warned, where));
  assert_string_equal(t->source, path);
  gs_rt_free(t);
  unlink(path);
}

/* What a hand-edited table may hold: spaces around any field; and what it
 * must not: a size too long to be a number, a hex float, a NUL byte. The
 * numbers read the same whatever locale the host program set. */
static void test_hand_edited_fields(void **s)
{
  (void)s;
  gs_route_table *t = parse(VALIDATORS
                            "Validator , gpu_name , NVIDIA H200 \n"
                            HEADER
                            "gemm , f32 ,f32, f32 ,- ,NN, - ,2048 , 2048,2048 ,1 , 16 ,f32_test , 12.5 , 1.5 \n"
                            "gemm,f32,f32,f32,-,TN,-,0000000000000000000000000000000000000000000000000000000000000002048,"
                            "2048,2048,1,16,f32_test,-,2\n"
                            "gemm,f32,f32,f32,-,NT,-,2048,2048,2048,1,16,f32_test,-,0x1p1\n");
  assert_int_equal(t->n_rows, 1);
  assert_int_equal(t->n_bad, 3);   /* the validator repeated, the long size, the hex ratio */
  assert_string_equal(t->value[GS_V_GPU_NAME], "NVIDIA H200");
  assert_int_equal(t->rows[0].m.lo, 2048);
  assert_float_equal(t->rows[0].time_us, 12.5, 0);
  assert_float_equal(t->rows[0].ratio, 1.5, 0);
  assert_non_null(strstr(warned, "t.csv:10: "));
  assert_non_null(strstr(warned, "t.csv:11: "));
  gs_rt_free(t);

  static const char nul[] = VALIDATORS HEADER "gemm,f32\0,f32\n";
  FILE *w = tmpfile();
  t = gs_rt_parse(nul, sizeof nul - 1, "t.csv", gs_variants, gs_n_variants, w);
  rewind(w);
  size_t n = fread(warned, 1, sizeof warned - 1, w);
  warned[n] = '\0';
  fclose(w);
  assert_non_null(t);
  assert_int_equal(t->n_rows, 0);
  assert_int_equal(t->n_bad, 1);
  assert_non_null(strstr(warned, "a NUL byte"));
  gs_rt_free(t);

  /* a comma-decimal locale, where one is installed */
  const char *comma_locales[] = { "de_DE.UTF-8", "fr_FR.UTF-8", "de_DE.utf8", "ru_RU.UTF-8" };
  const char *used = NULL;
  for (size_t i = 0; i < sizeof comma_locales / sizeof *comma_locales && !used; i++)
    if (setlocale(LC_NUMERIC, comma_locales[i])) used = comma_locales[i];
  if (!used) {
    print_message("no comma-decimal locale installed: the locale part is not run\n");
    return;
  }
  t = parse(VALIDATORS HEADER "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,f32_test,12.5,1.5\n");
  char hash[17];
  gs_rt_kernel_table_hash(gs_variants, gs_n_variants, hash);
  setlocale(LC_NUMERIC, "C");
  assert_int_equal(t->n_rows, 1);
  assert_float_equal(t->rows[0].ratio, 1.5, 0);
  assert_string_equal(hash, FAKE_KERNEL_TABLE);
  gs_rt_free(t);
}

/* A duplicate far down a long table is still found, and named. */
static void test_duplicates_in_a_long_table(void **s)
{
  (void)s;
  size_t cap = 6000 * 80 + 4096, len = 0;
  char *text = malloc(cap);
  assert_non_null(text);
  len += (size_t)snprintf(text + len, cap - len, "%s%s", VALIDATORS, HEADER);
  int first_line = 8;   /* after 6 validator lines and the header */
  for (int i = 0; i < 6000; i++)
    len += (size_t)snprintf(text + len, cap - len,
                            "gemm,f32,f32,f32,-,NN,-,%d,2048,2048,1,16,f32_test,-,2\n", 8 * (i + 1));
  len += (size_t)snprintf(text + len, cap - len,
                          "gemm,f32,f32,f32,-,NN,-,%d,2048,2048,1,16,f32_test,-,3\n", 8 * 4001);
  gs_route_table *t = parse(text);
  assert_int_equal(t->n_rows, 6000);
  assert_int_equal(t->n_bad, 1);
  char want[96];
  snprintf(want, sizeof want, "t.csv:%d: the same key as line %d", first_line + 6000,
           first_line + 4000);
  assert_non_null(strstr(warned, want));
  gs_rt_free(t);
  free(text);
}

/* A FIFO or a directory named as a table is refused, not waited on. */
static void test_load_refuses_what_is_not_a_file(void **s)
{
  (void)s;
  char dir[] = "/tmp/gs-rt-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char fifo[64];
  snprintf(fifo, sizeof fifo, "%s/fifo.csv", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_null(gs_rt_load(fifo, gs_variants, gs_n_variants, NULL));
  assert_null(gs_rt_load(dir, gs_variants, gs_n_variants, NULL));
  unlink(fifo);
  rmdir(dir);
}

/* As nvidia-smi writes them; a MIG instance's has its own prefix, so its
 * cache file is not the whole GPU's. */
static void test_uuid_names(void **s)
{
  (void)s;
  unsigned char u[16];
  for (int i = 0; i < 16; i++) u[i] = (unsigned char)(0xf0 + i - 8 * (i & 1));
  char out[48];
  gs_rt_format_uuid(u, 0, out);
  assert_string_equal(out, "GPU-f0e9f2eb-f4ed-f6ef-f8f1-faf3fcf5fef7");
  gs_rt_format_uuid(u, 1, out);
  assert_string_equal(out, "MIG-f0e9f2eb-f4ed-f6ef-f8f1-faf3fcf5fef7");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_duplicates_in_a_long_table),
    cmocka_unit_test(test_hand_edited_fields),
    cmocka_unit_test(test_load_refuses_what_is_not_a_file),
    cmocka_unit_test(test_uuid_names),
    cmocka_unit_test(test_a_table_parses),
    cmocka_unit_test(test_malformed_lines_are_named_and_ignored),
    cmocka_unit_test(test_a_header_without_a_column_reads_no_row),
    cmocka_unit_test(test_hand_edited_routes),
    cmocka_unit_test(test_validators),
    cmocka_unit_test(test_lookup_order),
    cmocka_unit_test(test_many_rows),
    cmocka_unit_test(test_key_of_a_call),
    cmocka_unit_test(test_kernel_table_hash),
    cmocka_unit_test(test_load_a_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
