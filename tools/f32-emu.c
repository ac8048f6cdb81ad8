/* f32-emu: CPU emulation of FP32 GEMM on the tensor cores, to predict the
 * error of a split scheme against cuBLAS SGEMM before any kernel runs.
 *
 * Each output element is one dot product of length K, computed by:
 *   sgemm    FP32 fused multiply-adds in K order (a SIMT SGEMM's thread:
 *            its measured randn errors follow this model, see
 *            kernels/gemm_f32_bf16x9.md);
 *   3xtf32   the shipped 3xTF32 kernel's order (kernels/gemm_f32_3xtf32.md):
 *            per K-step of 32, a chunk accumulator takes cross*small and
 *            small*cross per k8 substep, then the four big*big k8 products;
 *            the chunk is added to an FP32 main accumulator;
 *   bf16xN-shared  three BF16 parts, per K-step of 64 one chunk
 *            accumulator takes the lower products (smallest class first),
 *            then hi*hi, and is added to the FP32 main accumulator;
 *   bf16xN-sep  hi*hi alone in the chunk accumulator (added to main every
 *            --chunk K); the lower products in a second accumulator that the
 *            tensor core carries over all of K; D = main + low;
 *   bf16xN-sepc as sep, with the rounding error of each FADD into main
 *            (exact, by TwoSum) added to the low accumulator;
 *   bf16x6-sepf as sepc with Fast2Sum (exact only while |main| >= |chunk|);
 *   bf16x6-sepe as sepc with the error seeding the next chunk instead;
 *   slices   --slices S fixed-point BF16 slices of each row and column
 *            scaled by a power of two (the Ozaki scheme), the slice
 *            products of classes below S summed per chunk in the tensor
 *            core, the chunks in FP64, one rounding at the end;
 * where N = 6 (products with i + j <= 2) or 9 (all).
 *
 * The tensor core's accumulation is tools/tc_model.h's block fused
 * multiply-add: --prec (alignment window P), --block-bf16 and --block-tf32
 * (products per block), --round rz|rn (the block sum's rounding) and
 * --acc-apart 0|1 set it; the defaults (P 25, blocks 16 and 8, rz) fit the
 * 3xTF32 kernel's measured randn errors. --chunk C (a multiple of 16) is
 * the K length of the hi*hi chunk in the sep modes (default 64; at least
 * K: never promoted before the end). The slices' chunk is the same C.
 *
 * Data classes (the issue's): randn; wide = randn * exp(4 N(0,1));
 * uniform [0, 1). --scale-a LO:HI and --scale-b LO:HI multiply each row of
 * A and each column of B by 2^e, e drawn uniformly from the integers LO..HI
 * (the scaled rows and columns; the exponent range's edges).
 * --row-scale 1: the BF16 schemes first bring each row of A and column of
 * B to a largest |value| in [1, 2) by a power of two, and undo both on the
 * result (the remedy for the range's edges, emulated).
 * Errors against an FP64 reference: relative Frobenius over the sampled
 * outputs, and the worst |D - ref|_ij / (|A| |B|)_ij; a non-finite output
 * where the reference is finite makes both infinite.
 *
 * Usage: f32-emu [--algos a,b,...] [--classes c,...] [--ks k,...]
 *                [--seeds N] [--outputs N] [--block-bf16 B] [--block-tf32 B]
 *                [--prec P] [--round rz|rn] [--acc-apart 0|1] [--chunk C]
 *                [--prec-tf32 P] [--round-tf32 rz|rn] [--acc-apart-tf32 0|1]
 *                [--ftz MASK] [--ftz-tf32 MASK]
 *                [--threads T] [--slices S] [--full N [--top T] [--sample R]]
 *                [--scale-a LO:HI] [--scale-b LO:HI] [--row-scale 0|1]
 * --full N: an N x N output matrix; every reference is computed, and the
 * errors of the T largest outputs plus R others drawn at random (scaled
 * to their count) estimate the full matrix's Frobenius error, which the
 * largest outputs carry (elem is then over those outputs only).
 * --ftz MASK: where the tensor core flushes subnormals (tools/tc_model.h:
 * 1 inputs, 2 the accumulator entering a block, 4 the block's result).
 * (--prec, --round, --acc-apart, --ftz set both instructions; the -tf32 forms,
 * given after them, set TF32's alone, as dev/tc_probe prints them.)
 * Prints CSV: algo,class,k,seed,err,sgemm_err,ratio,elem,sgemm_elem,elem_ratio,
 * excluded (outputs whose FP64 reference is beyond FP32's range: left out
 * of both errors, as SGEMM's result there is infinite too; with --full, a
 * count over the outputs computed: the top ones and the sample, which is
 * drawn with repetition) */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/bf16x3_split.h"
