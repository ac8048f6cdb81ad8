/* A program that makes cuBLAS GEMM calls, for tests/test_cmd.sh: the fake
 * libcublas ($GS_FAKE_DIR/libcublas.so.13) loaded with dlopen RTLD_LOCAL,
 * as PyTorch loads the real one, and cublasSgemm_v2 called through the
 * global scope, where only a preloaded libgemmshim.so defines it.
 *
 * usage: gemm_caller M N K COUNT [M N K COUNT]...
 * makes COUNT calls of each shape (no transposes, leading dimensions
 * m, k, m). Exits 0 when every call returned success, 3 when one did not,
 * 4 when no cublasSgemm_v2 is visible (not run under the shim), 2 on bad
 * usage or when the fake cannot be loaded. Needs no CUDA headers. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*create_fn)(void **handle);
typedef int (*sgemm_fn)(void *handle, int transa, int transb, int m, int n, int k,
                        const float *alpha, const float *A, int lda, const float *B, int ldb,
                        const float *beta, float *C, int ldc);

/* Device pointers the fake never reads: distinct, 256-byte aligned. */
#define P(i) ((float *)(uintptr_t)(0x7f0000000000ull + 0x100000ull * (i)))

int main(int argc, char **argv)
{
  if (argc < 5 || (argc - 1) % 4) {
    fprintf(stderr, "usage: gemm_caller M N K COUNT [M N K COUNT]...\n");
    return 2;
  }
  const char *dir = getenv("GS_FAKE_DIR");
  if (!dir) {
    fprintf(stderr, "gemm_caller: GS_FAKE_DIR is not set\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/libcublas.so.13", dir);
  void *blas = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!blas) {
    fprintf(stderr, "gemm_caller: %s\n", dlerror());
    return 2;
  }
  create_fn create = (create_fn)dlsym(blas, "cublasCreate_v2");
  sgemm_fn sgemm = (sgemm_fn)dlsym(RTLD_DEFAULT, "cublasSgemm_v2");
  if (!sgemm) {
    fprintf(stderr, "gemm_caller: no cublasSgemm_v2 in the global scope (not under the shim)\n");
    return 4;
  }
  void *h = NULL;
  if (!create || create(&h)) {
    fprintf(stderr, "gemm_caller: cublasCreate_v2 failed\n");
    return 2;
  }
  float one = 1.0f;
  for (int a = 1; a + 3 < argc; a += 4) {
    int m = atoi(argv[a]), n = atoi(argv[a + 1]), k = atoi(argv[a + 2]);
    int count = atoi(argv[a + 3]);
    for (int i = 0; i < count; i++) {
      int st = sgemm(h, 0, 0, m, n, k, &one, P(1), m, P(2), k, &one, P(3), m);
      if (st) {
        fprintf(stderr, "gemm_caller: cublasSgemm_v2 %dx%dx%d returned %d\n", m, n, k, st);
        return 3;
      }
    }
  }
  return 0;  /* return, not _exit: the shim writes its log at exit */
}
