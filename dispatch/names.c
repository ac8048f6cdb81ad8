#include "names.h"

#include <cublasLt.h>
#include <cublas_api.h>
#include <library_types.h>
#include <string.h>

const char *gs_dtype_name(int t)
{
  switch (t) {
  case GS_NONE: return "-";
  case CUDA_R_32F: return "f32";
  case CUDA_R_64F: return "f64";
  case CUDA_R_16F: return "f16";
  case CUDA_R_16BF: return "bf16";
  case CUDA_R_8I: return "i8";
  case CUDA_R_32I: return "i32";
  case CUDA_R_8F_E4M3: return "e4m3";
  case CUDA_R_8F_E5M2: return "e5m2";
  case CUDA_C_32F: return "c32";
  case CUDA_C_64F: return "c64";
  case CUDA_C_16F: return "c16";
  default: return "other";
  }
}

const char *gs_compute_name(int c)
{
  switch (c) {
  case GS_NONE: return "-";
  case CUBLAS_COMPUTE_16F: return "16f";
  case CUBLAS_COMPUTE_16F_PEDANTIC: return "16f_pedantic";
  case CUBLAS_COMPUTE_32F: return "32f";
  case CUBLAS_COMPUTE_32F_PEDANTIC: return "32f_pedantic";
  case CUBLAS_COMPUTE_32F_FAST_16F: return "32f_fast_16f";
  case CUBLAS_COMPUTE_32F_FAST_16BF: return "32f_fast_16bf";
  case CUBLAS_COMPUTE_32F_FAST_TF32: return "32f_fast_tf32";
  case CUBLAS_COMPUTE_32F_EMULATED_16BFX9: return "32f_emulated_16bfx9";
  case CUBLAS_COMPUTE_64F: return "64f";
  case CUBLAS_COMPUTE_64F_PEDANTIC: return "64f_pedantic";
  case CUBLAS_COMPUTE_32I: return "32i";
  case CUBLAS_COMPUTE_32I_PEDANTIC: return "32i_pedantic";
  default: return "other";
  }
}

static char op_letter(int op)
{
  switch (op) {
  case CUBLAS_OP_N: return 'N';
  case CUBLAS_OP_T: return 'T';
  case CUBLAS_OP_C: return 'C';
  default: return '?';
  }
}

void gs_layout_name(const gs_gemm *g, char out[3])
{
  out[0] = op_letter(g->trans_a);
  out[1] = op_letter(g->trans_b);
  out[2] = '\0';
}

const char *gs_epilogue_name(int e)
{
  switch (e) {
  case GS_NONE: return "-";
  case CUBLASLT_EPILOGUE_DEFAULT: return "default";
  case CUBLASLT_EPILOGUE_BIAS: return "bias";
  case CUBLASLT_EPILOGUE_RELU: return "relu";
  case CUBLASLT_EPILOGUE_RELU_BIAS: return "relu_bias";
  case CUBLASLT_EPILOGUE_GELU: return "gelu";
  case CUBLASLT_EPILOGUE_GELU_BIAS: return "gelu_bias";
  case CUBLASLT_EPILOGUE_GELU_AUX_BIAS: return "gelu_aux_bias";
  case CUBLASLT_EPILOGUE_DGELU: return "dgelu";
  case CUBLASLT_EPILOGUE_BGRADA: return "bgrada";
  case CUBLASLT_EPILOGUE_BGRADB: return "bgradb";
  default: return "other";
  }
}

int gs_dtype_bytes(int t)
{
  switch (t) {
  case CUDA_R_64F: case CUDA_C_32F: return 8;
  case CUDA_C_64F: return 16;
  case CUDA_R_32F: case CUDA_R_32I: case CUDA_C_16F: return 4;
  case CUDA_R_16F: case CUDA_R_16BF: return 2;
  case CUDA_R_8I: case CUDA_R_8F_E4M3: case CUDA_R_8F_E5M2: return 1;
  default: return 0;
  }
}

/* The reverse lookups try every value the forward names know. */
static const int dtypes[] = { GS_NONE, CUDA_R_32F, CUDA_R_64F, CUDA_R_16F, CUDA_R_16BF, CUDA_R_8I,
                              CUDA_R_32I, CUDA_R_8F_E4M3, CUDA_R_8F_E5M2, CUDA_C_32F, CUDA_C_64F,
                              CUDA_C_16F };
static const int computes[] = { GS_NONE, CUBLAS_COMPUTE_16F, CUBLAS_COMPUTE_16F_PEDANTIC,
                                CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_PEDANTIC,
                                CUBLAS_COMPUTE_32F_FAST_16F, CUBLAS_COMPUTE_32F_FAST_16BF,
                                CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_COMPUTE_32F_EMULATED_16BFX9,
                                CUBLAS_COMPUTE_64F, CUBLAS_COMPUTE_64F_PEDANTIC, CUBLAS_COMPUTE_32I,
                                CUBLAS_COMPUTE_32I_PEDANTIC };
static const int epilogues[] = { GS_NONE, CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_BIAS,
                                 CUBLASLT_EPILOGUE_RELU, CUBLASLT_EPILOGUE_RELU_BIAS,
                                 CUBLASLT_EPILOGUE_GELU, CUBLASLT_EPILOGUE_GELU_BIAS,
                                 CUBLASLT_EPILOGUE_GELU_AUX_BIAS, CUBLASLT_EPILOGUE_DGELU,
                                 CUBLASLT_EPILOGUE_BGRADA, CUBLASLT_EPILOGUE_BGRADB };

static int reverse(const char *name, const int *values, size_t n, const char *(*fwd)(int),
                   int *out)
{
  for (size_t i = 0; i < n; i++)
    if (!strcmp(fwd(values[i]), name)) {
      *out = values[i];
      return 0;
    }
  return -1;
}

int gs_dtype_from_name(const char *name, int *out)
{
  return reverse(name, dtypes, sizeof dtypes / sizeof *dtypes, gs_dtype_name, out);
}

int gs_compute_from_name(const char *name, int *out)
{
  return reverse(name, computes, sizeof computes / sizeof *computes, gs_compute_name, out);
}

int gs_epilogue_from_name(const char *name, int *out)
{
  return reverse(name, epilogues, sizeof epilogues / sizeof *epilogues, gs_epilogue_name, out);
}