#include "../kernels/tf32_split.h"
#include "tc_model.h"

/* The tensor core's accumulation (tools/tc_model.h) for BF16 k16 and TF32
 * k8 instructions, and the K length of the hi*hi chunk in the sep modes. */
static gs_tc_model tc_bf16 = { 25, 16, 0, 0, 0 }, tc_tf32 = { 25, 8, 0, 0, 0 };
static int hi_chunk = 64;

/* ------------------------------------------------------------- algorithms */

enum { ALG_SGEMM, ALG_3XTF32, ALG_X6_SHARED, ALG_X6_SEP, ALG_X6_SEPC, ALG_X9_SHARED,
       ALG_X9_SEP, ALG_X9_SEPC, ALG_SLICES, ALG_X6_SEPF, ALG_X6_SEPE, ALG_N };
static const char *const alg_name[ALG_N] = { "sgemm", "3xtf32", "bf16x6-shared", "bf16x6-sep",
                                             "bf16x6-sepc", "bf16x9-shared", "bf16x9-sep",
                                             "bf16x9-sepc", "slices", "bf16x6-sepf",
                                             "bf16x6-sepe" };

/* A row's or column's parts, K long each. */
enum { SLICES_MAX = 8 };
typedef struct parts {
  float *p[SLICES_MAX]; /* bf16: hi, mid, lo, cross; tf32: big, small, cross; slices */
  int scale;            /* slices: the row's power-of-two scale */
} parts;

static int n_slices = 4;

/* Fixed-point BF16 slices (the Ozaki scheme): the row scaled by a power of
 * two so that every |value| < 1, then slice s takes the next 8 bits below
 * 2^-8s, rounded to nearest: each slice is a multiple of 2^-8(s+1) and
 * holds at most 8 significant bits (a BF16). */
static void split_slices(const float *v, int k, parts *o)
{
  int e, emax = -1000;
  for (int i = 0; i < k; i++)
    if (v[i] != 0.0f) {
      frexp(v[i], &e);
      if (e > emax) emax = e;
    }
  if (emax == -1000) emax = 0;
  o->scale = emax;
  for (int i = 0; i < k; i++) {
    double r = ldexp((double)v[i], -emax);
    for (int sl = 0; sl < n_slices; sl++) {
      const double g = ldexp(1.0, 8 * (sl + 1));
      const double q = rint(r * g) / g;
      o->p[sl][i] = (float)q;
      r -= q;
    }
  }
}

/* --row-scale: each row (of A) and column (of B) multiplied by the power
 * of two that brings its largest finite |value| into [1, 2) before the
 * split, the product of the two undone on the result (exact both ways
 * unless the result over- or underflows). */
static int row_scale;

static int row_exponent(const float *v, int k)
{
  int e, emax = -1000;
  for (int i = 0; i < k; i++)
    if (v[i] != 0.0f && isfinite(v[i])) {
      frexpf(v[i], &e);
      if (e > emax) emax = e;
    }
  return emax == -1000 ? 0 : emax - 1;
}

static void split_bf16(const float *v, int k, parts *o)
{
  o->scale = row_scale ? row_exponent(v, k) : 0;
  for (int i = 0; i < k; i++) {
    const gs_bf16x3 s = gs_bf16x3_split(ldexpf(v[i], -o->scale));
    o->p[0][i] = gs_bf16_value(s.hi);
    o->p[1][i] = gs_bf16_value(s.mid);
    o->p[2][i] = gs_bf16_value(s.lo);
    o->p[3][i] = gs_bf16_value(s.cross);
  }
}

static void split_tf32(const float *v, int k, parts *o)
{
  for (int i = 0; i < k; i++) {
    const gs_tf32_parts s = gs_tf32_split(v[i]);
    o->p[0][i] = s.big;
    o->p[1][i] = s.small;
    o->p[2][i] = s.cross;
  }
}

static float dot_sgemm(const float *a, const float *b, int k)
{
  float acc = 0.0f;
  for (int i = 0; i < k; i++) acc = fmaf(a[i], b[i], acc);
  return acc;
}

