/* The index math of dev/bf16x6/bf16x6.cu (bf16x6_index.h), on the CPU,
 * for one K-step of every warp of a consumer warpgroup and both halves of a
 * part row, against independent models:
 *   - TMA's 128-byte swizzle of a raw FP32 tile (16-byte chunk c of row r
 *     at chunk c ^ (r & 7));
 *   - how wgmma reads a K-major BF16 operand through a 128-byte-swizzle
 *     descriptor advanced by `off` bytes (element (n, kk) at byte
 *     n * 128 + ((((off + 2 kk) >> 4) ^ (n & 7)) << 4) + ((off + 2 kk) & 15)
 *     of a 1024-byte aligned tile);
 *   - the A fragment of wgmma m64nNk16 from registers (register 0: row g,
 *     columns 2 tq, 2 tq + 1; 1: row g + 8, the same; 2: row g, columns
 *     2 tq + 8, + 9; 3: row g + 8, the same; low half first).
 * It checks that index kk of substep j means the same raw k on both sides
 * (so the product is the K-step's dot product), and that the split's and
 * the consumers' 16-byte accesses are free of bank conflicts (each group of
 * 8 lanes that a 16-byte access serves at once touches 8 distinct 16-byte
 * bank groups). Exit 0 when all hold. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bf16x6_index.h"

enum { ROWS = 128, BK = 32 };

static float raw_a[ROWS * BK], raw_b[ROWS * BK]; /* swizzled images */
static uint16_t part[ROWS * 64];                 /* one part tile, BF16 bits */
static int failures;

static void fail(const char *what, int a, int b, int c, int d)
{
  if (failures++ < 10) printf("index_test: %s (%d %d %d %d)\n", what, a, b, c, d);
}

/* raw element (r, k) of a swizzled FP32 tile */
static int raw_index(int r, int k) { return r * BK + ((((k >> 2) ^ (r & 7))) << 2) + (k & 3); }

/* a value that names (row, k) and is exact in BF16: at most 8 significant
 * bits (row % 8 and k), times 2^(row / 8) */
static float tag(int row, int k) { return ldexpf((float)((row % 8) * 32 + k + 1), row / 8); }

static uint16_t bf16_bits(float x)
{
  uint32_t u;
  memcpy(&u, &x, 4);
  return (uint16_t)(u >> 16); /* tag() values are exact in BF16 */
}

static float bf16_value(uint16_t h)
{
  uint32_t u = (uint32_t)h << 16;
  float x;
  memcpy(&x, &u, 4);
  return x;
}

/* bank group of a byte address (16-byte groups, 8 per 128 bytes) */
static int group_of(int byte) { return (byte >> 4) & 7; }

/* the part tile's element that wgmma reads as index kk of row n through a
 * descriptor advanced by off bytes (128-byte swizzle, K-major) */
static float wgmma_reads(int n, int off, int kk)
{
  const int b = off + 2 * kk;
  const int byte = n * 128 + ((((b >> 4) ^ (n & 7))) << 4) + (b & 15);
  return bf16_value(part[byte / 2]);
}

/* the same read, modelled as the hardware does it: the swizzle applied to
 * the final byte address (bits 4-6 XOR bits 7-9) of a descriptor that
 * starts `start` bytes into the tile (row r of the operand it describes) */
static float wgmma_reads_at(int start, int r, int off, int kk)
{
  const int addr = start + r * 128 + off + 2 * kk;
  return bf16_value(part[(addr ^ (((addr >> 7) & 7) << 4)) / 2]);
}

static void check_conflict_free(const int *bytes, int n, const char *what, int j)
{
  for (int p = 0; p < n; p += 8) {
    int seen = 0;
    for (int i = p; i < p + 8; i++) seen |= 1 << group_of(bytes[i]);
    if (seen != 0xff) fail(what, p, j, seen, 0);
  }
}

