/* The parts of A/B mode that need no GPU: sampling, the scratch bound, the
 * self-check verdict, the CSV row. Unit-tested on the CPU. */
#include "ab.h"

#include <library_types.h>
#include <math.h>
#include <stdio.h>

#include "names.h"

int gs_ab_sampled(long every, unsigned long seq)
{
  return every > 0 && seq % (unsigned long)every == 0;
}

size_t gs_ab_scratch_needed(const gs_gemm *g)
{
  int out = g->is_lt ? g->d_type : g->c_type;
  size_t elem = out == CUDA_R_32F ? 4 : out == CUDA_R_16BF ? 2 : 0;
  return (size_t)g->ldd * (size_t)g->n * elem;
}

int gs_ab_fits(size_t need, long mb)
{
  return need > 0 && mb > 0 && need <= ((size_t)mb << 20);
}

int gs_selfcheck_passes(double rel_fro, double mismatched_nonfinite, double tol)
{
  return mismatched_nonfinite == 0 && isfinite(rel_fro) && rel_fro <= tol;
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