static float dot_3xtf32(const parts *a, const parts *b, int k)
{
  float main_acc = 0.0f;
  for (int k0 = 0; k0 < k; k0 += 32) {
    float chk = 0.0f;
    for (int j = 0; j < 4; j++) {
      const int o = k0 + 8 * j;
      chk = gs_tc_mma(&tc_tf32, chk, a->p[2] + o, b->p[1] + o, 8); /* cross_a x small_b */
      chk = gs_tc_mma(&tc_tf32, chk, a->p[1] + o, b->p[2] + o, 8); /* small_a x cross_b */
    }
    for (int j = 0; j < 4; j++) {
      const int o = k0 + 8 * j;
      chk = gs_tc_mma(&tc_tf32, chk, a->p[0] + o, b->p[0] + o, 8);
    }
    main_acc += chk;
  }
  return main_acc;
}

/* The lower products (i, j) of a BF16 split, by class i + j: which parts,
 * with cross standing for hi wherever it meets a lower part. */
typedef struct pair { int a, b; } pair;
static const pair low6[] = { { 3, 2 }, { 2, 3 }, { 1, 1 }, /* class 2 */
                             { 3, 1 }, { 1, 3 } };          /* class 1 */
static const pair low9[] = { { 2, 2 },                      /* class 4 */
                             { 1, 2 }, { 2, 1 },            /* class 3 */
                             { 3, 2 }, { 2, 3 }, { 1, 1 },  /* class 2 */
                             { 3, 1 }, { 1, 3 } };          /* class 1 */
/* (index 3 is cross: hi, or 0 where the value is not finite) */

/* Slice products by class c = s + t < n_slices, each class's chunk of
 * hi_chunk K in the tensor core (exact when its terms share the grid and
 * fit the window), the chunks summed in FP64, one rounding at the end. */
static float dot_slices(const parts *a, const parts *b, int k)
{
  double main_acc = 0.0;
  for (int c = 0; c < n_slices; c++)
    for (int k0 = 0; k0 < k; k0 += hi_chunk) {
      float chk = 0.0f;
      for (int s = 0; s < hi_chunk && k0 + s < k; s += 16)
        for (int sa = 0; sa <= c; sa++)
          chk = gs_tc_mma(&tc_bf16, chk, a->p[sa] + k0 + s, b->p[c - sa] + k0 + s, 16);
      main_acc += (double)chk;
    }
  return (float)ldexp(main_acc, a->scale + b->scale);
}

/* a + b as s + e exactly (Knuth's TwoSum, any magnitudes). */
static float two_sum(float a, float b, float *e)
{
  const float s = a + b, bb = s - a;
  *e = (a - (s - bb)) + (b - bb);
  return s;
}

/* Fast2Sum: s = a + b and e = b - (s - a), three FADDs to TwoSum's six;
 * e is the exact error only where |a| >= |b| (or a == 0). */
static float fast_two_sum(float a, float b, float *e)
{
  const float s = a + b;
  *e = b - (s - a);
  return s;
}

/* mode 0: shared; 1: sep; 2: sepc (sep, the main FADD's rounding error,
 * exact by TwoSum, added to the low accumulator); 3: sepf (sepc with
 * Fast2Sum: the error exact only while |main| >= |chunk|); 4: sepe (sepc
 * with the error seeding the next chunk in the tensor core instead of a
 * FADD into low; the last one into low). */
static float dot_bf16(const parts *a, const parts *b, int k, int nine, int mode)
{
  const pair *low = nine ? low9 : low6;
  const int n_low = nine ? 8 : 5;
  float main_acc = 0.0f, low_acc = 0.0f, chk = 0.0f;
  for (int k0 = 0; k0 < k; k0 += 64) {
    if (mode == 0) chk = 0.0f;
    for (int s = 0; s < 64; s += 16) {
      const int o = k0 + s;
      for (int i = 0; i < n_low; i++) {
        const float *x = a->p[low[i].a] + o, *y = b->p[low[i].b] + o;
        if (mode == 0) chk = gs_tc_mma(&tc_bf16, chk, x, y, 16);
        else low_acc = gs_tc_mma(&tc_bf16, low_acc, x, y, 16);
      }
    }
    for (int s = 0; s < 64; s += 16) {
      const int o = k0 + s;
      chk = gs_tc_mma(&tc_bf16, chk, a->p[0] + o, b->p[0] + o, 16);
      const int done = o + 16;
      if (mode != 0 && (done % hi_chunk == 0 || done == k)) {
        float e = 0.0f;
        if (mode >= 2) {
          main_acc = mode == 3 ? fast_two_sum(main_acc, chk, &e) : two_sum(main_acc, chk, &e);
          if (mode != 4 || done == k) low_acc += e, e = 0.0f;
        } else {
          main_acc += chk;
        }
        chk = e;
      }
    }
    if (mode == 0) main_acc += chk;
  }
  /* an Inf in main turns low NaN through the TwoSum: main alone then, as
   * the kernel's epilogue does (dev/bf16x6) */
  const float d = mode == 0 || !(fabsf(main_acc) <= FLT_MAX) ? main_acc : main_acc + low_acc;
  return ldexpf(d, a->scale + b->scale);
}

