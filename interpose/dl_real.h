/* The C library's own dlsym and dlvsym. The shim exports both names, and a
 * versioned reference (dlvsym@GLIBC_2.34) from inside the shim would bind to
 * the shim's unversioned export, so they are found by reading the loaded C
 * library's dynamic symbol table instead of by any dl* lookup. */
#ifndef GS_DL_REAL_H
#define GS_DL_REAL_H

#include <stddef.h>

typedef void *(*gs_dlsym_fn)(void *handle, const char *name);
typedef void *(*gs_dlvsym_fn)(void *handle, const char *name, const char *version);

/* Found once (thread-safe, no lock, no allocation, no dl* call); NULL only
 * when no loaded object defines them. */
gs_dlsym_fn gs_real_dlsym(void);
gs_dlvsym_fn gs_real_dlvsym(void);

/* Lookup in one object's dynamic symbol table, by the ELF tables mapped in
 * memory: the address of NAME defined there with version VERSION (NULL:
 * the default version or an unversioned definition). Exposed for tests. */
void *gs_elf_lookup(const char *object_basename_prefix, const char *name, const char *version);

#endif
