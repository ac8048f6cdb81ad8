/* What math a call asks for, as the kernel variants' type and math-mode
 * predicates (variants.c) read it. Pure functions of the descriptor and the
 * configuration, so the unit tests check the real rules. */
#ifndef GS_MATH_RULES_H
#define GS_MATH_RULES_H

#include "config.h"
#include "gemm.h"

/* FP32 in and out with FP32 math: Sgemm, GemmEx and cuBLASLt with compute
 * type COMPUTE_32F or COMPUTE_32F_PEDANTIC (FAST_TF32 and friends ask for
 * other math). */
int gs_f32_types(const gs_gemm *g);

/* Strict FP32 math: BLAS math mode DEFAULT or PEDANTIC (TF32 mode makes
 * cuBLAS use tensor cores: that stays cuBLAS's), cuBLASLt FP32 scaling. */
int gs_f32_strict_math(const gs_gemm *g);

/* FP32 types for the 3xTF32 tensor-core kernel: as gs_f32_types, with
 * COMPUTE_32F_EMULATED_16BFX9 (a program asking for FP32 emulation) in
 * place of PEDANTIC, which always stays strict FP32. */
int gs_f32_tc_types(const gs_gemm *g);

/* Math the 3xTF32 kernel may deliver: DEFAULT or FP32_EMULATED_BF16X9 math
 * mode (never PEDANTIC, never TF32: the program asked for TF32's accuracy
 * and cuBLAS TF32 is faster), cuBLASLt FP32 scaling. */
int gs_f32_tc_math(const gs_gemm *g);

/* Whether FP32 on the tensor cores with FP32's accuracy (the BF16x6
 * kernel) was asked for: GEMMSHIM_FP32=tc, or the
 * program (or its user) asked cuBLAS for FP32 emulation: math mode
 * CUBLAS_FP32_EMULATED_BF16X9_MATH, compute type
 * CUBLAS_COMPUTE_32F_EMULATED_16BFX9 or CUBLAS_EMULATE_SINGLE_PRECISION=1.
 * cuBLAS offers that emulation on Blackwell only; on Hopper we deliver it.
 * 1 yes, 0 no, -1 not known until the handle's math mode is read (a BLAS
 * call before load_state): most calls are answered without that read. */
int gs_f32_tc_opted_in(const gs_gemm *g, const gs_config_t *cfg);

/* Whether the 3xTF32 kernel was asked for: GEMMSHIM_FP32=tc-fast alone
 * (its error on wide-range data is up to 8x SGEMM's, so no request for
 * cuBLAS's emulation, which promises FP32's accuracy, selects it). */
int gs_f32_tc_fast_opted_in(const gs_gemm *g, const gs_config_t *cfg);

/* BF16 in and out, FP32 accumulation. */
int gs_bf16_types(const gs_gemm *g);

/* FP16 in and out, FP32 accumulation (GemmEx and cuBLASLt with
 * COMPUTE_32F; COMPUTE_16F asks for FP16 accumulation, which stays
 * cuBLAS's). gs_bf16_math is its math rule too. */
int gs_f16_types(const gs_gemm *g);

/* Math mode does not change a BF16 GEMM with FP32 accumulation; cuBLASLt
 * must scale in FP32. */
int gs_bf16_math(const gs_gemm *g);

/* The route cublaslt: BF16 or FP16 in and out with FP32 accumulation
 * (COMPUTE_32F, the cuBLASLt compute type it then runs with). */
int gs_lt_route_types(const gs_gemm *g);

/* cuBLASLt scales in FP32; a BLAS call is in CUBLAS_DEFAULT_MATH (with or
 * without DISALLOW_REDUCED_PRECISION_REDUCTION, which the algorithm's
 * reduction scheme must then respect: lt_algo.h). */
int gs_lt_route_math(const gs_gemm *g);

#endif
