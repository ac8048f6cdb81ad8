/* gemmshim tune's logic, with no GPU and no processes: which calls can be
 * measured, the rule that turns two passes of measurements into a route,
 * and the run itself (keys in order, a budget, resuming a partial table,
 * the table and its measurements written after every key). What measures
 * a call, and the clock, come in as callbacks (tn_ops): `gemmshim tune`
 * runs gemmshim-bench for them (gemmshim.c), the tests a stand-in.
 * Nothing here prints except through the callbacks, and nothing exits. */
#ifndef GEMMSHIM_TUNE_H
#define GEMMSHIM_TUNE_H

#include <stddef.h>
#include <stdio.h>

#include "run_summary.h"

#define TN_ERR_LEN 512
#define TN_NAME_LEN 64
#define TN_PASSES 2
/* The route that runs cuBLASLt's own algorithms: the kernel table lists it
 * by this name, and each of its algorithms is a candidate of its own. */
#define TN_LT_ROUTE "cublaslt"
#define TN_LT_MAX 8          /* cuBLASLt's first 8 heuristic algorithms */
#define TN_ALGO_LEN 320      /* an algorithm's text (GS_LT_ALGO_TEXT) */
#define TN_WHY_LEN 128       /* why a call is not measured */
#define TN_MAX_WORKSPACE 2147483647LL   /* the bench's --lt-call takes at most this */

/* A call's route-table key, its fields spelled as the log and the table
 * spell them. */
typedef struct tn_key {
  char entry[16];          /* entry class: gemm, gemm_batched, lt */
  char a_type[16], b_type[16], c_type[16];
  char compute[32], layout[4], epilogue[32];
  long long m, n, k, batch;
  int align;
  long long math_mode;     /* cublasMath_t as logged, -1 unknown (not in the table) */
  /* cuBLASLt calls: the bytes of workspace the key's calls gave, the least
   * and the most over its rows; -1 for BLAS calls and where the log does
   * not say. Not in the table's key. cuBLAS's side is timed with the most
   * (the strongest pick any of the calls gets), the route cublaslt's
   * algorithms must fit the least (every call). */
  long long workspace, workspace_max;
} tn_key;

/* A candidate's measurement in one pass: a kernel against cuBLAS, or
 * cuBLAS against itself (the noise). */
typedef enum tn_outcome {
  TN_MEASURED,   /* times and errors below */
  TN_OUTSIDE,    /* the kernel (for cuBLAS against itself: cuBLAS) does not take the call (why) */
  TN_WRONG,      /* measured, but its error is above the kernel's bound, or its launcher refused */
  TN_FAILED      /* this measurement failed (why); the run goes on */
} tn_outcome;

typedef struct tn_sample {
  tn_outcome outcome;
  double ours_us, cublas_us;   /* medians, microseconds a call */
  double ratio;                /* cuBLAS's time over ours */
  double ours_err, cublas_err; /* relative Frobenius error vs FP64 */
  int sm_mhz;                  /* -1 unknown */
  int pdl;                     /* ours launched with programmatic dependent launch
                                  (the bench's column launch) */
  char why[TN_ALGO_LEN + 64];
} tn_sample;

/* The FP32 opt-ins a kernel can serve under (GEMMSHIM_FP32; math_rules.h),
 * as gemmshim-bench --list-csv numbers them. */
#define TN_OPT_IN_TC 1        /* GEMMSHIM_FP32=tc (or cuBLAS's emulation requests) */
#define TN_OPT_IN_TC_FAST 2   /* GEMMSHIM_FP32=tc-fast */

typedef struct tn_kernel {
  char name[TN_NAME_LEN];
  char dtype[16];              /* f32, bf16, f16: the a, b and c type it takes */
  int opt_in;                  /* serves only calls that opted in: 0 no; else the
                                  TN_OPT_IN_* mode of GEMMSHIM_FP32 that selects it */
  char algo[TN_ALGO_LEN];      /* TN_LT_ROUTE's candidates: the algorithm ("" otherwise) */
} tn_kernel;

/* One cuBLASLt algorithm measured on a call in one pass. */
typedef struct tn_lt_cand {
  char algo[TN_ALGO_LEN];      /* its text (dispatch/lt_algo.h) */
  int rank;                    /* in cuBLASLt's heuristic order, from 1 */
  tn_sample s;
} tn_lt_cand;

typedef struct tn_ops {
  /* Measure kernel on k in this pass against cuBLAS; with self, cuBLAS
   * against itself instead (kernel then only names the data type). Returns
   * 0 (the outcome in *out), or -1 when measuring cannot go on at all: err
   * says why. */
  int (*measure)(void *ctx, const tn_key *k, const char *kernel, int self, int pass,
                 tn_sample *out, char err[TN_ERR_LEN]);
  /* The route TN_LT_ROUTE on k in this pass. Without given (the first
   * pass): cuBLASLt's first max heuristic algorithms for the call, each
   * measured against cuBLAS, into out[0 .. *n_out). With given: exactly
   * those n_given algorithms, out[i] for given[i] (one cuBLASLt refused
   * or that is not measured: outcome TN_WRONG or TN_OUTSIDE). Returns 0,
   * or -1 when measuring cannot go on (err). NULL: the route is not
   * measured. */
  int (*measure_lt)(void *ctx, const tn_key *k, int pass, const tn_lt_cand *given,
                    size_t n_given, tn_lt_cand *out, size_t max, size_t *n_out,
                    char err[TN_ERR_LEN]);
  double (*now)(void *ctx);    /* seconds, any origin */
  int (*stop)(void *ctx);      /* nonzero once the user asked to stop (Ctrl-C) */
  /* after each key: done of total keys, estimated seconds left (-1:
   * unknown), and what was decided, in words */
  void (*progress)(void *ctx, size_t done, size_t total, double eta_s, const char *line);
  void *ctx;
} tn_ops;

