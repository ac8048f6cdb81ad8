/* Lookups whose answer depends on who calls dlsym. Linked into test_dlsym,
 * so it sits in the global scope after the preloaded shim and before its
 * dependency gsdl_next: RTLD_NEXT from here finds gsdl_next's gs_dl_probe
 * ('N'); from the shim it would find this library's own ('C'). Built
 * without sibling calls, so that these functions are dlsym's callers.
 *
 * Its constructor also looks cuBLAS up before the program's main and,
 * under LD_PRELOAD, before the shim's own constructors have run. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

char gs_dl_probe(void) { return 'C'; }
void *gsdl_next(void) { return dlsym(RTLD_NEXT, "gs_dl_probe"); }
void *gsdl_vnext(const char *version) { return dlvsym(RTLD_NEXT, "gs_dl_probe", version); }

void *gsdl_early_default, *gsdl_early_handle;
volatile int gsdl_plug_started;   /* set by gsdl_plug's constructor */

__attribute__((constructor)) static void look_up_early(void)
{
  gsdl_early_default = dlsym(RTLD_DEFAULT, "cublasGemmEx");
  const char *dir = getenv("GS_FAKE_DIR");
  if (!dir || !getenv("GSDL_EARLY")) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/libcublas.so.13", dir);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h) gsdl_early_handle = dlsym(h, "cublasGemmEx");
}
