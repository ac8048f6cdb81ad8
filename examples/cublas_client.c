/*
 * cublas_client.c - a plain C cuBLAS / cuBLASLt program for gemmshim.
 *
 * It calls every GEMM entry point that gemmshim interposes, with small real
 * problems on the GPU, and prints one line per call:
 *
 *   [nn] ENTRY  LAYOUT  m= n= k= batch=  DTYPE  PTRMODE  hash=FNV1A64  relerr=E  ref=HOW  OK|FAIL
 *
 * The hash is FNV-1a 64 over the raw bytes of the whole output buffer
 * (padding rows and batch gaps included), so running the program with and
 * without LD_PRELOAD=libgemmshim.so prints identical lines wherever the shim
 * forwards to cuBLAS. relerr is the relative Frobenius error against a CPU
 * FP64 reference (over every output element for problems up to 256^3
 * multiply-adds, over a deterministic sample of elements for bigger ones).
 *
 * Besides the error, every call is checked for:
 *   - non-finite values in the output (C is filled with NaN when beta == 0,
 *     so an implementation that reads C then leaks NaN);
 *   - writes outside the logical m x n output (padding rows of ldc and gaps
 *     between batch strides are filled with a sentinel and must survive).
 *
 * Inputs come from a 64-bit LCG seeded per call (no rand()), so every run
 * sees the same bits.
 *
 * Build:
 *   gcc -std=c11 -O2 -Wall -Wextra -I/usr/local/cuda/include \
 *       examples/cublas_client.c -L/usr/local/cuda/lib64 \
 *       -lcublasLt -lcublas -lcudart -o cublas_client
 *
 * Usage: cublas_client [--size N] [--only SUBSTRING] [--help]
 *   --size N     edge of the big square shapes (default 1024)
 *   --only S     run only the calls whose entry-point name contains S
 *
 * Exit status: 0 all calls within tolerance, 1 a call out of tolerance or a
 * CUDA/cuBLAS error, 2 bad command line, 77 no CUDA GPU (automake "skip").
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Status checks: print file:line and leave (this is a client program).      */