/* ------------------------------------------------------------------- data */

enum { CL_RANDN, CL_WIDE, CL_UNIFORM, CL_N };
static const char *const class_name[CL_N] = { "randn", "wide", "uniform" };

static float draw(int cls, uint64_t *s)
{
  if (cls == CL_RANDN) return (float)gs_rng_normal(s);
  if (cls == CL_WIDE) return (float)(gs_rng_normal(s) * exp(4.0 * gs_rng_normal(s)));
  return (float)gs_rng_u01(s);
}

/* --scale-a / --scale-b: each of the rows (k values each) times 2^e, e
 * uniform in lo..hi (ldexpf: values pushed below FP32's normal range lose
 * their low bits, as the data a program would have). */
typedef struct scale_range { int on, lo, hi; } scale_range;

static void scale_rows(float *v, int rows, int k, const scale_range *sr, uint64_t *s)
{
  if (!sr->on) return;
  for (int r = 0; r < rows; r++) {
    const int e = sr->lo + (int)(gs_rng_next(s) % (uint64_t)(sr->hi - sr->lo + 1));
    for (int i = 0; i < k; i++) v[(size_t)r * k + i] = ldexpf(v[(size_t)r * k + i], e);
  }
}

static int parse_range(const char *v, scale_range *sr)
{
  char extra;
  if (sscanf(v, "%d:%d%c", &sr->lo, &sr->hi, &extra) != 2 || sr->lo > sr->hi || sr->lo < -300 ||
      sr->hi > 300)
    return -1;
  sr->on = 1;
  return 0;
}

/* ------------------------------------------------------------------ runs */

typedef struct job {
  int algo, k, outputs;
  const float *A, *B; /* outputs rows / columns of k values */
  const parts *pa, *pb;
  int first, step;
  const uint32_t *idx; /* NULL: every output; else these (row * outputs + column) */
  size_t n_idx;
  double *e2_each; /* with idx: each output's squared error */
  double *ref_all; /* --full: each output's reference (written by ALG_REF) */
  double err2, ref2, elem;
  size_t excluded; /* outputs whose reference is beyond FP32's range */
} job;

enum { ALG_REF = -1 };

/* Output (r, c) by j->algo: its error, reference and sum of |products|. */
static void one_output(const job *j, int r, int c, double *err, double *ref_out, double *mag_out)
{
  const float *a = j->A + (size_t)r * j->k, *b = j->B + (size_t)c * j->k;
  double ref = 0.0, mag = 0.0;
  for (int i = 0; i < j->k; i++) {
    ref += (double)a[i] * (double)b[i];
    mag += fabs((double)a[i] * (double)b[i]);
  }
  *ref_out = ref;
  *mag_out = mag;
  if (j->algo == ALG_REF) {
    *err = 0.0;
    return;
  }
    float d;
    switch (j->algo) {
    case ALG_SGEMM: d = dot_sgemm(a, b, j->k); break;
    case ALG_3XTF32: d = dot_3xtf32(&j->pa[r], &j->pb[c], j->k); break;
    case ALG_X6_SHARED: d = dot_bf16(&j->pa[r], &j->pb[c], j->k, 0, 0); break;
    case ALG_X6_SEP: d = dot_bf16(&j->pa[r], &j->pb[c], j->k, 0, 1); break;
    case ALG_X6_SEPC: d = dot_bf16(&j->pa[r], &j->pb[c], j->k, 0, 2); break;
    case ALG_X9_SHARED: d = dot_bf16(&j->pa[r], &j->pb[c], j->k, 1, 0); break;
    case ALG_X9_SEP: d = dot_bf16(&j->pa[r], &j->pb[c], j->k, 1, 1); break;
    case ALG_X9_SEPC: d = dot_bf16(&j->pa[r], &j->pb[c], j->k, 1, 2); break;
    case ALG_X6_SEPF: d = dot_bf16(&j->pa[r], &j->pb[c], j->k, 0, 3); break;
    case ALG_X6_SEPE: d = dot_bf16(&j->pa[r], &j->pb[c], j->k, 0, 4); break;
    default: d = dot_slices(&j->pa[r], &j->pb[c], j->k); break;
    }
  /* a non-finite result (the reference is finite in FP32 where it counts):
   * infinitely wrong */
  *err = isfinite(d) ? (double)d - ref : INFINITY;
}

