/* The parts of A/B mode and the self-check that need no GPU: sampling, the
 * scratch layout and bound, the verdict, the CSV row. Unit-tested on the
 * CPU. */
#include "ab.h"

#include <library_types.h>
#include <math.h>
#include <stdio.h>

#include "../kernels/compare.h"
#include "names.h"

int gs_ab_sampled(long every, unsigned long seq)
{
  return every > 0 && seq % (unsigned long)every == 0;
}

static size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }

int gs_output_elem_bytes(const gs_gemm *g)
{
  int out = g->is_lt ? g->d_type : g->c_type;
  return out == CUDA_R_32F ? 4 : out == CUDA_R_16BF || out == CUDA_R_16F ? 2 : 0;
}

int gs_compare_type_of(int type)
{
  return type == CUDA_R_32F    ? GS_CMP_F32
         : type == CUDA_R_16BF ? GS_CMP_BF16
         : type == CUDA_R_16F  ? GS_CMP_F16
                               : -1;
}

int gs_output_compare_type(const gs_gemm *g)
{
  int t = gs_compare_type_of(g->is_lt ? g->d_type : g->c_type);
  return t < 0 ? GS_CMP_F32 : t;
}

int gs_scratch_layout_of(const gs_gemm *g, size_t partial_bytes, int cublas_writes,
                         gs_scratch_layout *out)
{
  size_t elem = (size_t)gs_output_elem_bytes(g);
  if (!elem || g->m <= 0 || g->n <= 0 || g->ldd < g->m) return -1;
  /* a batch is compared as one matrix only where its outputs lie packed */
  if (g->batch > 1 && !gs_batch_packed(g)) return -1;
  int64_t per16 = (int64_t)(16 / elem);
  out->ld = cublas_writes && g->is_lt ? g->ldd : (g->m + per16 - 1) / per16 * per16;
  out->out = 0;
  /* exactly what the output as one m x cols matrix with that ld spans
   * (cols: n, or n x batch for a packed batch: gs_output_cols) */
  size_t span;
  if (__builtin_mul_overflow((size_t)out->ld, (size_t)(gs_output_cols(g) - 1), &span) ||
      __builtin_add_overflow(span, (size_t)g->m, &span) ||
      __builtin_mul_overflow(span, elem, &span) || span > SIZE_MAX / 2)
    return -1;
  out->partials = align256(span);
  out->result = align256(out->partials + partial_bytes);
  out->total = out->result + sizeof(gs_compare_result);
  return 0;
}

int gs_ab_fits(size_t need, long mb)
{
  return need > 0 && mb > 0 && need <= ((size_t)mb << 20);
}

double gs_ab_next_hold_us(double queued_us)
{
  /* a pair queued a few times slower than the last still fits (50 us at
   * the least); a hold never stalls a program for long (A/B mode waits on
   * every pair anyway) */
  const double most = 5000.0;
  if (!(queued_us > 0)) return GS_AB_HOLD_FIRST_US;
  double us = 4.0 * queued_us + 50.0;
  return us > most ? most : us;
}

gs_selfcheck_verdict gs_selfcheck_judge(const gs_compare_result *c, double tol,
                                        int nonfinite_as_fp64)
{
  double rel = gs_compare_rel_fro(c);
  if (!isfinite(rel) || rel > tol) return GS_SELFCHECK_FAILS;
  if (c->mismatched_nonfinite == 0) return GS_SELFCHECK_PASSES;
  if (nonfinite_as_fp64 && c->inputs_nonfinite == 0 &&
      c->mismatched_where_ref_nonfinite == c->mismatched_nonfinite)
    return GS_SELFCHECK_INCONCLUSIVE;
  return GS_SELFCHECK_FAILS;
}

double gs_compare_rel_fro(const gs_compare_result *c)
{
  return c->ref_sq > 0 ? sqrt(c->diff_sq / c->ref_sq) : sqrt(c->diff_sq);
}

int gs_ab_format_row(char *buf, size_t size, double time_s, long pid, const gs_gemm *g,
                     const char *kernel, const char *mode, double ours_us, double cublas_us,
                     double max_abs, double max_rel, double rel_fro, int device)
{
  char layout[3];
  gs_layout_name(g, layout);
  return snprintf(buf, size,
                  "%.6f,%ld,%s,%s,%s,%s,%lld,%lld,%lld,%lld,%s,%s,%.3f,%.3f,%.4f,%.6g,%.6g,%.6g,%d",
                  time_s, pid, g->entry_name, gs_dtype_name(g->a_type),
                  gs_dtype_name(g->is_lt ? g->d_type : g->c_type), layout, (long long)g->m,
                  (long long)g->n, (long long)g->k, (long long)g->batch, kernel, mode, ours_us,
                  cublas_us, ours_us > 0 ? cublas_us / ours_us : 0.0, max_abs, max_rel, rel_fro,
                  device);
}
