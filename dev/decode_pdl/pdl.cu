/* The decode kernel launched with programmatic dependent launch (PDL),
 * beside the same kernel launched plainly and cuBLAS: does letting the
 * kernel be scheduled while the previous kernel of the stream finishes
 * take its launch latency off a few-token GEMM (kernels/gemm_decode.md:
 * the launch floor is 1.3 us of 1024x4096's 6.5)? The PDL kernel waits
 * (griddepcontrol.wait) for the previous kernel's memory before touching
 * any, so it is safe after any kernel, not only after ours.
 *
 * Per shape, each side a sample of 20 calls held back by a spin kernel
 * (1 ms: GPU-bound timing, as dev/decode_split; samples the host did not
 * keep ahead of are counted), weights rotated past the L2, medians of 9
 * samples, microseconds a call:
 *   cublas, plain, pdl        the GEMM back to back;
 *   pdl_noattr                the PDL kernel launched plainly (its
 *                             machine code differs a little from plain's);
 *   p_cublas, p_plain, p_pdl  a producer kernel (writes x, op(B), from a
 *                             new seed each time; it never triggers, as
 *                             most frameworks' kernels) then the GEMM: a
 *                             decode step's order;
 *   t_pdl, t_cublas           the same with a producer that triggers its
 *                             dependents at once (as PDL-aware kernels do),
 *                             ours with PDL and cuBLAS;
 *   producer                  the producer alone;
 *   floor, floor_pdl          an empty kernel, plainly and with PDL;
 *   ceil                      the same-size read of the weight (4 CTAs of
 *                             512 per SM, as dev/decode_split);
 *   ceil2, ceil2_pdl          the same with 2 CTAs per SM, plainly and
 *                             with PDL (room for the next grid's CTAs, as
 *                             the GEMM leaves: the like-for-like pair).
 * Correctness: six pairs back to back of a producer that triggers its
 * dependents at once and then spins 20 us before writing x, and the PDL
 * GEMM, each output compared bit for bit with the plain kernel's on the
 * same x: the PDL GEMM is resident during the spin, so without its wait it
 * would read the previous x. The control: the plain kernel (no wait)
 * launched with the attribute the same way must differ (else the check
 * could not fail). And the plain kernel against cuBLAS.
 *   pdl [--legacy-stream] [m n k TN|NN ...]
 * --legacy-stream: everything on the legacy default stream, cuBLAS's
 * handle without cublasSetStream (as gemmshim-bench runs it), instead of
 * a created stream: a control for cuBLAS's times.
 * Exits 77 without a GPU; 1 when a PDL output differs from the plain one,
 * when the control does not, or when a launch fails. */
#include "../../kernels/gemm_decode.cu"

#include <cublas_v2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#define CK(x)                                                                       \
  do {                                                                              \
    cudaError_t e_ = (x);                                                           \
    if (e_ != cudaSuccess) {                                                        \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));    \
      exit(2);                                                                      \
    }                                                                               \
  } while (0)

/* BF16 values in [-1, 1) from a hash of the index and the seed. trigger:
 * let a PDL dependent be scheduled at once, then spin spin_ns first. */
__global__ void produce(uint16_t *p, size_t n, uint32_t seed, int trigger = 0,
                        long long spin_ns = 0) {
  if (trigger) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (spin_ns) {
    long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    while (t - t0 < spin_ns);
  }
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint32_t h = (uint32_t)i * 2654435761u ^ seed * 0x9e3779b9u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    const float v = ((h & 0xffff) / 65536.0f - 0.5f) * 2.f;
    p[i] = __bfloat16_as_ushort(__float2bfloat16(v));
  }
}

__global__ void empty_kernel() {}

/* A launch of grid x block on st, with the PDL attribute when pdl (attr:
 * its storage, which must outlive the launch call). */
static cudaLaunchConfig_t config(unsigned grid, unsigned block, bool pdl, cudaStream_t st,
                                 cudaLaunchAttribute *attr) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(block);
  cfg.stream = st;
  attr->id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr->val.programmaticStreamSerializationAllowed = 1;
  if (pdl) cfg.attrs = attr, cfg.numAttrs = 1;
  return cfg;
}

