/* Which route table applies where (tables.h). */
#include "tables.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "context.h"
#include "gpu.h"
#include "health.h"

#define MAX_CACHE_FILES 256   /* a shared home of many nodes' GPUs */
#define CACHE_PREFIX "routes-"
#define CACHE_SUFFIX ".csv"

typedef struct candidate {
  gs_route_table *t;
  char uuid[48];   /* a cache file's GPU; "" for GEMMSHIM_TABLE and the defaults */
  int is_default;
  int applies;     /* it may decide a call here: not a built-in table of an absent GPU */
} candidate;

static candidate cands[MAX_CACHE_FILES + 8];   /* and the built-in tables */
static size_t n_cands;
static int user_table;          /* GEMMSHIM_TABLE: that table alone */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* Per device, once chosen: the table (NULL: none) and, without one, why;
 * under a cache file of this GPU's, the built-in defaults (when they fit
 * this GPU) for the calls the file has no row for. */
static struct {
  atomic_int chosen;
  const gs_route_table *t;
  const gs_route_table *fallback;
  gs_reason none_reason;
} devs[GS_MAX_DEVICES];
static pthread_mutex_t choose_lock = PTHREAD_MUTEX_INITIALIZER;

/* GEMMSHIM_PDL=0: the rows of a user's table (GEMMSHIM_TABLE, a cache
 * file) measured with programmatic dependent launch hold nowhere; said when
 * it is read, since the calls they would route may never reach a device's
 * choice of table (their class's precheck finds no row). */
static void say_pdl_rows_passed_over(const gs_route_table *t)
{
  if (!t || gs_config()->pdl) return;
  size_t n = 0;
  for (size_t i = 0; i < t->n_rows; i++) n += t->rows[i].needs_pdl;
  if (n)
    fprintf(stderr, "gemmshim: route table %s: %zu row%s measured with programmatic dependent "
                    "launch passed over (GEMMSHIM_PDL=0)\n",
            t->source, n, n == 1 ? "" : "s");
}

static void add(gs_route_table *t, const char *uuid, int is_default)
{
  if (!is_default) say_pdl_rows_passed_over(t);
  if (!t || n_cands >= sizeof cands / sizeof *cands) {
    gs_rt_free(t);
    return;
  }
  cands[n_cands].t = t;
  snprintf(cands[n_cands].uuid, sizeof cands[n_cands].uuid, "%s", uuid);
  cands[n_cands].is_default = is_default;
  n_cands++;
}

/* cache_dir/routes-UUID.csv, one per GPU this user has tuned. */
static void load_cache(const char *dir)
{
  DIR *d = opendir(dir);
  if (!d) return;   /* no cache yet: the usual case */
  size_t files = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t len = strlen(e->d_name), pre = strlen(CACHE_PREFIX), suf = strlen(CACHE_SUFFIX);
    if (len <= pre + suf || strncmp(e->d_name, CACHE_PREFIX, pre) ||
        strcmp(e->d_name + len - suf, CACHE_SUFFIX) || len - pre - suf >= sizeof cands[0].uuid)
      continue;
    if (files++ == MAX_CACHE_FILES) {
      fprintf(stderr, "gemmshim: more than %d route tables in %s; the rest are not read\n",
              MAX_CACHE_FILES, dir);
      break;
    }
    char path[GS_PATH_MAX + 256], uuid[48];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    snprintf(uuid, sizeof uuid, "%.*s", (int)(len - pre - suf), e->d_name + pre);
    add(gs_rt_load(path, gs_variants, gs_n_variants, stderr), uuid, 0);
  }
  closedir(d);
}

static void load_all(void)
{
  const gs_config_t *cfg = gs_config();
  if (cfg->table_path[0]) {
    user_table = 1;
    gs_route_table *t = gs_rt_load(cfg->table_path, gs_variants, gs_n_variants, stderr);
    if (!t)
      fprintf(stderr, "gemmshim: GEMMSHIM_TABLE cannot be used; calls go to cuBLAS (not_tuned)\n");
    add(t, "", 0);
    return;
  }
  if (cfg->cache_dir[0]) load_cache(cfg->cache_dir);
  for (size_t i = 0; i < gs_n_default_route_tables; i++)
    add(gs_rt_parse(gs_default_route_tables[i], strlen(gs_default_route_tables[i]),
                    "(built-in defaults)", gs_variants, gs_n_variants, stderr),
        "", 1);
}

