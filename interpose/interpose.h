/* What interpose.c tells dlsym.c about the nine entry points. */
#ifndef GS_INTERPOSE_H
#define GS_INTERPOSE_H

/* The entry point called NAME, or -1. */
int gs_entry_id(const char *name);

/* Finds the real cuBLAS the entry forwards to (once; may dlopen it with
 * RTLD_NOLOAD). Zero when lookups must be left alone: GEMMSHIM_DISABLE, no
 * cuBLAS found, or this thread is already inside that search. */
int gs_entry_bind(int id);

/* FOUND, or the shim's own export where FOUND is the function the entry
 * forwards to. Compares pointers only: no dl* call, so dlerror() stays as
 * the real lookup left it. */
void *gs_entry_export_for(int id, void *found);

#endif