static void *run_rows(void *arg)
{
  job *j = arg;
  const int n = j->outputs;
  const size_t count = j->idx ? j->n_idx : (size_t)n * n;
  for (size_t t = (size_t)j->first; t < count; t += (size_t)j->step) {
    const size_t o = j->idx ? j->idx[t] : t;
    const int r = (int)(o / (size_t)n), c = (int)(o % (size_t)n);
    double e, ref, mag;
    one_output(j, r, c, &e, &ref, &mag);
    if (j->ref_all) j->ref_all[o] = ref;
    /* a reference that overflows FP32 (SGEMM's result is infinite too):
     * not counted, said in the CSV's excluded column */
    if (!(fabs(ref) <= FLT_MAX)) {
      if (j->e2_each) j->e2_each[t] = 0;
      j->excluded++;
      continue;
    }
    if (j->e2_each) j->e2_each[t] = e * e;
    j->err2 += e * e;
    j->ref2 += ref * ref;
    if (mag > 0 && fabs(e) / mag > j->elem) j->elem = fabs(e) / mag;
  }
  return NULL;
}

enum { PARTS_BF16, PARTS_TF32, PARTS_SLICES };

static void out_of_memory(void)
{
  fprintf(stderr, "f32-emu: out of memory\n");
  exit(1);
}

static parts *make_parts(const float *v, int rows, int k, int kind)
{
  parts *p = calloc((size_t)rows, sizeof *p);
  if (!p) out_of_memory();
  const int n = kind == PARTS_SLICES ? n_slices : kind == PARTS_TF32 ? 3 : 4;
  for (int r = 0; r < rows; r++) {
    for (int i = 0; i < n; i++)
      if (!(p[r].p[i] = malloc((size_t)k * sizeof(float)))) out_of_memory();
    if (kind == PARTS_TF32) split_tf32(v + (size_t)r * k, k, &p[r]);
    else if (kind == PARTS_SLICES) split_slices(v + (size_t)r * k, k, &p[r]);
    else split_bf16(v + (size_t)r * k, k, &p[r]);
  }
  return p;
}

static void free_parts(parts *p, int rows)
{
  if (!p) return;
  for (int r = 0; r < rows; r++)
    for (int i = 0; i < SLICES_MAX; i++) free(p[r].p[i]);
  free(p);
}

/* Which outputs to compute: all (idx NULL), or a list; per-output squared
 * errors and references go where given. */
typedef struct selection {
  const uint32_t *idx;
  size_t n_idx;
  double *e2_each, *ref_all;
} selection;

static void measure(int algo, const float *A, const float *B, const parts *pa, const parts *pb,
                    int k, int outputs, int threads, const selection *sel, double *err,
                    double *elem, size_t *excluded)
{
  job jobs[64];
  pthread_t tid[64];
  for (int t = 0; t < threads; t++) {
    jobs[t] = (job){ .algo = algo, .k = k, .outputs = outputs, .A = A, .B = B, .pa = pa,
                     .pb = pb, .first = t, .step = threads };
    if (sel) {
      jobs[t].idx = sel->idx;
      jobs[t].n_idx = sel->n_idx;
      jobs[t].e2_each = sel->e2_each;
      jobs[t].ref_all = sel->ref_all;
    }
    if (pthread_create(&tid[t], NULL, run_rows, &jobs[t])) {
      fprintf(stderr, "f32-emu: pthread_create failed\n");
      exit(1);
    }
  }
  double e2 = 0, r2 = 0, el = 0;
  *excluded = 0;
  for (int t = 0; t < threads; t++) {
    pthread_join(tid[t], NULL);
    *excluded += jobs[t].excluded;
    e2 += jobs[t].err2;
    r2 += jobs[t].ref2;
    if (jobs[t].elem > el) el = jobs[t].elem;
  }
  *err = r2 > 0 ? sqrt(e2 / r2) : 0.0;
  *elem = el;
}

/* --full: all N x N references, then the errors of the `top` outputs of
 * largest |reference| and of `sample` others drawn at random, the others'
 * sum of squares scaled up to their count (a stratified estimate of the
 * full matrix's Frobenius error, which the largest outputs carry). */