static void launch_empty(bool pdl, cudaStream_t st) {
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t cfg = config(1, 32, pdl, st, &attr);
  CK(cudaLaunchKernelEx(&cfg, empty_kernel));
}

/* Holds the stream while the host queues a sample's calls. */
__global__ void spin(long long ns) {
  long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  while (t - t0 < ns);
}

/* A read of n16 16-byte words (the weight's bytes); stores only on an
 * impossible value so the loads stay. With kPdl, as the PDL GEMM: wait for
 * the previous kernel, let the next be scheduled. */
template <bool kPdl>
__global__ void read_kernel(const uint4 *p, size_t n16, uint4 *sink) {
  if constexpr (kPdl) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  }
  uint32_t x = 0;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
  for (; i + 3 * stride < n16; i += 4 * stride) {
    const uint4 a = __ldcs(p + i), b = __ldcs(p + i + stride), c = __ldcs(p + i + 2 * stride),
                d = __ldcs(p + i + 3 * stride);
    x ^= a.x ^ b.y ^ c.z ^ d.w ^ a.w ^ b.x ^ c.y ^ d.z;
  }
  for (; i < n16; i += stride) {
    const uint4 a = __ldcs(p + i);
    x ^= a.x ^ a.w;
  }
  if (x == 0x9e3779b9u) sink[0] = make_uint4(x, x, x, x);
}

static void launch_read(bool pdl, int per_sm, int sms, const uint16_t *w, size_t bytes,
                        uint4 *sink, cudaStream_t st) {
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t cfg = config((unsigned)(sms * per_sm), 512, pdl, st, &attr);
  const uint4 *p = reinterpret_cast<const uint4 *>(w);
  CK(pdl ? cudaLaunchKernelEx(&cfg, read_kernel<true>, p, bytes / 16, sink)
         : cudaLaunchKernelEx(&cfg, read_kernel<false>, p, bytes / 16, sink));
}

static double rel_diff(const std::vector<uint16_t> &x, const std::vector<uint16_t> &ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); i++) {
    const uint32_t a = (uint32_t)x[i] << 16, b = (uint32_t)ref[i] << 16;
    float fa, fb;
    memcpy(&fa, &a, 4);
    memcpy(&fb, &b, 4);
    num += ((double)fa - fb) * ((double)fa - fb);
    den += (double)fb * fb;
  }
  return sqrt(num / (den > 0 ? den : 1));
}

enum Side {
  CUBLAS, PLAIN, PDL, PDL_NOATTR, P_CUBLAS, P_PLAIN, P_PDL, T_PDL, T_CUBLAS, PRODUCER, FLOOR,
  FLOOR_PDL, CEIL, CEIL2, CEIL2_PDL, SIDES
};
static const char *const side_name[SIDES] = {
    "cublas_us", "plain_us", "pdl_us",   "pdl_noattr_us", "p_cublas_us", "p_plain_us", "p_pdl_us",
    "t_pdl_us",  "t_cublas_us", "producer_us", "floor_us", "floor_pdl_us", "ceil_us", "ceil2_us",
    "ceil2_pdl_us"};

