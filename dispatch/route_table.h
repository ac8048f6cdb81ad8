/* The route table: which route serves each kind of call on one GPU, as
 * measured there, in a CSV file a person can read and edit (format in
 * README.md, "The route table"). Parsing, validating and looking up; no
 * GPU and no file search here (tables.c finds and selects the tables, the
 * router asks them). Pure: the unit tests drive it with text.
 *
 * The call key: entry class, A/B/C types, compute type, layout, epilogue,
 * m, n, k, batch and the alignment class. Leading dimensions and strides
 * are not part of it: a kernel's speed depends on them far less than on
 * the sizes, the kernel's class still checks the call's real ones, and a
 * key with them would miss every view of the same weight. */
#ifndef GS_ROUTE_TABLE_H
#define GS_ROUTE_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gemm.h"
#include "lt_algo.h"
#include "routes.h"
#include "variants.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Entry classes: how the call came in. */
enum {
  GS_EC_GEMM = 0,      /* cublas<t>gemm, cublasGemmEx: "gemm" */
  GS_EC_BATCHED = 1,   /* the strided-batched entry points: "gemm_batched" */
  GS_EC_LT = 2,        /* cublasLtMatmul: "lt" */
  GS_EC_COUNT
};

typedef struct gs_rt_key {
  int32_t entry_class;
  int32_t a_type, b_type, c_type;   /* cudaDataType */
  int32_t compute;                  /* cublasComputeType_t, GS_NONE */
  int32_t epilogue;                 /* cublasLtEpilogue_t, GS_NONE for BLAS */
  int32_t align;                    /* the alignment class, bytes (1..16) */
  char layout[4];                   /* "NN", "TN", "NT", "TT" */
  int64_t m, n, k, batch;
} gs_rt_key;

/* The key of a call. align: the largest power of two, at most 16, that
 * divides the addresses of A, B, C (and D) and each leading dimension in
 * bytes. */
void gs_rt_key_of(const gs_gemm *g, gs_rt_key *out);

/* How a call came in (GS_EC_*). */
int gs_rt_entry_class_of(const gs_gemm *g);

/* An entry class's name ("gemm", "gemm_batched", "lt"; "-" for others),
 * and the class a name stands for (-1 when none). */
const char *gs_rt_entry_class_name(int entry_class);
int gs_rt_entry_class_from_name(const char *name);

/* The largest power of two, at most 16, dividing v (16 for v == 0). */
static inline int gs_rt_align_of(uint64_t v)
{
  return v & 15 ? (int)(v & (~v + 1)) : 16;   /* the lowest set bit */
}

/* What a table's validators are compared against: this process on one GPU.
 * Strings are "" and power_limit_w is -1 when unknown; an unknown soft
 * value is not checked. */
typedef struct gs_rt_identity {
  char gpu_name[128];
  char compute_capability[16];   /* "9.0" */
  char sm_count[16];             /* "132" */
  char cublas_version[32];       /* "13.1.0" */
  char shim_version[32];         /* PACKAGE_VERSION */
  char kernel_table[32];         /* gs_rt_kernel_table_hash, 16 hex digits */
  char driver_version[32];       /* "580.159.04" (NVML) */
  char power_limit_w[16];        /* "700" (NVML's enforced limit) */
  char uuid[48];                 /* gs_rt_format_uuid: "GPU-..." or, under MIG, "MIG-..." */
} gs_rt_identity;

/* A device's UUID as nvidia-smi writes it: "GPU-xxxxxxxx-xxxx-xxxx-xxxx-
 * xxxxxxxxxxxx", or "MIG-..." for a MIG instance's own. */
void gs_rt_format_uuid(const unsigned char uuid[16], int mig, char out[48]);

/* The validator keys, hard first. */
typedef enum gs_rt_validator {
  GS_V_GPU_NAME = 0,
  GS_V_COMPUTE_CAPABILITY,
  GS_V_SM_COUNT,
  GS_V_CUBLAS_VERSION,
  GS_V_SHIM_VERSION,
  GS_V_KERNEL_TABLE,
  GS_V_N_HARD,
  GS_V_DRIVER_VERSION = GS_V_N_HARD,
  GS_V_POWER_LIMIT_W,
  GS_V_COUNT
} gs_rt_validator;
const char *gs_rt_validator_name(int v);     /* "gpu_name", ... */
const char *gs_rt_identity_value(const gs_rt_identity *id, int v);

/* A hash of the kernel table as data (names, classes, code paths, which
 * kernels need scratch or launch with programmatic dependent launch), 16
 * hex digits: a table measured with another kernel table is not used. */
void gs_rt_kernel_table_hash(const gs_variant *const *variants, size_t n, char out[17]);

/* A field of a row's key: exact, a range lo-hi (sizes), or '*' (any). */
typedef struct gs_rt_range { int64_t lo, hi; } gs_rt_range;

