/* gemmshim-report's library: read the A/B CSV (GEMMSHIM_AB) and the call
 * log (GEMMSHIM_LOG), aggregate per shape class, render text, CSV or SVG.
 *
 * Usage: report_init; report_load for each A/B file and report_load_summary
 * for each call log; report_finish; then the writers; report_free.
 * Loaders return 0, or -1 with "FILE:LINE: what is wrong" in err. After an
 * error the report holds a part of the file: discard it. Nothing here exits
 * or prints to stderr: the caller decides. */
#ifndef GEMMSHIM_REPORT_H
#define GEMMSHIM_REPORT_H

#include <stddef.h>
#include <stdio.h>

#define REPORT_ERR_LEN 512
#define REPORT_NAME_LEN 96

#define REPORT_AB_HEADER \
  "time_s,pid,entry,a_type,c_type,layout,m,n,k,batch,kernel,mode," \
  "ours_us,cublas_us,speedup,max_abs,max_rel,rel_fro,device"
#define REPORT_SUMMARY_HEADER \
  "pid,entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch," \
  "route,reason,count,device"

/* One shape class: every compared call with the same key. */
typedef struct report_class {
  /* the key */
  long long m, n, k, batch;
  char layout[8];
  char a_type[16], c_type[16];
  char kernel[REPORT_NAME_LEN];
  /* accumulated by report_load */
  size_t calls, shadow_calls;
  double *ours_us, *cublas_us; /* one sample per call, for the medians */
  size_t samples_cap;
  double sum_ours_us, sum_cublas_us;
  double worst_max_abs, worst_max_rel, worst_rel_fro; /* nan counts as worst */
  size_t nonfinite_calls; /* calls with a nan or inf error: failures */
  /* set by report_finish */
  double median_ours_us, median_cublas_us;
  double speedup; /* median cuBLAS / median ours */
  double share;   /* fraction of the steady-state cuBLAS time (medians x calls), 0..1 */
} report_class;

typedef struct report_count {
  char name[REPORT_NAME_LEN];
  unsigned long long calls;
  double flops;
} report_count;

typedef struct report_count_list {
  report_count *items;
  size_t n, cap;
} report_count_list;

/* GEMM time by shape and route, from the call log's v3 time columns
 * (GEMMSHIM_TIME; report_time.c). */
typedef struct report_time_group {
  long long m, n, k, batch;
  char layout[8], a_type[16], c_type[16], route[REPORT_NAME_LEN];
  unsigned long long calls, timed;
  double total_us;                 /* the sum of its rows' est_total_us */
  double median_sum, median_weight; /* row medians x their samples, and the samples */
} report_time_group;

#define REPORT_TIME_ROUTES 16

typedef struct report_time {
  int timed_logs;                  /* a row with time columns was read */
  unsigned long long calls, timed, captured, dropped;
  unsigned long long unmeasured_calls; /* in rows of a timed log with no timed call */
  unsigned long long untimed_calls;    /* in rows without time columns (TIME off, v1/v2) */
  double total_us;
  report_time_group *groups;       /* sorted by total_us by report_time_finish */
  size_t n, cap;
  struct { char name[REPORT_NAME_LEN]; double total_us; unsigned long long calls; }
      routes[REPORT_TIME_ROUTES];
  size_t n_routes;
} report_time;

struct rs_row;
int report_time_add(report_time *t, const struct rs_row *row);
void report_time_finish(report_time *t);
void report_time_free(report_time *t);
void report_time_write_text(const report_time *t, FILE *out);
/* The share of GEMM time by shape (the largest first) and by route. */
int report_time_write_svg(const report_time *t, FILE *out);

/* What the call logs (--summary) say about all GEMM calls. */
typedef struct report_summary {
  int files;
  unsigned long long gemm_calls;    /* every call, ab_skipped_* rows excluded */
  unsigned long long routed_calls;  /* reason "routed" */
  unsigned long long forwarded_calls;
  unsigned long long other_calls;   /* the (other) overflow row: shape unknown */
  unsigned long long bad_args_calls; /* invalid dims: no FLOPs to count */
  double flops_known, flops_ours;   /* 2*m*n*k*batch*count over known shapes */
  report_count_list routed;         /* per kernel */
  report_count_list forwarded;      /* per reason */
  report_count_list not_compared;   /* ab_skipped_* per reason */
  report_time time;
} report_summary;

typedef struct report {
  report_class *classes;
  size_t nclasses, classes_cap;
  size_t *index; /* open-addressing hash of the keys: class index + 1, 0 empty */
  size_t index_size;
  int ab_files;
  size_t compared_calls, shadow_calls, nonfinite_calls, failing_classes;
  double sum_ours_us, sum_cublas_us;
  /* Steady state: each class's median times its calls, summed. A shape's
   * first cuBLAS call carries one-time setup (milliseconds of heuristics and
   * module loading) that raw sums would count as GEMM time. */
  double steady_ours_us, steady_cublas_us;
  report_summary summary;
} report;

/* What the command line asked for; report_run does the rest. */
typedef struct report_options {
  const char **ab_paths;
  size_t n_ab;
  const char **summary_paths;
  size_t n_summary;
  int csv;              /* print the aggregated table as CSV */
  const char *svg_path; /* write the chart here, or NULL */
  const char *time_svg_path; /* the GEMM time chart (from the call logs), or NULL */
} report_options;

void report_init(report *r);
void report_free(report *r);
int report_load(report *r, const char *path, char err[REPORT_ERR_LEN]);
int report_load_summary(report *r, const char *path, char err[REPORT_ERR_LEN]);
/* Medians, speedups, shares, failing classes; classes sorted by share. */
int report_finish(report *r, char err[REPORT_ERR_LEN]);

int report_write_text(const report *r, FILE *out);
int report_write_csv(const report *r, FILE *out);
int report_write_svg(const report *r, FILE *out);

/* Load, finish and write as opt says. Messages go to err, prefixed with
 * "gemmshim-report: ". Returns the exit status: 0 ok, 1 an output could not
 * be written, 2 an input is missing or malformed. */
int report_run(const report_options *opt, FILE *out, FILE *err);

/* The whole command line (report_cli.c): options, then report_run. prog
 * names the command in usage and messages ("gemmshim report"). */
int report_main(int argc, char **argv, const char *prog);

/* Helpers the tests use. */
double report_median(double *v, size_t n); /* sorts v; nan for n == 0 */
const char *report_format_shape(const report_class *c, char *buf, size_t len);

#endif