#define CUDA_CHECK(expr)                                                       \
    do {                                                                       \
        cudaError_t e_ = (expr);                                               \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "%s:%d: CUDA error %s (%d): %s\n  in: %s\n",       \
                    __FILE__, __LINE__, cudaGetErrorName(e_), (int)e_,         \
                    cudaGetErrorString(e_), #expr);                            \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#define CUBLAS_CHECK(expr)                                                     \
    do {                                                                       \
        cublasStatus_t s_ = (expr);                                            \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                     \
            fprintf(stderr, "%s:%d: cuBLAS error %s (%d): %s\n  in: %s\n",     \
                    __FILE__, __LINE__, cublasGetStatusName(s_), (int)s_,      \
                    cublasGetStatusString(s_), #expr);                         \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

/* ------------------------------------------------------------------------ */
/* Deterministic inputs, bf16 conversion, hashing.                          */

typedef struct { uint64_t s; } lcg_t;

static void lcg_seed(lcg_t *g, uint64_t seed)
{
    g->s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
}

static uint64_t lcg_next(lcg_t *g)
{
    /* Knuth's MMIX multiplier and increment. */
    g->s = g->s * 6364136223846793005ull + 1442695040888963407ull;
    return g->s;
}

/* Uniform in [-1, 1) with 24 significant bits: exactly representable in fp32. */
static float lcg_uniform(lcg_t *g)
{
    uint64_t top = lcg_next(g) >> 40; /* 24 bits */
    return (float)(((double)top - 8388608.0) / 8388608.0);
}

static uint64_t lcg_below(lcg_t *g, uint64_t n)
{
    return (lcg_next(g) >> 16) % n;
}

/* fp32 -> bf16, round to nearest even (NaN stays a quiet NaN). */
static uint16_t f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu) != 0)
        return 0x7FC0;
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static float bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Square root without libm (the build line links no -lm): bit-trick seed and
 * Newton steps, exact to the last bit or two, which is plenty for an error
 * ratio. NaN stays NaN. */
static double sqrt_nolibm(double x)
{
    if (x != x || x <= 0.0 || x > 1.7e308)
        return x != x ? x : (x <= 0.0 ? 0.0 : x);
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    u = (u >> 1) + (0x3FF0000000000000ull >> 1);
    double y;
    memcpy(&y, &u, sizeof y);
    for (int i = 0; i < 6; i++)
        y = 0.5 * (y + x / y);
    return y;
}

static uint64_t fnv1a64(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* ------------------------------------------------------------------------ */
/* The calls.                                                                */

typedef enum {
    E_SGEMM,
    E_SGEMM_64,
    E_GEMMEX,
    E_GEMMEX_64,
    E_SGEMM_SB,
    E_SGEMM_SB_64,
    E_GEMM_SB_EX,
    E_GEMM_SB_EX_64,
    E_LT_MATMUL
} entry_t;

static const char *const entry_name[] = {
    "cublasSgemm_v2",
    "cublasSgemm_v2_64",
    "cublasGemmEx",
    "cublasGemmEx_64",
    "cublasSgemmStridedBatched",
    "cublasSgemmStridedBatched_64",
    "cublasGemmStridedBatchedEx",
    "cublasGemmStridedBatchedEx_64",
    "cublasLtMatmul",
};

typedef enum { DT_F32, DT_BF16 } dtype_t;

enum { EPI_NONE = 0, EPI_BIAS = 1 };

/* A shape dimension of -1 means "the big size" (--size). */
#define BIG (-1)

typedef struct {
    entry_t entry;
    dtype_t dtype;
    char ta, tb;      /* 'N' or 'T' */
    long m, n, k;     /* BIG = --size */
    long batch;       /* strided-batched entries only; 1 otherwise */
    long pad;         /* extra rows in every leading dimension */
    long gap;         /* extra elements between batch strides */
    float alpha, beta;
    int dev_ptr;      /* alpha/beta in device memory (cuBLAS pointer mode) */
    int epilogue;     /* cublasLtMatmul only */
    int c_separate;   /* cublasLtMatmul only: C and D distinct buffers */
} call_t;

static const call_t calls[] = {
    /* cublasSgemm_v2: the three layouts PyTorch uses at the big size, then odd shapes. */
    {E_SGEMM, DT_F32, 'T', 'N', BIG, BIG, BIG, 1, 0, 0, 1.0f, 0.0f, 0, 0, 0},
    {E_SGEMM, DT_F32, 'N', 'N', BIG, BIG, BIG, 1, 0, 0, 1.0f, 0.0f, 0, 0, 0},
    {E_SGEMM, DT_F32, 'N', 'T', BIG, BIG, BIG, 1, 0, 0, 1.0f, 0.0f, 0, 0, 0},
    {E_SGEMM, DT_F32, 'N', 'N', 129, 67, 33, 1, 3, 0, 1.5f, 0.5f, 0, 0, 0},
    {E_SGEMM, DT_F32, 'T', 'N', 100, 37, 129, 1, 1, 0, 0.75f, -1.0f, 1, 0, 0},
    {E_SGEMM, DT_F32, 'N', 'T', 96, 200, 40, 1, 0, 0, 1.0f, 0.0f, 0, 0, 0},
    /* cublasSgemm_v2_64 */
    {E_SGEMM_64, DT_F32, 'T', 'N', BIG, BIG, BIG, 1, 0, 0, 1.0f, 0.0f, 0, 0, 0},
    {E_SGEMM_64, DT_F32, 'T', 'T', 33, 65, 129, 1, 2, 0, 1.0f, 0.25f, 0, 0, 0},
    /* cublasGemmEx: FP32 (as CuPy calls it) and BF16 (as PyTorch autocast calls it). */
    {E_GEMMEX, DT_F32, 'T', 'N', BIG, BIG, BIG, 1, 0, 0, 1.0f, 0.0f, 0, 0, 0},
    {E_GEMMEX, DT_F32, 'N', 'N', 129, 67, 33, 1, 0, 0, 1.0f, 0.5f, 1, 0, 0},
    {E_GEMMEX, DT_BF16, 'T', 'N', BIG, BIG, BIG, 1, 0, 0, 1.0f, 0.0f, 0, 0, 0},
    {E_GEMMEX, DT_BF16, 'N', 'T', 129, 67, 33, 1, 5, 0, 1.0f, 0.5f, 0, 0, 0},
    /* cublasGemmEx_64 */
    {E_GEMMEX_64, DT_F32, 'T', 'N', BIG, BIG, BIG, 1, 0, 0, 1.0f, 0.0f, 0, 0, 0},
    {E_GEMMEX_64, DT_BF16, 'N', 'N', 130, 66, 34, 1, 0, 0, 1.0f, 0.0f, 0, 0, 0},
    /* cublasSgemmStridedBatched: attention-like shapes, then an odd one with gaps. */
    {E_SGEMM_SB, DT_F32, 'T', 'N', 256, 256, 64, 32, 0, 0, 0.125f, 0.0f, 0, 0, 0},
    {E_SGEMM_SB, DT_F32, 'N', 'N', 64, 256, 256, 32, 0, 0, 1.0f, 0.0f, 0, 0, 0},
    {E_SGEMM_SB, DT_F32, 'N', 'T', 33, 17, 9, 5, 2, 7, 1.0f, 0.5f, 0, 0, 0},
    /* cublasSgemmStridedBatched_64 */
    {E_SGEMM_SB_64, DT_F32, 'N', 'T', 64, 256, 256, 8, 0, 0, 1.0f, 0.0f, 0, 0, 0},
    /* cublasGemmStridedBatchedEx */
    {E_GEMM_SB_EX, DT_F32, 'T', 'N', 256, 256, 64, 32, 0, 0, 0.125f, 0.0f, 0, 0, 0},
    {E_GEMM_SB_EX, DT_BF16, 'T', 'N', 256, 256, 64, 32, 0, 0, 0.125f, 0.0f, 0, 0, 0},
    {E_GEMM_SB_EX, DT_BF16, 'N', 'N', 33, 17, 9, 5, 2, 7, 1.0f, 0.5f, 0, 0, 0},
    /* cublasGemmStridedBatchedEx_64 */
    {E_GEMM_SB_EX_64, DT_F32, 'N', 'N', 129, 67, 33, 3, 0, 0, 1.0f, 0.0f, 0, 0, 0},
    {E_GEMM_SB_EX_64, DT_BF16, 'N', 'T', 64, 256, 256, 8, 0, 0, 1.0f, 0.0f, 0, 0, 0},
    /* cublasLtMatmul: nn.Linear forward (TN + bias epilogue), addmm (NN + bias), plain. */
    {E_LT_MATMUL, DT_F32, 'T', 'N', BIG, BIG, BIG, 1, 0, 0, 1.0f, 0.0f, 0, EPI_BIAS, 0},
    {E_LT_MATMUL, DT_F32, 'N', 'N', 129, 67, 33, 1, 0, 0, 1.0f, 0.0f, 0, EPI_BIAS, 0},
    {E_LT_MATMUL, DT_F32, 'N', 'N', 129, 67, 33, 1, 0, 0, 1.0f, 0.5f, 0, EPI_NONE, 1},
    {E_LT_MATMUL, DT_BF16, 'T', 'N', BIG, BIG, BIG, 1, 0, 0, 1.0f, 0.0f, 0, EPI_BIAS, 0},
};

#define N_CALLS ((int)(sizeof calls / sizeof calls[0]))

/* Full CPU reference up to this many multiply-adds, sampled above. */
#define FULL_REF_LIMIT (256.0 * 256.0 * 256.0)
#define N_SAMPLES 2048

#define TOL_F32 1e-5
#define TOL_BF16 1e-2

/* ------------------------------------------------------------------------ */
/* A problem instance: sizes, host buffers, device buffers.                 */

typedef struct {
    const call_t *c;
    int idx;
    long m, n, k, batch;
    long lda, ldb, ldc;
    long long sa, sb, sc;     /* batch strides (elements) */
    size_t na, nb, nc;        /* buffer lengths (elements) */
    size_t esz;               /* element size in bytes */
    void *hA, *hB, *hC;       /* host inputs (hC: what C holds before the call) */
    void *hD0;                /* what the output buffer holds before the call */
    void *hD;                 /* output buffer after the call */
    float *hbias_f;           /* bias (fp32 values; bf16-rounded for bf16 calls) */
    void *hbias;              /* bias as passed to the GPU */
} problem_t;

static double elem(const void *p, dtype_t dt, size_t i)
{
    if (dt == DT_F32)
        return (double)((const float *)p)[i];
    return (double)bf16_to_f32(((const uint16_t *)p)[i]);
}

static void put(void *p, dtype_t dt, size_t i, float v)
{
    if (dt == DT_F32)
        ((float *)p)[i] = v;
    else
        ((uint16_t *)p)[i] = f32_to_bf16(v);
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "%s:%d: out of host memory (%zu bytes)\n", __FILE__, __LINE__, bytes);
        exit(1);
    }
    return p;
}