/* The calls to tune, distinct and in the table's order, and those that
 * cannot be measured with the reason. */
typedef struct tn_plan {
  tn_key *keys;
  size_t n, cap;
  tn_key *skipped;
  char (*skip_why)[TN_WHY_LEN];
  size_t n_skipped, skipped_cap;
} tn_plan;

/* err gets the message; returns -1 (for `return tn_say(err, ...)`). */
__attribute__((format(printf, 2, 3))) int tn_say(char err[TN_ERR_LEN], const char *fmt, ...);

void tn_plan_init(tn_plan *p);
void tn_plan_free(tn_plan *p);

/* Whether the bench can make k exactly as the program did; why not. */
int tn_measurable(const tn_key *k, char *why, size_t len);

/* Add a call (kept once; unmeasurable ones go to skipped; a cuBLASLt call
 * made with several workspaces keeps the least and the most, and one
 * whose workspace some row does not say is skipped). -1: out of memory. */
int tn_plan_add(tn_plan *p, const tn_key *k);

/* Every distinct call of a log (`gemmshim record`'s, any version). */
int tn_plan_add_log(tn_plan *p, const char *path, char err[TN_ERR_LEN]);

/* A shape file: "m n k layout dtype" a line (layout NN, TN, NT or TT;
 * dtype f32, bf16 or f16), '#' starts a comment: the call cublasGemmEx (or
 * cublasSgemm_v2 for f32) makes with A = B = C of that type, 16-byte
 * aligned. "m n k layout dtype lt WORKSPACE [default|bias]": the same call
 * made by cublasLtMatmul with WORKSPACE bytes of workspace (and the
 * epilogue named, default when none). */
int tn_plan_add_shapes(tn_plan *p, const char *path, char err[TN_ERR_LEN]);

/* Sort the keys into the table's order (done by tn_run too). */
void tn_plan_sort(tn_plan *p);

/* What two passes decide for one key. route: a kernel's name, or "cublas".
 * noise: the largest |ratio - 1| of cuBLAS against itself; threshold:
 * what a kernel had to reach in both passes, max(1.02, 1 + noise). */
typedef struct tn_verdict {
  char route[TN_NAME_LEN];
  char algo[TN_ALGO_LEN];      /* route TN_LT_ROUTE: the algorithm; else "" */
  double ratio;                /* the kernel's lower ratio of the two passes; 1 for cublas */
  double time_us;              /* the route's slower median of the two passes */
  int pdl;                     /* a kernel route measured with programmatic dependent
                                  launch in both passes: the row's launch is pdl (it
                                  holds only where the kernel launches so) */
  double noise, threshold;
  char why[256];               /* in words: the best candidate and why it won or lost */
} tn_verdict;

/* self[pass]; cand[i * TN_PASSES + pass] for kernels[i]. */
void tn_decide(const tn_sample self[TN_PASSES], const tn_kernel *kernels, size_t n_kernels,
               const tn_sample *cand, tn_verdict *out);

typedef struct tn_run_opts {
  const char *table_path;      /* the route table written */
  const char *csv_path;        /* every measurement, one row each */
  const char *validators;      /* "Validator,KEY,VALUE\n" lines of this GPU */
  double budget_s;             /* 0: none; else stop before a key that would pass it */
  int resume;                  /* go on with table_path's rows (same validators) */
  int opt_in;                  /* measure the kernels of this opt-in too: 0 none,
                                  TN_OPT_IN_TC (--fp32-tc), TN_OPT_IN_TC_FAST
                                  (--fp32-tc-fast) */
  int no_pdl;                  /* GEMMSHIM_PDL=0: the bench launches every kernel
                                  plainly; --resume refuses rows measured with PDL */
} tn_run_opts;

typedef struct tn_run_result {
  size_t tuned;                /* keys measured in this run */
  size_t kept;                 /* rows taken over from the table resumed */
  size_t left;                 /* keys of the plan not done (budget or stop) */
  size_t routed;               /* rows of the table routed to a kernel */
  size_t failed;               /* keys left without a row: cuBLAS against itself not measured */
  int stopped;                 /* 1: ops->stop; 2: the budget */
} tn_run_result;

/* Tune every key of the plan not already in the table: for each, both
 * passes (cuBLAS against itself, then each kernel of the key's data type,
 * and for TN_LT_ROUTE each of cuBLASLt's algorithms: those of the first
 * pass again in the second),
 * the verdict, then the table (validators, header, every row in the
 * table's order) written whole to a temporary file and renamed over
 * table_path, and the measurements appended to csv_path. Returns 0, or -1
 * with err (a measurement that cannot go on, a table that cannot be
 * written or resumed); what was written before stays. */
int tn_run(tn_plan *p, const tn_kernel *kernels, size_t n_kernels, const tn_run_opts *o,
           const tn_ops *ops, tn_run_result *res, char err[TN_ERR_LEN]);

#endif