typedef struct gs_rt_row {
  /* Exact fields hold their value; GS_RT_ANY in an int field, or an
   * empty layout, matches anything. */
  int32_t entry_class, a_type, b_type, c_type, compute, epilogue, align;
  char layout[4];
  gs_rt_range m, n, k, batch;
  int exact;                  /* every field exact (no range or wildcard) */
  char route[64];             /* a kernel name, "cublas", or another word */
  const gs_variant *kernel;   /* the kernel table's entry; NULL: "cublas" or unknown */
  /* The route "cublaslt": the algorithm (column lt_algo; lt_algo.h) */
  int has_algo;
  gs_lt_algo algo;
  double time_us;             /* the route's measured time; < 0 when not given */
  double ratio;               /* cuBLAS's time over the route's */
  /* Column launch: 1 ("pdl") where the route was measured launched with
   * programmatic dependent launch, which it holds only where the kernel
   * launches so; 0 ("plain", or no column) where launched plainly. */
  int needs_pdl;
  int line;                   /* in its file */
} gs_rt_row;
#define GS_RT_ANY INT32_MIN

/* The name of the route that runs cuBLASLt's own algorithms (variants.c's
 * gs_route_cublaslt): its rows name the algorithm in column lt_algo. */
#define GS_RT_LT_ROUTE "cublaslt"

/* Routed only at or above this ratio to cuBLAS. */
#define GS_RT_MIN_RATIO 1.02

typedef struct gs_route_table {
  char source[256];                  /* the file's path, or "(built-in)" */
  int has[GS_V_COUNT];               /* each validator given */
  char value[GS_V_COUNT][128];
  gs_rt_row *rows;
  size_t n_rows;
  /* exact rows by hash: n_slots a power of two, slot = row index + 1 */
  uint32_t *slots;
  size_t n_slots;
  uint32_t *ranged;                  /* the other rows, in file order */
  size_t n_ranged;
  size_t n_bad;                      /* malformed lines ignored */
} gs_route_table;

/* Parse a table from text. Every malformed line gets "SOURCE:LINE: why" on
 * warn and is ignored; so is a later duplicate of a key. Kernel names are
 * looked up in variants. Returns NULL only when out of memory. */
gs_route_table *gs_rt_parse(const char *text, size_t len, const char *source,
                            const gs_variant *const *variants, size_t n_variants, FILE *warn);

/* Read and parse a file: NULL (with "SOURCE: why" on warn) when it cannot
 * be read. */
gs_route_table *gs_rt_load(const char *path, const gs_variant *const *variants,
                           size_t n_variants, FILE *warn);

void gs_rt_free(gs_route_table *t);

/* Check the validators against a GPU. Returns 0 when the table may be used
 * there. A hard mismatch or a missing hard validator returns -1 with one
 * line in why naming the key, the expected and the found value; a soft
 * mismatch returns 0 and writes its line into soft (both "" when none). */
int gs_rt_validate(const gs_route_table *t, const gs_rt_identity *id, char *why,
                   size_t why_len, char *soft, size_t soft_len);

/* The row for a key. Rows with exact sizes and A type come first (found by
 * hash): of those that match, the one naming the most other fields exactly,
 * then the earliest. Else the first matching row with a size range or a
 * wildcard A type, in file order. NULL when none. */
const gs_rt_row *gs_rt_find(const gs_route_table *t, const gs_rt_key *k);

/* Whether row r speaks to kernel v under the routing policy routes[n]: a
 * row naming cuBLAS (or a kernel this build lacks) speaks to every kernel;
 * a row naming a kernel, to the kernels that serve the same calls, those
 * whose route needs the same opt-in (none, or the same one). So a row of
 * the fast FP32 kernel (GEMMSHIM_FP32=tc-fast) says nothing about calls
 * for the accurate one (tc), and the other way round: the two tune apart
 * and their rows may cover the same shapes. */
int gs_rt_row_speaks_to(const gs_rt_row *r, const gs_variant *v, const gs_route_entry *routes,
                        size_t n_routes);

/* gs_rt_find among the rows that speak to v and hold for how v launches:
 * pdl nonzero when v launches with programmatic dependent launch. Then a
 * row measured so (launch pdl) comes before the plain rows of its kind
 * (exact, or ranged), whatever their order and specificity; else it is
 * passed over, as if absent. */
const gs_rt_row *gs_rt_find_for(const gs_route_table *t, const gs_rt_key *k, const gs_variant *v,
                                const gs_route_entry *routes, size_t n_routes, int pdl);

/* Does the row send the call to its kernel? (a kernel, ratio >= 1.02) */
int gs_rt_row_routes(const gs_rt_row *r);

#ifdef __cplusplus
}
#endif

#endif
