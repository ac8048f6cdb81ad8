/* A cuBLASLt algorithm as a route: the configuration a route table row
 * names, written out so that a person can read it and cuBLASLt can rebuild
 * it (cublasLtMatmulAlgoInit with the call's types and the id, then
 * cublasLtMatmulAlgoConfigSetAttribute for each field). Where a rebuilt
 * algorithm was not byte-equal to the heuristic's on the GPU it was
 * measured on, the row also holds the raw bytes, which are then used as
 * they are (the table's cublas_version validator pins the library they
 * belong to).
 *
 * Text form, fields separated by ';' (no commas: it is a CSV field):
 *   id=66;tile=20;splitk=1;reduction=0;swizzle=0;custom=0;stages=12;
 *   inner=0;cluster=0;workspace=0[;raw=<128 hex digits>]
 * workspace: the bytes of workspace the algorithm needs for the call it was
 * measured on. Pure: parsing, formatting and the rules; the runs are in
 * lt_run.h. */
#ifndef GS_LT_ALGO_H
#define GS_LT_ALGO_H

#include <stddef.h>
#include <stdint.h>

#include "gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_lt_algo {
  int32_t id;           /* CUBLASLT_ALGO_CONFIG_ID */
  uint32_t tile;        /* TILE_ID */
  int32_t splitk;       /* SPLITK_NUM */
  uint32_t reduction;   /* REDUCTION_SCHEME (cublasLtReductionScheme_t) */
  uint32_t swizzle;     /* CTA_SWIZZLING */
  uint32_t custom;      /* CUSTOM_OPTION */
  uint32_t stages;      /* STAGES_ID */
  uint16_t inner;       /* INNER_SHAPE_ID */
  uint16_t cluster;     /* CLUSTER_SHAPE_ID */
  uint64_t workspace;   /* bytes it needs */
  int has_raw;          /* raw holds the heuristic's own bytes: use them */
  uint64_t raw[8];      /* cublasLtMatmulAlgo_t */
} gs_lt_algo;

/* Longest text form, with its terminating NUL. */
#define GS_LT_ALGO_TEXT 320

/* Parse the text form: 0, or -1 with why (a field missing, repeated,
 * unknown or out of range). */
int gs_lt_algo_parse(const char *text, gs_lt_algo *out, char *why, size_t why_len);

/* The text form (out of GS_LT_ALGO_TEXT bytes). */
void gs_lt_algo_format(const gs_lt_algo *a, char out[GS_LT_ALGO_TEXT]);

/* Whether a reduction scheme keeps partial sums in the output type
 * (INPLACE, OUTPUT_TYPE): a BLAS call whose math mode disallows reduced-
 * precision reduction must not get one when it splits K. */
int gs_lt_algo_reduces_in_output_type(const gs_lt_algo *a);

/* Whether the algorithm may serve this call: its workspace fits what the
 * call gives (a cuBLASLt call's own workspace; none for a BLAS call, which
 * the shim serves with zero-workspace algorithms only); no split-K
 * reduction in the output type for a BLAS call that disallows reduced-
 * precision reduction, nor for any cuBLASLt call (its caller may have
 * excluded such schemes from its own choice, which the shim cannot see).
 * 1 yes, 0 no. */
int gs_lt_algo_fits_call(const gs_lt_algo *a, const gs_gemm *g);

/* The cuBLASLt compute type a call runs with (its own, or COMPUTE_32F for
 * the FP32 BLAS entries that give none). */
int gs_lt_compute_of(const gs_gemm *g);

#ifdef __cplusplus
}
#endif

#endif
