/* The C library's own dlsym and dlvsym. The shim exports both names, and a
 * versioned reference (dlvsym@GLIBC_2.34) from inside the shim would bind to
 * the shim's unversioned export, so they are found by reading the loaded C
 * library's dynamic symbol table instead of by any dl* lookup. */
#ifndef GS_DL_REAL_H
#define GS_DL_REAL_H

#include <stddef.h>

/* For what runs inside the exported dlsym before it jumps: a sanitizer's
 * runtime calls dlsym while it starts, before its interceptors (strcmp,
 * dl_iterate_phdr, ...) work and before instrumented code may run. Such
 * code calls no libc function and is not instrumented. */
#if defined(__clang__)
#define GS_NO_SANITIZE __attribute__((no_sanitize("thread", "address")))
#else
#define GS_NO_SANITIZE __attribute__((no_sanitize_thread, no_sanitize_address))
#endif

typedef void *(*gs_dlsym_fn)(void *handle, const char *name);
typedef void *(*gs_dlvsym_fn)(void *handle, const char *name, const char *version);

/* Found once (thread-safe, no lock, no allocation, no libc call: the
 * loaded objects are read from the dynamic linker's list, _r_debug); NULL
 * only when no loaded object defines them. */
gs_dlsym_fn gs_real_dlsym(void);
gs_dlvsym_fn gs_real_dlvsym(void);

/* Lookup in one object's dynamic symbol table, by the ELF tables mapped in
 * memory: the address of NAME defined there with version VERSION (NULL:
 * the default version or an unversioned definition). Exposed for tests. */
void *gs_elf_lookup(const char *object_basename_prefix, const char *name, const char *version);

#endif
