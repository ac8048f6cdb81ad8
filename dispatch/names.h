/* Short names for cuBLAS/CUDA enum values, for the log and messages. */
#ifndef GS_NAMES_H
#define GS_NAMES_H

#include "gemm.h"

const char *gs_dtype_name(int cuda_data_type);   /* "f32", "bf16", "-" */
const char *gs_compute_name(int compute_type);   /* "32f", "32f_fast_tf32" */
const char *gs_epilogue_name(int epilogue);      /* "-", "default", "bias" */

#endif
