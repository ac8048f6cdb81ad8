/* The C library's own dlsym and dlvsym, read off its dynamic symbol table
 * (see dl_real.h for why no dl* call can find them). Everything here runs
 * inside the exported dlsym, possibly while a sanitizer's runtime starts:
 * no libc call (strings compared by hand, the objects read from the
 * dynamic linker's list _r_debug rather than with dl_iterate_phdr). */
#define _GNU_SOURCE
#include "dl_real.h"

#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>

#if defined(__x86_64__)
#define GS_GLIBC_FIRST_DL_VERSION "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define GS_GLIBC_FIRST_DL_VERSION "GLIBC_2.17"
#else
#define GS_GLIBC_FIRST_DL_VERSION NULL
#endif

typedef struct elf_tables {
  ElfW(Addr) base;
  const ElfW(Sym) *symtab;
  const char *strtab;
  const uint32_t *gnu_hash;
  const uint32_t *sysv_hash;
  const ElfW(Half) *versym;
  const ElfW(Verdef) *verdef;
} elf_tables;

GS_NO_SANITIZE static int same(const char *a, const char *b)
{
  while (*a && *a == *b) a++, b++;
  return *a == *b;
}

GS_NO_SANITIZE static int basename_has_prefix(const char *path, const char *prefix)
{
  const char *base = path;
  for (const char *p = path; *p; p++)
    if (*p == '/') base = p + 1;
  for (; *prefix; prefix++, base++)
    if (*base != *prefix) return 0;
  return 1;
}

/* Dynamic-section addresses: ld.so rewrites most of them to run-time
 * addresses where the section is writable (never DT_VERDEF), and leaves the
 * rest as offsets from the load base (a read-only dynamic section, the
 * vDSO). An offset is smaller than the base of any shared object. */
GS_NO_SANITIZE static const void *dyn_addr(ElfW(Addr) base, ElfW(Addr) p)
{
  return (const void *)(p < base ? p + base : p);
}

GS_NO_SANITIZE static int read_tables(const struct link_map *l, elf_tables *t)
{
  t->base = l->l_addr;
  t->symtab = NULL;
  t->strtab = NULL;
  t->gnu_hash = t->sysv_hash = NULL;
  t->versym = NULL;
  t->verdef = NULL;
  if (!l->l_ld) return -1;
  for (const ElfW(Dyn) *dyn = l->l_ld; dyn->d_tag != DT_NULL; dyn++) {
    const void *p = dyn_addr(t->base, dyn->d_un.d_ptr);
    switch (dyn->d_tag) {
    case DT_SYMTAB: t->symtab = p; break;
    case DT_STRTAB: t->strtab = p; break;
    case DT_GNU_HASH: t->gnu_hash = p; break;
    case DT_HASH: t->sysv_hash = p; break;
    case DT_VERSYM: t->versym = p; break;
    case DT_VERDEF: t->verdef = p; break;
    default: break;
    }
  }
  return t->symtab && t->strtab && (t->gnu_hash || t->sysv_hash) ? 0 : -1;
}

/* The version name a symbol is defined with, or NULL (unversioned). */
GS_NO_SANITIZE static const char *version_of(const elf_tables *t, uint32_t sym)
{
  if (!t->versym || !t->verdef) return NULL;
  ElfW(Half) ndx = t->versym[sym] & 0x7fff;
  if (ndx <= 1) return NULL;   /* local or global: no version */
  const ElfW(Verdef) *vd = t->verdef;
  for (;;) {
    if (vd->vd_ndx == ndx) {
      const ElfW(Verdaux) *aux = (const ElfW(Verdaux) *)((const char *)vd + vd->vd_aux);
      return t->strtab + aux->vda_name;
    }
    if (!vd->vd_next) return NULL;
    vd = (const ElfW(Verdef) *)((const char *)vd + vd->vd_next);
  }
}

/* A defined function (never an IFUNC resolver) with the wanted version:
 * VERSION NULL takes the default version or an unversioned definition. */
GS_NO_SANITIZE static void *accept(const elf_tables *t, uint32_t sym, const char *name,
                                   const char *version)
{
  const ElfW(Sym) *s = &t->symtab[sym];
  if (s->st_shndx == SHN_UNDEF || s->st_value == 0 || (s->st_info & 0xf) != STT_FUNC)
    return NULL;
  if (!same(t->strtab + s->st_name, name)) return NULL;
  const char *v = version_of(t, sym);
  if (version) {
    if (!v || !same(v, version)) return NULL;
  } else if (t->versym && (t->versym[sym] & 0x8000)) {
    return NULL;   /* a hidden (non-default) version */
  }
  return (void *)(t->base + s->st_value);
}

