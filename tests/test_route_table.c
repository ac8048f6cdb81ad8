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
/* with the optional column of the route cublaslt's algorithm */
#define HEADER_LT \
  "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio,lt_algo\n"
/* a row's key up to its route, for the FP16 call the test route lt_test takes */
#define LT_KEY(m) "gemm,f16,f16,f16,32f,TN,-," #m ",1024,4096,1,16,"
#define ALGO_66 "id=66;tile=20;splitk=1;reduction=0;swizzle=0;custom=0;stages=12;inner=0;cluster=0;workspace=0"

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
  /* a field of a kernel's class: another hash */
  gs_variant changed[4] = { f32_variant, f32_variant, f32_variant, f32_variant };
  changed[0].n_max = 64;
  changed[1].layouts_few_rows = GS_LAYOUT_TT;
  changed[1].m_max = 8;
  changed[2].layouts_few_rows = GS_LAYOUT_TT;
  changed[2].m_max = 16;
  changed[3].out_align_bytes = 4;
  const gs_variant *orig[] = { &f32_variant };
  gs_rt_kernel_table_hash(orig, 1, b);
  char seen[4][17];
  for (int i = 0; i < 4; i++) {
    const gs_variant *one[] = { &changed[i] };
    gs_rt_kernel_table_hash(one, 1, seen[i]);
    assert_string_not_equal(seen[i], b);
    for (int j = 0; j < i; j++) assert_string_not_equal(seen[i], seen[j]);
  }
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

/* ---- the route cublaslt's algorithm (column lt_algo; lt_algo.h) --------- */

static void assert_algo_equal(const gs_lt_algo *a, const gs_lt_algo *b)
{
  assert_int_equal(a->id, b->id);
  assert_int_equal(a->tile, b->tile);
  assert_int_equal(a->splitk, b->splitk);
  assert_int_equal(a->reduction, b->reduction);
  assert_int_equal(a->swizzle, b->swizzle);
  assert_int_equal(a->custom, b->custom);
  assert_int_equal(a->stages, b->stages);
  assert_int_equal(a->inner, b->inner);
  assert_int_equal(a->cluster, b->cluster);
  assert_true(a->workspace == b->workspace);
  assert_int_equal(a->has_raw, b->has_raw);
  if (a->has_raw) assert_memory_equal(a->raw, b->raw, sizeof a->raw);
}

/* 64 distinct bytes as 128 hex digits, upper case where upper is set. */
static void raw_text(char out[129], unsigned char bytes[64], int upper)
{
  for (int i = 0; i < 64; i++) {
    bytes[i] = (unsigned char)(37 * i + 11);
    snprintf(out + 2 * i, 3, upper ? "%02X" : "%02x", bytes[i]);
  }
}

/* Every field lands where it belongs, the workspace in bytes, the raw
 * bytes in memory order; a row of another route beside it has none. */
static void test_a_cublaslt_row_holds_its_algorithm(void **s)
{
  (void)s;
  char raw[129], text[4096];
  unsigned char bytes[64];
  raw_text(raw, bytes, 1);
  snprintf(text, sizeof text, VALIDATORS HEADER_LT
           LT_KEY(1024) "lt_test,12.5,1.3,id=66;tile=20;splitk=3;reduction=2;swizzle=1;custom=5;"
                        "stages=12;inner=7;cluster=2;workspace=1048576\n"
           LT_KEY(2048) "lt_test,-,1.2," ALGO_66 ";raw=%s\n"
           "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,f32_test,-,1.5,-\n"
           "gemm,f32,f32,f32,-,NT,-,2048,2048,2048,1,16,cublas,-,1,\n", raw);
  gs_route_table *t = parse(text);
  assert_string_equal(warned, "");
  assert_int_equal(t->n_bad, 0);
  assert_int_equal(t->n_rows, 4);
  const gs_rt_row *r = &t->rows[0];
  assert_ptr_equal(r->kernel, &lt_variant);
  assert_string_equal(r->route, "lt_test");
  assert_true(gs_rt_row_routes(r));
  assert_true(r->has_algo);
  assert_int_equal(r->algo.id, 66);
  assert_int_equal(r->algo.tile, 20);
  assert_int_equal(r->algo.splitk, 3);
  assert_int_equal(r->algo.reduction, 2);
  assert_int_equal(r->algo.swizzle, 1);
  assert_int_equal(r->algo.custom, 5);
  assert_int_equal(r->algo.stages, 12);
  assert_int_equal(r->algo.inner, 7);
  assert_int_equal(r->algo.cluster, 2);
  assert_true(r->algo.workspace == 1048576);
  assert_false(r->algo.has_raw);
  assert_true(r->time_us == 12.5 && r->ratio == 1.3);
  r = &t->rows[1];
  assert_true(r->has_algo);
  assert_true(r->algo.has_raw);
  assert_int_equal(r->algo.id, 66);
  assert_memory_equal(r->algo.raw, bytes, 64);
  /* found by its key like any row */
  gs_rt_key k = key(GS_EC_GEMM, CUDA_R_16F, "TN", 2048, 1024, 4096);
  k.compute = CUBLAS_COMPUTE_32F;
  assert_ptr_equal(gs_rt_find(t, &k), r);
  for (int i = 2; i < 4; i++) assert_false(t->rows[i].has_algo);
  gs_rt_free(t);
}

