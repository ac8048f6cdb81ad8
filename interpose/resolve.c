/* Finding the real cuBLAS. Order: the user's explicit choice
 * (GEMMSHIM_CUBLAS_LIB / GEMMSHIM_CUBLASLT_LIB); RTLD_NEXT; a copy already
 * loaded by the program (PyTorch loads libcublas RTLD_LOCAL, where RTLD_NEXT
 * cannot see it); the sonames last. Every later lookup goes through the one
 * handle found, so one call never mixes two copies. */
#define _GNU_SOURCE
#include "resolve.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dispatch/config.h"
#include "../dispatch/gpu.h"
#include "dl_real.h"

typedef struct lib_info {
  const char *what;            /* for messages */
  const char *env;             /* the variable naming an explicit copy */
  const char *probe;           /* a symbol only this library defines */
  const char *prefix;          /* basename prefix of loaded copies */
  const char *sonames[4];
} lib_info;

static const lib_info libs[GS_LIB_COUNT] = {
  [GS_LIB_BLAS] = { "libcublas", "GEMMSHIM_CUBLAS_LIB", "cublasCreate_v2",
                    "libcublas.so", { "libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL } },
  [GS_LIB_LT] = { "libcublasLt", "GEMMSHIM_CUBLASLT_LIB", "cublasLtCreate",
                  "libcublasLt.so", { "libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so", NULL } },
};

typedef struct lib_state {
  pthread_once_t once;
  void *handle;
  char path[PATH_MAX];
} lib_state;

static lib_state state[GS_LIB_COUNT] = { { PTHREAD_ONCE_INIT, NULL, "" },
                                         { PTHREAD_ONCE_INIT, NULL, "" } };

/* The C library's dlsym, called directly: the shim's own dlsym export would
 * send the nine entry points back to the shim. */
static void *real_sym(void *handle, const char *name)
{
  gs_dlsym_fn real = gs_real_dlsym();
  return real ? real(handle, name) : NULL;
}

static void remember(gs_lib lib, void *handle, const char *path)
{
  state[lib].handle = handle;
  snprintf(state[lib].path, sizeof state[lib].path, "%s", path ? path : "");
}

/* The path of the object that defines addr. */
static int path_of(const void *addr, char *out, size_t size)
{
  Dl_info info;
  if (!dladdr(addr, &info) || !info.dli_fname || !info.dli_fname[0]) return -1;
  snprintf(out, size, "%s", info.dli_fname);
  return 0;
}

static int try_rtld_next(gs_lib lib)
{
  void *sym = real_sym(RTLD_NEXT, libs[lib].probe);
  char path[PATH_MAX];
  if (!sym || path_of(sym, path, sizeof path) != 0) return 0;
  void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!h) return 0;
  remember(lib, h, path);
  return 1;
}

typedef struct loaded_scan {
  const char *prefix;
  char found[2][PATH_MAX];     /* the first two distinct copies */
  int n;
} loaded_scan;

static int basename_matches(const char *path, const char *prefix)
{
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  return strncmp(base, prefix, strlen(prefix)) == 0;
}

static int scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
  (void)size;
  loaded_scan *s = arg;
  if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
  if (!basename_matches(info->dlpi_name, s->prefix)) return 0;
  char real[PATH_MAX];
  if (!realpath(info->dlpi_name, real)) snprintf(real, sizeof real, "%s", info->dlpi_name);
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->found[i], real)) return 0;
  if (s->n < 2) snprintf(s->found[s->n], PATH_MAX, "%s", real);
  s->n++;
  return 0;
}

/* The copies the program has loaded; two different ones get a warning,
 * whichever way the shim then finds its copy. */
static void scan_loaded(gs_lib lib, loaded_scan *s)
{
  memset(s, 0, sizeof *s);
  s->prefix = libs[lib].prefix;
  dl_iterate_phdr(scan_one, s);
  if (s->n > 1)
    fprintf(stderr,
            "gemmshim: %d different copies of %s are loaded (%s and %s); the shim uses "
            "one of them for every call. Set %s to choose.\n",
            s->n, libs[lib].what, s->found[0], s->found[1], libs[lib].env);
}