/* The kernels some row of some table names, found once the tables are
 * loaded. The built-in tables of every GPU are loaded, but one counts only
 * where a GPU of its name is present (with no GPU readable, every one
 * does: the calls then end at no_gpu, as they would), so that one GPU's
 * rows cost the others' calls no table check and their contexts no
 * cuBLASLt handle. Where no built-in table is of a GPU here, the first
 * still reaches the precheck (a device then uses it, and its refusal is
 * said) but names nothing; so does a built-in table of another cuBLAS. */
static const gs_variant *named[64];
static size_t n_named;

static int of_a_gpu_here(const candidate *c)
{
  return !c->is_default ||
         (c->t->has[GS_V_GPU_NAME] && gs_gpu_name_present(c->t->value[GS_V_GPU_NAME]) != 0);
}

static int of_this_cublas(const candidate *c)
{
  const char *known = gs_gpu_cublas_version();
  return !c->is_default || !c->t->has[GS_V_CUBLAS_VERSION] || !known[0] ||
         !strcmp(c->t->value[GS_V_CUBLAS_VERSION], known);
}

static void find_named(void)
{
  int defaults_here = 0, first_default = 1;
  for (size_t c = 0; c < n_cands; c++)
    defaults_here |= cands[c].is_default && of_a_gpu_here(&cands[c]);
  for (size_t c = 0; c < n_cands; c++) {
    const int here = of_a_gpu_here(&cands[c]);
    cands[c].applies = here || (cands[c].is_default && !defaults_here && first_default);
    if (cands[c].is_default) first_default = 0;
    if (!here || !of_this_cublas(&cands[c])) continue;
    for (size_t i = 0; i < cands[c].t->n_rows; i++) {
      const gs_variant *v = cands[c].t->rows[i].kernel;
      size_t j = 0;
      while (j < n_named && named[j] != v) j++;
      if (v && j == n_named && n_named < sizeof named / sizeof *named) named[n_named++] = v;
    }
  }
}

static void load_and_find(void)
{
  load_all();
  find_named();
}

static void ensure_loaded(void) { pthread_once(&load_once, load_and_find); }

int gs_tables_name(const gs_variant *v)
{
  ensure_loaded();
  for (size_t i = 0; i < n_named; i++)
    if (named[i] == v) return 1;
  return 0;
}

/* ---- verdicts, remembered per thread ---------------------------------- */

/* A table lookup walks the ranged rows, and every kernel of a call's class
 * asks: each thread keeps its recent verdicts, so a program's repeated
 * calls cost one key comparison. Tables never change once loaded; a reset
 * (tests) moves the generation on, which empties every cache. */
#define VERDICT_BITS 5
#define VERDICTS (1u << VERDICT_BITS)   /* per thread, direct-mapped */

typedef struct verdict_slot {
  gs_rt_key k;
  const gs_variant *v;
  int device;            /* -1: the precheck over every candidate */
  int pdl;               /* v launches with programmatic dependent launch */
  unsigned generation;   /* 0: empty */
  gs_reason r;
  const gs_rt_row *row;  /* the routing row, when r is GS_R_ROUTED */
} verdict_slot;

static __thread verdict_slot verdicts[VERDICTS];
static atomic_uint generation = 1;

static verdict_slot *slot_for(const gs_rt_key *k, const gs_variant *v, int device)
{
  uint64_t h = (uint64_t)k->m * 0x9e3779b97f4a7c15ull ^ (uint64_t)k->n * 0xc2b2ae3d27d4eb4full ^
               (uint64_t)k->k * 0x165667b19e3779f9ull ^ (uint64_t)(uintptr_t)v ^
               (uint64_t)(k->a_type + 31 * k->layout[0] + 61 * k->layout[1] + 7 * device);
  /* the top bits of a multiply: every input bit reaches them (the kernels
   * of one call differ only in their table entry's address) */
  h *= 0xd6e8feb86659fd93ull;
  return &verdicts[h >> (64 - VERDICT_BITS)];
}

static int remembered(const verdict_slot *s, const gs_rt_key *k, const gs_variant *v, int device,
                      int pdl, unsigned gen)
{
  return s->generation == gen && s->v == v && s->device == device && s->pdl == pdl &&
         !memcmp(&s->k, k, sizeof *k);
}