int main(void)
{
  for (int r = 0; r < ROWS; r++)
    for (int k = 0; k < BK; k++) {
      raw_a[raw_index(r, k)] = tag(r, k);
      raw_b[raw_index(r, k)] = -tag(r, k);
    }
  for (int h = 0; h < 2; h++) {
    memset(part, 0, sizeof part);
    /* the split group: thread n writes its row (kernel: the split loop) */
    for (int j = 0; j < 2; j++) {
      int loads[4][ROWS], stores[2][ROWS];
      for (int n = 0; n < ROWS; n++) {
        float c[4][4];
        for (int e = 0; e < 4; e++) {
          const int chunk = bf16x6_b_chunk(e, j) ^ (n & 7);
          loads[e][n] = n * 128 + chunk * 16;
          for (int q = 0; q < 4; q++) c[e][q] = raw_b[n * BK + chunk * 4 + q];
        }
        for (int half = 0; half < 2; half++) {
          const int off = bf16x6_part_chunk_offset(n, h, j, half);
          stores[half][n] = off;
          for (int e = 0; e < 4; e++) {
            part[(off + 4 * e) / 2] = bf16_bits(c[e][2 * half]);
            part[(off + 4 * e) / 2 + 1] = bf16_bits(c[e][2 * half + 1]);
          }
        }
      }
      for (int e = 0; e < 4; e++) check_conflict_free(loads[e], ROWS, "split load conflict", j);
      for (int half = 0; half < 2; half++)
        check_conflict_free(stores[half], ROWS, "split store conflict", j);
    }
    /* wgmma's view of B for each substep: index kk of row n */
    for (int j = 0; j < 2; j++) {
      const int off = bf16x6_desc_offset(h, j);
      for (int n = 0; n < ROWS; n++)
        for (int kk = 0; kk < 16; kk++) {
          const float want = raw_b[raw_index(n, bf16x6_raw_k(kk, j))];
          if (wgmma_reads(n, off, kk) != want) fail("B: index kk of substep j is not raw k", n, kk, j, h);
        }
    }
  }
  /* the consumers: warp w's lanes build their A fragments (kernel: u, v) */
  for (int j = 0; j < 2; j++)
    for (int w = 0; w < 8; w++) { /* both consumer warpgroups' warps: rows 16 w .. */
      int loads[2][32];
      float frag[64][16];
      for (int i = 0; i < 64 * 16; i++) frag[i / 16][i % 16] = -1.0f;
      for (int l = 0; l < 32; l++) {
        const int g = l >> 2, tq = l & 3, r0 = 16 * w + g;
        const int ca = bf16x6_a_chunk(tq, j);
        float u[4], v[4];
        for (int q = 0; q < 4; q++) {
          u[q] = raw_a[r0 * BK + ((ca ^ (r0 & 7)) << 2) + q];
          v[q] = raw_a[(r0 + 8) * BK + ((ca ^ ((r0 + 8) & 7)) << 2) + q];
        }
        loads[0][l] = r0 * 128 + ((ca ^ (r0 & 7)) << 4);
        loads[1][l] = (r0 + 8) * 128 + ((ca ^ ((r0 + 8) & 7)) << 4);
        /* registers 0..3 as the kernel packs them, placed where wgmma
         * takes each register's two values */
        const float reg[4][2] = { { u[0], u[1] }, { v[0], v[1] }, { u[2], u[3] }, { v[2], v[3] } };
        const int row_of[4] = { g, g + 8, g, g + 8 }, col_of[4] = { 2 * tq, 2 * tq, 2 * tq + 8, 2 * tq + 8 };
        for (int rg = 0; rg < 4; rg++)
          for (int hlf = 0; hlf < 2; hlf++) {
            const int lr = (16 * w + row_of[rg]) % 64, lc = col_of[rg] + hlf;
            if (frag[lr][lc] != -1.0f) fail("A: fragment element written twice", w, l, rg, hlf);
            frag[lr][lc] = reg[rg][hlf];
          }
      }
      for (int q = 0; q < 2; q++) check_conflict_free(loads[q], 32, "consumer A load conflict", j);
      for (int rr = 0; rr < 16; rr++)
        for (int kk = 0; kk < 16; kk++) {
          const int row = 16 * w + rr;
          const float want = raw_a[raw_index(row, bf16x6_raw_k(kk, j))];
          if (frag[row % 64][kk] != want) fail("A: index kk of substep j is not raw k", row, kk, j, 0);
        }
    }
  /* pre-split B: a part row's 64 elements (two K-steps) in the pre-pass's
   * order, placed by TMA's 128-byte swizzle (element e of row n at byte n
   * 128 + (((e >> 3) ^ (n & 7)) << 4) + 2 (e & 7)), read by wgmma as above:
   * index kk of substep j of half h must be raw k 32 h + raw_k(kk, j). The
   * pre-pass reads elements 2 L and 2 L + 1 as one float2. */
  {
    int hits64[64] = { 0 };
    for (int e = 0; e < 64; e += 2) {
      const int r = bf16x6_presplit_raw(e);
      if (r % 2 || bf16x6_presplit_raw(e + 1) != r + 1) fail("pre-split: odd element not raw k + 1", e, r, 0, 0);
    }
    for (int e = 0; e < 64; e++) {
      const int r = bf16x6_presplit_raw(e);
      if (r < 0 || r >= 64) fail("pre-split: raw k out of the 64", e, r, 0, 0);
      else hits64[r]++;
    }
    for (int k = 0; k < 64; k++)
      if (hits64[k] != 1) fail("pre-split: raw k not covered exactly once", k, hits64[k], 0, 0);
    memset(part, 0, sizeof part);
    for (int n = 0; n < ROWS; n++)
      for (int e = 0; e < 64; e++) {
        /* at most 8 significant bits, distinct within a row */
        const float val = ldexpf((float)((n % 4) * 64 + bf16x6_presplit_raw(e) + 1), n / 4);
        part[(n * 128 + (((e >> 3) ^ (n & 7)) << 4) + 2 * (e & 7)) / 2] = bf16_bits(val);
      }
    for (int h = 0; h < 2; h++)
      for (int j = 0; j < 2; j++) {
        const int off = bf16x6_desc_offset(h, j);
        for (int n = 0; n < ROWS; n++)
          for (int kk = 0; kk < 16; kk++) {
            const float want = ldexpf((float)((n % 4) * 64 + 32 * h + bf16x6_raw_k(kk, j) + 1), n / 4);
            if (wgmma_reads(n, off, kk) != want) fail("pre-split: index kk of substep j is not raw k", n, kk, j, h);
          }
        /* A's part tile (both operands pre-split): consumer warpgroup cw's
         * descriptor starts at row 64 cw (byte 8192 cw) and reads its rows
         * 0..63 with the same K order as B's */
        for (int cw = 0; cw < 2; cw++)
          for (int r = 0; r < 64; r++)
            for (int kk = 0; kk < 16; kk++) {
              const int n = 64 * cw + r;
              const float want = ldexpf((float)((n % 4) * 64 + 32 * h + bf16x6_raw_k(kk, j) + 1), n / 4);
              if (wgmma_reads_at(8192 * cw, r, off, kk) != want)
                fail("pre-split A: a consumer's row r, index kk is not raw k", cw, r, kk, j);
            }
      }
  }
  /* every raw k of a K-step once: the two substeps together are the step */
  int hits[BK] = { 0 };
  for (int j = 0; j < 2; j++)
    for (int kk = 0; kk < 16; kk++) hits[bf16x6_raw_k(kk, j)]++;
  for (int k = 0; k < BK; k++)
    if (hits[k] != 1) fail("raw k not covered exactly once", k, hits[k], 0, 0);
  if (failures) {
    printf("index_test: FAIL (%d)\n", failures);
    return 1;
  }
  printf("index_test: B parts (split and pre-split), A fragments, pre-split A, coverage and bank conflicts: all hold\n");
  return 0;
}
