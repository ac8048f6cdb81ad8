/* Short names for cuBLAS/CUDA enum values, for the log and messages. */
#ifndef GS_NAMES_H
#define GS_NAMES_H

#include "gemm.h"

const char *gs_dtype_name(int cuda_data_type);   /* "f32", "bf16", "-" */
const char *gs_compute_name(int compute_type);   /* "32f", "32f_fast_tf32" */
const char *gs_epilogue_name(int epilogue);      /* "-", "default", "bias" */

/* Bytes per element of a cudaDataType; 0 when unknown. */
int gs_dtype_bytes(int cuda_data_type);

/* The value a name stands for: 0, or -1 for a name none of them has. */
int gs_dtype_from_name(const char *name, int *out);
int gs_compute_from_name(const char *name, int *out);
int gs_epilogue_from_name(const char *name, int *out);

#endif