/* The text form: what format writes, parse reads back to the same
 * algorithm, the largest values and the raw bytes included. */
static void test_lt_algo_text_round_trips(void **s)
{
  (void)s;
  gs_lt_algo a, b;
  char text[GS_LT_ALGO_TEXT], why[160];
  memset(&a, 0, sizeof a);
  a.id = 66; a.tile = 20; a.splitk = 1; a.stages = 12;
  gs_lt_algo_format(&a, text);
  assert_string_equal(text, ALGO_66);
  assert_int_equal(gs_lt_algo_parse(text, &b, why, sizeof why), 0);
  assert_algo_equal(&a, &b);

  /* every field at the top of its range, and raw: the longest text */
  memset(&a, 0, sizeof a);
  a.id = INT32_MAX; a.tile = UINT32_MAX; a.splitk = INT32_MAX; a.reduction = UINT32_MAX;
  a.swizzle = UINT32_MAX; a.custom = UINT32_MAX; a.stages = UINT32_MAX;
  a.inner = UINT16_MAX; a.cluster = UINT16_MAX; a.workspace = UINT64_MAX;
  a.has_raw = 1;
  for (int i = 0; i < 64; i++) ((unsigned char *)a.raw)[i] = (unsigned char)(255 - 3 * i);
  gs_lt_algo_format(&a, text);
  assert_true(strlen(text) < GS_LT_ALGO_TEXT);
  assert_non_null(strstr(text, ";raw="));
  memset(&b, 0x5a, sizeof b);
  assert_int_equal(gs_lt_algo_parse(text, &b, why, sizeof why), 0);
  assert_algo_equal(&a, &b);

  /* fields in any order, hex in either case */
  char raw[129], in[512];
  unsigned char bytes[64];
  raw_text(raw, bytes, 0);
  snprintf(in, sizeof in, "workspace=4096;raw=%s;cluster=1;inner=2;stages=3;custom=4;swizzle=1;"
                          "reduction=4;splitk=2;tile=5;id=6", raw);
  assert_int_equal(gs_lt_algo_parse(in, &b, why, sizeof why), 0);
  assert_int_equal(b.id, 6);
  assert_int_equal(b.splitk, 2);
  assert_true(b.workspace == 4096);
  assert_memory_equal(b.raw, bytes, 64);
  gs_lt_algo_format(&b, text);
  assert_int_equal(gs_lt_algo_parse(text, &a, why, sizeof why), 0);
  assert_algo_equal(&a, &b);
}

/* The route cublaslt runs the row's algorithm: a row without one cannot
 * be used, and says so, in a table with the column or without it. */
