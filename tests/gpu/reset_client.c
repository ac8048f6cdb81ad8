/* A program that resets its device between GEMMs: run under
 * LD_PRELOAD=libgemmshim.so by reset_under_shim.sh. It has its own CUDA
 * runtime (as PyTorch has), so the shim's runtime learns of the reset only
 * through the driver.
 *
 *   1. SGEMM TN 512^3 calls (the script forces them onto our kernel);
 *   2. cublasDestroy, cudaDeviceReset;
 *   3. guard allocations, filled with a pattern: after a reset the driver
 *      hands out the addresses the old context used, so memory the shim
 *      kept from before the reset may now belong to this program;
 *   4. the same calls again on a new handle, with beta != 0;
 *   5. every result against a CPU reference, and the guard unchanged.
 * Prints what it saw; exits 0 when all is right, 1 otherwise, 77 without a
 * GPU. The shim's log tells the script where each call went. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 512
#define GUARD_MB 1536
#define CALLS 16   /* per phase */

#define CU(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));        \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)
#define CB(x)                                                                                 \
  do {                                                                                        \
    cublasStatus_t s_ = (x);                                                                  \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                        \
      printf("FAIL %s:%d: %s: status %d\n", __FILE__, __LINE__, #x, (int)s_);                 \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

static float hA[N * N], hB[N * N], hC0[N * N], hD[N * N];
static double ref[N * N];

static void make_inputs(void)
{
  uint64_t s = 12345;
  float *all[3] = { hA, hB, hC0 };
  for (int a = 0; a < 3; a++)
    for (int i = 0; i < N * N; i++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      all[a][i] = (float)((double)(s >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
    }
}

/* D = alpha A^T B + beta C0, column-major, A stored k x m. */
static void reference(double alpha, double beta)
{
  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++) {
      double acc = 0;
      for (int p = 0; p < N; p++) acc += (double)hA[p + i * N] * hB[p + j * N];
      ref[i + j * N] = alpha * acc + beta * hC0[i + j * N];
    }
}

static double rel_err(void)
{
  double num = 0, den = 0;
  for (int i = 0; i < N * N; i++) {
    double d = hD[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return isfinite(num) ? sqrt(num / den) : INFINITY;
}

typedef struct bufs { float *A, *B, *C; } bufs;

static bufs upload(void)
{
  bufs b;
  size_t bytes = (size_t)N * N * 4;
  CU(cudaMalloc((void **)&b.A, bytes));
  CU(cudaMalloc((void **)&b.B, bytes));
  CU(cudaMalloc((void **)&b.C, bytes));
  CU(cudaMemcpy(b.A, hA, bytes, cudaMemcpyHostToDevice));
  CU(cudaMemcpy(b.B, hB, bytes, cudaMemcpyHostToDevice));
  return b;
}

/* `calls` GEMMs, each from a fresh copy of C0; returns the worst error. */
static double run_calls(cublasHandle_t h, bufs *b, int calls, float alpha, float beta)
{
  double worst = 0;
  size_t bytes = (size_t)N * N * 4;
  for (int i = 0; i < calls; i++) {
    CU(cudaMemcpy(b->C, hC0, bytes, cudaMemcpyHostToDevice));
    CB(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, N, N, &alpha, b->A, N, b->B, N, &beta, b->C, N));
    CU(cudaDeviceSynchronize());
    CU(cudaMemcpy(hD, b->C, bytes, cudaMemcpyDeviceToHost));
    double e = rel_err();
    if (!(e <= worst)) worst = e;
    usleep(10000);   /* the shim loads its kernels on a thread of its own meanwhile */
  }
  return worst;
}

int main(void)
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("reset_client: no CUDA GPU available\n");
    return 77;
  }
  make_inputs();
  const float alpha = 1.25f, beta = 0.5f;
  reference(alpha, beta);
  int fail = 0;

  cublasHandle_t h;
  CB(cublasCreate(&h));
  bufs b = upload();
  printf("     before the reset: the program's inputs at %p %p %p\n", (void *)b.A, (void *)b.B, (void *)b.C);
  double e1 = run_calls(h, &b, CALLS, alpha, beta);
  printf("%s before the reset: %d calls, worst relative error %.3g\n", e1 < 1e-5 ? "ok  " : "FAIL",
         CALLS, e1);
  fail |= !(e1 < 1e-5);
  CB(cublasDestroy(h));
  CU(cudaFree(b.A)); CU(cudaFree(b.B)); CU(cudaFree(b.C));
  CU(cudaDeviceReset());

  /* The guards. After a reset the driver hands out the same addresses for
   * the same sequence of allocations: the program's three inputs again,
   * then blocks of the sizes the shim took for itself before the reset
   * (comparison partials and result, then scratch), then a big one. */
  b = upload();
  static const size_t guard_sizes[] = { 16 << 10, 4 << 10, 64 << 20, 2 << 20,
                                        (size_t)GUARD_MB << 20 };
  enum { N_GUARDS = sizeof guard_sizes / sizeof *guard_sizes };
  unsigned char *guard[N_GUARDS];
  for (int g = 0; g < N_GUARDS; g++) {
    CU(cudaMalloc((void **)&guard[g], guard_sizes[g]));
    CU(cudaMemset(guard[g], 0xa5, guard_sizes[g]));
  }
  CU(cudaDeviceSynchronize());
  CB(cublasCreate(&h));
  double e2 = run_calls(h, &b, CALLS, alpha, beta);
  printf("%s after the reset: %d calls, worst relative error %.3g\n", e2 < 1e-5 ? "ok  " : "FAIL",
         CALLS, e2);
  fail |= !(e2 < 1e-5);
  for (int g = 0; g < N_GUARDS; g++) {
    unsigned char *hg = malloc(guard_sizes[g]);
    CU(cudaMemcpy(hg, guard[g], guard_sizes[g], cudaMemcpyDeviceToHost));
    size_t changed = 0, first = 0;
    for (size_t i = 0; i < guard_sizes[g]; i++)
      if (hg[i] != 0xa5 && changed++ == 0) first = i;
    if (changed)
      printf("FAIL guard %d (%zu bytes at %p, allocated after the reset) was written: %zu bytes "
             "changed, the first at offset %zu\n", g, guard_sizes[g], (void *)guard[g], changed, first);
    else
      printf("ok   guard %d (%zu bytes at %p, allocated after the reset) is unchanged\n", g,
             guard_sizes[g], (void *)guard[g]);
    fail |= changed != 0;
    free(hg);
  }
  cudaError_t last = cudaGetLastError();
  printf("%s the program's CUDA runtime reports %s at the end\n", last == cudaSuccess ? "ok  " : "FAIL",
         cudaGetErrorName(last));
  fail |= last != cudaSuccess;
  CB(cublasDestroy(h));
  return fail;
}
