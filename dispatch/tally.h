/* In-memory aggregation of what the shim saw: one row per distinct
 * (entry, types, layout, m, n, k, batch, route, reason, device) with a
 * count. device is the call's stream's device when the router asked for it
 * (every routed call), -1 when the call was decided before that.
 * Each thread counts into a table of its own (no locks, no shared cache
 * lines on the hot path); tables are merged when read. At exit the rows go
 * to GEMMSHIM_LOG as CSV; nothing is written by a process that made no call. */
#ifndef GS_TALLY_H
#define GS_TALLY_H

#include <stdint.h>
#include <stdio.h>
#include "gemm.h"
#include "route.h"

void gs_tally_add(const gs_gemm *g, const gs_decision *d);

/* Calls counted so far, all threads: those served by the named kernel
 * (route = its name), forwarded ones (route = "cublas"), or all (NULL);
 * reason < 0 counts every reason. */
uint64_t gs_tally_count(const char *route, int reason);

/* Write the merged rows as CSV (header first). Returns the rows written. */
size_t gs_tally_write_csv(FILE *out);

/* Write the log now if GEMMSHIM_LOG is set and there is anything to say
 * (also runs at exit). Returns 0, or -1 when the file cannot be written. */
int gs_tally_flush_log(void);

/* Forget everything (tests; and the child after fork). */
void gs_tally_reset(void);

#define GS_LOG_HEADER \
  "pid,entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,route,reason,count," \
  "device"

#endif
