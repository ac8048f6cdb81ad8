#include "tally.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "names.h"

#define SLOTS 1024u       /* distinct rows per thread table (power of two) */
#define MAX_PROBE 64u

/* The key is compared with memcmp: always built from a zeroed struct. */
typedef struct key {
  int64_t m, n, k, batch;
  const char *entry_name;
  const char *route;        /* kernel name, or "cublas" */
  int32_t a_type, b_type, c_type, compute;
  int32_t reason;
  int32_t epilogue;
  int32_t device;           /* -1: the router did not need to know */
  char layout[4];
} key;

typedef struct row {
  atomic_uint ready;        /* 0 empty, 1 key written (release) */
  uint64_t hash;            /* of k: most mismatches end here */
  key k;
  atomic_uint_least64_t count;
} row;

typedef struct table {
  struct table *next;       /* all tables ever made; never unlinked */
  atomic_int owned;         /* a live thread counts into it */
  atomic_uint_least64_t overflow;
  row rows[SLOTS];
} table;

static _Atomic(table *) all_tables;
static __thread table *my_table;
static pthread_key_t release_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void release_table(void *t)
{
  atomic_store(&((table *)t)->owned, 0);
}

static void at_fork_child(void);

static void make_key(void)
{
  pthread_key_create(&release_key, release_table);
  pthread_atfork(NULL, NULL, at_fork_child);
}

/* A thread's table: a released one when there is one (threads come and
 * go; tables stay bounded by the most threads alive at once), else a new
 * one. Allocation happens once per thread, never per call. */
static table *thread_table(void)
{
  if (my_table) return my_table;
  pthread_once(&key_once, make_key);
  for (table *t = atomic_load(&all_tables); t; t = t->next) {
    int free_ = 0;
    if (atomic_compare_exchange_strong(&t->owned, &free_, 1)) {
      my_table = t;
      break;
    }
  }
  if (!my_table) {
    table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    atomic_store(&t->owned, 1);
    t->next = atomic_load(&all_tables);
    while (!atomic_compare_exchange_weak(&all_tables, &t->next, t)) {}
    my_table = t;
  }
  pthread_setspecific(release_key, my_table);
  return my_table;
}

/* Cheap and good enough: the fields that vary most between rows. */
static uint64_t hash_key(const key *k)
{
  uint64_t h = (uint64_t)k->m * 0x9e3779b97f4a7c15ull;
  h ^= (uint64_t)k->n * 0xc2b2ae3d27d4eb4full;
  h ^= (uint64_t)k->k * 0x165667b19e3779f9ull;
  h ^= ((uint64_t)(uintptr_t)k->entry_name >> 3) ^ ((uint64_t)(uintptr_t)k->route << 7) ^
       ((uint64_t)k->reason << 40) ^ ((uint64_t)(uint32_t)k->a_type << 48) ^
       (uint64_t)k->batch ^ ((uint64_t)(unsigned char)k->layout[0] << 24) ^
       ((uint64_t)(unsigned char)k->layout[1] << 32);
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

void gs_tally_add(const gs_gemm *g, const gs_decision *d)
{
  table *t = thread_table();
  if (!t) return;
  key k;
  memset(&k, 0, sizeof k);
  k.m = g->m; k.n = g->n; k.k = g->k; k.batch = g->batch;
  k.entry_name = g->entry_name;
  k.route = d->variant ? d->variant->name : "cublas";
  k.a_type = g->a_type; k.b_type = g->b_type; k.c_type = g->c_type;
  k.compute = g->compute_type;
  k.reason = (int32_t)d->reason;
  k.epilogue = g->epilogue;
  k.device = d->device;
  gs_layout_name(g, k.layout);
  uint64_t h = hash_key(&k);
  for (unsigned i = 0; i < MAX_PROBE; i++) {
    row *r = &t->rows[(h + i) & (SLOTS - 1)];
    if (!atomic_load_explicit(&r->ready, memory_order_relaxed)) {
      r->hash = h;
      r->k = k;
      atomic_store_explicit(&r->count, 1, memory_order_relaxed);
      atomic_store_explicit(&r->ready, 1, memory_order_release);
      return;
    }
    if (r->hash == h && !memcmp(&r->k, &k, sizeof k)) {
      /* Only this thread writes the row: a plain increment would do, the
       * atomic keeps a reader at exit from seeing a torn value. */
      atomic_store_explicit(&r->count,
                            atomic_load_explicit(&r->count, memory_order_relaxed) + 1,
                            memory_order_relaxed);
      return;
    }
  }
  atomic_fetch_add_explicit(&t->overflow, 1, memory_order_relaxed);
}

/* Every row of every table, merged by key into a sorted array. */
typedef struct merged { key k; uint64_t count; } merged;

static int cmp_merged(const void *a, const void *b)
{
  const key *x = &((const merged *)a)->k, *y = &((const merged *)b)->k;
  int c = strcmp(x->entry_name, y->entry_name);
  if (c) return c;
  return memcmp(x, y, sizeof *x);
}

static merged *merge_rows(size_t *n_out, uint64_t *overflow)
{
  size_t n = 0, cap = 0;
  merged *out = NULL;
  *overflow = 0;
  for (table *t = atomic_load(&all_tables); t; t = t->next) {
    *overflow += atomic_load(&t->overflow);
    for (unsigned i = 0; i < SLOTS; i++) {
      row *r = &t->rows[i];
      if (!atomic_load_explicit(&r->ready, memory_order_acquire)) continue;
      if (n == cap) {
        size_t nc = cap ? 2 * cap : 64;
        merged *m = realloc(out, nc * sizeof *m);
        if (!m) { *n_out = n; return out; }
        out = m; cap = nc;
      }
      out[n].k = r->k;
      out[n].count = atomic_load_explicit(&r->count, memory_order_relaxed);
      n++;
    }
  }
  if (n) qsort(out, n, sizeof *out, cmp_merged);
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    if (w && !memcmp(&out[w - 1].k, &out[i].k, sizeof out[i].k))
      out[w - 1].count += out[i].count;
    else
      out[w++] = out[i];
  }
  *n_out = w;
  return out;
}

