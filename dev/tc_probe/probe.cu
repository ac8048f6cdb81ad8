/* tc_probe: what the H200's tensor cores do when they accumulate in FP32,
 * for the two instructions the FP32 kernels use: wgmma m64nNk16 BF16 and
 * m64nNk8 TF32 (here n = 8, A from registers, B = all ones in shared
 * memory, so each output row is the sum of its own A row plus the
 * accumulator). Each of the 64 rows of a launch is one test.
 *
 * It measures the parameters of tools/tc_model.h, then checks the fitted
 * model bit for bit on random rows:
 *   block       1, -1 at k 0, 1 and 2^-60 at k t: the smallest t where
 *               2^-60 survives starts the second block (a block of 1 would
 *               read as 2; fewer than 4 stops the probe);
 *   prec        1 - 1 + 2^-j at k 0..2: the largest j whose 2^-j survives,
 *               plus 1;
 *   acc_apart   accumulator 2^-60, products 1 and -1: 2^-60 survives only
 *               if the accumulator is added after the products' block sum;
 *   rounding    1 + 1 + 3 * 2^-23 (5 terms, all inside a 24-bit window):
 *               to nearest 2 + 2^-21, truncated 2 + 2^-22;
 *   subnormals  flushed or kept, each where the others cannot show: K
 *               subnormal inputs summing to a normal value (inputs), a
 *               subnormal accumulator plus a normal term (the
 *               accumulator), normal terms with a subnormal sum (the
 *               result): the model's ftz mask.
 * Prints the raw results, the fitted parameters as f32-emu flags, and the
 * model's bitwise agreement on 7680 random rows per instruction (wide-range
 * values, random accumulators; 1280 of the rows scaled by 2^-118, where
 * inputs, accumulators and results are subnormal). Exit 0 when the model matches every row,
 * 1 when not, 77 without a Hopper GPU.
 *
 * Build: make check builds dev/tc_probe/probe (nvcc, sm_90a). */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <initializer_list>

#include "sm90_ptx.cuh"
#include "../../tools/tc_model.h"

#define CU(x)                                                                                \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));   \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

enum { ROWS = 64, KMAX = 16 };

/* No-swizzle K-major descriptor for the all-ones B tile: start, LBO 128 B,
 * SBO 256 B (B is all ones, so how the tile is walked does not matter, as
 * long as it stays inside the filled 4 KB). */