static int is_logical(const problem_t *p, size_t i)
{
    long long b = (long long)(i / (size_t)p->sc);
    long long r = (long long)(i % (size_t)p->sc);
    long long col = r / p->ldc, row = r % p->ldc;
    return b < p->batch && col < p->n && row < p->m;
}

static void problem_init(problem_t *p, const call_t *c, int idx, long big)
{
    memset(p, 0, sizeof *p);
    p->c = c;
    p->idx = idx;
    p->m = c->m == BIG ? big : c->m;
    p->n = c->n == BIG ? big : c->n;
    p->k = c->k == BIG ? big : c->k;
    p->batch = c->batch;
    p->esz = c->dtype == DT_F32 ? 4 : 2;

    long rows_a = c->ta == 'N' ? p->m : p->k, cols_a = c->ta == 'N' ? p->k : p->m;
    long rows_b = c->tb == 'N' ? p->k : p->n, cols_b = c->tb == 'N' ? p->n : p->k;
    p->lda = rows_a + c->pad;
    p->ldb = rows_b + c->pad;
    p->ldc = p->m + c->pad;
    p->sa = (long long)p->lda * cols_a + c->gap;
    p->sb = (long long)p->ldb * cols_b + c->gap;
    p->sc = (long long)p->ldc * p->n + c->gap;
    p->na = (size_t)p->sa * (size_t)p->batch;
    p->nb = (size_t)p->sb * (size_t)p->batch;
    p->nc = (size_t)p->sc * (size_t)p->batch;

    p->hA = xmalloc(p->na * p->esz);
    p->hB = xmalloc(p->nb * p->esz);
    p->hC = xmalloc(p->nc * p->esz);
    p->hD0 = xmalloc(p->nc * p->esz);
    p->hD = xmalloc(p->nc * p->esz);

    lcg_t g;
    lcg_seed(&g, 0x5EED0000ull + (uint64_t)idx);
    for (size_t i = 0; i < p->na; i++)
        put(p->hA, c->dtype, i, lcg_uniform(&g));
    for (size_t i = 0; i < p->nb; i++)
        put(p->hB, c->dtype, i, lcg_uniform(&g));

    /* C: random where the product lands (NaN if beta == 0: it must not be
     * read), a sentinel in padding rows and batch gaps (must not be written). */
    const float sentinel = 1234.5f;
    for (size_t i = 0; i < p->nc; i++) {
        float v = lcg_uniform(&g);
        if (!is_logical(p, i))
            v = sentinel;
        else if (c->beta == 0.0f)
            v = NAN;
        put(p->hC, c->dtype, i, v);
    }
    if (c->c_separate) {
        /* Output D distinct from C: D starts as NaN (fully overwritten) plus sentinels. */
        for (size_t i = 0; i < p->nc; i++)
            put(p->hD0, c->dtype, i, is_logical(p, i) ? NAN : sentinel);
    } else {
        memcpy(p->hD0, p->hC, p->nc * p->esz);
    }

    if (c->epilogue == EPI_BIAS) {
        p->hbias_f = xmalloc((size_t)p->m * sizeof(float));
        p->hbias = xmalloc((size_t)p->m * p->esz);
        for (long i = 0; i < p->m; i++) {
            put(p->hbias, c->dtype, (size_t)i, lcg_uniform(&g));
            p->hbias_f[i] = (float)elem(p->hbias, c->dtype, (size_t)i);
        }
    }
}