static void test_a_cublaslt_row_without_an_algorithm_is_a_bad_line(void **s)
{
  (void)s;
  gs_route_table *t = parse(VALIDATORS HEADER_LT
                            LT_KEY(1024) "lt_test,-,1.5,-\n"      /* 8 */
                            LT_KEY(2048) "lt_test,-,1.5,\n"       /* 9 */
                            LT_KEY(4096) "lt_test,-,1.5," ALGO_66 "\n");
  assert_int_equal(t->n_rows, 1);
  assert_int_equal(t->rows[0].line, 10);
  assert_int_equal(t->n_bad, 2);
  assert_non_null(strstr(warned, "t.csv:8: route lt_test needs its algorithm in column lt_algo; "
                                 "line ignored\n"));
  assert_non_null(strstr(warned, "t.csv:9: route lt_test needs its algorithm in column lt_algo"));
  gs_rt_free(t);
  t = parse(VALIDATORS HEADER LT_KEY(1024) "lt_test,-,1.5\n");
  assert_int_equal(t->n_rows, 0);
  assert_non_null(strstr(warned, "t.csv:8: route lt_test needs its algorithm in column lt_algo"));
  gs_rt_free(t);
}

/* An algorithm belongs to the route cublaslt only: on a kernel's row, on
 * cublas or on a route this build lacks it is a mistake, not ignored. */
static void test_an_algorithm_on_another_route_is_a_bad_line(void **s)
{
  (void)s;
  gs_route_table *t = parse(VALIDATORS HEADER_LT
                            "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,f32_test,-,1.5," ALGO_66 "\n"
                            "gemm,f32,f32,f32,-,NT,-,2048,2048,2048,1,16,cublas,-,1," ALGO_66 "\n"
                            "gemm,f32,f32,f32,-,TN,-,2048,2048,2048,1,16,lt_algo:21,-,1.3," ALGO_66 "\n"
                            "gemm,f32,f32,f32,-,TT,-,2048,2048,2048,1,16,f32_test,-,1.5,-\n");
  assert_int_equal(t->n_rows, 1);
  assert_int_equal(t->rows[0].line, 11);
  assert_int_equal(t->n_bad, 3);
  assert_non_null(strstr(warned, "t.csv:8: lt_algo is given, but route f32_test is not a cuBLASLt "
                                 "route; line ignored\n"));
  assert_non_null(strstr(warned, "t.csv:9: lt_algo is given, but route cublas is not"));
  assert_non_null(strstr(warned, "t.csv:10: lt_algo is given, but route lt_algo:21 is not"));
  gs_rt_free(t);
}

