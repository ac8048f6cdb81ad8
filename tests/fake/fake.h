/* Fake libcublas / libcublasLt for the unit tests: each GEMM entry point
 * records its arguments, in prototype order, as 64-bit words, and returns
 * the status it was told to. Written independently of the shim's entry
 * table, so a mistake there cannot cancel out here. */
#ifndef GS_FAKE_H
#define GS_FAKE_H

#include <stdint.h>

#define FAKE_MAX_WORDS 24

typedef struct fake_call {
  char name[48];
  int n;
  uint64_t w[FAKE_MAX_WORDS];
} fake_call;

/* Words of an argument list, in order: pointers and integers alike. */
#define FAKE_W(x) ((uint64_t)(x))
#define FAKE_FE_1(x) FAKE_W(x)
#define FAKE_FE_2(x, ...) FAKE_W(x), FAKE_FE_1(__VA_ARGS__)
#define FAKE_FE_3(x, ...) FAKE_W(x), FAKE_FE_2(__VA_ARGS__)
#define FAKE_FE_4(x, ...) FAKE_W(x), FAKE_FE_3(__VA_ARGS__)
#define FAKE_FE_5(x, ...) FAKE_W(x), FAKE_FE_4(__VA_ARGS__)
#define FAKE_FE_6(x, ...) FAKE_W(x), FAKE_FE_5(__VA_ARGS__)
#define FAKE_FE_7(x, ...) FAKE_W(x), FAKE_FE_6(__VA_ARGS__)
#define FAKE_FE_8(x, ...) FAKE_W(x), FAKE_FE_7(__VA_ARGS__)
#define FAKE_FE_9(x, ...) FAKE_W(x), FAKE_FE_8(__VA_ARGS__)
#define FAKE_FE_10(x, ...) FAKE_W(x), FAKE_FE_9(__VA_ARGS__)
#define FAKE_FE_11(x, ...) FAKE_W(x), FAKE_FE_10(__VA_ARGS__)
#define FAKE_FE_12(x, ...) FAKE_W(x), FAKE_FE_11(__VA_ARGS__)
#define FAKE_FE_13(x, ...) FAKE_W(x), FAKE_FE_12(__VA_ARGS__)
#define FAKE_FE_14(x, ...) FAKE_W(x), FAKE_FE_13(__VA_ARGS__)
#define FAKE_FE_15(x, ...) FAKE_W(x), FAKE_FE_14(__VA_ARGS__)
#define FAKE_FE_16(x, ...) FAKE_W(x), FAKE_FE_15(__VA_ARGS__)
#define FAKE_FE_17(x, ...) FAKE_W(x), FAKE_FE_16(__VA_ARGS__)
#define FAKE_FE_18(x, ...) FAKE_W(x), FAKE_FE_17(__VA_ARGS__)
#define FAKE_FE_19(x, ...) FAKE_W(x), FAKE_FE_18(__VA_ARGS__)
#define FAKE_FE_20(x, ...) FAKE_W(x), FAKE_FE_19(__VA_ARGS__)
#define FAKE_FE_21(x, ...) FAKE_W(x), FAKE_FE_20(__VA_ARGS__)
#define FAKE_FE_22(x, ...) FAKE_W(x), FAKE_FE_21(__VA_ARGS__)
#define FAKE_FE_23(x, ...) FAKE_W(x), FAKE_FE_22(__VA_ARGS__)
#define FAKE_FE_24(x, ...) FAKE_W(x), FAKE_FE_23(__VA_ARGS__)
#define FAKE_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, \
                  _17, _18, _19, _20, _21, _22, _23, _24, NAME, ...) NAME
#define FAKE_WORDS(...)                                                                  \
  FAKE_PICK(__VA_ARGS__, FAKE_FE_24, FAKE_FE_23, FAKE_FE_22, FAKE_FE_21, FAKE_FE_20,     \
            FAKE_FE_19, FAKE_FE_18, FAKE_FE_17, FAKE_FE_16, FAKE_FE_15, FAKE_FE_14,      \
            FAKE_FE_13, FAKE_FE_12, FAKE_FE_11, FAKE_FE_10, FAKE_FE_9, FAKE_FE_8,        \
            FAKE_FE_7, FAKE_FE_6, FAKE_FE_5, FAKE_FE_4, FAKE_FE_3, FAKE_FE_2, FAKE_FE_1) \
  (__VA_ARGS__)
