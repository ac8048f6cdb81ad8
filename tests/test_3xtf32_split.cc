/* The 3xTF32 kernel's split (kernels/gemm_f32_3xtf32_parts.h), compiled as
 * the kernel has it, over every one of the 2^32 FP32 inputs:
 *   split_words equals tf32_split.h's gs_tf32_split (plus the kernel's NaN
 *     rule: a NaN whose payload lies in the 13 bits the tensor core ignores
 *     gets the quiet bit, so it cannot read as Inf);
 *   split_fast equals split_words on every tame input (|x| < kTameLimit);
 *   the kernel's float test of tameness equals the bit test.
 * Threads split the range; ~10-20 s on two cores. Exit 0 when all hold. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tf32_split.h"
#define __host__
#define __device__
#define __forceinline__ inline
#include "gemm_f32_3xtf32_parts.h"

using namespace gs_f32_3xtf32;

static Words reference(float x)
{
  const gs_tf32_parts p = gs_tf32_split(x);
  Words w = { gs_tf32_bits(p.big), gs_tf32_bits(p.small), gs_tf32_bits(p.cross) };
  if ((w.big & 0x7fffffffu) > 0x7f800000u) w.big |= 0x00400000u; /* the NaN rule */
  return w;
}

static int same(const Words &a, const Words &b)
{
  return a.big == b.big && a.small == b.small && a.cross == b.cross;
}

struct share {
  uint64_t first, last;               /* [first, last) of the inputs */
  uint64_t words_bad, fast_bad, tame_bad, tame;
};

static void *check(void *arg)
{
  share *s = (share *)arg;
  float lim;
  const uint32_t l = kTameLimit;
  memcpy(&lim, &l, 4);
  for (uint64_t i = s->first; i < s->last; ++i) {
    const uint32_t u = (uint32_t)i;
    float x;
    memcpy(&x, &u, 4);
    const Words w = split_words(x);
    s->words_bad += !same(w, reference(x));
    const uint32_t mag = u & 0x7fffffffu;
    s->tame_bad += ((x < 0 ? -x : x) < lim) != (mag < kTameLimit);
    if (mag < kTameLimit) {
      ++s->tame;
      s->fast_bad += !same(split_fast(x), w);
    }
  }
  return NULL;
}

int main()
{
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  if (n > 64) n = 64;
  share parts[64];
  pthread_t t[64];
  const uint64_t total = 1ull << 32;
  for (long i = 0; i < n; ++i) {
    parts[i] = share{ total * i / n, total * (i + 1) / n, 0, 0, 0, 0 };
    if (pthread_create(&t[i], NULL, check, &parts[i]) != 0) return 2;
  }
  uint64_t words_bad = 0, fast_bad = 0, tame_bad = 0, tame = 0;
  for (long i = 0; i < n; ++i) {
    pthread_join(t[i], NULL);
    words_bad += parts[i].words_bad;
    fast_bad += parts[i].fast_bad;
    tame_bad += parts[i].tame_bad;
    tame += parts[i].tame;
  }
  printf("split_words vs gs_tf32_split: %llu mismatches over 2^32 inputs\n",
         (unsigned long long)words_bad);
  printf("split_fast vs split_words: %llu mismatches over %llu tame inputs\n",
         (unsigned long long)fast_bad, (unsigned long long)tame);
  printf("the float tame test vs the bit test: %llu mismatches\n", (unsigned long long)tame_bad);
  return words_bad || fast_bad || tame_bad || tame == 0;
}
