/* The routing rules of dispatch/route.c, against test variants and a fake
 * GPU: every reason, in the order the checks are made. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cublasLt.h>
#include <cublas_api.h>

#include "../dispatch/config.h"
#include "../dispatch/health.h"
#include "../dispatch/lt_algo.h"
#include "../dispatch/route.h"
#include "../dispatch/tables.h"
#include "support/fake_variants.h"

#include <unistd.h>

static float one = 1.0f;
static int state_loads;
static int state_math;
static int state_pointer_mode;
static int state_sm_target;

static int load_state(gs_gemm *g)
{
  state_loads++;
  g->pointer_mode = state_pointer_mode;
  g->math_mode = state_math;
  g->sm_count_target = state_sm_target;
  g->stream = NULL;
  return 0;
}

static int load_state_fails(gs_gemm *g)
{
  (void)g;
  state_loads++;
  return -1;
}

/* A valid, aligned FP32 NN 2048^3 call that f32_variant wins. */
static gs_gemm f32_call(void)
{
  gs_gemm g;
  memset(&g, 0, sizeof g);
  g.entry_name = "test";
  g.a_type = g.b_type = g.c_type = g.d_type = CUDA_R_32F;
  g.compute_type = GS_NONE;
  g.scale_type = GS_NONE;
  g.trans_a = g.trans_b = CUBLAS_OP_N;
  g.m = g.n = g.k = 2048;
  g.lda = g.ldb = g.ldc = g.ldd = 2048;
  g.batch = 1;
  g.A = (void *)0x100000; g.B = (void *)0x200000; g.C = (void *)0x300000; g.D = (void *)g.C;
  g.alpha = &one; g.beta = &one;
  g.pointer_mode = g.math_mode = g.epilogue = g.bias_type = GS_NONE;
  g.load_state = load_state;
  return g;
}

static int setup(void **s)
{
  (void)s;
  gs_pdl_forget_refusal();
  state_loads = 0;
  state_math = CUBLAS_DEFAULT_MATH;
  state_pointer_mode = 0;
  state_sm_target = 0;
  fake_gpu = (fake_gpu_t){ 1, 0, 9, 0, 132, 0, 0 };
  fake_opted_in = fake_opted_in_later = 0;
  fake_launches_pdl = 0;
  unsetenv("GEMMSHIM_PDL");
  fake_identity_known = 1;
  strcpy(fake_identity.gpu_name, "NVIDIA H200");
  /* the built-in table of the test variants, not a user's */
  unsetenv("GEMMSHIM_TABLE");
  setenv("GEMMSHIM_CACHE_DIR", "/nonexistent/gemmshim-cache", 1);
  gs_config_reload();
  gs_tables_reset();
  return 0;
}

#define VALIDATORS                              \
  "Validator,gpu_name,NVIDIA H200\n"            \
  "Validator,compute_capability,9.0\n"          \
  "Validator,sm_count,132\n"                    \
  "Validator,cublas_version,13.1.0\n"           \
  "Validator,shim_version," PACKAGE_VERSION "\n" \
  "Validator,kernel_table," FAKE_KERNEL_TABLE "\n"
/* the same GPU, another build of the shim */
#define VALIDATORS_OTHER_SHIM                   \
  "Validator,gpu_name,NVIDIA H200\n"            \
  "Validator,compute_capability,9.0\n"          \
  "Validator,sm_count,132\n"                    \
  "Validator,cublas_version,13.1.0\n"           \
  "Validator,shim_version,0.0.1-other\n"        \
  "Validator,kernel_table," FAKE_KERNEL_TABLE "\n"
#define HEADER "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio\n"

/* Write text to a new file under /tmp; its path goes into path. */
static void write_file(char *path, const char *text)
{
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
}