#define FAKE_COUNT(...) (int)(sizeof((uint64_t[]){ FAKE_WORDS(__VA_ARGS__) }) / sizeof(uint64_t))

/* Record a call: FAKE_RECORD("name", args...) returns the programmed status. */
#define FAKE_RECORD(name, ...) \
  fake_record(name, (uint64_t[]){ FAKE_WORDS(__VA_ARGS__) }, FAKE_COUNT(__VA_ARGS__))

/* An algo value that makes the fake cublasGemmEx call cublasLtMatmul from
 * inside itself, as the real libcublas does. */
#define FAKE_ALGO_NESTED_LT 4242

/* An algo value that makes the fake cublasGemmEx take 300 ms before it
 * returns: a call in flight on one thread while another thread acts. */
#define FAKE_ALGO_SLOW 4243

/* The fakes' own controls (exported by both fake libraries, each for its
 * own calls): look them up with dlsym on the fake's handle. */
typedef int (*fake_record_fn)(const char *name, const uint64_t *w, int n);
typedef const fake_call *(*fake_last_fn)(void);
typedef int (*fake_count_fn)(const char *name);
typedef void (*fake_set_status_fn)(int status);
typedef void (*fake_reset_fn)(void);

/* The fake cuBLASLt's algorithm, in the 64 bytes of cublasLtMatmulAlgo_t:
 * cublasLtMatmulAlgoInit writes the magic, the id and the types it was
 * given; cublasLtMatmulAlgoConfigSetAttribute writes each configuration
 * field at its own place and sets bit (1 << attribute) of `set`. A test
 * reads back what a caller built. */
#define FAKE_LT_ALGO_MAGIC 0x616c676fu
typedef struct fake_lt_algo {
  uint32_t magic;
  int32_t id;
  int32_t compute, scale, a_type, b_type, c_type, d_type;
  uint32_t tile;
  int32_t splitk;
  uint32_t reduction, swizzle, custom, stages;
  uint16_t inner, cluster;
  uint32_t set;
} fake_lt_algo;

/* What the fake cuBLASLt's last cublasLtMatmul was given, copied while it
 * ran (the caller's descriptors may live on its stack): the bytes of the
 * descriptor, of the layouts A, B, C, D and of the algorithm (NULL ones
 * left zero), and alpha/beta as read through their pointers when the
 * descriptor says host pointer mode with FP32 scalars. Read attributes
 * back with the fake's own getters on these bytes. Kept only once asked
 * (fake_lt_keep_matmul(1)): the copy reads through every pointer, and
 * other tests pass made-up ones; never while quiet. */
typedef struct fake_lt_matmul {
  int n;   /* cublasLtMatmul calls copied so far */
  unsigned char desc[256];
  unsigned char layout[4][64];
  int has_algo;
  unsigned char algo[64];
  int host_scalars;
  float alpha, beta;
} fake_lt_matmul;

/* The fake cuBLASLt's own controls, besides the common ones:
 * fake_lt_last_matmul: the copy above; fake_lt_keep_matmul(1) starts it.
 * fake_lt_fail: the named function (cublasLtCreate,
 *   cublasLtMatmulDescInit_internal, cublasLtMatmulDescSetAttribute,
 *   cublasLtMatrixLayoutInit_internal, cublasLtMatmulAlgoInit,
 *   cublasLtMatmulAlgoConfigSetAttribute) returns `status` from now on;
 *   NULL: none fails.
 * fake_lt_clear: no failure, the copy forgotten and no longer kept.
 * cublasLtCreate and cublasLtMatmulAlgoInit are counted (fake_count) but
 * do not replace fake_last. */
typedef const fake_lt_matmul *(*fake_lt_last_matmul_fn)(void);
typedef void (*fake_lt_keep_matmul_fn)(int keep);
typedef void (*fake_lt_fail_fn)(const char *name, int status);
typedef void (*fake_lt_clear_fn)(void);

#endif
