/* In-memory aggregation of what the shim saw: one row per distinct call
 * as a replay needs it (entry, entry class, types, layout, epilogue, m, n,
 * k, batch, leading dimensions, batch strides, the alignment class of each
 * pointer and leading dimension, pointer and math mode, route, reason,
 * device) with a count. device is the call's stream's device when the
 * router asked for it (every routed call), -1 when the call was decided
 * before that; the GPU's name and UUID are looked up from it when the row
 * is written. Pointer and math mode are known only once the router read the
 * handle's state (GS_NONE before: written '-').
 * Each thread counts into a table of its own (no locks, no shared cache
 * lines on the hot path); tables are merged when read. At exit the rows go
 * to GEMMSHIM_LOG as CSV (format v4: GS_LOG_VERSION, then GS_LOG_HEADER,
 * then rows; README.md, "The log"); nothing is written by a process that
 * made no call. With GEMMSHIM_TIME a row also holds what timing.c
 * measured of its calls. */
#ifndef GS_TALLY_H
#define GS_TALLY_H

#include <stdint.h>
#include <stdio.h>
#include "gemm.h"
#include "route.h"

/* A row of a thread's table; it lives as long as the process. */
typedef struct gs_tally_row gs_tally_row;

/* Count one call; returns its row (NULL: no room, counted as overflow). */
gs_tally_row *gs_tally_add(const gs_gemm *g, const gs_decision *d);

/* The calls this thread has counted so far in the row this call would be
 * counted in (0: none yet). Makes no row. */
uint64_t gs_tally_calls_before(const gs_gemm *g, const gs_decision *d);

/* GEMMSHIM_TIME, from any thread: one sampled call of the row took ns of
 * GPU time; one call of the row ran in a capturing stream (not timed); a
 * sampled call's time was lost (no event free, events unreadable, still
 * pending at exit). A NULL row is ignored. */
void gs_tally_timed(gs_tally_row *r, uint64_t ns);
void gs_tally_time_captured(gs_tally_row *r);
void gs_tally_time_dropped(gs_tally_row *r);

/* The bins of a row's time histogram (tally.c). */
#define GS_TIME_BINS 672u

/* Calls counted so far, all threads: those served by the named kernel
 * (route = its name), forwarded ones (route = "cublas"), or all (NULL);
 * reason < 0 counts every reason. */
uint64_t gs_tally_count(const char *route, int reason);

/* Routes gs_tally_count counts apart: cuBLAS and up to 15 kernels of the
 * table (tests/test_tables.c checks the table fits). */
#define GS_TALLY_ROUTES 16

/* Write every row counted so far, merged, as a log (the version line and
 * the header first), without marking anything written. Returns the rows
 * written (0 while a log write is under way). */
size_t gs_tally_write_csv(FILE *out);

/* Write the log now if GEMMSHIM_LOG is set and there is anything to say
 * (also runs at exit). The rows are appended to a v4 log, or written with
 * the two header lines into an empty file; a file that holds anything else
 * (an older shim's v1, v2 or v3 log) is left alone and the rows go to PATH.v4
 * instead, said once on stderr. Returns 0, or -1 when the file cannot be
 * written. */
int gs_tally_flush_log(void);

/* Forget everything (tests; and the child after fork). */
void gs_tally_reset(void);

/* The log's first line, then its header. The first 16 columns are v1's,
 * in v1's order; later versions only append (v3: the time columns; v4: the
 * workspace of a cuBLASLt call). */
#define GS_LOG_VERSION "# gemmshim log v4"
#define GS_LOG_HEADER \
  "pid,entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,route,reason,count," \
  "device,entry_class,lda,ldb,ldc,ldd,stride_a,stride_b,stride_c,stride_d," \
  "align_a,align_b,align_c,align_d,align_lda,align_ldb,align_ldc,align_ldd," \
  "pointer_mode,math_mode,gpu_name,gpu_uuid," \
  "timed,median_us,est_total_us,captured,time_dropped,workspace"
/* Where the rows go when GEMMSHIM_LOG holds another format: PATH + this. */
#define GS_LOG_OTHER_FORMAT_SUFFIX ".v4"

#endif