static void write_file_at(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* GEMMSHIM_TABLE names the table, read at the next call. */
static void use_table(const char *path)
{
  setenv("GEMMSHIM_TABLE", path, 1);
  gs_config_reload();
  gs_tables_reset();
}

static gs_reason route(gs_gemm g)
{
  return gs_route(&g).reason;
}

static void test_routes_a_win(void **s)
{
  (void)s;
  gs_gemm g = f32_call();
  gs_decision d = gs_route(&g);
  assert_int_equal(d.reason, GS_R_ROUTED);
  assert_ptr_equal(d.variant, &f32_variant);
  assert_int_equal(d.device, 0);
  assert_int_equal(state_loads, 1);
}

static void test_bad_args(void **s)
{
  (void)s;
  gs_gemm g = f32_call(); g.m = -1;
  assert_int_equal(route(g), GS_R_BAD_ARGS);
  g = f32_call(); g.lda = 2047;
  assert_int_equal(route(g), GS_R_BAD_ARGS);
  g = f32_call(); g.trans_a = CUBLAS_OP_T; g.k = 4096; g.lda = 4095;  /* T: lda >= k */
  assert_int_equal(route(g), GS_R_BAD_ARGS);
  g = f32_call(); g.trans_b = CUBLAS_OP_T; g.ldb = 2047;              /* T: ldb >= n */
  assert_int_equal(route(g), GS_R_BAD_ARGS);
  g = f32_call(); g.ldc = 1000;
  assert_int_equal(route(g), GS_R_BAD_ARGS);
  g = f32_call(); g.alpha = NULL;
  assert_int_equal(route(g), GS_R_BAD_ARGS);
  g = f32_call(); g.trans_a = 7;
  assert_int_equal(route(g), GS_R_BAD_ARGS);
  g = f32_call(); g.batch = -2;
  assert_int_equal(route(g), GS_R_BAD_ARGS);
  /* bad arguments never cost a state read */
  assert_int_equal(state_loads, 0);
}

static void test_empty_problem(void **s)
{
  (void)s;
  gs_gemm g = f32_call(); g.k = 0;
  assert_int_equal(route(g), GS_R_EMPTY);
}

static void test_dtype_and_compute_type(void **s)
{
  (void)s;
  gs_gemm g = f32_call(); g.a_type = g.b_type = g.c_type = CUDA_R_16F;
  assert_int_equal(route(g), GS_R_DTYPE);
  g = f32_call(); g.compute_type = CUBLAS_COMPUTE_32F_FAST_TF32;
  assert_int_equal(route(g), GS_R_DTYPE);
  /* a forwarded dtype pays no state read */
  assert_int_equal(state_loads, 0);
}

static void test_batched(void **s)
{
  (void)s;
  gs_gemm g = f32_call(); g.batch = 4; g.is_batched_api = 1;
  assert_int_equal(route(g), GS_R_BATCHED);
  g = f32_call(); g.batch = 1; g.is_batched_api = 1;   /* batch of one is a GEMM */
  assert_int_equal(route(g), GS_R_ROUTED);
}

static void test_layout(void **s)
{
  (void)s;
  gs_gemm g = f32_call(); g.trans_a = CUBLAS_OP_C;
  assert_int_equal(route(g), GS_R_LAYOUT);
  /* bf16 only takes TN: NN goes furthest with no kernel for the layout */
  g = f32_call(); g.a_type = g.b_type = g.c_type = g.d_type = CUDA_R_16BF;
  g.compute_type = CUBLAS_COMPUTE_32F;
  assert_int_equal(route(g), GS_R_LAYOUT);
  g.trans_a = CUBLAS_OP_T;
  assert_int_equal(route(g), GS_R_ROUTED);
}

static void test_math_mode_is_a_bitmask(void **s)
{
  (void)s;
  state_math = CUBLAS_TF32_TENSOR_OP_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
  assert_int_equal(route(f32_call()), GS_R_MATH_MODE);
  state_math = CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
  assert_int_equal(route(f32_call()), GS_R_ROUTED);
  state_math = CUBLAS_PEDANTIC_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
  assert_int_equal(route(f32_call()), GS_R_ROUTED);
}

/* A kernel with other numerics serves only calls that opted in; without
 * the opt-in the call says so, and a strict kernel may still take it. */
static void test_opt_in_kernel(void **s)
{
  (void)s;
  gs_gemm g = f32_call(); g.compute_type = CUBLAS_COMPUTE_32F_EMULATED_16BFX9;
  fake_opted_in = fake_opted_in_later = 0;
  assert_int_equal(route(g), GS_R_NOT_OPTED_IN);
  assert_int_equal(state_loads, 0);   /* a sure "no" costs no state read */
  /* known only from the handle's state: read it, then decide */
  fake_opted_in = -1;
  fake_opted_in_later = 0;
  assert_int_equal(route(g), GS_R_NOT_OPTED_IN);
  assert_int_equal(state_loads, 1);
  fake_opted_in_later = 1;
  assert_int_equal(route(g), GS_R_ROUTED);
  fake_opted_in = 1;
  gs_decision d = gs_route(&g);
  assert_int_equal(d.reason, GS_R_ROUTED);
  assert_ptr_equal(d.variant, &opt_in_variant);
  /* a plain FP32 call never meets it */
  assert_ptr_equal(gs_route(&g).variant, &opt_in_variant);
  g = f32_call();
  assert_ptr_equal(gs_route(&g).variant, &f32_variant);
  assert_string_equal(gs_reason_name(GS_R_NOT_OPTED_IN), "not_opted_in");
}

static void test_state_unreadable(void **s)
{
  (void)s;
  gs_gemm g = f32_call(); g.load_state = load_state_fails;
  assert_int_equal(route(g), GS_R_STATE_UNREADABLE);
  g = f32_call(); g.load_state = NULL;
  assert_int_equal(route(g), GS_R_STATE_UNREADABLE);
}

static void test_pointer_modes(void **s)
{
  (void)s;
  state_pointer_mode = 1;
  assert_int_equal(route(f32_call()), GS_R_ROUTED);
  state_pointer_mode = CUBLASLT_POINTER_MODE_DEVICE_VECTOR;
  assert_int_equal(route(f32_call()), GS_R_POINTER_MODE);
}

/* With alpha == 0 in host pointer mode cuBLAS gives beta*C and reads
 * neither A nor B (measured on the H200: a NaN in A stays out of D), so
 * such calls are cuBLAS's; in device pointer mode cuBLAS computes
 * alpha*A*B (the NaN reaches D), as our kernels do, so they may serve. */
static void test_alpha_zero(void **s)
{
  (void)s;
  static const float zero = 0.0f, minus_zero = -0.0f;
  gs_gemm g = f32_call();
  g.alpha = &zero;
  assert_int_equal(route(g), GS_R_ALPHA_ZERO);
  g.alpha = &minus_zero;
  assert_int_equal(route(g), GS_R_ALPHA_ZERO);
  g.beta = &zero;
  assert_int_equal(route(g), GS_R_ALPHA_ZERO);
  state_pointer_mode = 1;   /* device scalars: alpha is not read on the host */
  g.alpha = (const void *)0x700000;
  assert_int_equal(route(g), GS_R_ROUTED);
}

static int lt_state(gs_gemm *g)
{
  g->pointer_mode = 0;
  g->scale_type = CUDA_R_32F;
  return 0;
}

static gs_gemm lt_call(int epilogue, int bias_type)
{
  gs_gemm g = f32_call();
  g.is_lt = 1;
  g.compute_type = CUBLAS_COMPUTE_32F;
  g.D = (void *)0x400000;
  g.epilogue = epilogue;
  g.bias = (void *)0x500000;
  g.bias_type = bias_type;
  g.load_state = lt_state;
  return g;
}

static void test_lt_epilogues_and_attributes(void **s)
{
  (void)s;
  assert_int_equal(route(lt_call(CUBLASLT_EPILOGUE_DEFAULT, CUDA_R_32F)), GS_R_ROUTED);
  assert_int_equal(route(lt_call(CUBLASLT_EPILOGUE_BIAS, CUDA_R_32F)), GS_R_ROUTED);
  assert_int_equal(route(lt_call(CUBLASLT_EPILOGUE_BIAS, CUDA_R_16BF)), GS_R_EPILOGUE);
  assert_int_equal(route(lt_call(CUBLASLT_EPILOGUE_RELU_BIAS, CUDA_R_32F)), GS_R_EPILOGUE);
  assert_int_equal(route(lt_call(CUBLASLT_EPILOGUE_GELU, CUDA_R_32F)), GS_R_EPILOGUE);
  gs_gemm g = lt_call(CUBLASLT_EPILOGUE_DEFAULT, CUDA_R_32F);
  g.lt_unhandled = "LAYOUT_ORDER";
  assert_int_equal(route(g), GS_R_LT_ATTRIBUTE);
  g = lt_call(CUBLASLT_EPILOGUE_BIAS, CUDA_R_32F);
  g.bias = (void *)0x500004;
  assert_int_equal(route(g), GS_R_ALIGNMENT);
  g = lt_call(CUBLASLT_EPILOGUE_DEFAULT, CUDA_R_32F);
  g.D = (void *)0x400008;
  assert_int_equal(route(g), GS_R_ALIGNMENT);
  g = lt_call(CUBLASLT_EPILOGUE_DEFAULT, CUDA_R_32F);
  g.ldd = 2050;
  assert_int_equal(route(g), GS_R_ALIGNMENT);
}

static void test_alignment(void **s)
{
  (void)s;
  gs_gemm g = f32_call(); g.B = (void *)0x200004;
  assert_int_equal(route(g), GS_R_ALIGNMENT);
  g = f32_call(); g.lda = 2050;    /* 2050 * 4 bytes is not a 16-byte multiple */
  assert_int_equal(route(g), GS_R_ALIGNMENT);
  g = f32_call(); g.lda = 2052;    /* sub-matrix view: ld > rows, still aligned */
  assert_int_equal(route(g), GS_R_ROUTED);
}

static void test_size_class_and_wins(void **s)
{
  (void)s;
  gs_gemm g = f32_call(); g.m = 2000; g.ldc = 2048;
  assert_int_equal(route(g), GS_R_SIZE_CLASS);
  g = f32_call(); g.k = 2056; g.ldb = 2064;
  assert_int_equal(route(g), GS_R_SIZE_CLASS);
  g = f32_call(); g.m = g.n = g.k = 512; g.lda = g.ldb = g.ldc = 512;
  assert_int_equal(route(g), GS_R_NOT_TUNED);     /* in class, below the box */
  g = f32_call(); g.trans_b = CUBLAS_OP_T;         /* NT: no measured win */
  assert_int_equal(route(g), GS_R_NOT_TUNED);
  g = f32_call(); g.trans_a = CUBLAS_OP_T;
  assert_int_equal(route(g), GS_R_ROUTED);
}

static void test_not_a_win_reads_no_state(void **s)
{
  (void)s;
  gs_gemm g = f32_call(); g.trans_b = CUBLAS_OP_T;   /* NT: outside the box */
  assert_int_equal(route(g), GS_R_NOT_TUNED);
  assert_int_equal(state_loads, 0);
  assert_int_equal(fake_gpu.placements, 0);
}

static void test_force_routes_the_whole_class(void **s)
{
  (void)s;
  setenv("GEMMSHIM_FORCE", "1", 1);
  gs_config_reload();
  gs_gemm g = f32_call(); g.trans_b = CUBLAS_OP_T;
  assert_int_equal(route(g), GS_R_ROUTED);
  g = f32_call(); g.m = 2000; g.ldc = 2048;         /* the class still holds */
  assert_int_equal(route(g), GS_R_SIZE_CLASS);
  unsetenv("GEMMSHIM_FORCE");
  gs_config_reload();
  g = f32_call(); g.trans_b = CUBLAS_OP_T;
  assert_int_equal(route(g), GS_R_NOT_TUNED);
  /* one kernel by name: only its class is forced */
  setenv("GEMMSHIM_FORCE", "bf16_test", 1);
  gs_config_reload();
  g = f32_call(); g.trans_b = CUBLAS_OP_T;
  assert_int_equal(route(g), GS_R_NOT_TUNED);
  setenv("GEMMSHIM_FORCE", "f32_test", 1);
  gs_config_reload();
  assert_int_equal(route(g), GS_R_ROUTED);
  unsetenv("GEMMSHIM_FORCE");
  gs_config_reload();
}

static void test_routing_off(void **s)
{
  (void)s;
  setenv("GEMMSHIM_ROUTE", "0", 1);
  gs_config_reload();
  assert_int_equal(route(f32_call()), GS_R_ROUTING_OFF);
  unsetenv("GEMMSHIM_ROUTE");
  gs_config_reload();
  assert_int_equal(route(f32_call()), GS_R_ROUTED);
}

static int revalidations, revalidate_result;
static int revalidate(gs_gemm *g)
{
  (void)g;
  revalidations++;
  return revalidate_result;
}

static void test_cached_descriptions_are_revalidated_before_serving(void **s)
{
  (void)s;
  revalidations = 0;
  revalidate_result = 0;
  gs_gemm g = f32_call(); g.revalidate = revalidate;
  assert_int_equal(route(g), GS_R_ROUTED);
  assert_int_equal(revalidations, 1);
  revalidate_result = 1;      /* the library's answer differs from the cache */
  assert_int_equal(route(g), GS_R_STATE_UNREADABLE);
  g.trans_b = CUBLAS_OP_T;    /* forwarded anyway: no re-read */
  assert_int_equal(route(g), GS_R_NOT_TUNED);
  assert_int_equal(revalidations, 2);
}

static void test_gpu_checks(void **s)
{
  (void)s;
  fake_gpu.present = 0;
  assert_int_equal(route(f32_call()), GS_R_NO_GPU);
  fake_gpu.present = 1;
  fake_gpu.cc_major = 10;
  assert_int_equal(route(f32_call()), GS_R_ARCH);
  fake_gpu.cc_major = 9;
  state_sm_target = 100;   /* the caller leaves SMs free for communication */
  assert_int_equal(route(f32_call()), GS_R_SM_COUNT);
  /* a kernel with a persistent grid could hold it to the target, but its
   * wins were measured without one: only forced */
  gs_gemm g = f32_call();
  g.a_type = g.b_type = g.c_type = g.d_type = CUDA_R_16BF;
  g.compute_type = CUBLAS_COMPUTE_32F;
  g.trans_a = CUBLAS_OP_T;
  assert_int_equal(route(g), GS_R_SM_COUNT);
  setenv("GEMMSHIM_FORCE", "1", 1);
  gs_config_reload();
  assert_int_equal(route(g), GS_R_ROUTED);
  assert_int_equal(route(f32_call()), GS_R_SM_COUNT);   /* forced, but cannot */
  unsetenv("GEMMSHIM_FORCE");
  gs_config_reload();
  state_sm_target = 132;
  assert_int_equal(route(f32_call()), GS_R_ROUTED);
}

static void test_no_gpu_query_for_forwarded_classes(void **s)
{
  (void)s;
  gs_gemm g = f32_call(); g.m = 100; g.ldc = 2048;
  route(g);
  assert_int_equal(fake_gpu.placements, 0);
}

static void test_disabled_variant(void **s)
{
  (void)s;
  fake_gpu.device = 3;
  fake_gpu.ctx_id = 300;
  gs_variant_disable(&f32_variant, gs_ctx_of(300, 3, NULL), "test");
  assert_int_equal(route(f32_call()), GS_R_DISABLED);
  fake_gpu.device = 2;     /* disabled on that context only */
  fake_gpu.ctx_id = 200;
  assert_int_equal(route(f32_call()), GS_R_ROUTED);
}

/* A context made again (cudaDeviceReset) is a new identity on the same
 * device: what was disabled on the old one does not carry over, and the
 * router hands the new one's state to the call. */
static void test_disabled_on_a_context_not_its_successor(void **s)
{
  (void)s;
  fake_gpu.device = 4;
  fake_gpu.ctx_id = 400;
  gs_variant_disable(&f32_variant, gs_ctx_of(400, 4, NULL), "test");
  assert_int_equal(route(f32_call()), GS_R_DISABLED);
  fake_gpu.ctx_id = 401;
  gs_gemm g = f32_call();
  gs_decision d = gs_route(&g);
  assert_int_equal(d.reason, GS_R_ROUTED);
  assert_non_null(d.ctx);
  assert_true(d.ctx->id == 401);
  assert_ptr_equal(d.ctx, gs_ctx_of(401, 4, NULL));
  assert_ptr_not_equal(d.ctx, gs_ctx_of(400, 4, NULL));
}

/* A user's table replaces the built-in one: its rows route, nothing else
 * does (not_tuned), and a row's verdict needs no state for a forward. */
static void test_user_table_routes_its_rows(void **s)
{
  (void)s;
  char path[] = "/tmp/gs-table-XXXXXX";
  write_file(path, VALIDATORS HEADER
             "gemm,f32,f32,f32,-,NT,-,2048,2048,2048,1,16,f32_test,30.5,1.5\n"
             "gemm,f32,f32,f32,-,TN,-,2048,2048,2048,1,16,cublas,40,1\n"
             "gemm,f32,f32,f32,-,NN,-,4096,4096,4096,1,16,f32_test,100,1.01\n"
             "gemm,f32,f32,f32,-,NN,-,1024,1024,1024,1,16,lt_algo:17,20,1.4\n");
  use_table(path);
  gs_gemm g = f32_call(); g.trans_b = CUBLAS_OP_T;     /* NT: no built-in win, a row */
  assert_int_equal(route(g), GS_R_ROUTED);
  assert_int_equal(route(f32_call()), GS_R_NOT_TUNED); /* the built-in box: replaced */
  g = f32_call(); g.trans_a = CUBLAS_OP_T;
  assert_int_equal(route(g), GS_R_TUNED_CUBLAS);
  g = f32_call(); g.m = g.n = g.k = g.lda = g.ldb = g.ldc = g.ldd = 4096;
  assert_int_equal(route(g), GS_R_TUNED_CUBLAS);       /* below 1.02x */
  state_loads = 0;
  fake_gpu.placements = 0;
  g = f32_call(); g.m = g.n = g.k = g.lda = g.ldb = g.ldc = g.ldd = 1024;
  assert_int_equal(route(g), GS_R_ROUTE_UNAVAILABLE);  /* not a kernel of this build */
  assert_int_equal(state_loads, 0);
  assert_int_equal(fake_gpu.placements, 0);
  g = f32_call(); g.trans_b = CUBLAS_OP_T; g.lda = 2050;   /* the key's alignment class */
  assert_int_equal(route(g), GS_R_NOT_TUNED);
  unlink(path);
}

/* A table made on another GPU is not used there: said once, naming the
 * key; its calls forward (table_refused), the defaults do not step in. */
static void test_table_from_another_gpu_is_refused(void **s)
{
  (void)s;
  char path[] = "/tmp/gs-table-XXXXXX";
  write_file(path, VALIDATORS HEADER
             "gemm,f32,f32,f32,-,NT,-,2048,2048,2048,1,16,f32_test,30.5,1.5\n");
  use_table(path);
  strcpy(fake_identity.gpu_name, "NVIDIA H100 80GB HBM3");
  gs_gemm g = f32_call(); g.trans_b = CUBLAS_OP_T;
  assert_int_equal(route(g), GS_R_TABLE_REFUSED);
  /* a call no row of any table sends to a kernel is decided before the
   * device is known, and costs no GPU query */
  fake_gpu.placements = 0;
  assert_int_equal(route(f32_call()), GS_R_NOT_TUNED);
  assert_int_equal(fake_gpu.placements, 0);
  /* the built-in table is refused the same way on that GPU */
  unsetenv("GEMMSHIM_TABLE");
  gs_config_reload();
  gs_tables_reset();
  assert_int_equal(route(f32_call()), GS_R_TABLE_REFUSED);
  strcpy(fake_identity.gpu_name, "NVIDIA H200");
  gs_tables_reset();
  assert_int_equal(route(f32_call()), GS_R_ROUTED);
  unlink(path);
}

/* A table chooses among the routes a call's class allows: it cannot route
 * a call that has not opted in, a PEDANTIC compute type, a math mode the
 * kernel refuses, or another kernel's class. */
static void test_table_cannot_bypass_the_rules(void **s)
{
  (void)s;
  char path[] = "/tmp/gs-table-XXXXXX";
  write_file(path, VALIDATORS HEADER
             "*,f32,f32,f32,32f_emulated_16bfx9,NN,*,2048,2048,2048,1,*,opt_in_test,-,3\n"
             "*,f32,f32,f32,32f_pedantic,NN,*,2048,2048,2048,1,*,f32_test,-,3\n"
             "*,f32,f32,f32,-,NN,*,2048,2048,2048,1,*,f32_test,-,3\n"
             "*,f32,f32,f32,-,TN,*,2048,2048,2048,1,*,bf16_test,-,3\n");
  use_table(path);
  gs_gemm g = f32_call(); g.compute_type = CUBLAS_COMPUTE_32F_EMULATED_16BFX9;
  fake_opted_in = 0;
  assert_int_equal(route(g), GS_R_NOT_OPTED_IN);
  fake_opted_in = 1;
  assert_int_equal(route(g), GS_R_ROUTED);
  g = f32_call(); g.compute_type = CUBLAS_COMPUTE_32F_PEDANTIC;
  assert_int_equal(route(g), GS_R_DTYPE);
  state_math = CUBLAS_TF32_TENSOR_OP_MATH;
  assert_int_equal(route(f32_call()), GS_R_MATH_MODE);
  state_math = CUBLAS_DEFAULT_MATH;
  assert_int_equal(route(f32_call()), GS_R_ROUTED);
  g = f32_call(); g.trans_a = CUBLAS_OP_T;   /* a BF16 kernel for an FP32 call */
  assert_int_equal(route(g), GS_R_ROUTE_UNAVAILABLE);
  unlink(path);
}

/* A row measured with programmatic dependent launch (launch pdl) holds
 * only where the kernel launches so: with GEMMSHIM_PDL=0, or a kernel (a
 * driver) without it, the plain row of the same key after it decides, or
 * no row. The verdicts remembered per thread follow the setting. */
static void test_table_pdl_rows_hold_only_with_pdl(void **s)
{
  (void)s;
  char path[] = "/tmp/gs-table-XXXXXX";
  write_file(path, VALIDATORS
             "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,"
             "time_us,ratio,lt_algo,launch\n"
             "gemm,f32,f32,f32,-,NT,-,2048,2048,2048,1,16,f32_test,-,1.1,-,pdl\n"
             "gemm,f32,f32,f32,-,NT,-,2048,2048,2048,1,16,cublas,-,1,-,plain\n"
             "gemm,f32,f32,f32,-,TT,-,2048,2048,2048,1,16,f32_test,-,1.1,-,pdl\n");
  use_table(path);
  gs_gemm nt = f32_call(); nt.trans_b = CUBLAS_OP_T;
  gs_gemm tt = nt; tt.trans_a = CUBLAS_OP_T;
  /* the kernel launches plainly here: the pdl rows say nothing */
  assert_int_equal(route(nt), GS_R_TUNED_CUBLAS);
  assert_int_equal(route(tt), GS_R_NOT_TUNED);
  fake_launches_pdl = 1;
  assert_int_equal(route(nt), GS_R_ROUTED);
  assert_int_equal(route(tt), GS_R_ROUTED);
  /* GEMMSHIM_PDL=0, the tables as they were */
  setenv("GEMMSHIM_PDL", "0", 1);
  gs_config_reload();
  assert_int_equal(route(nt), GS_R_TUNED_CUBLAS);
  assert_int_equal(route(tt), GS_R_NOT_TUNED);
  unsetenv("GEMMSHIM_PDL");
  gs_config_reload();
  assert_int_equal(route(nt), GS_R_ROUTED);
  /* a launch with PDL refused in this process (health.h): the same */
  gs_pdl_refused(&f32_variant, 2048, 2048, 2048);
  assert_int_equal(route(nt), GS_R_TUNED_CUBLAS);
  assert_int_equal(route(tt), GS_R_NOT_TUNED);
  gs_pdl_forget_refusal();
  assert_int_equal(route(nt), GS_R_ROUTED);
  unsetenv("GEMMSHIM_TABLE");
  unlink(path);
}

/* Under GEMMSHIM_PDL=0 a user's table's pdl rows are passed over, and that
 * is said once, when the table is read. */
static void test_pdl_rows_passed_over_are_said(void **s)
{
  (void)s;
  char path[] = "/tmp/gs-table-XXXXXX";
  write_file(path, VALIDATORS
             "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,"
             "time_us,ratio,launch\n"
             "gemm,f32,f32,f32,-,NT,-,2048,2048,2048,1,16,f32_test,-,1.1,pdl\n"
             "gemm,f32,f32,f32,-,TT,-,2048,2048,2048,1,16,f32_test,-,1.1,pdl\n"
             "gemm,f32,f32,f32,-,TN,-,2048,2048,2048,1,16,f32_test,-,1.1,plain\n");
  setenv("GEMMSHIM_PDL", "0", 1);
  use_table(path);
  fake_launches_pdl = 1;
  char said[] = "/tmp/gs-said-XXXXXX";
  int fd = mkstemp(said);
  assert_true(fd >= 0);
  fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  gs_gemm nt = f32_call(); nt.trans_b = CUBLAS_OP_T;
  assert_int_equal(route(nt), GS_R_NOT_TUNED);
  assert_int_equal(route(nt), GS_R_NOT_TUNED);   /* said once */
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  char text[1024] = "";
  ssize_t got = pread(fd, text, sizeof text - 1, 0);
  close(fd);
  unlink(said);
  assert_true(got > 0);
  char want[512];
  snprintf(want, sizeof want, "gemmshim: route table %s: 2 rows measured with "
           "programmatic dependent launch passed over (GEMMSHIM_PDL=0)\n", path);
  assert_string_equal(text, want);
  unsetenv("GEMMSHIM_PDL");
  unsetenv("GEMMSHIM_TABLE");
  unlink(path);
}

/* Several built-in tables: a device uses the one measured on a GPU of its
 * name. */
static void test_the_built_in_table_of_this_gpus_name(void **s)
{
  (void)s;
  gs_gemm tt = f32_call(); tt.trans_a = tt.trans_b = CUBLAS_OP_T;
  tt.m = tt.n = tt.k = 3072; tt.lda = tt.ldb = tt.ldc = tt.ldd = 3072;
  gs_gemm nn = f32_call();
  assert_int_equal(route(tt), GS_R_NOT_TUNED);     /* the H200's: no such row */
  assert_int_equal(route(nn), GS_R_ROUTED);
  strcpy(fake_identity.gpu_name, "Fake H100");
  gs_tables_reset();
  assert_int_equal(route(tt), GS_R_ROUTED);        /* its own table's row */
  /* not the H200's rows, which the precheck does not even read: no state,
   * no placement */
  const int loads = state_loads, placed = fake_gpu.placements;
  assert_int_equal(route(nn), GS_R_NOT_TUNED);
  assert_int_equal(state_loads, loads);
  assert_int_equal(fake_gpu.placements, placed);
}

/* torchrun: each rank's device has its own table; one process with two
 * devices uses each device's file for that device's calls. */
static void test_each_device_its_own_table(void **s)
{
  (void)s;
  char dir[] = "/tmp/gs-cache-XXXXXX";
  assert_non_null(mkdtemp(dir));
  static const char uuid_a[] = "GPU-aaaaaaaa-0000-0000-0000-000000000000";
  static const char uuid_b[] = "GPU-bbbbbbbb-0000-0000-0000-000000000000";
  char a[256], b[256];
  snprintf(a, sizeof a, "%s/routes-%s.csv", dir, uuid_a);
  snprintf(b, sizeof b, "%s/routes-%s.csv", dir, uuid_b);
  write_file_at(a, VALIDATORS HEADER "gemm,f32,f32,f32,-,NT,-,2048,2048,2048,1,16,f32_test,-,1.5\n");
  write_file_at(b, VALIDATORS HEADER "gemm,f32,f32,f32,-,TT,-,2048,2048,2048,1,16,f32_test,-,1.5\n");
  setenv("GEMMSHIM_CACHE_DIR", dir, 1);
  gs_config_reload();
  gs_tables_reset();
  /* (NT and TT: layouts the built-in table does not route) */
  gs_gemm nt = f32_call(); nt.trans_b = CUBLAS_OP_T;
  gs_gemm tt = nt; tt.trans_a = CUBLAS_OP_T;
  fake_gpu.device = 0; fake_gpu.ctx_id = 100;
  strcpy(fake_identity.uuid, uuid_a);
  assert_int_equal(route(nt), GS_R_ROUTED);
  assert_int_equal(route(tt), GS_R_NOT_TUNED);
  fake_gpu.device = 1; fake_gpu.ctx_id = 101;
  strcpy(fake_identity.uuid, uuid_b);
  assert_int_equal(route(nt), GS_R_NOT_TUNED);
  assert_int_equal(route(tt), GS_R_ROUTED);
  fake_gpu.device = 0; fake_gpu.ctx_id = 100;   /* device 0's choice stands */
  strcpy(fake_identity.uuid, uuid_a);
  assert_int_equal(route(nt), GS_R_ROUTED);
  strcpy(fake_identity.uuid, "GPU-00000000-1111-2222-3333-444444444444");
  unlink(a);
  unlink(b);
  rmdir(dir);
}

/* Without GEMMSHIM_TABLE: the cache file named by the device's UUID, if
 * there is one, with the built-in table for the calls it has no row for;
 * else the built-in table. */
static void test_cache_file_by_uuid(void **s)
{
  (void)s;
  char dir[] = "/tmp/gs-cache-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char mine[256], other[256];
  snprintf(mine, sizeof mine, "%s/routes-%s.csv", dir, fake_identity.uuid);
  snprintf(other, sizeof other, "%s/routes-GPU-ffffffff-0000-0000-0000-000000000000.csv", dir);
  FILE *f = fopen(other, "w");
  fputs(VALIDATORS HEADER "gemm,f32,f32,f32,-,NT,-,2048,2048,2048,1,16,f32_test,-,1.5\n", f);
  fclose(f);
  setenv("GEMMSHIM_CACHE_DIR", dir, 1);
  gs_config_reload();
  gs_tables_reset();
  gs_gemm nt = f32_call(); nt.trans_b = CUBLAS_OP_T;
  assert_int_equal(route(nt), GS_R_NOT_TUNED);        /* another GPU's file */
  assert_int_equal(route(f32_call()), GS_R_ROUTED);   /* the defaults */
  f = fopen(mine, "w");
  fputs(VALIDATORS HEADER "gemm,f32,f32,f32,-,NT,-,2048,2048,2048,1,16,f32_test,-,1.5\n"
                          "this line is malformed\n", f);
  fclose(f);
  gs_tables_reset();
  assert_int_equal(route(nt), GS_R_ROUTED);           /* its own file, bad line aside */
  assert_int_equal(route(f32_call()), GS_R_ROUTED);   /* no row there: the defaults' */
  gs_gemm tt = nt; tt.trans_a = CUBLAS_OP_T;
  assert_int_equal(route(tt), GS_R_NOT_TUNED);        /* in neither */
  /* a row of its own wins over the defaults', cublas included */
  f = fopen(mine, "w");
  fputs(VALIDATORS HEADER "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,cublas,-,1\n", f);
  fclose(f);
  gs_tables_reset();
  assert_int_equal(route(f32_call()), GS_R_TUNED_CUBLAS);
  /* its own file from another build (refused): the defaults apply */
  f = fopen(mine, "w");
  fputs(VALIDATORS_OTHER_SHIM HEADER "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,cublas,-,1\n", f);
  fclose(f);
  gs_tables_reset();
  assert_int_equal(route(f32_call()), GS_R_ROUTED);
  unlink(mine);
  unlink(other);
  rmdir(dir);
}

static void test_unreadable_table_routes_nothing(void **s)
{
  (void)s;
  use_table("/nonexistent/table.csv");
  assert_int_equal(route(f32_call()), GS_R_NOT_TUNED);
  fake_identity_known = 0;   /* the device not known yet: asked again later */
  gs_tables_reset();
  unsetenv("GEMMSHIM_TABLE");
  gs_config_reload();
  assert_int_equal(route(f32_call()), GS_R_NOT_TUNED);
  fake_identity_known = 1;
  assert_int_equal(route(f32_call()), GS_R_ROUTED);
}

/* ---- the route cublaslt (lt_test here): a row's algorithm --------------- */

#define HEADER_LT \
  "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio,lt_algo\n"
/* an algorithm with the given split-K, reduction scheme and workspace */
#define ALGO(id, splitk, reduction, ws)                                                    \
  "id=" #id ";tile=20;splitk=" #splitk ";reduction=" #reduction ";swizzle=0;custom=0;" \
  "stages=12;inner=0;cluster=0;workspace=" #ws

/* A table where lt_test serves FP16 calls of several m (n = k = 1024),
 * each row with its own algorithm, and f32_test the FP32 NN 2048^3 call. */
static void use_lt_table(char *path)
{
  write_file(path, VALIDATORS HEADER_LT
             "gemm,f16,f16,f16,32f,NN,-,1024,1024,1024,1,16,lt_test,-,1.5," ALGO(66, 1, 0, 0) "\n"
             "gemm,f16,f16,f16,32f,NN,-,2048,1024,1024,1,16,lt_test,-,1.5," ALGO(67, 1, 0, 1024) "\n"
             "gemm,f16,f16,f16,32f,NN,-,3072,1024,1024,1,16,lt_test,-,1.5," ALGO(70, 4, 1, 0) "\n"
             "gemm,f16,f16,f16,32f,NN,-,4096,1024,1024,1,16,lt_test,-,1.5," ALGO(71, 4, 4, 0) "\n"
             "gemm,f16,f16,f16,32f,NN,-,5120,1024,1024,1,16,lt_test,-,1.5," ALGO(72, 4, 2, 0) "\n"
             "gemm,f16,f16,f16,32f,NN,-,6144,1024,1024,1,16,lt_test,-,1.5," ALGO(73, 1, 1, 0) "\n"
             "lt,f16,f16,f16,32f,NN,default,1024,1024,1024,1,16,lt_test,-,1.5," ALGO(68, 1, 0, 4096) "\n"
             "lt,f16,f16,f16,32f,NN,default,3072,1024,1024,1,16,lt_test,-,1.5," ALGO(74, 4, 1, 0) "\n"
             "lt,f16,f16,f16,32f,NN,default,4096,1024,1024,1,16,lt_test,-,1.5," ALGO(75, 4, 4, 0) "\n"
             "lt,f16,f16,f16,32f,NN,default,5120,1024,1024,1,16,lt_test,-,1.5," ALGO(76, 4, 2, 0) "\n"
             "lt,f16,f16,f16,32f,NN,default,6144,1024,1024,1,16,lt_test,-,1.5," ALGO(77, 1, 1, 0) "\n"
             "lt,f16,f16,f16,32f,NN,bias,1024,1024,1024,1,16,lt_test,-,1.5," ALGO(69, 1, 0, 0) "\n"
             "gemm,f32,f32,f32,-,NN,-,2048,2048,2048,1,16,f32_test,-,1.5,-\n");
  use_table(path);
}

/* cublasGemmEx, FP16 with COMPUTE_32F, NN, m x 1024 x 1024. */
static gs_gemm f16_call(int64_t m)
{
  gs_gemm g = f32_call();
  g.a_type = g.b_type = g.c_type = g.d_type = CUDA_R_16F;
  g.compute_type = CUBLAS_COMPUTE_32F;
  g.m = m;
  g.n = g.k = 1024;
  g.lda = g.ldc = g.ldd = m;
  g.ldb = 1024;
  return g;
}

/* cublasLtMatmul, the same FP16 call, D apart, with a workspace. */
static gs_gemm f16_lt_call(int64_t m, size_t workspace_size)
{
  gs_gemm g = f16_call(m);
  g.is_lt = 1;
  g.D = (void *)0x400000;
  g.epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  g.bias_type = CUDA_R_16F;
  g.load_state = lt_state;
  g.workspace_size = workspace_size;
  g.workspace = workspace_size ? (void *)0x600000 : NULL;
  return g;
}

/* The row of the device's table for call g. */
static const gs_rt_row *row_for(const gs_gemm *g)
{
  gs_rt_key k;
  gs_rt_key_of(g, &k);
  return gs_rt_find(gs_tables_for_device(0), &k);
}

/* A row naming the route cublaslt routes its call there, with that row's
 * own algorithm; the verdict remembered for the next call keeps it, and
 * other rows keep theirs. A kernel's decision has none. */
static void test_a_cublaslt_row_routes_with_its_algorithm(void **s)
{
  (void)s;
  char path[] = "/tmp/gs-table-XXXXXX";
  use_lt_table(path);
  gs_gemm g = f16_call(1024);
  gs_decision d = gs_route(&g);
  assert_int_equal(d.reason, GS_R_ROUTED);
  assert_ptr_equal(d.variant, &lt_variant);
  assert_non_null(d.lt_algo);
  assert_ptr_equal(d.lt_algo, &row_for(&g)->algo);
  assert_int_equal(d.lt_algo->id, 66);
  assert_int_equal(d.lt_algo->stages, 12);
  const gs_lt_algo *first = d.lt_algo;
  g = f16_call(1024);
  assert_ptr_equal(gs_route(&g).lt_algo, first);   /* the remembered verdict */
  g = f16_lt_call(1024, 1 << 20);
  d = gs_route(&g);
  assert_int_equal(d.reason, GS_R_ROUTED);
  assert_ptr_equal(d.variant, &lt_variant);
  assert_int_equal(d.lt_algo->id, 68);
  assert_ptr_equal(d.lt_algo, &row_for(&g)->algo);
  g = f16_lt_call(1024, 0);
  g.epilogue = CUBLASLT_EPILOGUE_BIAS;
  g.bias = (void *)0x500000;
  d = gs_route(&g);
  assert_int_equal(d.reason, GS_R_ROUTED);
  assert_int_equal(d.lt_algo->id, 69);
  g.bias_type = CUDA_R_32F;   /* cuBLASLt's default bias is the output's type */
  assert_int_equal(route(g), GS_R_EPILOGUE);
  g = f16_call(1024);
  assert_ptr_equal(gs_route(&g).lt_algo, first);
  g = f32_call();
  d = gs_route(&g);
  assert_ptr_equal(d.variant, &f32_variant);
  assert_null(d.lt_algo);
  g = f16_call(1024);
  g.trans_a = CUBLAS_OP_T;   /* no row: not routed, no algorithm */
  g.lda = 1024;
  d = gs_route(&g);
  assert_null(d.variant);
  assert_null(d.lt_algo);
  /* the route's not_tuned says nothing: the reason is our kernels' (none
   * takes FP16) */
  assert_int_equal(d.reason, GS_R_DTYPE);
  /* GEMMSHIM_FORCE does not turn the route off: its rows still decide */
  const char *forces[] = { "1", "lt_test", "f32_test" };
  for (int i = 0; i < 3; i++) {
    setenv("GEMMSHIM_FORCE", forces[i], 1);
    gs_config_reload();
    g = f16_call(1024);
    d = gs_route(&g);
    assert_int_equal(d.reason, GS_R_ROUTED);
    assert_ptr_equal(d.lt_algo, first);
  }
  unsetenv("GEMMSHIM_FORCE");
  gs_config_reload();
  unlink(path);
}

/* cublasGemmStridedBatchedEx: f16_call(m) as `batch` items, each matrix
 * right after the one before (packed, as a framework's batched tensors). */
static gs_gemm f16_batched_call(int64_t m, int64_t batch)
{
  gs_gemm g = f16_call(m);
  g.is_batched_api = 1;
  g.batch = batch;
  g.stride_a = g.lda * g.k;
  g.stride_b = g.ldb * g.n;
  g.stride_c = g.stride_d = g.ldc * g.n;
  return g;
}

/* A strided batch goes to the route cublaslt by a row of its own entry
 * class and batch count, and only with its outputs packed (the self-check
 * and A/B mode compare them as one matrix); no kernel of ours takes one. */
static void test_a_cublaslt_row_routes_a_packed_batch(void **s)
{
  (void)s;
  char path[] = "/tmp/gs-table-XXXXXX";
  write_file(path, VALIDATORS HEADER_LT
             "gemm_batched,f16,f16,f16,32f,NN,-,1024,1024,1024,8,16,lt_test,-,1.5," ALGO(80, 1, 0, 0) "\n"
             "gemm_batched,f16,f16,f16,32f,NN,-,1024,1024,1024,2,16,cublas,-,1.0,-\n"
             "gemm,f16,f16,f16,32f,NN,-,2048,1024,1024,1,16,lt_test,-,1.5," ALGO(81, 1, 0, 0) "\n"
             "lt,f16,f16,f16,32f,NN,default,1024,1024,1024,8,16,lt_test,-,1.5," ALGO(82, 1, 0, 0) "\n");
  use_table(path);
  gs_gemm g = f16_batched_call(1024, 8);
  gs_decision d = gs_route(&g);
  assert_int_equal(d.reason, GS_R_ROUTED);
  assert_ptr_equal(d.variant, &lt_variant);
  assert_int_equal(d.lt_algo->id, 80);
  /* A and B may lie anyhow (even one A for every item) */
  g.stride_a = 0;
  g.stride_b = g.ldb * g.n + 512;
  assert_int_equal(gs_route(&g).lt_algo->id, 80);
  /* but a stride sets where later items start: an odd one is another
   * alignment class (the row's algorithm was picked for 16 bytes) */
  g.stride_b = g.ldb * g.n + 1;
  assert_null(gs_route(&g).variant);
  gs_rt_key key;
  gs_rt_key_of(&g, &key);
  assert_int_equal(key.align, 2);
  g.stride_b = g.ldb * g.n + 4;
  gs_rt_key_of(&g, &key);
  assert_int_equal(key.align, 8);
  /* outputs with gaps, or overlapping: not one matrix, cuBLAS's */
  g = f16_batched_call(1024, 8);
  g.stride_c = g.stride_d = g.ldc * g.n + 64;
  assert_null(gs_route(&g).variant);
  assert_int_equal(gs_variant_fits_args(&lt_variant, &g), GS_R_BATCHED);
  g.stride_c = g.stride_d = 0;
  assert_null(gs_route(&g).variant);
  /* another batch count has no row; the batched entry with one item is
   * its own class (no gemm_batched row of batch 1) */
  g = f16_batched_call(1024, 4);
  d = gs_route(&g);
  assert_null(d.variant);
  assert_int_equal(d.reason, GS_R_DTYPE);   /* what our kernels met: no row */
  /* a row that says cublas is the reason, though no kernel of ours takes
   * a batch */
  g = f16_batched_call(1024, 2);
  d = gs_route(&g);
  assert_null(d.variant);
  assert_int_equal(d.reason, GS_R_TUNED_CUBLAS);
  g = f16_batched_call(2048, 1);
  assert_null(gs_route(&g).variant);
  /* cuBLASLt's own batched call: its D's and C's strides */
  g = f16_lt_call(1024, 0);
  g.batch = 8;
  g.stride_a = g.lda * g.k;
  g.stride_b = g.ldb * g.n;
  g.stride_c = g.stride_d = g.ldd * g.n;
  d = gs_route(&g);
  assert_int_equal(d.reason, GS_R_ROUTED);
  assert_int_equal(d.lt_algo->id, 82);
  g.stride_c = 0;   /* C read as one matrix for every item: not packed */
  assert_null(gs_route(&g).variant);
  /* the route's bound: cuBLASLt's batch count is an int32 */
  g = f16_batched_call(1024, (int64_t)INT32_MAX + 1);
  assert_int_equal(gs_variant_fits_args(&lt_variant, &g), GS_R_BATCHED);
  /* our kernels take one product a call, from a batched entry too */
  g = f32_call();
  g.is_batched_api = 1;
  g.batch = 2;
  g.stride_a = g.lda * g.k;
  g.stride_b = g.ldb * g.n;
  g.stride_c = g.stride_d = g.ldc * g.n;
  assert_int_equal(gs_variant_fits_args(&f32_variant, &g), GS_R_BATCHED);
  g.batch = 1;
  assert_int_equal(gs_variant_fits_args(&f32_variant, &g), GS_R_ROUTED);
  unlink(path);
}

/* The workspace an algorithm needs: a BLAS call gives none, a cuBLASLt
 * call what it gives (enough is enough: equal routes). */
static void test_lt_algo_unfit_for_the_workspace(void **s)
{
  (void)s;
  char path[] = "/tmp/gs-table-XXXXXX";
  use_lt_table(path);
  assert_int_equal(route(f16_call(2048)), GS_R_LT_ALGO_UNFIT);
  assert_int_equal(route(f16_lt_call(1024, 4095)), GS_R_LT_ALGO_UNFIT);
  assert_int_equal(route(f16_lt_call(1024, 0)), GS_R_LT_ALGO_UNFIT);
  assert_int_equal(route(f16_lt_call(1024, 4096)), GS_R_ROUTED);
  assert_int_equal(route(f16_call(1024)), GS_R_ROUTED);   /* workspace 0 */
  gs_gemm g = f16_call(2048);
  gs_decision d = gs_route(&g);
  assert_null(d.variant);
  assert_null(d.lt_algo);
  assert_string_equal(gs_reason_name(GS_R_LT_ALGO_UNFIT), "lt_algo_unfit");
  unlink(path);
}

/* A BLAS call whose math mode disallows reduced-precision reduction gets
 * no split-K algorithm that reduces in the output type (INPLACE,
 * OUTPUT_TYPE); one that reduces in the compute type, or does not split,
 * is fine. Without the bit all are. A cublasLtMatmul call (no math mode)
 * never gets one: its caller may have excluded them from its own choice
 * of algorithm, which the shim does not see. */
static void test_lt_algo_unfit_for_a_math_mode_without_reduced_precision(void **s)
{
  (void)s;
  char path[] = "/tmp/gs-table-XXXXXX";
  use_lt_table(path);
  state_math = CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
  assert_int_equal(route(f16_call(3072)), GS_R_LT_ALGO_UNFIT);   /* split 4, INPLACE */
  assert_int_equal(route(f16_call(4096)), GS_R_LT_ALGO_UNFIT);   /* split 4, OUTPUT_TYPE */
  assert_int_equal(route(f16_call(5120)), GS_R_ROUTED);          /* split 4, COMPUTE_TYPE */
  assert_int_equal(route(f16_call(6144)), GS_R_ROUTED);          /* INPLACE, no split */
  state_math = CUBLAS_DEFAULT_MATH;
  assert_int_equal(route(f16_call(3072)), GS_R_ROUTED);
  assert_int_equal(route(f16_call(4096)), GS_R_ROUTED);
  assert_int_equal(route(f16_lt_call(3072, 0)), GS_R_LT_ALGO_UNFIT);
  assert_int_equal(route(f16_lt_call(4096, 0)), GS_R_LT_ALGO_UNFIT);
  assert_int_equal(route(f16_lt_call(5120, 0)), GS_R_ROUTED);
  assert_int_equal(route(f16_lt_call(6144, 0)), GS_R_ROUTED);
  unlink(path);
}

/* A built-in table names the route cublaslt only in a process with a GPU
 * of its name: on the H200 the fake H100's row costs an FP16 call nothing
 * (no state read, no placement, our kernels' reason); on a fake H100 the
 * row routes the call with its algorithm. */
static void test_a_built_in_cublaslt_row_counts_only_on_its_gpu(void **s)
{
  (void)s;
  gs_gemm g = f16_call(1024);
  gs_decision d = gs_route(&g);
  assert_int_equal(d.reason, GS_R_DTYPE);
  assert_null(d.lt_algo);
  assert_int_equal(state_loads, 0);
  assert_int_equal(fake_gpu.placements, 0);
  strcpy(fake_identity.gpu_name, "Fake H100");
  gs_tables_reset();
  g = f16_call(1024);
  d = gs_route(&g);
  assert_int_equal(d.reason, GS_R_ROUTED);
  assert_ptr_equal(d.variant, &lt_variant);
  assert_non_null(d.lt_algo);
  assert_int_equal(d.lt_algo->id, 90);
  g = f16_call(2048);   /* no row of its own: our kernels' reason */
  assert_int_equal(gs_route(&g).reason, GS_R_DTYPE);
  /* under another cuBLAS the table is refused on the device: its rows name
   * nothing, and cost the call nothing */
  strcpy(fake_identity.cublas_version, "12.9.0");
  gs_tables_reset();
  state_loads = 0;
  g = f16_call(1024);
  d = gs_route(&g);
  assert_int_equal(d.reason, GS_R_DTYPE);
  assert_int_equal(state_loads, 0);
  strcpy(fake_identity.cublas_version, "13.1.0");
  /* a GPU with no built-in table of its own: the first one is refused
   * there (said), and the other GPUs' rows cost its calls nothing */
  strcpy(fake_identity.gpu_name, "Fake A100");
  gs_tables_reset();
  g = f16_call(1024);
  assert_int_equal(gs_route(&g).reason, GS_R_DTYPE);
  assert_int_equal(state_loads, 0);
  assert_int_equal(route(f32_call()), GS_R_TABLE_REFUSED);
}

/* Where no table names the route cublaslt (the built-in one of this GPU
 * does not), a call of its class is forwarded with our kernels' reason, at no cost;
 * GEMMSHIM_FORCE, which routes a class without a table, gives it no
 * algorithm to run either. */
static void test_cublaslt_route_unnamed_or_forced_does_not_serve(void **s)
{
  (void)s;
  const char *forces[] = { NULL, "lt_test", "1" };
  for (int i = 0; i < 3; i++) {
    if (forces[i]) setenv("GEMMSHIM_FORCE", forces[i], 1);
    gs_config_reload();
    gs_gemm g = f16_call(1024);
    gs_decision d = gs_route(&g);
    assert_int_equal(d.reason, GS_R_DTYPE);
    assert_null(d.variant);
    assert_null(d.lt_algo);
  }
  assert_int_equal(state_loads, 0);
  assert_int_equal(fake_gpu.placements, 0);
  unsetenv("GEMMSHIM_FORCE");
  gs_config_reload();
}

static void test_reason_names(void **s)
{
  (void)s;
  for (int r = 0; r < GS_R_COUNT; r++) assert_string_not_equal(gs_reason_name((gs_reason)r), "unknown");
  assert_string_equal(gs_reason_name(GS_R_NOT_TUNED), "not_tuned");
  assert_string_equal(gs_reason_name(GS_R_COUNT), "unknown");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_routes_a_win, setup),
    cmocka_unit_test_setup(test_table_pdl_rows_hold_only_with_pdl, setup),
    cmocka_unit_test_setup(test_pdl_rows_passed_over_are_said, setup),
    cmocka_unit_test_setup(test_the_built_in_table_of_this_gpus_name, setup),
    cmocka_unit_test_setup(test_bad_args, setup),
    cmocka_unit_test_setup(test_empty_problem, setup),
    cmocka_unit_test_setup(test_dtype_and_compute_type, setup),
    cmocka_unit_test_setup(test_batched, setup),
    cmocka_unit_test_setup(test_layout, setup),
    cmocka_unit_test_setup(test_math_mode_is_a_bitmask, setup),
    cmocka_unit_test_setup(test_opt_in_kernel, setup),
    cmocka_unit_test_setup(test_state_unreadable, setup),
    cmocka_unit_test_setup(test_pointer_modes, setup),
    cmocka_unit_test_setup(test_alpha_zero, setup),
    cmocka_unit_test_setup(test_lt_epilogues_and_attributes, setup),
    cmocka_unit_test_setup(test_alignment, setup),
    cmocka_unit_test_setup(test_size_class_and_wins, setup),
    cmocka_unit_test_setup(test_not_a_win_reads_no_state, setup),
    cmocka_unit_test_setup(test_force_routes_the_whole_class, setup),
    cmocka_unit_test_setup(test_routing_off, setup),
    cmocka_unit_test_setup(test_cached_descriptions_are_revalidated_before_serving, setup),
    cmocka_unit_test_setup(test_gpu_checks, setup),
    cmocka_unit_test_setup(test_no_gpu_query_for_forwarded_classes, setup),
    cmocka_unit_test_setup(test_disabled_variant, setup),
    cmocka_unit_test_setup(test_disabled_on_a_context_not_its_successor, setup),
    cmocka_unit_test_setup(test_user_table_routes_its_rows, setup),
    cmocka_unit_test_setup(test_table_from_another_gpu_is_refused, setup),
    cmocka_unit_test_setup(test_table_cannot_bypass_the_rules, setup),
    cmocka_unit_test_setup(test_cache_file_by_uuid, setup),
    cmocka_unit_test_setup(test_each_device_its_own_table, setup),
    cmocka_unit_test_setup(test_unreadable_table_routes_nothing, setup),
    cmocka_unit_test_setup(test_a_cublaslt_row_routes_with_its_algorithm, setup),
    cmocka_unit_test_setup(test_a_cublaslt_row_routes_a_packed_batch, setup),
    cmocka_unit_test_setup(test_lt_algo_unfit_for_the_workspace, setup),
    cmocka_unit_test_setup(test_lt_algo_unfit_for_a_math_mode_without_reduced_precision, setup),
    cmocka_unit_test_setup(test_a_built_in_cublaslt_row_counts_only_on_its_gpu, setup),
    cmocka_unit_test_setup(test_cublaslt_route_unnamed_or_forced_does_not_serve, setup),
    cmocka_unit_test_setup(test_reason_names, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
