/* GEMMSHIM_TIME=N: the GPU time of one call in N of each log row (the N-th,
 * 2N-th, ...), from two CUDA events recorded on the call's own stream around
 * everything the call enqueues (our kernel, or cuBLAS's). Nothing waits for
 * the GPU inside a call: a later sampled call reads the events that have
 * completed, and an exit handler reads the rest. Calls into a capturing
 * stream are counted, not timed (what they enqueue runs when the graph is
 * replayed). */
#ifndef GS_TIMING_H
#define GS_TIMING_H

#include "gemm.h"
#include "route.h"
#include "tally.h"

/* What gs_time_end counts when the call is tallied (gs_decision.time_note). */
enum { GS_TIME_NOTHING = 0, GS_TIME_CAPTURED, GS_TIME_DROPPED };

/* Before anything of the call is enqueued, once it is decided: when the
 * call is sampled, its start event is recorded. Sets d->time_slot and
 * d->time_note. Does nothing with GEMMSHIM_TIME or GEMMSHIM_LOG unset. */
void gs_time_begin(gs_gemm *g, gs_decision *d);

/* After the call has enqueued its work and been counted in row: its end
 * event is recorded, and whatever samples have completed are read into
 * their rows. */
void gs_time_end(gs_tally_row *row, const gs_gemm *g, gs_decision *d);

/* Read every pending sample, waiting at most wait_ms for the GPU; what is
 * still pending then is counted as dropped. Runs at exit from an atexit
 * handler registered after the shim's CUDA runtime started (so before the
 * runtime's own teardown); tests call it directly. */
void gs_time_drain(int wait_ms);

/* Forget every pending sample (tests; the child after fork). */
void gs_time_reset(void);

#endif