static void problem_free(problem_t *p)
{
    free(p->hA);
    free(p->hB);
    free(p->hC);
    free(p->hD0);
    free(p->hD);
    free(p->hbias_f);
    free(p->hbias);
}

/* FP64 reference for output element (b, i, j). */
static double ref_elem(const problem_t *p, long b, long i, long j)
{
    const call_t *c = p->c;
    const size_t oa = (size_t)b * (size_t)p->sa, ob = (size_t)b * (size_t)p->sb;
    double acc = 0.0;
    for (long l = 0; l < p->k; l++) {
        size_t ia = oa + (c->ta == 'N' ? (size_t)i + (size_t)l * (size_t)p->lda
                                        : (size_t)l + (size_t)i * (size_t)p->lda);
        size_t ib = ob + (c->tb == 'N' ? (size_t)l + (size_t)j * (size_t)p->ldb
                                        : (size_t)j + (size_t)l * (size_t)p->ldb);
        acc += elem(p->hA, c->dtype, ia) * elem(p->hB, c->dtype, ib);
    }
    double r = (double)c->alpha * acc;
    if (c->beta != 0.0f) {
        size_t ic = (size_t)b * (size_t)p->sc + (size_t)i + (size_t)j * (size_t)p->ldc;
        r += (double)c->beta * elem(p->hC, c->dtype, ic);
    }
    if (c->epilogue == EPI_BIAS)
        r += (double)p->hbias_f[i];
    return r;
}