static const double *sort_key;
/* |reference|, and -1 for one beyond FP32's range (excluded: last, so that
 * the largest counted outputs make the top stratum) */
static double magnitude(uint32_t i)
{
  const double a = fabs(sort_key[i]);
  return a <= FLT_MAX ? a : -1.0;
}
static int by_magnitude(const void *x, const void *y)
{
  const double a = magnitude(*(const uint32_t *)x), b = magnitude(*(const uint32_t *)y);
  return a < b ? 1 : a > b ? -1 : 0;
}

typedef struct full_plan {
  uint32_t *idx;
  size_t top, n_idx;
  double *e2, ref2, rest_weight;
} full_plan;

static void full_plan_make(full_plan *fp, const float *A, const float *B, int k, int n,
                           int threads, size_t top, size_t sample, uint64_t seed)
{
  const size_t all = (size_t)n * n;
  double *ref = malloc(all * sizeof *ref);
  uint32_t *order = malloc(all * sizeof *order);
  if (!ref || !order) out_of_memory();
  selection sel = { NULL, 0, NULL, ref };
  double e, el;
  size_t excluded;
  measure(ALG_REF, A, B, NULL, NULL, k, n, threads, &sel, &e, &el, &excluded);
  fp->ref2 = 0;
  for (size_t i = 0; i < all; i++) {
    order[i] = (uint32_t)i;
    if (fabs(ref[i]) <= FLT_MAX) fp->ref2 += ref[i] * ref[i];
  }
  sort_key = ref;
  qsort(order, all, sizeof *order, by_magnitude);
  if (top > all) top = all;
  fp->top = top;
  fp->n_idx = top + (all > top ? sample : 0);
  fp->idx = malloc(fp->n_idx * sizeof *fp->idx);
  fp->e2 = malloc(fp->n_idx * sizeof *fp->e2);
  if (!fp->idx || !fp->e2) out_of_memory();
  memcpy(fp->idx, order, top * sizeof *order);
  for (size_t i = top; i < fp->n_idx; i++)
    fp->idx[i] = order[top + gs_rng_next(&seed) % (all - top)];
  fp->rest_weight = fp->n_idx > top ? (double)(all - top) / (double)(fp->n_idx - top) : 0.0;
  free(order);
  free(ref);
}

/* The estimated relative Frobenius error of `algo` under the plan. */
static void full_measure(const full_plan *fp, int algo, const float *A, const float *B,
                         const parts *pa, const parts *pb, int k, int n, int threads,
                         double *err, double *elem, size_t *excluded)
{
  selection sel = { fp->idx, fp->n_idx, fp->e2, NULL };
  double e;
  measure(algo, A, B, pa, pb, k, n, threads, &sel, &e, elem, excluded);
  double top = 0, rest = 0;
  for (size_t i = 0; i < fp->n_idx; i++) *(i < fp->top ? &top : &rest) += fp->e2[i];
  *err = sqrt((top + rest * fp->rest_weight) / fp->ref2);
}

static int list_of(const char *s, const char *const *names, int n, int *out)
{
  int cnt = 0;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", s);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    int found = -1;
    for (int i = 0; i < n; i++)
      if (!strcmp(tok, names[i])) found = i;
    if (found < 0 || cnt == n) {
      fprintf(stderr, "f32-emu: unknown or repeated name '%s'\n", tok);
      exit(2);
    }
    out[cnt++] = found;
  }
  return cnt;
}

