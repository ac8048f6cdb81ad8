/* The call log (GEMMSHIM_LOG), read: the one reader of it (rs_read_*,
 * any version, columns found by the header's names), and what `gemmshim
 * run` and `record` say at the end (rs_summary: calls, the share of GEMM
 * FLOPs each route served, distinct rows, and the time a route table says
 * the routed calls saved). gemmshim-report's --summary reads the log
 * through rs_read_file too. No processes here, so the tests drive it with
 * fixtures.
 *
 * Usage of the summary: rs_init; set table_for if a time estimate is
 * wanted; rs_load for each log; the writers; rs_free. The readers return
 * 0, or -1 with "FILE:LINE: what is wrong" in err (what was read before
 * is then a part of the file: discard it). Nothing here prints to stderr
 * or exits. */
#ifndef GEMMSHIM_RUN_SUMMARY_H
#define GEMMSHIM_RUN_SUMMARY_H

#include <stddef.h>
#include <stdio.h>

#include "../dispatch/route_table.h"

#define RS_ERR_LEN 512
/* A log's first line from v2 on is this and its version number (a v1 log
 * starts with its header). */
#define RS_LOG_VERSION_PREFIX "# gemmshim log v"
#define RS_NAME_LEN 64

/* Calls and FLOPs one route served: a kernel's name, or "cublas". */
typedef struct rs_route {
  char name[RS_NAME_LEN];
  unsigned long long calls;
  double flops;
} rs_route;

/* The route table that applies to the calls of one GPU (gpu_uuid as the
 * log writes it; "" when the log does not say), or NULL for none. */
typedef const gs_route_table *(*rs_table_fn)(const char *gpu_uuid, void *ctx);

typedef struct rs_summary {
  /* set by the caller: where the time estimate's rows come from */
  rs_table_fn table_for;
  void *table_ctx;

  /* what the logs said */
  int files;
  int version;                       /* the highest log version read (1, 2, ...) */
  unsigned long long calls;          /* every GEMM call (each is in exactly one row) */
  unsigned long long unknown_calls;  /* of those, in (other) rows: shape unknown */
  unsigned long long bad_args_calls; /* of those, invalid arguments: no FLOPs */
  double flops;                      /* 2*m*n*k*batch*count over the calls of known shape */
  rs_route *routes;                  /* who served the FLOPs, in first-seen order */
  size_t n_routes, routes_cap;
  size_t distinct;                   /* distinct rows, the pid and the count aside */
  size_t processes;                  /* distinct pids */

  /* the estimate: rows served by a kernel whose table row names it and
   * gives its time */
  double saved_us;                   /* sum of count * time_us * (ratio - 1) */
  unsigned long long estimated_calls;

  /* private: the sets behind distinct and processes */
  char **row_set;
  size_t row_slots;
  long long *pid_set;                /* pid + 1, 0 empty */
  size_t pid_slots;
} rs_summary;

/* One row of a log, checked: sizes are -1 only in (other) and bad_args
 * rows, names are not empty. Strings live until the callback returns. */
typedef struct rs_row {
  long long pid, count, device, dims[4];   /* dims: m, n, k, batch */
  const char *entry, *a_type, *b_type, *c_type, *compute, *layout, *epilogue;
  const char *route, *reason;
  const char *gpu_uuid;    /* "" when the log has no such column */
  const char *distinct;    /* the row less its pid and count; NULL for (other) */
  int other;               /* the (other) overflow row */
  int bad_args;
  int entry_class;         /* GS_EC_*, -1 when not known */
  int align;               /* the smallest alignment class (16 for a v1 log) */
  long long math_mode;     /* the handle's cublasMath_t as logged; -1 where the log does not say */
  long long workspace;     /* v4: a cuBLASLt call's workspace in bytes; -1 where the log does not say */
  /* v3, GEMMSHIM_TIME: -1 where the log does not say (not timed, an older
   * log): calls timed, captured, whose time was lost; the median of the
   * timed calls and the estimated total of the row's calls, in us */
  long long timed, captured, time_dropped;
  double median_us, est_total_us;
} rs_row;

/* Nonzero stops the reading with "out of memory". */
typedef int (*rs_row_fn)(const rs_row *row, void *ctx);

/* Every row of a log, in order; rows that start before byte skip are not
 * given (the header before them is still read). *version: the highest
 * log version seen (1 for a v1 log), when version is not NULL. */
int rs_read_text(const char *text, size_t len, const char *source, long long skip,
                 rs_row_fn fn, void *ctx, int *version, char err[RS_ERR_LEN]);
int rs_read_file(const char *path, long long skip, rs_row_fn fn, void *ctx, int *version,
                 char err[RS_ERR_LEN]);

/* 2*m*n*k*batch*count (0 for rows of unknown shape), and whether the
 * caller got our kernel's result: the one rule both reports use. */
double rs_row_flops(const rs_row *row);
int rs_row_ours(const rs_row *row);

void rs_init(rs_summary *s);
void rs_free(rs_summary *s);

/* Read one log. Rows that start before byte skip are not counted (a log
 * the user named that already held earlier runs); the header before them
 * is still read. */
int rs_load(rs_summary *s, const char *path, long long skip, char err[RS_ERR_LEN]);

/* The same from text (source names it in messages). */
int rs_load_text(rs_summary *s, const char *text, size_t len, const char *source,
                 long long skip, char err[RS_ERR_LEN]);

/* The share (0..1) of the FLOPs of known shape that route served; 0 when
 * none. */
double rs_share(const rs_summary *s, const char *route);

/* `gemmshim run`'s lines: calls, shares, the estimate where there is one. */
void rs_write_run(const rs_summary *s, FILE *out);

/* `gemmshim record`'s line about what path now holds; cmd names the
 * command in the line said when it made no GEMM call. */
void rs_write_record(const rs_summary *s, const char *path, const char *cmd, FILE *out);

#endif