/* Each malformed algorithm is named on its line; none is half read. */
static void test_malformed_algorithms_are_bad_lines(void **s)
{
  (void)s;
  char raw[129], text[16384];
  unsigned char bytes[64];
  raw_text(raw, bytes, 0);
  char raw_bad[129];
  memcpy(raw_bad, raw, sizeof raw_bad);
  raw_bad[77] = 'g';
  static const struct { const char *algo, *says; } cases[] = {
    { "id=66;tile=20;splitk=1;reduction=0;swizzle=0;custom=0;stages=12;inner=0;workspace=0",
      "lt_algo: field cluster is missing" },
    { "tile=20;splitk=1;reduction=0;swizzle=0;custom=0;stages=12;inner=0;cluster=0;workspace=0",
      "lt_algo: field id is missing" },
    { ALGO_66 ";tile=21", "lt_algo: field tile given twice" },
    { ALGO_66 ";colour=3", "lt_algo: unknown field 'colour'" },
    { "id=66; tile=20;splitk=1;reduction=0;swizzle=0;custom=0;stages=12;inner=0;cluster=0;workspace=0",
      "lt_algo: unknown field ' tile'" },
    { "id=66;tile20;splitk=1;reduction=0;swizzle=0;custom=0;stages=12;inner=0;cluster=0;workspace=0",
      "lt_algo: 'tile20' is not name=value" },
    { "id=66;tile=20;splitk=1;reduction=0;swizzle=0;custom=0;stages=12;inner=70000;cluster=0;workspace=0",
      "lt_algo: inner '70000' is not a number in the attribute's range" },
    { "id=66;tile=20;splitk=1;reduction=0;swizzle=0;custom=0;stages=12;inner=0;cluster=65536;workspace=0",
      "lt_algo: cluster '65536' is not a number" },
    { "id=2147483648;tile=20;splitk=1;reduction=0;swizzle=0;custom=0;stages=12;inner=0;cluster=0;workspace=0",
      "lt_algo: id '2147483648' is not a number" },
    { "id=-1;tile=20;splitk=1;reduction=0;swizzle=0;custom=0;stages=12;inner=0;cluster=0;workspace=0",
      "lt_algo: id '-1' is not a number" },
    { "id=66;tile=4294967296;splitk=1;reduction=0;swizzle=0;custom=0;stages=12;inner=0;cluster=0;workspace=0",
      "lt_algo: tile '4294967296' is not a number" },
    { "id=66;tile=20;splitk=1;reduction=0;swizzle=0;custom=0;stages=12;inner=0;cluster=0;"
      "workspace=18446744073709551616", "lt_algo: workspace '18446744073709551616' is not a number" },
    { "id=66;tile=20;splitk=1;reduction=0;swizzle=0;custom=0;stages=;inner=0;cluster=0;workspace=0",
      "lt_algo: stages '' is not a number" },
    { "id=66;tile=20;splitk=0;reduction=0;swizzle=0;custom=0;stages=12;inner=0;cluster=0;workspace=0",
      "lt_algo: splitk is at least 1" },
    { "id=66;tile=0x14;splitk=1;reduction=0;swizzle=0;custom=0;stages=12;inner=0;cluster=0;workspace=0",
      "lt_algo: tile '0x14' is not a number" },
  };
  const size_t n_cases = sizeof cases / sizeof *cases;
  size_t len = (size_t)snprintf(text, sizeof text, "%s", VALIDATORS HEADER_LT);
  for (size_t i = 0; i < n_cases; i++)
    len += (size_t)snprintf(text + len, sizeof text - len, "gemm,f16,f16,f16,32f,TN,-,%zu,1024,4096,1,16,lt_test,-,1.5,%s\n",
                            i + 1, cases[i].algo);
  /* raw: too short, too long, not hex */
  len += (size_t)snprintf(text + len, sizeof text - len, LT_KEY(9001) "lt_test,-,1.5," ALGO_66 ";raw=%.126s\n", raw);
  len += (size_t)snprintf(text + len, sizeof text - len, LT_KEY(9002) "lt_test,-,1.5," ALGO_66 ";raw=%s00\n", raw);
  len += (size_t)snprintf(text + len, sizeof text - len, LT_KEY(9003) "lt_test,-,1.5," ALGO_66 ";raw=%s\n", raw_bad);
  assert_true(len < sizeof text);
  gs_route_table *t = parse(text);
  assert_int_equal(t->n_rows, 0);
  assert_int_equal(t->n_bad, n_cases + 3);
  for (size_t i = 0; i < n_cases; i++) {
    char want[160];
    snprintf(want, sizeof want, "t.csv:%zu: %s", 8 + i, cases[i].says);
    print_message("%s\n", want);
    assert_non_null(strstr(warned, want));
  }
  for (size_t i = 0; i < 3; i++) {
    char want[64];
    snprintf(want, sizeof want, "t.csv:%zu: lt_algo: raw '", 8 + n_cases + i);
    assert_non_null(strstr(warned, want));
  }
  /* the reason is not cut off by the raw text it quotes */
  assert_non_null(strstr(warned, "' is not 128 hex digits; line ignored\n"));
  gs_rt_free(t);
}

/* Tables written before the column, by the tools or by hand, read as they
 * did; the column is found by name wherever it is. */
static void test_tables_without_the_lt_algo_column_still_parse(void **s)
{
  (void)s;
  gs_route_table *t = parse(VALIDATORS HEADER
                            "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,f32_test,-,1.5\n"
                            "gemm,f32,f32,f32,-,NT,-,2048,2048,2048,1,16,cublas,-,1\n");
  assert_int_equal(t->n_bad, 0);
  assert_string_equal(warned, "");
  assert_int_equal(t->n_rows, 2);
  assert_ptr_equal(t->rows[0].kernel, &f32_variant);
  assert_false(t->rows[0].has_algo);
  assert_false(t->rows[1].has_algo);
  gs_rt_free(t);
  t = parse(VALIDATORS "lt_algo,route,ratio,entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align\n"
            ALGO_66 ",lt_test,1.5,gemm,f16,f16,f16,32f,TN,-,1024,1024,4096,1,16\n"
            "-,f32_test,1.5,gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16\n");
  assert_int_equal(t->n_bad, 0);
  assert_int_equal(t->n_rows, 2);
  assert_true(t->rows[0].has_algo);
  assert_int_equal(t->rows[0].algo.stages, 12);
  assert_false(t->rows[1].has_algo);
  gs_rt_free(t);
}

