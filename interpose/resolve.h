/* Finding the real libcublas and libcublasLt. Every dlsym of the shim is in
 * resolve.c. */
#ifndef GS_RESOLVE_H
#define GS_RESOLVE_H

typedef enum gs_lib { GS_LIB_BLAS = 0, GS_LIB_LT = 1, GS_LIB_COUNT } gs_lib;

/* Find the library once (thread-safe); nonzero when found. The first
 * failure is said on stderr with what was searched. */
int gs_lib_ready(gs_lib lib);

/* A symbol of the found copy (NULL when absent or not found). */
void *gs_lib_sym(gs_lib lib, const char *name);

/* The path of the copy in use ("" when none). */
const char *gs_lib_path(gs_lib lib);

#endif
