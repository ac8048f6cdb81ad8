/* Loaded by test_dlsym with dlopen RTLD_LOCAL: its own symbols are in its
 * local scope only. RTLD_DEFAULT searches the caller's scopes, so a lookup
 * from here finds gs_dl_only_here, and the same lookup from the program or
 * from the shim does not. Built without sibling calls. */
#define _GNU_SOURCE
#include <dlfcn.h>

int gs_dl_only_here(void) { return 1; }
void *gsdl_default(void) { return dlsym(RTLD_DEFAULT, "gs_dl_only_here"); }
void *gsdl_vdefault(const char *version) { return dlvsym(RTLD_DEFAULT, "gs_dl_only_here", version); }
