/* gemmshim tune's measurements, taken by running gemmshim-bench: one
 * process per candidate, call and pass (a kernel of the table against
 * cuBLAS, or cuBLAS against itself with --self), its CSV read back. Also
 * this GPU's validators (--identity) and the kernel table (--list-csv). */
#ifndef GEMMSHIM_TUNE_BENCH_H
#define GEMMSHIM_TUNE_BENCH_H

#include <limits.h>
#include <signal.h>

#include "tune.h"

typedef struct tb_bench {
  char path[PATH_MAX];       /* gemmshim-bench */
  int device;                /* --device */
  int iters;                 /* the bench's --iters: samples per side */
  int preheat_ms;            /* the bench's --preheat-ms: cuBLAS alone first */
  char tmpdir[PATH_MAX];     /* a private folder for shape files and CSVs */
  volatile sig_atomic_t *interrupted;   /* set by gemmshim's signal handler */
  int verbose;
} tb_bench;

/* The bench: named (--bench), else $GEMMSHIM_BENCH, else in the folder
 * beside ("" when not known): gemmshim's own, in the build tree and an
 * installed bindir alike. 0, or -1 (err). */
int tb_find(tb_bench *b, const char *named, const char *beside, char err[TN_ERR_LEN]);

/* A private temporary folder (removed by tb_done). */
int tb_start(tb_bench *b, char err[TN_ERR_LEN]);
void tb_done(tb_bench *b);

/* This GPU's "Validator,KEY,VALUE" lines, its UUID, and the libcublas the
 * bench loads ("" when it does not say). */
int tb_identity(tb_bench *b, char *validators, size_t len, char uuid[64],
                char cublas_path[PATH_MAX], char err[TN_ERR_LEN]);

/* The kernel table: name and data type of each kernel (malloc'ed). */
int tb_kernels(tb_bench *b, tn_kernel **out, size_t *n, char err[TN_ERR_LEN]);

/* tn_ops.measure, ctx a tb_bench. */
int tb_measure(void *ctx, const tn_key *k, const char *kernel, int self, int pass,
               tn_sample *out, char err[TN_ERR_LEN]);

/* tn_ops.measure_lt, ctx a tb_bench: the bench's route cublaslt with
 * --lt-top (the first pass) or --lt-algos (the second). */
int tb_measure_lt(void *ctx, const tn_key *k, int pass, const tn_lt_cand *given, size_t n_given,
                  tn_lt_cand *out, size_t max, size_t *n_out, char err[TN_ERR_LEN]);

/* The fields of one data row of the bench's CSV (its header given), into
 * *out as measured; -1 when the row does not have them, -2 when the header
 * has no column launch (an older bench). */
int tb_parse_csv_row(const char *header, const char *row, tn_sample *out);

#endif