static void remember(verdict_slot *s, const gs_rt_key *k, const gs_variant *v, int device,
                     int pdl, unsigned gen, gs_reason r, const gs_rt_row *row)
{
  s->row = row;
  s->k = *k;
  s->v = v;
  s->device = device;
  s->pdl = pdl;
  s->generation = gen;
  s->r = r;
}

/* Whether v's calls launch with programmatic dependent launch: rows
 * measured so hold only then. */
static int launches_pdl(const gs_variant *v)
{
  return gs_pdl_usable() && v->launches_pdl && v->launches_pdl();
}

/* One table's verdict on a key for kernel v. */
static gs_reason verdict(const gs_route_table *t, const gs_rt_key *k, const gs_variant *v, int pdl,
                         const gs_rt_row **row)
{
  const gs_rt_row *r = gs_rt_find_for(t, k, v, gs_routes, gs_n_routes, pdl);
  *row = r;
  if (!r) return GS_R_NOT_TUNED;
  if (r->ratio < GS_RT_MIN_RATIO) return GS_R_TUNED_CUBLAS;
  if (!r->kernel) return strcmp(r->route, "cublas") ? GS_R_ROUTE_UNAVAILABLE : GS_R_TUNED_CUBLAS;
  /* Another kernel's row: that kernel is asked on its own turn. Should it
   * not take the call, the row named a kernel that cannot serve it. */
  if (r->kernel != v) return GS_R_ROUTE_UNAVAILABLE;
  return GS_R_ROUTED;
}

gs_reason gs_tables_precheck(const gs_rt_key *k, const gs_variant *v)
{
  ensure_loaded();
  unsigned gen = atomic_load_explicit(&generation, memory_order_relaxed);
  verdict_slot *slot = slot_for(k, v, -1);
  const int pdl = launches_pdl(v);
  if (remembered(slot, k, v, -1, pdl, gen)) return slot->r;
  gs_reason best = GS_R_NOT_TUNED;
  for (size_t i = 0; i < n_cands && best != GS_R_ROUTED; i++) {
    if (!cands[i].applies) continue;
    const gs_rt_row *row;
    gs_reason r = verdict(cands[i].t, k, v, pdl, &row);
    if (r == GS_R_ROUTED || r > best) best = r;
  }
  remember(slot, k, v, -1, pdl, gen, best, NULL);
  return best;
}

/* GEMMSHIM_VERBOSE: the table chosen, and this GPU's values as a table's
 * validator lines (to write or check a table by hand). */
static void say_identity(int dev, const gs_rt_identity *id, const char *source)
{
  fprintf(stderr, "gemmshim: device %d (%s): route table %s\n", dev, id->uuid,
          source ? source : "none");
  for (int v = 0; v < GS_V_COUNT; v++)
    fprintf(stderr, "gemmshim: device %d: Validator,%s,%s\n", dev, gs_rt_validator_name(v),
            gs_rt_identity_value(id, v));
}

/* A fork while another thread chooses would leave the child's copy of the
 * lock held forever: the fork waits for the choice instead. */
static void lock_for_fork(void) { pthread_mutex_lock(&choose_lock); }
static void unlock_after_fork(void) { pthread_mutex_unlock(&choose_lock); }
static void guard_fork(void) { pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork); }
static pthread_once_t fork_guard_once = PTHREAD_ONCE_INIT;