uint64_t gs_tally_count(const char *route, int reason)
{
  uint64_t total = 0;
  for (table *t = atomic_load(&all_tables); t; t = t->next)
    for (unsigned i = 0; i < SLOTS; i++) {
      row *r = &t->rows[i];
      if (!atomic_load_explicit(&r->ready, memory_order_acquire)) continue;
      if (route && strcmp(route, r->k.route)) continue;
      if (reason >= 0 && reason != r->k.reason) continue;
      total += atomic_load_explicit(&r->count, memory_order_relaxed);
    }
  return total;
}

size_t gs_tally_write_csv(FILE *out)
{
  size_t n;
  uint64_t overflow;
  merged *rows = merge_rows(&n, &overflow);
  long pid = (long)getpid();
  fprintf(out, "%s\n", GS_LOG_HEADER);
  for (size_t i = 0; i < n; i++) {
    const key *k = &rows[i].k;
    fprintf(out, "%ld,%s,%s,%s,%s,%s,%s,%s,%lld,%lld,%lld,%lld,%s,%s,%llu,%d\n", pid,
            k->entry_name, gs_dtype_name(k->a_type), gs_dtype_name(k->b_type),
            gs_dtype_name(k->c_type), gs_compute_name(k->compute), k->layout,
            gs_epilogue_name(k->epilogue),
            (long long)k->m, (long long)k->n, (long long)k->k,
            (long long)k->batch, k->route, gs_reason_name((gs_reason)k->reason),
            (unsigned long long)rows[i].count, (int)k->device);
  }
  if (overflow)
    fprintf(out, "%ld,(other),-,-,-,-,-,-,-1,-1,-1,-1,-,too_many_distinct_rows,%llu,-1\n",
            pid, (unsigned long long)overflow);
  free(rows);
  return n;
}

static int anything_counted(void)
{
  for (table *t = atomic_load(&all_tables); t; t = t->next) {
    if (atomic_load(&t->overflow)) return 1;
    for (unsigned i = 0; i < SLOTS; i++)
      if (atomic_load_explicit(&t->rows[i].ready, memory_order_acquire)) return 1;
  }
  return 0;
}

/* Several processes may share one log path (torchrun ranks without %p):
 * append whole blocks under an exclusive lock, header only into an empty
 * file, so no process's rows are lost. */
int gs_tally_flush_log(void)
{
  if (!anything_counted()) return 0;
  const gs_config_t *cfg = gs_config();
  if (!cfg->log_path[0]) return 0;
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  if (!mem) return -1;
  gs_tally_write_csv(mem);
  if (fclose(mem) != 0) { free(buf); return -1; }
  int fd = open(cfg->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    fprintf(stderr, "gemmshim: cannot write GEMMSHIM_LOG %s\n", cfg->log_path);
    free(buf);
    return -1;
  }
  flock(fd, LOCK_EX);
  struct stat st;
  const char *p = buf;
  size_t left = len;
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    /* the file has its header already */
    const char *nl = memchr(buf, '\n', len);
    if (nl) { left -= (size_t)(nl + 1 - buf); p = nl + 1; }
  }
  int rc = 0;
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w <= 0) { rc = -1; break; }
    p += w;
    left -= (size_t)w;
  }
  flock(fd, LOCK_UN);
  close(fd);
  free(buf);
  return rc;
}

void gs_tally_reset(void)
{
  for (table *t = atomic_load(&all_tables); t; t = t->next) {
    atomic_store(&t->overflow, 0);
    for (unsigned i = 0; i < SLOTS; i++) {
      atomic_store(&t->rows[i].ready, 0);
      atomic_store(&t->rows[i].count, 0);
    }
  }
}

/* The child of a fork starts with the parent's counts: they are the
 * parent's to report. Only the forking thread lives on in the child. */
static void at_fork_child(void)
{
  gs_tally_reset();
  for (table *t = atomic_load(&all_tables); t; t = t->next)
    if (t != my_table) atomic_store(&t->owned, 0);
}

__attribute__((destructor)) static void flush_at_exit(void)
{
  gs_tally_flush_log();
}