GS_NO_SANITIZE static void *lookup_gnu(const elf_tables *t, const char *name, const char *version)
{
  uint32_t h = 5381;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = h * 33 + *p;
  const uint32_t nbuckets = t->gnu_hash[0], symoffset = t->gnu_hash[1];
  const uint32_t bloom_words = t->gnu_hash[2];
  const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(t->gnu_hash + 4) + bloom_words);
  const uint32_t *chain = buckets + nbuckets;
  if (nbuckets == 0) return NULL;
  uint32_t sym = buckets[h % nbuckets];
  if (sym < symoffset) return NULL;
  for (;; sym++) {
    uint32_t c = chain[sym - symoffset];
    if ((c | 1) == (h | 1)) {
      void *found = accept(t, sym, name, version);
      if (found) return found;
    }
    if (c & 1) return NULL;
  }
}

GS_NO_SANITIZE static void *lookup_sysv(const elf_tables *t, const char *name, const char *version)
{
  uint32_t h = 0;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
    h = (h << 4) + *p;
    uint32_t g = h & 0xf0000000u;
    if (g) h ^= g >> 24;
    h &= ~g;
  }
  const uint32_t nbucket = t->sysv_hash[0], nchain = t->sysv_hash[1];
  const uint32_t *bucket = t->sysv_hash + 2, *chain = bucket + nbucket;
  if (nbucket == 0) return NULL;
  for (uint32_t sym = bucket[h % nbucket]; sym != 0 && sym < nchain; sym = chain[sym]) {
    void *found = accept(t, sym, name, version);
    if (found) return found;
  }
  return NULL;
}

/* The objects of the base namespace, in load order. The program, its
 * preloads and their dependencies (the C library among them) come first
 * and are never unloaded, so walking to them is safe while other threads
 * load or unload later objects. */
GS_NO_SANITIZE void *gs_elf_lookup(const char *object_basename_prefix, const char *name,
                                   const char *version)
{
  for (const struct link_map *l = _r_debug.r_map; l; l = l->l_next) {
    if (!l->l_name || !basename_has_prefix(l->l_name, object_basename_prefix)) continue;
    elf_tables t;
    if (read_tables(l, &t) != 0) continue;
    void *found = t.gnu_hash ? lookup_gnu(&t, name, version) : lookup_sysv(&t, name, version);
    if (found) return found;
  }
  return NULL;
}

/* glibc 2.34 moved dlsym into libc.so.6 under a new version; before, it was
 * in libdl.so.2 under the first version of the architecture. Last, an
 * unversioned definition (a C library without symbol versions). */
GS_NO_SANITIZE static void *find_libc(const char *name)
{
  static const char *const objects[] = { "libc.so", "libdl.so" };
  static const char *const versions[] = { "GLIBC_2.34", GS_GLIBC_FIRST_DL_VERSION, NULL };
  for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++) {
    if (v > 0 && versions[v] == versions[v - 1]) continue;   /* no first version here */
    for (size_t o = 0; o < sizeof objects / sizeof objects[0]; o++) {
      void *f = gs_elf_lookup(objects[o], name, versions[v]);
      if (f) return f;
    }
  }
  return NULL;
}

static _Atomic(void *) real_dlsym_p, real_dlvsym_p;

/* Racing threads find the same address; the first store wins. Built-in
 * atomics, which no sanitizer rewrites in an uninstrumented function. */
GS_NO_SANITIZE static void *found_once(_Atomic(void *) *slot, const char *name)
{
  void *f = __atomic_load_n((void **)slot, __ATOMIC_ACQUIRE);
  if (f) return f;
  f = find_libc(name);
  void *expected = NULL;
  if (f && !__atomic_compare_exchange_n((void **)slot, &expected, f, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
    f = expected;
  return f;
}

GS_NO_SANITIZE gs_dlsym_fn gs_real_dlsym(void)
{
  return (gs_dlsym_fn)found_once(&real_dlsym_p, "dlsym");
}

GS_NO_SANITIZE gs_dlvsym_fn gs_real_dlvsym(void)
{
  return (gs_dlvsym_fn)found_once(&real_dlvsym_p, "dlvsym");
}
