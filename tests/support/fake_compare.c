/* A stand-in for kernels/compare.cu on the fake GPU (fake_cudart.h): the
 * same comparison, queued on the stream and run on the host; and for
 * kernels/hold.cu: a hold queued as a kernel that does nothing, counted. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../kernels/compare.h"
#include "../../kernels/hold.h"
#include "fake_cudart.h"

typedef struct compare_work {
  gs_compare_type type;
  const void *x, *ref;
  int64_t ldx, ldr, m, n;
  gs_compare_inputs in;
  gs_compare_result *out;
} compare_work;

/* IEEE binary16 to float, exactly (subnormals, Inf and NaN included). */
static float half_to_float(uint16_t h)
{
  int e = (h >> 10) & 31;
  float mag = e == 0 ? ldexpf((float)(h & 1023), -24)
              : e == 31 ? ((h & 1023) ? NAN : INFINITY)
                        : ldexpf((float)((h & 1023) | 1024), e - 25);
  return (h & 0x8000) ? -mag : mag;
}

static float load(gs_compare_type type, const void *p, int64_t i)
{
  if (type == GS_CMP_F32) return ((const float *)p)[i];
  if (type == GS_CMP_F16) return half_to_float(((const uint16_t *)p)[i]);
  uint32_t bits = (uint32_t)((const uint16_t *)p)[i] << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static void compare(void *arg)
{
  const compare_work *w = arg;
  gs_compare_result r = { 0, 0, 0, 0, 0, 0, 0 };
  for (int64_t j = 0; j < w->n; j++)
    for (int64_t i = 0; i < w->m; i++) {
      float x = load(w->type, w->x, i + j * w->ldx), y = load(w->type, w->ref, i + j * w->ldr);
      if (isfinite(x) && isfinite(y)) {
        double d = fabs((double)x - y);
        if (d > r.max_abs) r.max_abs = d;
        double rel = d / fmax(fabs((double)y), FLT_MIN);
        if (rel > r.max_rel) r.max_rel = rel;
        r.diff_sq += d * d;
        r.ref_sq += (double)y * y;
      } else if (isfinite(x) != isfinite(y) || isnan(x) != isnan(y) || (!isnan(x) && x != y)) {
        r.mismatched_nonfinite += 1;
        if (!isfinite(y) && !isnan(x)) r.mismatched_where_ref_nonfinite += 1;
        r.max_abs = r.max_rel = INFINITY;
      }
    }
  const gs_compare_inputs *in = &w->in;
  for (int side = 0; side < 2; side++) {
    const void *p = side ? in->b : in->a;
    int64_t ld = side ? in->ldb : in->lda, rows = side ? in->b_rows : in->a_rows,
            cols = side ? in->b_cols : in->a_cols;
    for (int64_t j = 0; p && j < cols; j++)
      for (int64_t i = 0; i < rows; i++) r.inputs_nonfinite += !isfinite(load(in->type, p, i + j * ld));
  }
  if (!in->a && !in->b) r.inputs_nonfinite = -1;   /* not scanned */
  *w->out = r;
}

size_t gs_compare_scratch_bytes(void) { return 1000; }

int gs_compare_preload(void) { return 0; }

int gs_compare(gs_compare_type type, const void *x, int64_t ldx, const void *ref, int64_t ldr,
               int64_t m, int64_t n, const gs_compare_inputs *inputs, void *partials,
               gs_compare_result *out, cudaStream_t stream)
{
  compare_work w = { type, x, ref, ldx, ldr, m, n, { GS_CMP_F32, 0, 0, 0, 0, 0, 0, 0, 0 }, out };
  if (inputs) w.in = *inputs;
  const void *touches[] = { x, ref, partials, out, w.in.a, w.in.b };
  return fake_launch(stream, compare, &w, sizeof w, touches, w.in.b ? 6 : w.in.a ? 5 : 4) ==
                 cudaSuccess
             ? 0
             : -1;
}

int gs_hold_preload(void) { return 0; }

int fake_holds;
double fake_hold_last_us;

static void hold(void *arg) { (void)arg; }

int gs_hold_stream(cudaStream_t s, double us)
{
  if (!(us > 0)) return 0;
  cudaError_t e = fake_launch(s, hold, &us, sizeof us, NULL, 0);
  (void)cudaGetLastError();
  if (e != cudaSuccess) return (int)e;
  /* calls may come from several threads */
  __atomic_fetch_add(&fake_holds, 1, __ATOMIC_RELAXED);
  __atomic_store(&fake_hold_last_us, &us, __ATOMIC_RELAXED);
  return 0;
}