int main(int argc, char **argv) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("SKIP: no GPU\n");
    return 77;
  }
  struct S {
    int m, n, k, tn;
  };
  std::vector<S> shapes;
  const bool legacy = argc > 1 && !strcmp(argv[1], "--legacy-stream");
  for (int i = legacy ? 2 : 1; i + 3 < argc; i += 4)
    shapes.push_back({atoi(argv[i]), atoi(argv[i + 1]), atoi(argv[i + 2]), !strcmp(argv[i + 3], "TN")});
  if (shapes.empty()) {
    const int W[][3] = {{1024, 4096, 1}, {2048, 4096, 1}, {4096, 4096, 1}, {14336, 4096, 1},
                        {4096, 14336, 1}, {1024, 4096, 0}, {4096, 4096, 0}};
    for (auto &w : W)
      for (int n : {1, 8}) shapes.push_back({w[0], n, w[1], w[2]});
  }
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "pdl: cublasCreate failed\n");
    return 2;
  }
  cudaStream_t st = 0;
  if (!legacy) {
    CK(cudaStreamCreate(&st));
    cublasSetStream(h, st);
  }
  int dev, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  uint4 *sink;
  CK(cudaMalloc(&sink, 64));
  printf("# %s; GPU-bound timing (spin-held samples of 20 calls), medians of 9, us a call; %s\n",
         prop.name, legacy ? "the legacy default stream, no cublasSetStream" : "a created stream");
  printf("m,n,k,layout");
  for (int s = 0; s < SIDES; ++s) printf(",%s", side_name[s]);
  printf(",pdl_vs_plain,p_pdl_vs_p_cublas,p_plain_vs_p_cublas,t_pdl_vs_p_cublas,pdl_bits_equal,"
         "control_differs,plain_vs_cublas,host_bound_samples\n");
  int bad = 0;
  for (const S &s : shapes) {
    const size_t wel = (size_t)s.m * s.k, wbytes = wel * 2;
    int copies = (int)std::max<size_t>(2, (size_t)(200e6 / wbytes) + 1);
    if (copies > 64) copies = 64;
    std::vector<uint16_t *> A(copies);
    for (int c = 0; c < copies; c++) {
      CK(cudaMalloc(&A[c], wbytes));
      produce<<<1024, 256>>>(A[c], wel, 17 + c);
    }
    const size_t bel = (size_t)s.k * s.n, del = (size_t)s.m * s.n;
    uint16_t *B, *D;
    CK(cudaMalloc(&B, bel * 2));
    CK(cudaMalloc(&D, del * 2 * 19));
    produce<<<256, 256>>>(B, bel, 99);
    CK(cudaDeviceSynchronize());
    const float one = 1.f, zero = 0.f;
    gs_kernel_args a;
    memset(&a, 0, sizeof a);
    a.m = s.m, a.n = s.n, a.k = s.k, a.trans_a = s.tn, a.trans_b = 0;
    a.lda = s.tn ? s.k : s.m, a.B = B, a.ldb = s.k, a.ldc = s.m, a.ldd = s.m;
    a.alpha = 1.f, a.beta = 0.f, a.stream = st, a.device = dev;
    const int pgrid = (int)std::min<size_t>(1024, (bel + 255) / 256);
    uint32_t seed = 1000;
    /* 0 cuBLAS, 1 plain, 2 PDL, 3 the PDL kernel launched plainly, 4 the
     * control: the plain kernel (no wait) launched with the attribute */
    auto gemm = [&](int which, int c, uint16_t *out) -> bool {
      if (which == 0)
        return cublasGemmEx(h, s.tn ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, s.m, s.n, s.k, &one,
                            A[c], CUDA_R_16BF, (int)a.lda, B, CUDA_R_16BF, s.k, &zero, out,
                            CUDA_R_16BF, s.m, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT_TENSOR_OP) == CUBLAS_STATUS_SUCCESS;
      gs_kernel_args b = a;
      b.A = A[c], b.C = out, b.D = out;
      const gs_kstatus st = which == 2   ? launch<__nv_bfloat16, true>(&b, 0)
                            : which == 3 ? launch<__nv_bfloat16, true>(&b, 0, false)
                            : which == 4 ? launch<__nv_bfloat16, false>(&b, 0, true)
                                         : launch<__nv_bfloat16>(&b, 0);
      return st == GS_K_OK;
    };
    auto run = [&](int side, int c) -> bool {
      switch (side) {
        case CUBLAS: case PLAIN: case PDL: case PDL_NOATTR: return gemm(side - CUBLAS, c, D);
        case P_CUBLAS: case P_PLAIN: case P_PDL:
          produce<<<pgrid, 256, 0, st>>>(B, bel, seed++);
          return gemm(side - P_CUBLAS, c, D);
        case T_PDL: case T_CUBLAS:
          produce<<<pgrid, 256, 0, st>>>(B, bel, seed++, 1);
          return gemm(side == T_PDL ? 2 : 0, c, D);
        case PRODUCER: produce<<<pgrid, 256, 0, st>>>(B, bel, seed++); return true;
        case FLOOR: case FLOOR_PDL: launch_empty(side == FLOOR_PDL, st); return true;
        default:
          launch_read(side == CEIL2_PDL, side == CEIL ? 4 : 2, sms, A[c], wbytes, sink, st);
          return true;
      }
    };
    /* correctness: six pairs back to back of a producer that triggers at
     * once and spins 20 us before writing x, then a GEMM launched with the
     * attribute (the PDL kernel into 0-5, the control into 6-11); then the
     * plain kernel on each x one pair at a time (12-17); cuBLAS on the last
     * (18) */
    bool ok = true, equal = true, control_differs = false;
    for (int w = 0; w < 2 && ok; ++w)
      for (int i = 0; i < 6 && ok; ++i) {
        produce<<<pgrid, 256, 0, st>>>(B, bel, 500 + i, 1, 20000);
        ok = gemm(w ? 4 : 2, 0, D + (size_t)(6 * w + i) * del);
      }
    for (int i = 0; i < 6 && ok; ++i) {
      produce<<<pgrid, 256, 0, st>>>(B, bel, 500 + i);
      ok = gemm(1, 0, D + (size_t)(12 + i) * del);
    }
    ok = ok && gemm(0, 0, D + (size_t)18 * del);
    CK(cudaStreamSynchronize(st));
    std::vector<uint16_t> x(del), y(del), z(del);
    double plain_vs_cublas = NAN;
    if (ok) {
      for (int i = 0; i < 6; ++i) {
        CK(cudaMemcpy(x.data(), D + (size_t)i * del, del * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(z.data(), D + (size_t)(6 + i) * del, del * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(y.data(), D + (size_t)(12 + i) * del, del * 2, cudaMemcpyDeviceToHost));
        equal = equal && x == y;
        control_differs = control_differs || z != y;
      }
      CK(cudaMemcpy(x.data(), D + (size_t)17 * del, del * 2, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(y.data(), D + (size_t)18 * del, del * 2, cudaMemcpyDeviceToHost));
      plain_vs_cublas = rel_diff(x, y);
    }
    if (!ok || !equal || !control_differs) bad = 1;
    std::vector<float> t[SIDES];
    int cidx = 0, host_bound = 0;
    for (int smp = 0; smp < 10 && ok; smp++)
      for (int side = 0; side < SIDES; side++) {
        spin<<<1, 1, 0, st>>>(1000000);
        CK(cudaEventRecord(e0, st));
        for (int r = 0; r < 20; r++) {
          if (!run(side, cidx)) ok = false;
          cidx = (cidx + 1) % copies;
        }
        CK(cudaEventRecord(e1, st));
        /* the spin must still hold the stream: else the host timed itself */
        if (cudaEventQuery(e0) != cudaErrorNotReady) ++host_bound;
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (smp) t[side].push_back(ms * 1000 / 20);
      }
    double med[SIDES];
    for (int side = 0; side < SIDES; ++side) {
      if (t[side].empty()) {
        med[side] = NAN;
        continue;
      }
      std::sort(t[side].begin(), t[side].end());
      med[side] = t[side][t[side].size() / 2];
    }
    printf("%d,%d,%d,%s", s.m, s.n, s.k, s.tn ? "TN" : "NN");
    for (int side = 0; side < SIDES; ++side) printf(",%.2f", med[side]);
    printf(",%.3f,%.3f,%.3f,%.3f,%d,%d,%.2e,%d\n", med[PLAIN] / med[PDL],
           med[P_CUBLAS] / med[P_PDL], med[P_CUBLAS] / med[P_PLAIN], med[P_CUBLAS] / med[T_PDL],
           ok && equal, control_differs, plain_vs_cublas, host_bound);
    if (!ok) bad = 1;
    fflush(stdout);
    for (int c = 0; c < copies; c++) cudaFree(A[c]);
    cudaFree(B);
    cudaFree(D);
  }
  return bad;
}