int main(int argc, char **argv)
{
  int algos[ALG_N], n_algos = 0, classes[CL_N], n_classes = 0, ks[16], n_ks = 0;
  int seeds = 3, outputs = 32, threads = 2, full_n = 0, full_top = 4096, full_sample = 65536;
  scale_range scale_a = { 0, 0, 0 }, scale_b = { 0, 0, 0 };
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      fprintf(stderr, "f32-emu: %s needs a value\n", argv[i]);
      return 2;
    }
    if (!strcmp(argv[i], "--algos")) n_algos = list_of(v, alg_name, ALG_N, algos);
    else if (!strcmp(argv[i], "--classes")) n_classes = list_of(v, class_name, CL_N, classes);
    else if (!strcmp(argv[i], "--ks")) {
      char buf[256];
      snprintf(buf, sizeof buf, "%s", v);
      for (char *t = strtok(buf, ","); t && n_ks < 16; t = strtok(NULL, ",")) ks[n_ks++] = atoi(t);
    } else if (!strcmp(argv[i], "--seeds")) seeds = atoi(v);
    else if (!strcmp(argv[i], "--outputs")) outputs = atoi(v);
    else if (!strcmp(argv[i], "--block-bf16")) tc_bf16.block = atoi(v);
    else if (!strcmp(argv[i], "--block-tf32")) tc_tf32.block = atoi(v);
    else if (!strcmp(argv[i], "--prec")) tc_bf16.prec = tc_tf32.prec = atoi(v);
    else if (!strcmp(argv[i], "--round")) {
      if (strcmp(v, "rn") && strcmp(v, "rz")) {
        fprintf(stderr, "f32-emu: --round takes rn or rz\n");
        return 2;
      }
      tc_bf16.round_nearest = tc_tf32.round_nearest = !strcmp(v, "rn");
    }
    else if (!strcmp(argv[i], "--acc-apart")) tc_bf16.acc_apart = tc_tf32.acc_apart = atoi(v);
    else if (!strcmp(argv[i], "--prec-tf32")) tc_tf32.prec = atoi(v);
    else if (!strcmp(argv[i], "--round-tf32")) tc_tf32.round_nearest = !strcmp(v, "rn");
    else if (!strcmp(argv[i], "--acc-apart-tf32")) tc_tf32.acc_apart = atoi(v);
    else if (!strcmp(argv[i], "--ftz")) tc_bf16.ftz = tc_tf32.ftz = atoi(v);
    else if (!strcmp(argv[i], "--ftz-tf32")) tc_tf32.ftz = atoi(v);
    else if (!strcmp(argv[i], "--chunk")) hi_chunk = atoi(v);
    else if (!strcmp(argv[i], "--slices")) n_slices = atoi(v);
    else if (!strcmp(argv[i], "--row-scale")) row_scale = atoi(v);
    else if (!strcmp(argv[i], "--full")) full_n = atoi(v);
    else if (!strcmp(argv[i], "--top")) full_top = atoi(v);
    else if (!strcmp(argv[i], "--sample")) full_sample = atoi(v);
    else if (!strcmp(argv[i], "--threads")) threads = atoi(v);
    else if (!strcmp(argv[i], "--scale-a") || !strcmp(argv[i], "--scale-b")) {
      if (parse_range(v, argv[i][8] == 'a' ? &scale_a : &scale_b)) {
        fprintf(stderr, "f32-emu: %s takes LO:HI (integers, LO <= HI, within +-300)\n", argv[i]);
        return 2;
      }
    }
    else {
      fprintf(stderr, "f32-emu: unknown option %s\n", argv[i]);
      return 2;
    }
    i++;
  }
  if (!n_algos)
    for (int a = 1; a < ALG_SLICES; a++) algos[n_algos++] = a;
  if (!n_classes)
    for (int c = 0; c < CL_N; c++) classes[n_classes++] = c;
  if (!n_ks) ks[0] = 256, ks[1] = 4096, n_ks = 2;
  if (full_n > 0) outputs = full_n;
  const int bad_model = tc_bf16.ftz < 0 || tc_bf16.ftz > 7 || tc_tf32.ftz < 0 || tc_tf32.ftz > 7 ||
                        tc_bf16.prec < 24 || tc_bf16.prec > 60 || tc_tf32.prec < 24 ||
                        tc_tf32.prec > 60 || tc_bf16.block < 1 || 16 % tc_bf16.block ||
                        tc_tf32.block < 1 || 8 % tc_tf32.block;
  const int bad_run = threads < 1 || threads > 64 || outputs < 1 || seeds < 1 ||
                      hi_chunk < 16 || hi_chunk % 16 || n_slices < 1 || n_slices > SLICES_MAX ||
                      full_n < 0 || full_n > 65535 || full_top < 1 || full_sample < 1;
  if (bad_model || bad_run) {
    fprintf(stderr, "f32-emu: bad --threads/--outputs/--seeds/--prec/--block-*/--ftz/--chunk/"
                    "--slices/--full/--top/--sample\n");
    return 2;
  }
  printf("# f32-emu: block_bf16 %d, block_tf32 %d, prec %d, round %s, acc_apart %d, ftz %d, "
         "chunk %d, %d x %d outputs\n",
         tc_bf16.block, tc_tf32.block, tc_bf16.prec, tc_bf16.round_nearest ? "rn" : "rz",
         tc_bf16.acc_apart, tc_bf16.ftz, hi_chunk, outputs, outputs);
  if (full_n > 0)
    printf("# --full %d: %d largest outputs and %d sampled others (elem: over those)\n", full_n,
           full_top, full_sample);
  if (scale_a.on || scale_b.on)
    printf("# rows of A scaled by 2^(%d..%d), columns of B by 2^(%d..%d)\n", scale_a.lo, scale_a.hi,
           scale_b.lo, scale_b.hi);
  if (row_scale)
    printf("# --row-scale: the BF16 schemes split each row and column brought to [1, 2) by a "
           "power of two\n");
  printf("algo,class,k,seed,err,sgemm_err,ratio,elem,sgemm_elem,elem_ratio,excluded\n");
  for (int ci = 0; ci < n_classes; ci++)
    for (int ki = 0; ki < n_ks; ki++)
      for (int seed = 1; seed <= seeds; seed++) {
        const int k = ks[ki];
        if (k <= 0 || k % 64) {
          fprintf(stderr, "f32-emu: K must be a positive multiple of 64\n");
          return 2;
        }
        uint64_t s = 0x5eed0000ull + (uint64_t)seed * 7919 + (uint64_t)classes[ci] * 104729;
        float *A = malloc((size_t)outputs * k * sizeof(float));
        float *B = malloc((size_t)outputs * k * sizeof(float));
        if (!A || !B) out_of_memory();
        for (size_t i = 0; i < (size_t)outputs * k; i++) A[i] = draw(classes[ci], &s);
        for (size_t i = 0; i < (size_t)outputs * k; i++) B[i] = draw(classes[ci], &s);
        scale_rows(A, outputs, k, &scale_a, &s);
        scale_rows(B, outputs, k, &scale_b, &s);
        /* only the parts the schemes asked for use them */
        int want_tf32 = 0, want_bf16 = 0, want_slices = 0;
        for (int ai = 0; ai < n_algos; ai++) {
          want_tf32 |= algos[ai] == ALG_3XTF32;
          want_slices |= algos[ai] == ALG_SLICES;
          want_bf16 |= algos[ai] != ALG_SGEMM && algos[ai] != ALG_3XTF32 && algos[ai] != ALG_SLICES;
        }
        parts *ta = want_tf32 ? make_parts(A, outputs, k, PARTS_TF32) : NULL;
        parts *tb = want_tf32 ? make_parts(B, outputs, k, PARTS_TF32) : NULL;
        parts *ba = want_bf16 ? make_parts(A, outputs, k, PARTS_BF16) : NULL;
        parts *bb = want_bf16 ? make_parts(B, outputs, k, PARTS_BF16) : NULL;
        parts *sa = want_slices ? make_parts(A, outputs, k, PARTS_SLICES) : NULL;
        parts *sb = want_slices ? make_parts(B, outputs, k, PARTS_SLICES) : NULL;
        double se, sel;
        size_t excluded;
        full_plan fp;
        if (full_n > 0) {
          full_plan_make(&fp, A, B, k, outputs, threads, (size_t)full_top, (size_t)full_sample,
                         s);
          full_measure(&fp, ALG_SGEMM, A, B, NULL, NULL, k, outputs, threads, &se, &sel,
                       &excluded);
        } else {
          measure(ALG_SGEMM, A, B, NULL, NULL, k, outputs, threads, NULL, &se, &sel, &excluded);
        }
        for (int ai = 0; ai < n_algos; ai++) {
          const int a = algos[ai];
          double e = se, el = sel;
          const parts *pa = a == ALG_3XTF32 ? ta : a == ALG_SLICES ? sa : ba;
          const parts *pb = a == ALG_3XTF32 ? tb : a == ALG_SLICES ? sb : bb;
          size_t ex = excluded;
          if (a != ALG_SGEMM && full_n > 0)
            full_measure(&fp, a, A, B, pa, pb, k, outputs, threads, &e, &el, &ex);
          else if (a != ALG_SGEMM)
            measure(a, A, B, pa, pb, k, outputs, threads, NULL, &e, &el, &ex);
          printf("%s,%s,%d,%d,%.4e,%.4e,%.3f,%.4e,%.4e,%.3f,%zu\n", alg_name[a],
                 class_name[classes[ci]], k, seed, e, se, e / se, el, sel, el / sel, ex);
          fflush(stdout);
        }
        free_parts(ta, outputs), free_parts(tb, outputs), free_parts(ba, outputs),
            free_parts(bb, outputs), free_parts(sa, outputs), free_parts(sb, outputs);
        free(A), free(B);
        if (full_n > 0) free(fp.idx), free(fp.e2);
      }
  return 0;
}
