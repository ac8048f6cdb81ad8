/* The shim's settings, read once from the environment. */
#ifndef GS_CONFIG_H
#define GS_CONFIG_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GS_PATH_MAX 4096
#define GS_AB_SCRATCH_MB_DEFAULT 1024

/* What a log path's tokens stand for: %p and %i the process id (%i is
 * cuBLAS's own spelling), %r the rank (RANK, else LOCAL_RANK, else the
 * process id), %h the host name; %% is a %. */
typedef struct gs_path_tokens {
  long pid;
  char rank[32];   /* "" : the pid stands in */
  char host[72];
} gs_path_tokens;

typedef struct gs_config_t {
  int disable;      /* GEMMSHIM_DISABLE: pure pass-through, no descriptor */
  int route;        /* GEMMSHIM_ROUTE (default 1): 0 = observe and log only */
  int verbose;      /* GEMMSHIM_VERBOSE: say which library was resolved */
  int nvtx;         /* GEMMSHIM_NVTX: an NVTX range per GEMM call */
  int pdl;          /* GEMMSHIM_PDL (default 1): kernels that can may launch
                       with programmatic dependent launch; 0 = never */
  int force;        /* GEMMSHIM_FORCE: route every call of a kernel's class,
                       measured win or not (validation, A/B on all shapes) */
  char force_kernel[64]; /* GEMMSHIM_FORCE=name: only that kernel's class
                            ("" with force set: every kernel's) */
  int fp32_tc;      /* GEMMSHIM_FP32=tc: FP32 GEMMs may run on the tensor
                       cores with at most SGEMM's error (BF16x6); strict
                       (default): never */
  int fp32_tc_fast; /* GEMMSHIM_FP32=tc-fast: on the tensor cores with
                       3xTF32 (faster, up to 8x SGEMM's error on
                       wide-range data) */
  int emulate_single; /* CUBLAS_EMULATE_SINGLE_PRECISION=1: cuBLAS's own
                         FP32-emulation switch, which opts in the same way */
  long ab_every;    /* GEMMSHIM_AB: 0 off, N compares one routed call in N */
  long time_every;  /* GEMMSHIM_TIME: 0 off, N times one call in N of each
                       log row (CUDA events, read later) */
  int ab_shadow;    /* GEMMSHIM_AB_MODE=shadow: the app gets cuBLAS's bits */
  long ab_scratch_mb;                /* GEMMSHIM_AB_SCRATCH_MB per device */
  long scratch_keep_mb;              /* GEMMSHIM_SCRATCH_KEEP_MB: what the kernels'
                                        scratch pool keeps across synchronizations
                                        (0: gives all back at each one) */
  char ab_log_path[GS_PATH_MAX];     /* GEMMSHIM_AB_LOG, %p expanded */
  char test_break[64];  /* GEMMSHIM_TEST_BREAK=kernel: perturb its results
                           (tests of the self-check only) */
  char log_path[GS_PATH_MAX];        /* GEMMSHIM_LOG, %p expanded; "" = off */
  char log_template[GS_PATH_MAX];    /* GEMMSHIM_LOG as given (for a forked child) */
  char ab_log_template[GS_PATH_MAX]; /* GEMMSHIM_AB_LOG as given */
  gs_path_tokens tokens;             /* what they were expanded with */
  char cublas_lib[GS_PATH_MAX];      /* GEMMSHIM_CUBLAS_LIB */
  char cublaslt_lib[GS_PATH_MAX];    /* GEMMSHIM_CUBLASLT_LIB */
  char table_path[GS_PATH_MAX];      /* GEMMSHIM_TABLE: the route table for
                                        every device ("" = per-GPU cache) */
  char cache_dir[GS_PATH_MAX];       /* GEMMSHIM_CACHE_DIR, else
                                        $XDG_CACHE_HOME/gemmshim, else
                                        ~/.cache/gemmshim ("" = none) */
} gs_config_t;

typedef const char *(*gs_getenv_fn)(const char *name);

/* Fill cfg from getenv_fn (getenv in the library, a table in tests). Each
 * malformed value gets one line on warn and its default. Returns the number
 * of malformed values. */
int gs_config_parse(gs_config_t *cfg, gs_getenv_fn getenv_fn, FILE *warn);

/* The rank and host name of this process, from get (RANK, LOCAL_RANK) and
 * gethostname. A value with characters a file name should not hold (only
 * letters, digits, '.', '_' and '-' are kept) counts as not set. */
void gs_path_tokens_read(gs_path_tokens *t, gs_getenv_fn get);

/* Expand the tokens in a path template. Returns 0, or -1 when the result
 * does not fit (out is then ""). */
int gs_expand_path(const char *tmpl, const gs_path_tokens *t, char *out, size_t out_size);

/* Where the per-GPU route tables are when GEMMSHIM_CACHE_DIR is not set:
 * $XDG_CACHE_HOME/gemmshim, else ~/.cache/gemmshim, else "" (the library
 * and the gemmshim command use the same rule). */
void gs_xdg_cache_dir(gs_getenv_fn get, char *out, size_t size);

/* The process's configuration, parsed on first use (thread-safe). */
const gs_config_t *gs_config(void);

/* Parse the environment again (tests only: not safe while calls run). */
void gs_config_reload(void);

/* In the child of a fork (one thread): expand %p in the log paths again,
 * with the child's process id, so that its rows go to a file of its own. */
void gs_config_after_fork(void);

/* 1/0 for the spellings of a boolean the GEMMSHIM_* variables take (1,
 * true, yes, on / 0, false, no, off, any case), -1 for anything else. */
int gs_parse_bool(const char *s);

#ifdef __cplusplus
}
#endif

#endif