static void choose(int dev)
{
  pthread_once(&fork_guard_once, guard_fork);
  const gs_rt_identity *known = gs_gpu_identity(dev);
  if (!known) return;   /* asked again on the next call */
  gs_rt_identity here = *known;
  snprintf(here.cublas_version, sizeof here.cublas_version, "%s", gs_gpu_cublas_version());
  const gs_rt_identity *id = &here;
  pthread_mutex_lock(&choose_lock);
  if (atomic_load_explicit(&devs[dev].chosen, memory_order_relaxed)) {
    pthread_mutex_unlock(&choose_lock);
    return;
  }
  const candidate *c = NULL, *defaults = NULL;
  if (user_table) {
    c = n_cands ? &cands[0] : NULL;
  } else {
    for (size_t i = 0; i < n_cands && !c; i++)
      if (!cands[i].is_default && !strcmp(cands[i].uuid, id->uuid)) c = &cands[i];
    /* the built-in table measured on a GPU of this name, else the first */
    for (size_t i = 0; i < n_cands && !defaults; i++)
      if (cands[i].is_default && cands[i].t->has[GS_V_GPU_NAME] &&
          !strcmp(cands[i].t->value[GS_V_GPU_NAME], id->gpu_name))
        defaults = &cands[i];
    for (size_t i = 0; i < n_cands && !defaults; i++)
      if (cands[i].is_default) defaults = &cands[i];
    if (!c) c = defaults;
    if (c == defaults) defaults = NULL;   /* no file of this GPU's: the defaults are the table */
  }
  devs[dev].t = NULL;
  devs[dev].fallback = NULL;
  devs[dev].none_reason = GS_R_NOT_TUNED;
  if (gs_config()->verbose) say_identity(dev, id, c ? c->t->source : NULL);
  char why[512], soft[512];
  /* the defaults under this GPU's own file: silent where they do not fit
   * (they were measured elsewhere) */
  if (defaults && gs_rt_validate(defaults->t, id, why, sizeof why, soft, sizeof soft) == 0)
    devs[dev].fallback = defaults->t;
  if (c) {
    if (gs_rt_validate(c->t, id, why, sizeof why, soft, sizeof soft) == 0) {
      devs[dev].t = c->t;
      if (soft[0])
        fprintf(stderr, "gemmshim: route table %s on device %d (%s): %s; used anyway\n",
                c->t->source, dev, id->uuid, soft);
    } else if (devs[dev].fallback) {
      devs[dev].t = devs[dev].fallback;
      devs[dev].fallback = NULL;
      fprintf(stderr, "gemmshim: route table %s is not used on device %d (%s): %s; the built-in "
                      "defaults apply\n",
              c->t->source, dev, id->uuid, why);
    } else {
      devs[dev].none_reason = GS_R_TABLE_REFUSED;
      fprintf(stderr, "gemmshim: route table %s is not used on device %d (%s): %s; its calls "
                      "go to cuBLAS (table_refused)\n",
              c->t->source, dev, id->uuid, why);
    }
  }
  atomic_store_explicit(&devs[dev].chosen, 1, memory_order_release);
  pthread_mutex_unlock(&choose_lock);
}

const gs_route_table *gs_tables_for_device(int dev)
{
  if (dev < 0 || dev >= GS_MAX_DEVICES) return NULL;
  ensure_loaded();
  if (!atomic_load_explicit(&devs[dev].chosen, memory_order_acquire)) choose(dev);
  if (!atomic_load_explicit(&devs[dev].chosen, memory_order_acquire)) return NULL;
  return devs[dev].t;
}

gs_reason gs_tables_decide(int dev, const gs_rt_key *k, const gs_variant *v,
                           const gs_rt_row **row)
{
  *row = NULL;
  const gs_route_table *t = gs_tables_for_device(dev);
  if (!t)
    return dev >= 0 && dev < GS_MAX_DEVICES &&
                   atomic_load_explicit(&devs[dev].chosen, memory_order_acquire)
               ? devs[dev].none_reason
               : GS_R_NOT_TUNED;
  unsigned gen = atomic_load_explicit(&generation, memory_order_relaxed);
  verdict_slot *slot = slot_for(k, v, dev);
  const int pdl = launches_pdl(v);
  if (remembered(slot, k, v, dev, pdl, gen)) {
    *row = slot->row;
    return slot->r;
  }
  gs_reason r = verdict(t, k, v, pdl, row);
  if (r == GS_R_NOT_TUNED && devs[dev].fallback) r = verdict(devs[dev].fallback, k, v, pdl, row);
  if (r != GS_R_ROUTED) *row = NULL;
  remember(slot, k, v, dev, pdl, gen, r, *row);
  return r;
}

void gs_tables_reset(void)
{
  atomic_fetch_add(&generation, 1);
  for (size_t i = 0; i < n_cands; i++) gs_rt_free(cands[i].t);
  memset(cands, 0, sizeof cands);
  n_cands = 0;
  n_named = 0;
  user_table = 0;
  for (int d = 0; d < GS_MAX_DEVICES; d++) {
    atomic_store(&devs[d].chosen, 0);
    devs[d].t = NULL;
    devs[d].fallback = NULL;
  }
  pthread_once_t fresh = PTHREAD_ONCE_INIT;
  memcpy(&load_once, &fresh, sizeof fresh);
}