/* Column launch: pdl or plain (or '-', empty, absent: plain). A pdl row
 * and a plain row of the same key are two rows; gs_rt_find_for passes over
 * pdl rows for a kernel that launches plainly, and puts them before plain
 * rows, whatever the order in the file, for one that launches with PDL. */
static void test_the_launch_column(void **s)
{
  (void)s;
  gs_route_table *t = parse(VALIDATORS
                            "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,"
                            "route,time_us,ratio,lt_algo,launch\n"
                            "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,cublas,-,1,-,plain\n"     /* 8 */
                            "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,cublas,-,1,-,-\n"         /* 9: 8's key */
                            "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,*,f32_test,-,1.5,-,pdl\n"     /* 10 */
                            "gemm,f32,f32,f32,-,TN,-,2048,2048,2048,1,16,f32_test,-,1.5,-,\n"      /* 11 */
                            "*,f32,f32,f32,*,NT,*,1024-4096,*,*,*,*,f32_test,-,1.2,-,plain\n"     /* 12 */
                            "*,f32,f32,f32,*,NT,*,1024-4096,*,*,*,*,f32_test,-,1.3,-,pdl\n"       /* 13 */
                            "gemm,f32,f32,f32,-,TT,-,2048,2048,2048,1,16,f32_test,-,1.5,-,PDL\n"); /* 14 */
  assert_int_equal(t->n_bad, 2);
  assert_non_null(strstr(warned, "t.csv:9: the same key as line 8"));
  assert_non_null(strstr(warned, "t.csv:14: launch 'PDL' is not plain, pdl, '-' or empty"));
  assert_int_equal(t->n_rows, 5);
  assert_int_equal(t->rows[0].needs_pdl, 0);
  assert_int_equal(t->rows[1].needs_pdl, 1);
  assert_int_equal(t->rows[2].needs_pdl, 0);   /* empty: plain */
  /* exact rows: the pdl one first though later and less specific */
  gs_rt_key k = key(GS_EC_GEMM, CUDA_R_32F, "NN", 2048, 2048, 2048);
  assert_int_equal(gs_rt_find_for(t, &k, &f32_variant, gs_routes, gs_n_routes, 1)->line, 10);
  assert_int_equal(gs_rt_find_for(t, &k, &f32_variant, gs_routes, gs_n_routes, 0)->line, 8);
  k = key(GS_EC_GEMM, CUDA_R_32F, "NT", 2048, 2048, 2048);   /* ranged rows: the pdl one first */
  assert_int_equal(gs_rt_find_for(t, &k, &f32_variant, gs_routes, gs_n_routes, 1)->line, 13);
  assert_int_equal(gs_rt_find_for(t, &k, &f32_variant, gs_routes, gs_n_routes, 0)->line, 12);
  k = key(GS_EC_GEMM, CUDA_R_32F, "TN", 2048, 2048, 2048);   /* a plain row holds either way */
  assert_int_equal(gs_rt_find_for(t, &k, &f32_variant, gs_routes, gs_n_routes, 1)->line, 11);
  assert_int_equal(gs_rt_find_for(t, &k, &f32_variant, gs_routes, gs_n_routes, 0)->line, 11);
  gs_rt_free(t);
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
    cmocka_unit_test(test_a_cublaslt_row_holds_its_algorithm),
    cmocka_unit_test(test_lt_algo_text_round_trips),
    cmocka_unit_test(test_a_cublaslt_row_without_an_algorithm_is_a_bad_line),
    cmocka_unit_test(test_an_algorithm_on_another_route_is_a_bad_line),
    cmocka_unit_test(test_malformed_algorithms_are_bad_lines),
    cmocka_unit_test(test_tables_without_the_lt_algo_column_still_parse),
    cmocka_unit_test(test_the_launch_column),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
