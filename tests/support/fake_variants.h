/* A kernel table, its routing policy and a GPU for routing tests: the real
 * rules in route.c and capability.c run against these instead of the real
 * kernels (variants.c) and policy (routes.c). */
#ifndef GS_FAKE_VARIANTS_H
#define GS_FAKE_VARIANTS_H

#include "../../dispatch/gpu.h"
#include "../../dispatch/routes.h"
#include "../../dispatch/variants.h"

typedef struct fake_gpu_t {
  int present, device, cc_major, cc_minor, sm_count;
  int placements;
  unsigned long long ctx_id;   /* the stream's context identity (0: 1 + device) */
} fake_gpu_t;
extern fake_gpu_t fake_gpu;

/* What gs_gpu_identity returns for fake_gpu's device once a call has been
 * placed (a fake H200; tests change fields). fake_identity_known = 0 makes
 * it return NULL. */
extern gs_rt_identity fake_identity;
/* gs_rt_kernel_table_hash of these variants (a test checks it). */
#define FAKE_KERNEL_TABLE "ff893b9fcb148c71"
extern int fake_identity_known;

/* f32_variant: FP32, strict math, all layouts, DEFAULT and BIAS epilogues,
 * 16-byte alignment, multiples of 128/128/16, wins on NN/TN 1024..8192;
 * its Inf/NaN are FP64's (nonfinite_as_fp64, as BF16x6's).
 * bf16_variant: BF16 in, BF16 or FP32 out, TN only, sm 9.0, multiples of
 * 64, wins everywhere, honours an SM-count target (a persistent grid). */
extern const gs_variant f32_variant, bf16_variant;

/* opt_in_variant: FP32 with compute type EMULATED_16BFX9 only, all layouts,
 * wins everywhere; its opt-in answers fake_opted_in (1 yes, 0 no), or with
 * -1 "not known before load_state" and fake_opted_in_later after it. */
extern const gs_variant opt_in_variant;
extern int fake_opted_in, fake_opted_in_later;

/* lt_variant ("lt_test"): the route cublaslt (runs_cublaslt: a row names
 * its algorithm in column lt_algo; no launcher) for FP16 in and out with
 * COMPUTE_32F, all layouts, DEFAULT and BIAS (bias of the output's type),
 * any size, 2-byte alignment, any GPU. The built-in table has no row for
 * it: only a test's own table routes to it. */
extern const gs_variant lt_variant;

/* batch_variant ("batch_test"): takes strided batches (takes_batch), FP32
 * with compute type 32F_FAST_16BF only, all layouts, any size, launched
 * through fake_variant_launch; no table row (it serves when forced). */
extern const gs_variant batch_variant;

/* What the variants' launchers do: NULL (the default) refuses every launch
 * (GS_K_UNSUPPORTED); a test that runs kernels sets its own. */
typedef gs_kstatus (*fake_launch_fn)(const gs_variant *v, const gs_kernel_args *a);
extern fake_launch_fn fake_variant_launch;

/* The scratch f32_variant asks for (its scratch_bytes; 0, the default:
 * none). */
extern size_t fake_scratch_bytes;

/* What f32_variant's launches_pdl answers: whether it launches with
 * programmatic dependent launch (0, the default: plainly). */
extern int fake_launches_pdl;

/* What f32_variant's preload does (NULL: loads at once). */
extern int (*fake_variant_preload)(void);

#endif