/* ------------------------------------------------------------------------ */
/* Running one call on the GPU.                                              */

typedef struct {
    cublasHandle_t blas;
    cublasLtHandle_t lt;
    cudaStream_t stream;
    void *lt_workspace;
    size_t lt_workspace_bytes;
    float *d_scalars; /* [alpha, beta] in device memory for pointer-mode-device calls */
} ctx_t;

static cublasOperation_t op_of(char t)
{
    return t == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T;
}

static void run_lt(ctx_t *x, const problem_t *p, const void *dA, const void *dB,
                   const void *dC, void *dD, const void *dbias)
{
    const call_t *c = p->c;
    cudaDataType_t t = c->dtype == DT_F32 ? CUDA_R_32F : CUDA_R_16BF;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc, ld;
    cublasLtMatmulPreference_t pref;
    cublasOperation_t ta = op_of(c->ta), tb = op_of(c->tb);

    CUBLAS_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (c->epilogue == EPI_BIAS) {
        cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
        cudaDataType_t bt = t;
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbias, sizeof dbias));
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt));
    }
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la, t, (uint64_t)(c->ta == 'N' ? p->m : p->k),
                                            (uint64_t)(c->ta == 'N' ? p->k : p->m), p->lda));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lb, t, (uint64_t)(c->tb == 'N' ? p->k : p->n),
                                            (uint64_t)(c->tb == 'N' ? p->n : p->k), p->ldb));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lc, t, (uint64_t)p->m, (uint64_t)p->n, p->ldc));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&ld, t, (uint64_t)p->m, (uint64_t)p->n, p->ldc));

    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &x->lt_workspace_bytes,
                                                      sizeof x->lt_workspace_bytes));
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    memset(&heur, 0, sizeof heur);
    CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(x->lt, op, la, lb, lc, ld, pref, 1, &heur, &found));
    if (found < 1) {
        fprintf(stderr, "%s:%d: cublasLtMatmulAlgoGetHeuristic found no algorithm\n", __FILE__, __LINE__);
        exit(1);
    }
    CUBLAS_CHECK(cublasLtMatmul(x->lt, op, &c->alpha, dA, la, dB, lb, &c->beta, dC, lc, dD, ld,
                                &heur.algo, x->lt_workspace, x->lt_workspace_bytes, x->stream));

    CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(ld));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(lc));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(lb));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(la));
    CUBLAS_CHECK(cublasLtMatmulDescDestroy(op));
}

