#include "tally.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "names.h"

#define SLOTS 1024u       /* distinct rows per thread table (power of two) */
#define MAX_PROBE 64u
#define MERGE_ROWS 8192u  /* distinct rows a log write merges (power of two) */

/* ---- counting ----------------------------------------------------------- */

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
  atomic_uint_least64_t written;   /* of count, how much a log write took */
} row;

typedef struct table {
  struct table *next;       /* all tables ever made; never unlinked */
  atomic_int owned;         /* a live thread counts into it */
  atomic_uint_least64_t overflow, overflow_written;
  row rows[SLOTS];
} table;

static _Atomic(table *) all_tables;
static __thread table *my_table;
static pthread_key_t release_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* At the thread's end, from its key's destructor: the table goes back for
 * another thread, and is no longer this thread's. A GEMM from a later
 * destructor of the same thread claims a table again (and sets the key
 * again, so it is released again). */
static void release_table(void *t)
{
  if (my_table == t) my_table = NULL;
  atomic_store(&((table *)t)->owned, 0);
}

static void arm_exit_paths(void);
static void at_fork_child(void);

static void make_key(void)
{
  pthread_key_create(&release_key, release_table);
  pthread_atfork(NULL, NULL, at_fork_child);
  arm_exit_paths();
}

/* A thread's table: a released one when there is one (threads come and
 * go; tables stay bounded by the most threads alive at once), else a new
 * one. Allocation happens once per thread, never per call. Only the owner
 * writes a table. */
static table *thread_table(void)
{
  if (my_table) return my_table;
  pthread_once(&key_once, make_key);
  table *mine = NULL;
  for (table *t = atomic_load(&all_tables); t; t = t->next) {
    int free_ = 0;
    if (atomic_compare_exchange_strong(&t->owned, &free_, 1)) {
      mine = t;
      break;
    }
  }
  if (!mine) {
    mine = calloc(1, sizeof *mine);
    if (!mine) return NULL;
    atomic_store(&mine->owned, 1);
    mine->next = atomic_load(&all_tables);
    while (!atomic_compare_exchange_weak(&all_tables, &mine->next, mine)) {}
  }
  my_table = mine;
  pthread_setspecific(release_key, mine);
  return mine;
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
      /* Only the owning thread writes the row, so a load and a store
       * count exactly; the atomics keep a reader from a torn value. */
      atomic_store_explicit(&r->count,
                            atomic_load_explicit(&r->count, memory_order_relaxed) + 1,
                            memory_order_relaxed);
      return;
    }
  }
  atomic_fetch_add_explicit(&t->overflow, 1, memory_order_relaxed);
}

/* ---- reading ------------------------------------------------------------- */

/* Every row of every table, merged by key into a sorted array. */
typedef struct merged { key k; uint64_t count; } merged;

static int key_cmp(const key *x, const key *y)
{
  int c = strcmp(x->entry_name, y->entry_name);
  if (c) return c;
  return memcmp(x, y, sizeof *x);
}

