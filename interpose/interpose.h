/* What interpose.c tells dlsym.c about the nine entry points. */
#ifndef GS_INTERPOSE_H
#define GS_INTERPOSE_H

#include "dl_real.h"

/* The entry point called NAME, or -1. No libc call (GS_NO_SANITIZE). */
int gs_entry_id(const char *name) GS_NO_SANITIZE;

/* Finds the real cuBLAS the entry forwards to, once; waits at most a
 * second for another thread's search. Zero when the lookup must be left
 * alone: GEMMSHIM_DISABLE, no cuBLAS found, this thread's own search, or
 * another's that did not end in time. */
int gs_entry_bind(int id);

/* FOUND, or the shim's own export where FOUND is the function the entry
 * forwards to (pointers compared, nothing called). */
void *gs_entry_export_for(int id, void *found);

#endif