static void run_call(ctx_t *x, problem_t *p)
{
    const call_t *c = p->c;
    void *dA, *dB, *dC, *dD, *dbias = NULL;
    CUDA_CHECK(cudaMalloc(&dA, p->na * p->esz));
    CUDA_CHECK(cudaMalloc(&dB, p->nb * p->esz));
    CUDA_CHECK(cudaMalloc(&dC, p->nc * p->esz));
    CUDA_CHECK(cudaMemcpyAsync(dA, p->hA, p->na * p->esz, cudaMemcpyHostToDevice, x->stream));
    CUDA_CHECK(cudaMemcpyAsync(dB, p->hB, p->nb * p->esz, cudaMemcpyHostToDevice, x->stream));
    CUDA_CHECK(cudaMemcpyAsync(dC, p->hC, p->nc * p->esz, cudaMemcpyHostToDevice, x->stream));
    if (c->c_separate) {
        CUDA_CHECK(cudaMalloc(&dD, p->nc * p->esz));
        CUDA_CHECK(cudaMemcpyAsync(dD, p->hD0, p->nc * p->esz, cudaMemcpyHostToDevice, x->stream));
    } else {
        dD = dC;
    }
    if (c->epilogue == EPI_BIAS) {
        CUDA_CHECK(cudaMalloc(&dbias, (size_t)p->m * p->esz));
        CUDA_CHECK(cudaMemcpyAsync(dbias, p->hbias, (size_t)p->m * p->esz, cudaMemcpyHostToDevice,
                                   x->stream));
    }

    const float host_scalars[2] = {c->alpha, c->beta};
    const float *alpha = &c->alpha, *beta = &c->beta;
    if (c->dev_ptr) {
        CUDA_CHECK(cudaMemcpyAsync(x->d_scalars, host_scalars, sizeof host_scalars,
                                   cudaMemcpyHostToDevice, x->stream));
        alpha = x->d_scalars;
        beta = x->d_scalars + 1;
    }
    CUBLAS_CHECK(cublasSetPointerMode_v2(x->blas, c->dev_ptr ? CUBLAS_POINTER_MODE_DEVICE
                                                             : CUBLAS_POINTER_MODE_HOST));

    const cublasOperation_t ta = op_of(c->ta), tb = op_of(c->tb);
    const cudaDataType_t t = c->dtype == DT_F32 ? CUDA_R_32F : CUDA_R_16BF;
    /* PyTorch asks for DEFAULT_TENSOR_OP on BF16 GemmEx; CuPy for DEFAULT on FP32. */
    const cublasGemmAlgo_t algo = c->dtype == DT_F32 ? CUBLAS_GEMM_DEFAULT : CUBLAS_GEMM_DEFAULT_TENSOR_OP;
    const int m = (int)p->m, n = (int)p->n, k = (int)p->k;
    const int lda = (int)p->lda, ldb = (int)p->ldb, ldc = (int)p->ldc, bc = (int)p->batch;

    switch (c->entry) {
    case E_SGEMM:
        CUBLAS_CHECK(cublasSgemm_v2(x->blas, ta, tb, m, n, k, alpha, dA, lda, dB, ldb, beta, dC, ldc));
        break;
    case E_SGEMM_64:
        CUBLAS_CHECK(cublasSgemm_v2_64(x->blas, ta, tb, p->m, p->n, p->k, alpha, dA, p->lda, dB,
                                       p->ldb, beta, dC, p->ldc));
        break;
    case E_GEMMEX:
        CUBLAS_CHECK(cublasGemmEx(x->blas, ta, tb, m, n, k, alpha, dA, t, lda, dB, t, ldb, beta, dC,
                                  t, ldc, CUBLAS_COMPUTE_32F, algo));
        break;
    case E_GEMMEX_64:
        CUBLAS_CHECK(cublasGemmEx_64(x->blas, ta, tb, p->m, p->n, p->k, alpha, dA, t, p->lda, dB,
                                     t, p->ldb, beta, dC, t, p->ldc, CUBLAS_COMPUTE_32F, algo));
        break;
    case E_SGEMM_SB:
        CUBLAS_CHECK(cublasSgemmStridedBatched(x->blas, ta, tb, m, n, k, alpha, dA, lda, p->sa, dB,
                                               ldb, p->sb, beta, dC, ldc, p->sc, bc));
        break;
    case E_SGEMM_SB_64:
        CUBLAS_CHECK(cublasSgemmStridedBatched_64(x->blas, ta, tb, p->m, p->n, p->k, alpha, dA,
                                                  p->lda, p->sa, dB, p->ldb, p->sb, beta, dC,
                                                  p->ldc, p->sc, p->batch));
        break;
    case E_GEMM_SB_EX:
        CUBLAS_CHECK(cublasGemmStridedBatchedEx(x->blas, ta, tb, m, n, k, alpha, dA, t, lda, p->sa,
                                                dB, t, ldb, p->sb, beta, dC, t, ldc, p->sc, bc,
                                                CUBLAS_COMPUTE_32F, algo));
        break;
    case E_GEMM_SB_EX_64:
        CUBLAS_CHECK(cublasGemmStridedBatchedEx_64(x->blas, ta, tb, p->m, p->n, p->k, alpha, dA, t,
                                                   p->lda, p->sa, dB, t, p->ldb, p->sb, beta, dC,
                                                   t, p->ldc, p->sc, p->batch,
                                                   CUBLAS_COMPUTE_32F, algo));
        break;
    case E_LT_MATMUL:
        run_lt(x, p, dA, dB, dC, dD, dbias);
        break;
    }

    CUDA_CHECK(cudaMemcpyAsync(p->hD, dD, p->nc * p->esz, cudaMemcpyDeviceToHost, x->stream));
    CUDA_CHECK(cudaStreamSynchronize(x->stream));
    CUDA_CHECK(cudaGetLastError());

    if (dD != dC)
        CUDA_CHECK(cudaFree(dD));
    if (dbias)
        CUDA_CHECK(cudaFree(dbias));
    CUDA_CHECK(cudaFree(dC));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dA));
}