static int cmp_merged(const void *a, const void *b)
{
  return key_cmp(&((const merged *)a)->k, &((const merged *)b)->k);
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

/* ---- one row as text, without stdio (the log is also written from a
 * signal handler, where only async-signal-safe calls may be made) --------- */

typedef struct text { char *p; size_t len, cap; } text;

static void put_str(text *t, const char *s)
{
  for (; *s && t->len < t->cap; s++) t->p[t->len++] = *s;
}

static void put_u64(text *t, uint64_t v)
{
  char digits[24];
  int n = 0;
  do digits[n++] = (char)('0' + v % 10); while ((v /= 10) != 0);
  while (n && t->len < t->cap) t->p[t->len++] = digits[--n];
}

static void put_i64(text *t, int64_t v)
{
  if (v < 0) {
    put_str(t, "-");
    put_u64(t, (uint64_t)0 - (uint64_t)v);
  } else {
    put_u64(t, (uint64_t)v);
  }
}

static void put_row(text *t, long pid, const key *k, uint64_t count)
{
  put_i64(t, pid);
  const char *names[7] = { k->entry_name, gs_dtype_name(k->a_type), gs_dtype_name(k->b_type),
                           gs_dtype_name(k->c_type), gs_compute_name(k->compute), k->layout,
                           gs_epilogue_name(k->epilogue) };
  for (int i = 0; i < 7; i++) {
    put_str(t, ",");
    put_str(t, names[i]);
  }
  const int64_t dims[4] = { k->m, k->n, k->k, k->batch };
  for (int i = 0; i < 4; i++) {
    put_str(t, ",");
    put_i64(t, dims[i]);
  }
  put_str(t, ",");
  put_str(t, k->route);
  put_str(t, ",");
  put_str(t, gs_reason_name((gs_reason)k->reason));
  put_str(t, ",");
  put_u64(t, count);
  put_str(t, ",");
  put_i64(t, k->device);
  put_str(t, "\n");
}

static void put_overflow(text *t, long pid, uint64_t count)
{
  put_i64(t, pid);
  put_str(t, ",(other),-,-,-,-,-,-,-1,-1,-1,-1,-,too_many_distinct_rows,");
  put_u64(t, count);
  put_str(t, ",-1\n");
}

size_t gs_tally_write_csv(FILE *out)
{
  size_t n;
  uint64_t overflow;
  merged *rows = merge_rows(&n, &overflow);
  long pid = (long)getpid();
  fprintf(out, "%s\n", GS_LOG_HEADER);
  char buf[512];
  for (size_t i = 0; i < n; i++) {
    text t = { buf, 0, sizeof buf };
    put_row(&t, pid, &rows[i].k, rows[i].count);
    fwrite(buf, 1, t.len, out);
  }
  if (overflow) {
    text t = { buf, 0, sizeof buf };
    put_overflow(&t, pid, overflow);
    fwrite(buf, 1, t.len, out);
  }
  free(rows);
  return n;
}

/* ---- writing the log ----------------------------------------------------------- */

/* What a log write takes: the counts not yet written, merged by key in a
 * static table (no allocation: a signal handler may be writing). */
static merged merge_buf[MERGE_ROWS];
static unsigned char merge_used[MERGE_ROWS];
static size_t merge_n;
static uint64_t merge_overflow;
static atomic_int writing;   /* one log write at a time in this process */

static void merge_new(const key *k, uint64_t hash, uint64_t count)
{
  for (unsigned i = 0; i < MERGE_ROWS; i++) {
    unsigned s = (unsigned)(hash + i) & (MERGE_ROWS - 1);
    if (!merge_used[s]) {
      merge_used[s] = 1;
      merge_buf[s].k = *k;
      merge_buf[s].count = count;
      merge_n++;
      return;
    }
    if (!memcmp(&merge_buf[s].k, k, sizeof *k)) {
      merge_buf[s].count += count;
      return;
    }
  }
  merge_overflow += count;
}

/* Take what every table counted since the last write; marks it written.
 * Returns whether there is anything. */
static int collect_new(void)
{
  memset(merge_used, 0, sizeof merge_used);
  merge_n = 0;
  merge_overflow = 0;
  for (table *t = atomic_load(&all_tables); t; t = t->next) {
    uint64_t o = atomic_load(&t->overflow), ow = atomic_load(&t->overflow_written);
    merge_overflow += o - ow;
    atomic_store(&t->overflow_written, o);
    for (unsigned i = 0; i < SLOTS; i++) {
      row *r = &t->rows[i];
      if (!atomic_load_explicit(&r->ready, memory_order_acquire)) continue;
      uint64_t c = atomic_load_explicit(&r->count, memory_order_relaxed);
      uint64_t w = atomic_load_explicit(&r->written, memory_order_relaxed);
      if (c == w) continue;
      atomic_store_explicit(&r->written, c, memory_order_relaxed);
      merge_new(&r->k, r->hash, c - w);
    }
  }
  return merge_n > 0 || merge_overflow > 0;
}

/* Sorted by key, as the rows have always been written: a heap sort of the
 * used slots, moved to the front (qsort may allocate). */
static void sort_merged(void)
{
  size_t n = 0;
  for (unsigned s = 0; s < MERGE_ROWS; s++)
    if (merge_used[s]) merge_buf[n++] = merge_buf[s];
  for (size_t start = n / 2; start-- > 0;) {
    for (size_t root = start; 2 * root + 1 < n;) {
      size_t child = 2 * root + 1;
      if (child + 1 < n && key_cmp(&merge_buf[child].k, &merge_buf[child + 1].k) < 0) child++;
      if (key_cmp(&merge_buf[root].k, &merge_buf[child].k) >= 0) break;
      merged tmp = merge_buf[root]; merge_buf[root] = merge_buf[child]; merge_buf[child] = tmp;
      root = child;
    }
  }
  for (size_t end = n; end-- > 1;) {
    merged tmp = merge_buf[0]; merge_buf[0] = merge_buf[end]; merge_buf[end] = tmp;
    for (size_t root = 0; 2 * root + 1 < end;) {
      size_t child = 2 * root + 1;
      if (child + 1 < end && key_cmp(&merge_buf[child].k, &merge_buf[child + 1].k) < 0) child++;
      if (key_cmp(&merge_buf[root].k, &merge_buf[child].k) >= 0) break;
      tmp = merge_buf[root]; merge_buf[root] = merge_buf[child]; merge_buf[child] = tmp;
      root = child;
    }
  }
  merge_n = n;
}

static int write_all(int fd, const char *p, size_t len)
{
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

static void say(const char *a, const char *b)
{
  if (write_all(2, a, strlen(a)) == 0 && write_all(2, b, strlen(b)) == 0) write_all(2, "\n", 1);
}

/* Several processes may share one log path (torchrun ranks without %p):
 * whole blocks are appended under an exclusive record lock, the header only
 * into an empty file, so no process's rows are lost. Only async-signal-safe
 * calls from here on. */
int gs_tally_flush_log(void)
{
  const gs_config_t *cfg = gs_config();
  if (!cfg->log_path[0]) return 0;
  if (atomic_exchange(&writing, 1)) return 0;   /* a write is under way (interrupted?) */
  int rc = 0;
  if (collect_new()) {
    sort_merged();
    int fd = open(cfg->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      say("gemmshim: cannot write GEMMSHIM_LOG ", cfg->log_path);
      rc = -1;
    } else {
      struct flock lk;
      memset(&lk, 0, sizeof lk);
      lk.l_type = F_WRLCK;
      lk.l_whence = SEEK_SET;
      while (fcntl(fd, F_SETLKW, &lk) < 0 && errno == EINTR) {}
      struct stat st;
      if (fstat(fd, &st) == 0 && st.st_size == 0)
        rc |= write_all(fd, GS_LOG_HEADER "\n", sizeof GS_LOG_HEADER);
      long pid = (long)getpid();
      static char buf[64 << 10];
      text t = { buf, 0, sizeof buf };
      for (size_t i = 0; i < merge_n; i++) {
        if (t.len > sizeof buf - 1024) {
          rc |= write_all(fd, buf, t.len);
          t.len = 0;
        }
        put_row(&t, pid, &merge_buf[i].k, merge_buf[i].count);
      }
      if (merge_overflow) put_overflow(&t, pid, merge_overflow);
      rc |= write_all(fd, buf, t.len);
      lk.l_type = F_UNLCK;
      fcntl(fd, F_SETLK, &lk);
      close(fd);
    }
  }
  atomic_store(&writing, 0);
  return rc;
}

void gs_tally_reset(void)
{
  for (table *t = atomic_load(&all_tables); t; t = t->next) {
    atomic_store(&t->overflow, 0);
    atomic_store(&t->overflow_written, 0);
    for (unsigned i = 0; i < SLOTS; i++) {
      atomic_store(&t->rows[i].ready, 0);
      atomic_store(&t->rows[i].count, 0);
      atomic_store(&t->rows[i].written, 0);
    }
  }
}

/* ---- when the log is written ------------------------------------------------------- */

/* The child of a fork starts with the parent's counts: they are the
 * parent's to report. Its own rows go to its own file (%p again). Only the
 * forking thread lives on in the child. */
static void at_fork_child(void)
{
  gs_tally_reset();
  for (table *t = atomic_load(&all_tables); t; t = t->next)
    if (t != my_table) atomic_store(&t->owned, 0);
  atomic_store(&writing, 0);
  gs_config_after_fork();
}

/* SIGTERM (torchrun stops its workers with it): write the log, then end as
 * the process would have without the shim: the handler that was there
 * before runs, or the default action (termination) by re-raising. A handler
 * the program installs later replaces this one. */
static struct sigaction saved_term;

static void on_term(int sig, siginfo_t *info, void *uctx)
{
  int saved_errno = errno;
  gs_tally_flush_log();
  errno = saved_errno;
  if (saved_term.sa_flags & SA_SIGINFO) {
    saved_term.sa_sigaction(sig, info, uctx);
  } else if (saved_term.sa_handler == SIG_DFL) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);   /* delivered when this handler returns: the process ends */
  } else if (saved_term.sa_handler != SIG_IGN) {
    saved_term.sa_handler(sig);
  }
}

static void at_quick_exit_flush(void) { gs_tally_flush_log(); }

__attribute__((destructor)) static void flush_at_exit(void)
{
  gs_tally_flush_log();
}

/* At the first GEMM call: SIGTERM (unless the program ignores it) and
 * quick_exit write the log too. */
static void arm_exit_paths(void)
{
  gs_config();   /* parsed now: the handler may only read it */
  at_quick_exit(at_quick_exit_flush);
  if (sigaction(SIGTERM, NULL, &saved_term) != 0) return;
  if (!(saved_term.sa_flags & SA_SIGINFO) && saved_term.sa_handler == SIG_IGN) return;
  struct sigaction ours;
  memset(&ours, 0, sizeof ours);
  ours.sa_sigaction = on_term;
  ours.sa_mask = saved_term.sa_mask;
  ours.sa_flags = SA_SIGINFO | (saved_term.sa_flags & (SA_RESTART | SA_ONSTACK));
  sigaction(SIGTERM, &ours, NULL);
}