static int try_loaded(gs_lib lib, const loaded_scan *s)
{
  if (s->n == 0) return 0;
  void *h = dlopen(s->found[0], RTLD_NOW | RTLD_NOLOAD);
  if (!h) return 0;
  remember(lib, h, s->found[0]);
  return 1;
}

static int try_sonames(gs_lib lib)
{
  for (const char *const *n = libs[lib].sonames; *n; n++) {
    void *h = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
    if (!h) continue;
    char path[PATH_MAX];
    void *sym = real_sym(h, libs[lib].probe);
    remember(lib, h, sym && path_of(sym, path, sizeof path) == 0 ? path : *n);
    return 1;
  }
  return 0;
}

/* The found library's version, "13.1.0" ("" when it does not say). */
static void lib_version(gs_lib lib, char *out, size_t len)
{
  out[0] = '\0';
  if (lib == GS_LIB_BLAS) {
    int (*get_property)(int, int *) = (int (*)(int, int *))real_sym(state[lib].handle, "cublasGetProperty");
    int major = 0, minor = 0, patch = 0;
    if (get_property && !get_property(0, &major) && !get_property(1, &minor) &&
        !get_property(2, &patch))
      snprintf(out, len, "%d.%d.%d", major, minor, patch);
  } else {
    /* major * 10000 + minor * 100 + patch */
    size_t (*get_version)(void) = (size_t (*)(void))real_sym(state[lib].handle, "cublasLtGetVersion");
    if (get_version) {
      size_t v = get_version();
      snprintf(out, len, "%zu.%zu.%zu", v / 10000, v / 100 % 100, v % 100);
    }
  }
}

/* Found: the route tables' cuBLAS validator learns the version, and
 * GEMMSHIM_VERBOSE says which copy is used. */
static void say_found(gs_lib lib)
{
  char version[64];
  lib_version(lib, version, sizeof version);
  if (version[0]) gs_gpu_set_cublas_version(version);
  if (!gs_config()->verbose) return;
  fprintf(stderr, "gemmshim: using %s %s%s at %s\n", libs[lib].what, version[0] ? "version " : "",
          version[0] ? version : "of unknown version", state[lib].path);
}

static void resolve(gs_lib lib)
{
  const gs_config_t *cfg = gs_config();
  const char *chosen = lib == GS_LIB_BLAS ? cfg->cublas_lib : cfg->cublaslt_lib;
  if (chosen[0]) {
    /* An explicit choice wins, and a wrong one is an error, not a hint. */
    void *h = dlopen(chosen, RTLD_NOW | RTLD_LOCAL);
    if (h && real_sym(h, libs[lib].probe)) {
      remember(lib, h, chosen);
      say_found(lib);
    } else {
      fprintf(stderr, "gemmshim: %s=%s cannot be used (%s); %s calls return CUBLAS_STATUS_NOT_INITIALIZED\n",
              libs[lib].env, chosen, h ? "not a cuBLAS library" : dlerror(), libs[lib].what);
    }
    return;
  }
  loaded_scan loaded;
  scan_loaded(lib, &loaded);
  if (try_rtld_next(lib) || try_loaded(lib, &loaded) || try_sonames(lib)) {
    say_found(lib);
    return;
  }
  fprintf(stderr,
          "gemmshim: cannot find %s (searched: %s unset, RTLD_NEXT, loaded objects named %s*, "
          "%s, %s, %s); its calls return CUBLAS_STATUS_NOT_INITIALIZED\n",
          libs[lib].what, libs[lib].env, libs[lib].prefix, libs[lib].sonames[0],
          libs[lib].sonames[1], libs[lib].sonames[2]);
}

static void resolve_blas(void) { resolve(GS_LIB_BLAS); }
static void resolve_lt(void) { resolve(GS_LIB_LT); }

int gs_lib_ready(gs_lib lib)
{
  pthread_once(&state[lib].once, lib == GS_LIB_BLAS ? resolve_blas : resolve_lt);
  return state[lib].handle != NULL;
}

void *gs_lib_sym(gs_lib lib, const char *name)
{
  if (!gs_lib_ready(lib)) return NULL;
  return real_sym(state[lib].handle, name);
}

const char *gs_lib_path(gs_lib lib)
{
  return state[lib].path;
}