/* ------------------------------------------------------------------------ */
/* Checking one call. Returns 1 when it passes.                              */

static int check_call(const problem_t *p)
{
    const call_t *c = p->c;
    const double tol = c->dtype == DT_F32 ? TOL_F32 : TOL_BF16;

    /* 1. Outside the logical output nothing may change; inside, all finite. */
    size_t outside_changed = 0, nonfinite = 0;
    for (size_t i = 0; i < p->nc; i++) {
        if (is_logical(p, i)) {
            if (!isfinite(elem(p->hD, c->dtype, i)))
                nonfinite++;
        } else if (memcmp((const char *)p->hD + i * p->esz, (const char *)p->hD0 + i * p->esz,
                          p->esz) != 0) {
            outside_changed++;
        }
    }

    /* 2. Relative Frobenius error against the FP64 reference. */
    double err2 = 0.0, ref2 = 0.0;
    long evaluated = 0;
    const double work = (double)p->m * (double)p->n * (double)p->k * (double)p->batch;
    const int full = work <= FULL_REF_LIMIT;
    if (full) {
        for (long b = 0; b < p->batch; b++)
            for (long j = 0; j < p->n; j++)
                for (long i = 0; i < p->m; i++) {
                    double r = ref_elem(p, b, i, j);
                    double g = elem(p->hD, c->dtype,
                                    (size_t)b * (size_t)p->sc + (size_t)i + (size_t)j * (size_t)p->ldc);
                    err2 += (g - r) * (g - r);
                    ref2 += r * r;
                    evaluated++;
                }
    } else {
        lcg_t g;
        lcg_seed(&g, 0xC0FFEE00ull + (uint64_t)p->idx);
        for (int s = 0; s < N_SAMPLES + 2; s++) {
            long b, i, j;
            if (s == 0) { /* first and last element always checked */
                b = 0; i = 0; j = 0;
            } else if (s == 1) {
                b = p->batch - 1; i = p->m - 1; j = p->n - 1;
            } else {
                b = (long)lcg_below(&g, (uint64_t)p->batch);
                i = (long)lcg_below(&g, (uint64_t)p->m);
                j = (long)lcg_below(&g, (uint64_t)p->n);
            }
            double r = ref_elem(p, b, i, j);
            double v = elem(p->hD, c->dtype,
                            (size_t)b * (size_t)p->sc + (size_t)i + (size_t)j * (size_t)p->ldc);
            err2 += (v - r) * (v - r);
            ref2 += r * r;
            evaluated++;
        }
    }
    double relerr = ref2 > 0.0 ? sqrt_nolibm(err2 / ref2) : sqrt_nolibm(err2);
    int ok = relerr <= tol && nonfinite == 0 && outside_changed == 0; /* NaN relerr fails */

    char shape[96], ref[32];
    snprintf(shape, sizeof shape, "m=%ld n=%ld k=%ld batch=%ld", p->m, p->n, p->k, p->batch);
    snprintf(ref, sizeof ref, "%s:%ld", full ? "full" : "sampled", evaluated);
    printf("[%02d] %-29s %c%c %-34s %-4s %-4s%s hash=%016llx relerr=%.3e ref=%-12s %s\n",
           p->idx, entry_name[c->entry], c->ta, c->tb, shape, c->dtype == DT_F32 ? "fp32" : "bf16",
           c->dev_ptr ? "dev" : "host",
           c->entry == E_LT_MATMUL ? (c->epilogue == EPI_BIAS ? " epi=BIAS" : " epi=DEFAULT") : "",
           (unsigned long long)fnv1a64(p->hD, p->nc * p->esz), relerr, ref, ok ? "OK" : "FAIL");
    if (!ok) {
        if (!(relerr <= tol))
            printf("     ^ relative Frobenius error %.3e exceeds tolerance %.0e\n", relerr, tol);
        if (nonfinite)
            printf("     ^ %zu non-finite output element(s)%s\n", nonfinite,
                   c->beta == 0.0f ? " (C held NaN and beta == 0: C must not be read)" : "");
        if (outside_changed)
            printf("     ^ %zu element(s) written outside the m x n output (padding or batch gap)\n",
                   outside_changed);
    }
    fflush(stdout);
    return ok;
}

