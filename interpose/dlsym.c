/* Lookups by dlsym/dlvsym (JAX/XLA, TensorFlow and other programs that load
 * cuBLAS lazily through stubs). A lookup on a real handle searches that
 * library's scope, never the preloaded shim, so without this those programs
 * call cuBLAS directly. The exported stubs are in dl_entry.S; this file says
 * where each lookup goes:
 *
 * - the pseudo-handles (RTLD_DEFAULT, RTLD_NEXT) and every name but the
 *   nine entry points: the real dlsym, reached by a jump, so that glibc
 *   sees the program's own caller (those lookups already find the shim's
 *   exports, which come first in the global scope);
 * - an entry point on a real handle: the real dlsym, and where its answer
 *   is the very function the shim forwards that entry to, the shim's own
 *   export instead (answer() below). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "dl_real.h"
#include "interpose.h"

#define GS_HIDDEN __attribute__((visibility("hidden")))

void *gs_dl_plan(void *handle, const char *name, int versioned) GS_HIDDEN GS_NO_SANITIZE;

/* No C library dlsym was found (never seen with glibc): every lookup fails,
 * said once. */
static void say_missing(void)
{
  static atomic_int said;
  if (!atomic_exchange(&said, 1))
    fputs("gemmshim: cannot find the C library's dlsym/dlvsym; dlsym lookups return NULL\n",
          stderr);
}

static void *missing_dlsym(void *handle, const char *name)
{
  (void)handle; (void)name;
  say_missing();
  return NULL;
}

static void *missing_dlvsym(void *handle, const char *name, const char *version)
{
  (void)handle; (void)name; (void)version;
  say_missing();
  return NULL;
}

/* A found entry point: the shim's export when it is the very function the
 * shim forwards to. Only an answer from a copy of cuBLAS makes the shim
 * find (and keep) its cuBLAS, and that is the copy the program has loaded;
 * a lookup that failed, or found another library's function of that name,
 * is left as it is. The real lookup succeeded, which leaves dlerror() with
 * nothing to say: whatever the search for cuBLAS left there is cleared. */
static void *answer(int id, void *found)
{
  if (!found) return found;
  Dl_info info;
  if (!dladdr(found, &info) || !info.dli_fname) return found;
  const char *base = strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  if (strncmp(base, "libcublas", 9) != 0) return found;
  int bound = gs_entry_bind(id);
  (void)dlerror();
  return bound ? gs_entry_export_for(id, found) : found;
}

static void *entry_dlsym(void *handle, const char *name)
{
  return answer(gs_entry_id(name), gs_real_dlsym()(handle, name));
}

static void *entry_dlvsym(void *handle, const char *name, const char *version)
{
  return answer(gs_entry_id(name), gs_real_dlvsym()(handle, name, version));
}

/* From the stubs, before they jump: no libc call, nothing instrumented. */
GS_NO_SANITIZE void *gs_dl_plan(void *handle, const char *name, int versioned)
{
  void *real = versioned ? (void *)gs_real_dlvsym() : (void *)gs_real_dlsym();
  if (!real) return versioned ? (void *)missing_dlvsym : (void *)missing_dlsym;
  if (handle == RTLD_DEFAULT || handle == RTLD_NEXT || !name || gs_entry_id(name) < 0)
    return real;
  return versioned ? (void *)entry_dlvsym : (void *)entry_dlsym;
}