__device__ uint64_t desc_ones(const void *p)
{
  const uint64_t addr = gs_sm90::smem_u32(p);
  return ((addr & 0x3FFFFull) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
}

__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint64_t b)
{
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "%8, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], uint64_t b)
{
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "%8, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

/* a[r][k] (k < 16 for BF16, 8 for TF32; exact in the format), c[r]: out[r]
 * = c[r] + sum_k a[r][k] through one instruction. One warpgroup. */
__global__ void probe_kernel(const float *a, const float *c, float *out, int tf32)
{
  __shared__ __align__(1024) uint32_t ones[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x)
    ones[i] = tf32 ? 0x3f800000u : 0x3f803f80u;
  gs_sm90::fence_proxy_async_smem();
  __syncthreads();
  const int w = threadIdx.x / 32, l = threadIdx.x % 32, g = l / 4, t = l % 4;
  const int r0 = 16 * w + g, r1 = r0 + 8;
  uint32_t frag[4];
  if (tf32) {
    /* a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4) */
    frag[0] = __float_as_uint(a[r0 * KMAX + t]);
    frag[1] = __float_as_uint(a[r1 * KMAX + t]);
    frag[2] = __float_as_uint(a[r0 * KMAX + t + 4]);
    frag[3] = __float_as_uint(a[r1 * KMAX + t + 4]);
  } else {
    /* pairs (low half first): (g, 2t..2t+1), (g + 8, 2t..), (g, 2t + 8..),
     * (g + 8, 2t + 8..) */
    const int rr[4] = { r0, r1, r0, r1 }, kk[4] = { 2 * t, 2 * t, 2 * t + 8, 2 * t + 8 };
    for (int i = 0; i < 4; i++) {
      const uint32_t lo = __float_as_uint(a[rr[i] * KMAX + kk[i]]) >> 16;
      const uint32_t hi = __float_as_uint(a[rr[i] * KMAX + kk[i] + 1]) >> 16;
      frag[i] = lo | (hi << 16);
    }
  }
  /* d value v: row r0 (v 0, 1) or r1 (v 2, 3), column 2t + v % 2 */
  float d[4] = { c[r0], c[r0], c[r1], c[r1] };
  const uint64_t b = desc_ones(ones);
  gs_sm90::wgmma_fence();
  if (tf32) mma_tf32(d, frag, b);
  else mma_bf16(d, frag, b);
  gs_sm90::wgmma_commit();
  gs_sm90::wgmma_wait<0>();
  if (t == 0) {
    out[r0] = d[0];
    out[r1] = d[2];
  }
}

typedef struct batch {
  float a[ROWS][KMAX], c[ROWS], out[ROWS];
  int n;
} batch;

static int add_row(batch *b, float c, const float *vals, const int *ks, int n)
{
  if (b->n == ROWS) {
    fprintf(stderr, "tc_probe: more than %d rows in a batch\n", ROWS);
    exit(1);
  }
  const int r = b->n++;
  memset(b->a[r], 0, sizeof b->a[r]);
  for (int i = 0; i < n; i++) b->a[r][ks[i]] = vals[i];
  b->c[r] = c;
  return r;
}

static void run_batch(batch *b, int tf32)
{
  /* rows past n are zeros (their results are not read) */
  for (int r = b->n; r < ROWS; r++) memset(b->a[r], 0, sizeof b->a[r]), b->c[r] = 0.0f;
  float *da, *dc, *dout;
  CU(cudaMalloc(&da, sizeof b->a));
  CU(cudaMalloc(&dc, sizeof b->c));
  CU(cudaMalloc(&dout, sizeof b->out));
  CU(cudaMemcpy(da, b->a, sizeof b->a, cudaMemcpyHostToDevice));
  CU(cudaMemcpy(dc, b->c, sizeof b->c, cudaMemcpyHostToDevice));
  probe_kernel<<<1, 128>>>(da, dc, dout, tf32);
  CU(cudaGetLastError());
  CU(cudaMemcpy(b->out, dout, sizeof b->out, cudaMemcpyDeviceToHost));
  CU(cudaFree(da));
  CU(cudaFree(dc));
  CU(cudaFree(dout));
}

/* A row of values at k = 0, 1, 2, ... */
static int add_terms(batch *b, float c, std::initializer_list<float> vals)
{
  float v[KMAX];
  int ks[KMAX], n = 0;
  for (float x : vals) v[n] = x, ks[n] = n, n++;
  return add_row(b, c, v, ks, n);
}

/* x cut to the format: BF16 keeps 8 significant bits, TF32 11. */
static float to_format(float x, int tf32)
{
  uint32_t u;
  memcpy(&u, &x, 4);
  u &= tf32 ? 0xffffe000u : 0xffff0000u;
  memcpy(&x, &u, 4);
  return x;
}

static int probe(int tf32)
{
  const char *name = tf32 ? "tf32 m64n8k8" : "bf16 m64n8k16";
  const int K = tf32 ? 8 : 16;
  gs_tc_model m = { 0, K, 0, 0, 0 };
  batch b;
  int ok = 1;

  /* sanity: 1 + 2 + ... + K, plus an accumulator of 0.5; block: 1, -1 at
   * k 0, 1 and 2^-60 at k t */
  b.n = 0;
  {
    float v[KMAX];
    int ks[KMAX];
    for (int i = 0; i < K; i++) v[i] = (float)(i + 1), ks[i] = i;
    add_row(&b, 0.5f, v, ks, K);
  }
  for (int t = 2; t < K; t++) {
    const float v[3] = { 1.0f, -1.0f, 0x1p-60f };
    const int ks[3] = { 0, 1, t };
    add_row(&b, 0.0f, v, ks, 3);
  }
  run_batch(&b, tf32);
  printf("%s: sanity %.9g (expect %.9g)\n", name, b.out[0], K * (K + 1) / 2 + 0.5);
  if (b.out[0] != (float)(K * (K + 1) / 2) + 0.5f) {
    printf("%s: the probe itself is wrong (fragment or descriptor): stop\n", name);
    return 0;
  }
  m.block = K;
  for (int t = 2; t < K; t++) {
    printf("%s: 1 - 1 (k 0, 1) + 2^-60 at k %d = %a\n", name, t, b.out[t - 1]);
    if (b.out[t - 1] != 0.0f && m.block == K) m.block = t;
  }
  if (m.block < 4) {
    printf("%s: blocks of %d products: the tests below need 4 or more: stop\n", name, m.block);
    return 0;
  }
  /* the blocks are k-contiguous, in order (as the model sums them): 1, -1
   * at the second block's first two k and 2^-60 at k t vanishes exactly
   * while t is in that block (the accumulator is 0 when it is summed) */
  if (m.block < K) {
    b.n = 0;
    for (int t = m.block + 2; t < K; t++) {
      const float v[3] = { 1.0f, -1.0f, 0x1p-60f };
      const int ks[3] = { m.block, m.block + 1, t };
      add_row(&b, 0.0f, v, ks, 3);
    }
    run_batch(&b, tf32);
    for (int t = m.block + 2; t < K; t++) {
      const float r = b.out[t - m.block - 2];
      if ((r == 0.0f) != (t < 2 * m.block)) {
        printf("%s: 1 - 1 (k %d, %d) + 2^-60 at k %d = %a: the blocks are not k-contiguous "
               "groups of %d in order; the model does not fit\n", name, m.block, m.block + 1, t,
               r, m.block);
        ok = 0;
      }
    }
  }

  /* prec: 1, -1, 2^-j for j = 10..45; then the accumulator, the rounding
   * and subnormals */
  b.n = 0;
  for (int j = 10; j <= 45; j++) add_terms(&b, 0.0f, { 1.0f, -1.0f, ldexpf(1.0f, -j) });
  const int r_acc = add_terms(&b, 0x1p-60f, { 1.0f, -1.0f });
  const int r_round = add_terms(&b, 0.0f, { 1.0f, 1.0f, 0x1p-23f, 0x1p-23f, 0x1p-23f });
  const int r_round_neg = add_terms(&b, 0.0f, { -1.0f, -1.0f, -0x1p-23f, -0x1p-23f, -0x1p-23f });
  const int r_sub_in = add_terms(&b, 0.0f, { 0x1p-130f });
  int r_sub_out; /* in the instruction's last block: no block after it takes the sum in */
  {
    const float v[2] = { 0x1.8p-126f, -0x1p-126f };
    const int ks[2] = { K - 2, K - 1 };
    r_sub_out = add_row(&b, 0.0f, v, ks, 2);
  }
  const int r_sub_acc = add_terms(&b, 0x1p-140f, { 0.0f });
  /* where subnormals are flushed, each test with a normal result where
   * the others cannot interfere: K subnormal inputs summing to a normal
   * value (inputs); a subnormal accumulator plus a normal term (the
   * accumulator); normal inputs whose sum is subnormal (the result) */
  int r_ftz_in;
  {
    float v[KMAX];
    int ks[KMAX];
    for (int i = 0; i < K; i++) v[i] = 0x1p-127f, ks[i] = i;
    r_ftz_in = add_row(&b, 0.0f, v, ks, K);
  }
  const int r_ftz_acc = add_terms(&b, 0x1p-127f, { 0x1p-126f });
  run_batch(&b, tf32);
  int jmax = 9;
  for (int j = 10; j <= 45; j++) {
    const float r = b.out[j - 10];
    printf("%s: 1 - 1 + 2^-%d = %a\n", name, j, r);
    if (r == ldexpf(1.0f, -j) && jmax == j - 1) jmax = j;
  }
  m.prec = jmax + 1;
  m.acc_apart = b.out[r_acc] != 0.0f;
  printf("%s: acc 2^-60 + 1 - 1 = %a\n", name, b.out[r_acc]);
  printf("%s: 1 + 1 + 3 * 2^-23 = %a (to nearest %a, truncated %a); negated: %a\n", name,
         b.out[r_round], 2.0f + 0x1p-21f, 2.0f + 0x1p-22f, b.out[r_round_neg]);
  printf("%s: input 2^-130 -> %a; 1.5 * 2^-126 - 2^-126 -> %a; acc 2^-140 -> %a\n", name,
         b.out[r_sub_in], b.out[r_sub_out], b.out[r_sub_acc]);
  const float in_kept = (float)K * 0x1p-127f, acc_kept = 0x1.8p-126f, out_kept = 0x1p-127f;
  printf("%s: %d x 2^-127 -> %a (kept %a); acc 2^-127 + 2^-126 -> %a (kept %a); "
         "1.5 * 2^-126 - 2^-126 -> %a (kept %a)\n", name, K, b.out[r_ftz_in], in_kept,
         b.out[r_ftz_acc], acc_kept, b.out[r_sub_out], out_kept);
  const float ftz_seen[3] = { b.out[r_ftz_in], b.out[r_ftz_acc], b.out[r_sub_out] };
  const float ftz_kept[3] = { in_kept, acc_kept, out_kept }, ftz_flushed[3] = { 0.0f, 0x1p-126f, 0.0f };
  for (int i = 0; i < 3; i++) {
    if (ftz_seen[i] == ftz_flushed[i]) m.ftz |= 1 << i;
    else if (ftz_seen[i] != ftz_kept[i]) {
      printf("%s: subnormal test %d gave neither kept nor flushed: the model does not fit\n", name,
             i);
      ok = 0;
    }
  }
  m.round_nearest = b.out[r_round] == 2.0f + 0x1p-21f;
  if (b.out[r_round_neg] != -b.out[r_round]) {
    printf("%s: the negated sum did not round to the negated result (toward -inf?): the model "
           "(to nearest, or toward zero) does not fit\n", name);
    ok = 0;
  }
  if (!m.round_nearest && b.out[r_round] != 2.0f + 0x1p-22f) {
    printf("%s: the rounding test gave neither: the model does not fit\n", name);
    ok = 0;
  }

  printf("%s: fitted: prec %d, block %d, acc_apart %d, round %s, ftz %d\n", name, m.prec,
         m.block, m.acc_apart, m.round_nearest ? "rn" : "rz", m.ftz);

  /* the fitted model against the hardware on random rows */
  uint64_t s = 0x70be5eedull + (uint64_t)tf32;
  int bad = 0, total = 0;
  /* 100 batches of wide-range rows, then 20 scaled to the bottom of the
   * range (about 2^-118: subnormal inputs, accumulators and results) */
  for (int it = 0; it < 120; it++) {
    const double scale = it < 100 ? 1.0 : 0x1p-118;
    b.n = 0;
    for (int r = 0; r < ROWS; r++) {
      float v[KMAX];
      int ks[KMAX];
      for (int i = 0; i < K; i++) {
        v[i] = to_format((float)(scale * gs_rng_normal(&s) * exp(4.0 * gs_rng_normal(&s))), tf32);
        ks[i] = i;
      }
      add_row(&b, (float)(scale * gs_rng_normal(&s) * exp(4.0 * gs_rng_normal(&s))), v, ks, K);
    }
    run_batch(&b, tf32);
    for (int r = 0; r < ROWS; r++) {
      const float one[KMAX] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
      const float want = gs_tc_mma(&m, b.c[r], b.a[r], one, K);
      total++;
      if (memcmp(&want, &b.out[r], 4)) {
        if (bad < 5)
          printf("%s: model %a, hardware %a (acc %a)\n", name, want, b.out[r], b.c[r]);
        bad++;
      }
    }
  }
  printf("%s: model equals hardware on %d of %d random rows\n", name, total - bad, total);
  if (bad) ok = 0;
  if (!ok)
    printf("%s: the fit is NOT VALID (see above): no f32-emu flags\n", name);
  else if (tf32)
    printf("%s: f32-emu flags: --prec-tf32 %d --block-tf32 %d --round-tf32 %s --acc-apart-tf32 %d "
           "--ftz-tf32 %d\n", name, m.prec, m.block, m.round_nearest ? "rn" : "rz", m.acc_apart, m.ftz);
  else
    printf("%s: f32-emu flags: --prec %d --block-bf16 %d --round %s --acc-apart %d --ftz %d\n",
           name, m.prec, m.block, m.round_nearest ? "rn" : "rz", m.acc_apart, m.ftz);
  return ok;
}

int main(void)
{
  int n = 0;
  cudaDeviceProp p;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("tc_probe: no GPU: skipped\n");
    return 77;
  }
  CU(cudaGetDeviceProperties(&p, 0));
  if (p.major != 9) {
    printf("tc_probe: %s is not sm_90: skipped\n", p.name);
    return 77;
  }
  printf("tc_probe: %s\n", p.name);
  const int ok_bf16 = probe(0);
  const int ok_tf32 = probe(1);
  return ok_bf16 && ok_tf32 ? 0 : 1;
}