/* ------------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cublas_client [--size N] [--only SUBSTRING]\n"
            "  --size N     edge of the big square GEMM shapes (default 1024, 1..16384)\n"
            "  --only S     run only calls whose entry-point name contains S\n"
            "Prints one line per GEMM call: entry, layout, shape, dtype, pointer mode,\n"
            "FNV-1a 64 hash of the output bytes, relative Frobenius error vs an FP64\n"
            "CPU reference. Exit 0 all within tolerance, 1 otherwise, 77 no GPU.\n");
}

int main(int argc, char **argv)
{
    long big = 1024;
    const char *only = NULL;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            char *end = NULL;
            big = strtol(argv[++i], &end, 10);
            if (!end || *end != '\0' || big < 1 || big > 16384) {
                fprintf(stderr, "cublas_client: --size wants an integer in 1..16384\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }

    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("cublas_client: no CUDA GPU available, nothing to run\n");
        return 77;
    }

    struct cudaDeviceProp prop;
    int dev = 0, blas_ver = 0;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));

    ctx_t x;
    memset(&x, 0, sizeof x);
    CUDA_CHECK(cudaStreamCreateWithFlags(&x.stream, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate_v2(&x.blas));
    CUBLAS_CHECK(cublasSetStream_v2(x.blas, x.stream));
    CUBLAS_CHECK(cublasGetVersion_v2(x.blas, &blas_ver));
    CUBLAS_CHECK(cublasLtCreate(&x.lt));
    x.lt_workspace_bytes = (size_t)32 << 20;
    CUDA_CHECK(cudaMalloc(&x.lt_workspace, x.lt_workspace_bytes));
    CUDA_CHECK(cudaMalloc((void **)&x.d_scalars, 2 * sizeof(float)));

    printf("cublas_client: device=\"%s\" sm_%d%d cublas=%d size=%ld\n", prop.name, prop.major,
           prop.minor, blas_ver, big);
    fflush(stdout);

    int ran = 0, failed = 0;
    char failed_list[4096] = "";
    for (int i = 0; i < N_CALLS; i++) {
        const call_t *c = &calls[i];
        if (only && !strstr(entry_name[c->entry], only))
            continue;
        problem_t p;
        problem_init(&p, c, i, big);
        run_call(&x, &p);
        if (!check_call(&p)) {
            failed++;
            size_t used = strlen(failed_list);
            snprintf(failed_list + used, sizeof failed_list - used, " [%02d]%s", i,
                     entry_name[c->entry]);
        }
        ran++;
        problem_free(&p);
    }

    CUDA_CHECK(cudaFree(x.d_scalars));
    CUDA_CHECK(cudaFree(x.lt_workspace));
    CUBLAS_CHECK(cublasLtDestroy(x.lt));
    CUBLAS_CHECK(cublasDestroy_v2(x.blas));
    CUDA_CHECK(cudaStreamDestroy(x.stream));

    if (ran == 0) {
        printf("cublas_client: no call matched --only \"%s\"\n", only ? only : "");
        return 2;
    }
    if (failed) {
        printf("cublas_client: %d of %d calls FAILED:%s\n", failed, ran, failed_list);
        return 1;
    }
    printf("cublas_client: all %d calls within tolerance\n", ran);
    return 0;
}
