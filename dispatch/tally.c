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
#include "gpu.h"
#include "names.h"
#include "route_table.h"
#include "variants.h"

#define SLOTS 1024u       /* distinct rows per thread table (power of two) */
#define MAX_PROBE 64u
#define MERGE_ROWS 8192u  /* distinct rows a log write merges (power of two) */
#define MERGE_HISTS 512u  /* of those, how many get a median */

/* ---- counting ----------------------------------------------------------- */

/* The key is compared with memcmp: always built from a zeroed struct, and
 * laid out without padding (a struct copy need not copy padding bytes). */
typedef struct key {
  int64_t m, n, k, batch;
  int64_t ld[4];            /* lda, ldb, ldc, ldd (BLAS: ldd = ldc) */
  int64_t stride[4];        /* batch strides of A, B, C, D (0: not batched) */
  int64_t workspace;        /* cuBLASLt: the bytes of workspace the caller gave; -1 BLAS */
  const char *entry_name;
  const char *route;        /* kernel name, or "cublas" */
  int32_t a_type, b_type, c_type, compute;
  int32_t reason;
  int32_t epilogue;
  int32_t device;           /* -1: the router did not need to know */
  int32_t entry_class;      /* GS_EC_* */
  int32_t pointer_mode;     /* GS_NONE: the handle's state was not read */
  int32_t math_mode;        /* GS_NONE: not read, or cuBLASLt (none) */
  uint8_t align_ptr[4];     /* alignment class of A, B, C, D (bytes, 1..16) */
  uint8_t align_ld[4];      /* ... and of lda, ldb, ldc, ldd in bytes */
  char layout[4];
  int32_t zero;             /* explicit tail padding */
} key;
_Static_assert(sizeof(key) == 13 * 8 + 2 * sizeof(void *) + 10 * 4 + 8 + 4 + 4,
               "key has padding: memcmp would compare it");

/* What GEMMSHIM_TIME measured of a row: sampled calls timed and their
 * total, calls in a capturing stream, samples whose time was lost. */
typedef struct row_time { uint64_t timed, ns, captured, dropped; } row_time;

typedef struct gs_tally_row {
  atomic_uint ready;        /* 0 empty, 1 key written (release) */
  uint64_t hash;            /* of k: most mismatches end here */
  key k;
  atomic_uint_least64_t count;
  atomic_uint_least64_t written;   /* of count, how much a log write took */
  /* GEMMSHIM_TIME: added to by whichever thread reads a sample's events;
   * time_written and the second half of hist (GS_TIME_BINS counts, then
   * as many written) only by a log write. */
  atomic_uint_least64_t timed, time_ns, captured, dropped;
  row_time time_written;
  _Atomic(atomic_uint *) hist;     /* made at the row's first timed call */
} row;

typedef struct table {
  struct table *next;       /* all tables ever made; never unlinked */
  atomic_int owned;         /* a live thread counts into it */
  atomic_uint_least64_t overflow, overflow_written;
  /* Calls by route (0: cuBLAS, 1 + i: gs_variants[i]) and reason, exact
   * however many distinct rows there are: what gs_tally_count reads. */
  atomic_uint_least64_t by_route[GS_TALLY_ROUTES][GS_R_COUNT];
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
  h ^= (uint64_t)k->ld[0] * 0x94d049bb133111ebull ^ (uint64_t)k->ld[1] << 17 ^
       (uint64_t)k->ld[2] << 33 ^ (uint64_t)k->stride[0] * 0x2545f4914f6cdd1dull ^
       (uint64_t)k->align_ptr[0] << 56;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

/* A route's index in by_route: 0 for cuBLAS (and a kernel outside the
 * table, which cannot be routed), 1 + its place in gs_variants. */
static unsigned route_id(const gs_variant *v)
{
  for (size_t i = 0; v && i < gs_n_variants && i + 1 < GS_TALLY_ROUTES; i++)
    if (gs_variants[i] == v) return (unsigned)i + 1;
  return 0;
}

static int route_id_of_name(const char *name)
{
  if (!strcmp(name, "cublas")) return 0;
  for (size_t i = 0; i < gs_n_variants && i + 1 < GS_TALLY_ROUTES; i++)
    if (!strcmp(gs_variants[i]->name, name)) return (int)i + 1;
  return -1;
}

static void count_route(table *t, const gs_decision *d)
{
  if ((unsigned)d->reason < GS_R_COUNT) {
    atomic_uint_least64_t *c = &t->by_route[route_id(d->variant)][d->reason];
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);   /* only this thread writes it */
  }
}

static void key_of_call(const gs_gemm *g, const gs_decision *d, key *out)
{
  /* copied from a zero key, not memset: a copy is a few vector stores,
   * memset of this size a slow-starting rep stos */
  static const key zero;
  key *k = out;
  *k = zero;
  k->m = g->m; k->n = g->n; k->k = g->k; k->batch = g->batch;
  k->entry_class = gs_rt_entry_class_of(g);
  /* The BLAS entry points write C: D is C (its pointer, ld, stride, type). */
  const int lt = k->entry_class == GS_EC_LT, batched = k->entry_class != GS_EC_GEMM;
  const void *ptr[4] = { g->A, g->B, g->C, lt ? (const void *)g->D : g->C };
  const int types[4] = { g->a_type, g->b_type, g->c_type,
                         lt && g->d_type != GS_NONE ? g->d_type : g->c_type };
  k->ld[0] = g->lda; k->ld[1] = g->ldb; k->ld[2] = g->ldc; k->ld[3] = lt ? g->ldd : g->ldc;
  if (batched) {
    k->stride[0] = g->stride_a; k->stride[1] = g->stride_b; k->stride[2] = g->stride_c;
    k->stride[3] = lt ? g->stride_d : g->stride_c;
  }
  /* the tuner measures a cuBLASLt call with the workspace it had */
  k->workspace = lt ? (int64_t)g->workspace_size : -1;
  for (int i = 0; i < 4; i++) {
    /* as the route table's key reckons them (route_table.c) */
    k->align_ptr[i] = (uint8_t)gs_rt_align_of((uint64_t)(uintptr_t)ptr[i]);
    k->align_ld[i] = (uint8_t)gs_rt_align_of((uint64_t)k->ld[i] * (uint64_t)gs_dtype_bytes(types[i]));
  }
  /* GS_NONE until read (cuBLASLt's come with its descriptor) */
  k->pointer_mode = g->pointer_mode;
  k->math_mode = lt ? GS_NONE : g->math_mode;
  k->entry_name = g->entry_name;
  k->route = d->variant ? d->variant->name : "cublas";
  k->a_type = g->a_type; k->b_type = g->b_type; k->c_type = g->c_type;
  k->compute = g->compute_type;
  k->reason = (int32_t)d->reason;
  k->epilogue = g->epilogue;
  k->device = d->device;
  gs_layout_name(g, k->layout);
}

/* The thread's row for k: found, else made when make is set; NULL when
 * there is none (or no room: the caller counts an overflow). */
static row *find_row(table *t, const key *k, int make)
{
  uint64_t h = hash_key(k);
  for (unsigned i = 0; i < MAX_PROBE; i++) {
    row *r = &t->rows[(h + i) & (SLOTS - 1)];
    if (!atomic_load_explicit(&r->ready, memory_order_relaxed)) {
      if (!make) return NULL;
      r->hash = h;
      r->k = *k;
      atomic_store_explicit(&r->count, 0, memory_order_relaxed);
      atomic_store_explicit(&r->ready, 1, memory_order_release);
      return r;
    }
    if (r->hash == h && !memcmp(&r->k, k, sizeof *k)) return r;
  }
  return NULL;
}

gs_tally_row *gs_tally_add(const gs_gemm *g, const gs_decision *d)
{
  table *t = thread_table();
  if (!t) return NULL;
  count_route(t, d);
  key k;
  key_of_call(g, d, &k);
  row *r = find_row(t, &k, 1);
  if (!r) {
    atomic_fetch_add_explicit(&t->overflow, 1, memory_order_relaxed);
    return NULL;
  }
  /* Only the owning thread writes the count, so a load and a store count
   * exactly; the atomics keep a reader from a torn value. */
  atomic_store_explicit(&r->count, atomic_load_explicit(&r->count, memory_order_relaxed) + 1,
                        memory_order_relaxed);
  return r;
}

uint64_t gs_tally_calls_before(const gs_gemm *g, const gs_decision *d)
{
  table *t = thread_table();
  if (!t) return 0;
  key k;
  key_of_call(g, d, &k);
  row *r = find_row(t, &k, 0);
  return r ? atomic_load_explicit(&r->count, memory_order_relaxed) : 0;
}

/* ---- time (GEMMSHIM_TIME) -------------------------------------------------- */

/* Log-spaced bins of nanoseconds, 16 per octave (a bin spans at most 1/16
 * of its value; the median is written as the bin's middle): below 32 ns a
 * bin per nanosecond, then 32 << 0..36 in 16 steps each. */
static unsigned time_bin(uint64_t ns)
{
  if (ns < 32) return (unsigned)ns;
  unsigned msb = 63u - (unsigned)__builtin_clzll(ns);
  unsigned b = msb * 16u + (unsigned)((ns >> (msb - 4)) & 15u);
  return b < GS_TIME_BINS ? b : GS_TIME_BINS - 1;
}

static uint64_t time_bin_middle(unsigned b)
{
  if (b < 32) return b;
  unsigned msb = b / 16, frac = b % 16;
  uint64_t width = 1ull << (msb - 4);
  return (16ull + frac) * width + width / 2;
}

void gs_tally_timed(gs_tally_row *r, uint64_t ns)
{
  if (!r) return;
  atomic_uint *h = atomic_load_explicit(&r->hist, memory_order_acquire);
  if (!h) {
    atomic_uint *mine = calloc(2 * GS_TIME_BINS, sizeof *mine);
    if (mine) {
      atomic_uint *none = NULL;
      if (atomic_compare_exchange_strong(&r->hist, &none, mine)) h = mine;
      else { free(mine); h = none; }
    }
  }
  if (h) atomic_fetch_add_explicit(&h[time_bin(ns)], 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&r->time_ns, ns, memory_order_relaxed);
  atomic_fetch_add_explicit(&r->timed, 1, memory_order_release);
}

void gs_tally_time_captured(gs_tally_row *r)
{
  if (r) atomic_fetch_add_explicit(&r->captured, 1, memory_order_relaxed);
}

void gs_tally_time_dropped(gs_tally_row *r)
{
  if (r) atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
}

/* ---- reading ------------------------------------------------------------- */

/* Rows merged by key across threads, for a log write. */
typedef struct merged {
  key k;
  uint64_t count;
  row_time t;
  int hist;                 /* its bins in merge_hist, or -1 */
} merged;

/* What a log write takes: the counts not yet written (or all of them),
 * merged by key in a static table (no allocation: a signal handler may be
 * writing), with the timing bins of up to MERGE_HISTS merged rows. */
static merged merge_buf[MERGE_ROWS];
static unsigned char merge_used[MERGE_ROWS];
static size_t merge_n;
static uint64_t merge_overflow;
static uint32_t merge_hist[MERGE_HISTS][GS_TIME_BINS];
static size_t merge_hists;   /* of merge_hist, in use */
static atomic_int writing;   /* one log write at a time in this process */

static int key_cmp(const key *x, const key *y)
{
  int c = strcmp(x->entry_name, y->entry_name);
  if (c) return c;
  return memcmp(x, y, sizeof *x);
}

uint64_t gs_tally_count(const char *route, int reason)
{
  int only = route ? route_id_of_name(route) : -1;
  if (route && only < 0) return 0;
  if (reason >= GS_R_COUNT) return 0;
  uint64_t total = 0;
  for (table *t = atomic_load(&all_tables); t; t = t->next)
    for (int r = 0; r < GS_TALLY_ROUTES; r++) {
      if (only >= 0 && r != only) continue;
      for (int why = 0; why < GS_R_COUNT; why++)
        if (reason < 0 || reason == why)
          total += atomic_load_explicit(&t->by_route[r][why], memory_order_relaxed);
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

/* A name from the GPU's identity: commas and line ends would break the
 * row, so they become spaces; "-" when there is none. */
static void put_clean(text *t, const char *s, size_t max)
{
  size_t start = t->len;
  for (size_t i = 0; i < max && s[i] && t->len < t->cap; i++) {
    char c = s[i];
    t->p[t->len++] = (c == ',' || c == '\n' || c == '\r') ? ' ' : c;
  }
  if (t->len == start) put_str(t, "-");
}

static void put_pointer_mode(text *t, int32_t mode)
{
  if (mode == GS_NONE) put_str(t, "-");
  else if (mode == 0) put_str(t, "host");
  else if (mode == 1) put_str(t, "device");
  else put_i64(t, mode);
}

/* Microseconds with three decimals, from nanoseconds. */
static void put_us(text *t, uint64_t ns)
{
  put_u64(t, ns / 1000);
  char frac[5] = { '.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10),
                   (char)('0' + ns % 10), 0 };
  put_str(t, frac);
}

/* v3: what GEMMSHIM_TIME measured; '-' throughout when it is off. */
static void put_time(text *t, const merged *m)
{
  if (!gs_config()->time_every) {
    put_str(t, ",-,-,-,-,-");
    return;
  }
  const row_time *rt = &m->t;
  put_str(t, ",");
  put_u64(t, rt->timed);
  uint64_t in_bins = 0;
  if (m->hist >= 0)
    for (unsigned b = 0; b < GS_TIME_BINS; b++) in_bins += merge_hist[m->hist][b];
  put_str(t, ",");
  if (in_bins) {
    /* the lower median: the bin holding the (in_bins + 1) / 2-th sample */
    uint64_t seen = 0, half = (in_bins + 1) / 2;
    unsigned b = 0;
    for (; b < GS_TIME_BINS; b++)
      if ((seen += merge_hist[m->hist][b]) >= half) break;
    put_us(t, time_bin_middle(b));
  } else {
    put_str(t, "-");
  }
  put_str(t, ",");
  if (rt->timed) {
    /* the mean of the timed calls, for every call that ran when made */
    uint64_t ran = m->count > rt->captured ? m->count - rt->captured : 0;
    put_us(t, (uint64_t)((double)rt->ns / (double)rt->timed * (double)ran + 0.5));
  } else {
    put_str(t, "-");
  }
  put_str(t, ",");
  put_u64(t, rt->captured);
  put_str(t, ",");
  put_u64(t, rt->dropped);
}

static void put_row(text *t, long pid, const merged *m)
{
  const key *k = &m->k;
  const uint64_t count = m->count;
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
  /* v2: what a replay of the call needs */
  put_str(t, ",");
  put_str(t, gs_rt_entry_class_name(k->entry_class));
  for (int i = 0; i < 4; i++) {
    put_str(t, ",");
    put_i64(t, k->ld[i]);
  }
  for (int i = 0; i < 4; i++) {
    put_str(t, ",");
    put_i64(t, k->stride[i]);
  }
  for (int i = 0; i < 4; i++) {
    put_str(t, ",");
    put_u64(t, k->align_ptr[i]);
  }
  for (int i = 0; i < 4; i++) {
    put_str(t, ",");
    put_u64(t, k->align_ld[i]);
  }
  put_str(t, ",");
  put_pointer_mode(t, k->pointer_mode);
  put_str(t, ",");
  if (k->math_mode == GS_NONE) put_str(t, "-");
  else put_i64(t, k->math_mode);
  /* The GPU from the device, now: gs_gpu_identity is lock-free and
   * async-signal-safe, and its strings are fixed-size arrays. */
  const gs_rt_identity *id = k->device >= 0 ? gs_gpu_identity(k->device) : NULL;
  put_str(t, ",");
  put_clean(t, id ? id->gpu_name : "", id ? sizeof id->gpu_name : 0);
  put_str(t, ",");
  put_clean(t, id ? id->uuid : "", id ? sizeof id->uuid : 0);
  put_time(t, m);
  /* v4 */
  put_str(t, ",");
  if (k->workspace < 0) put_str(t, "-");
  else put_i64(t, k->workspace);
  put_str(t, "\n");
}

static void put_overflow(text *t, long pid, uint64_t count)
{
  put_i64(t, pid);
  put_str(t, ",(other),-,-,-,-,-,-,-1,-1,-1,-1,-,too_many_distinct_rows,");
  put_u64(t, count);
  /* device, then v2's columns: '-' for names, -1 for numbers */
  put_str(t, ",-1,-,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-,-,-,-");
  /* v3's time columns: not attributed; v4's workspace */
  put_str(t, ",-,-,-,-,-,-\n");
}

/* ---- writing the log ----------------------------------------------------------- */


/* The merged row of key k, made when new; NULL when the table is full. */
static merged *merge_slot(const key *k, uint64_t hash)
{
  for (unsigned i = 0; i < MERGE_ROWS; i++) {
    unsigned s = (unsigned)(hash + i) & (MERGE_ROWS - 1);
    if (!merge_used[s]) {
      merge_used[s] = 1;
      memset(&merge_buf[s], 0, sizeof merge_buf[s]);
      merge_buf[s].k = *k;
      merge_buf[s].hist = -1;
      merge_n++;
      return &merge_buf[s];
    }
    if (!memcmp(&merge_buf[s].k, k, sizeof *k)) return &merge_buf[s];
  }
  return NULL;
}

static row_time time_now(row *r)
{
  row_time t;
  t.timed = atomic_load_explicit(&r->timed, memory_order_acquire);
  t.ns = atomic_load_explicit(&r->time_ns, memory_order_relaxed);
  t.captured = atomic_load_explicit(&r->captured, memory_order_relaxed);
  t.dropped = atomic_load_explicit(&r->dropped, memory_order_relaxed);
  return t;
}

/* A row's timing bins into its merged row (since the last write when
 * taking, all of them otherwise). Merged rows beyond MERGE_HISTS get no
 * bins: their median is written as unknown. */
static void merge_bins(merged *m, row *r, int take)
{
  atomic_uint *h = atomic_load_explicit(&r->hist, memory_order_acquire);
  if (!h) return;
  if (m->hist < 0 && merge_hists < MERGE_HISTS) {
    m->hist = (int)merge_hists++;
    memset(merge_hist[m->hist], 0, sizeof merge_hist[m->hist]);
  }
  for (unsigned b = 0; b < GS_TIME_BINS; b++) {
    unsigned now = atomic_load_explicit(&h[b], memory_order_relaxed);
    unsigned before = take ? atomic_load_explicit(&h[GS_TIME_BINS + b], memory_order_relaxed) : 0;
    if (m->hist >= 0) merge_hist[m->hist][b] += now - before;
    if (take) atomic_store_explicit(&h[GS_TIME_BINS + b], now, memory_order_relaxed);
  }
}

/* Merge every table's rows into merge_buf: what was counted since the last
 * write, marked written (take), or everything so far. Returns whether there
 * is anything. */
static int collect(int take)
{
  memset(merge_used, 0, sizeof merge_used);
  merge_n = 0;
  merge_overflow = 0;
  merge_hists = 0;
  for (table *t = atomic_load(&all_tables); t; t = t->next) {
    uint64_t o = atomic_load(&t->overflow), ow = take ? atomic_load(&t->overflow_written) : 0;
    merge_overflow += o - ow;
    if (take) atomic_store(&t->overflow_written, o);
    for (unsigned i = 0; i < SLOTS; i++) {
      row *r = &t->rows[i];
      if (!atomic_load_explicit(&r->ready, memory_order_acquire)) continue;
      uint64_t c = atomic_load_explicit(&r->count, memory_order_relaxed);
      uint64_t w = take ? atomic_load_explicit(&r->written, memory_order_relaxed) : 0;
      row_time now = time_now(r), before = { 0, 0, 0, 0 };
      if (take) before = r->time_written;
      row_time d = { now.timed - before.timed, now.ns - before.ns,
                     now.captured - before.captured, now.dropped - before.dropped };
      if (c == w && !d.timed && !d.captured && !d.dropped) continue;
      if (take) {
        atomic_store_explicit(&r->written, c, memory_order_relaxed);
        r->time_written = now;
      }
      merged *m = merge_slot(&r->k, r->hash);
      if (!m) {
        merge_overflow += c - w;
        continue;
      }
      m->count += c - w;
      m->t.timed += d.timed;
      m->t.ns += d.ns;
      m->t.captured += d.captured;
      m->t.dropped += d.dropped;
      if (d.timed || !take) merge_bins(m, r, take);
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

/* What a log file holds, read under its lock: nothing yet, a log of this
 * version (its first line is GS_LOG_VERSION), or anything else: an older
 * shim's log (v1 had no version line, v2 and v3 fewer columns), another
 * version's, or a file that cannot be read. */
enum { LOG_EMPTY, LOG_OURS, LOG_OTHER };

static int log_kind(int fd)
{
  static const char first[] = GS_LOG_VERSION "\n";
  struct stat st;
  if (fstat(fd, &st) != 0) return LOG_OTHER;
  if (st.st_size == 0) return LOG_EMPTY;
  char buf[sizeof first];
  size_t got = 0;
  if (lseek(fd, 0, SEEK_SET) != 0) return LOG_OTHER;
  while (got < sizeof first - 1) {
    ssize_t r = read(fd, buf + got, sizeof first - 1 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  return got == sizeof first - 1 && !memcmp(buf, first, got) ? LOG_OURS : LOG_OTHER;
}

/* Open and lock a log file; the caller unlocks by closing it. Read and
 * write, to read its first line (appends go to the end regardless);
 * write-only when the file may not be read (it then counts as another
 * format's). */
static int open_locked(const char *path)
{
  int fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EACCES) fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  struct flock lk;
  memset(&lk, 0, sizeof lk);
  lk.l_type = F_WRLCK;
  lk.l_whence = SEEK_SET;
  while (fcntl(fd, F_SETLKW, &lk) < 0 && errno == EINTR) {}
  return fd;
}

/* The rows collected, after the header lines when the file is empty. */
static int write_rows(int fd, int kind)
{
  static const char head[] = GS_LOG_VERSION "\n" GS_LOG_HEADER "\n";
  int rc = 0;
  if (kind == LOG_EMPTY) rc |= write_all(fd, head, sizeof head - 1);
  long pid = (long)getpid();
  static char buf[64 << 10];
  text t = { buf, 0, sizeof buf };
  for (size_t i = 0; i < merge_n; i++) {
    if (t.len > sizeof buf - 2048) {   /* a row is well under 1 kB */
      rc |= write_all(fd, buf, t.len);
      t.len = 0;
    }
    put_row(&t, pid, &merge_buf[i]);
  }
  if (merge_overflow) put_overflow(&t, pid, merge_overflow);
  rc |= write_all(fd, buf, t.len);
  return rc;
}

size_t gs_tally_write_csv(FILE *out)
{
  if (atomic_exchange(&writing, 1)) return 0;
  collect(0);
  sort_merged();
  fprintf(out, "%s\n%s\n", GS_LOG_VERSION, GS_LOG_HEADER);
  long pid = (long)getpid();
  char buf[1024];
  for (size_t i = 0; i < merge_n; i++) {
    text t = { buf, 0, sizeof buf };
    put_row(&t, pid, &merge_buf[i]);
    fwrite(buf, 1, t.len, out);
  }
  if (merge_overflow) {
    text t = { buf, 0, sizeof buf };
    put_overflow(&t, pid, merge_overflow);
    fwrite(buf, 1, t.len, out);
  }
  size_t n = merge_n;
  atomic_store(&writing, 0);
  return n;
}

static atomic_int said_other_format;   /* once per process */

/* Several processes may share one log path (torchrun ranks without %p):
 * whole blocks are appended under an exclusive record lock, the header only
 * into an empty file, so no process's rows are lost. A file in another
 * format (an older shim's v1, v2 or v3 log) is not appended to, so that no
 * file mixes formats: the rows go to PATH.v4, under the same rules. Only
 * async-signal-safe calls from here on. */
int gs_tally_flush_log(void)
{
  const gs_config_t *cfg = gs_config();
  if (!cfg->log_path[0]) return 0;
  if (atomic_exchange(&writing, 1)) return 0;   /* a write is under way (interrupted?) */
  int rc = 0;
  if (collect(1)) {
    sort_merged();
    const char *path = cfg->log_path;
    int fd = open_locked(path);
    int kind = fd >= 0 ? log_kind(fd) : LOG_OTHER;
    if (fd >= 0 && kind == LOG_OTHER) {
      close(fd);   /* and its lock: the old file is left as it is */
      static char other[sizeof cfg->log_path + sizeof GS_LOG_OTHER_FORMAT_SUFFIX];
      size_t len = strlen(cfg->log_path);
      memcpy(other, cfg->log_path, len);
      memcpy(other + len, GS_LOG_OTHER_FORMAT_SUFFIX, sizeof GS_LOG_OTHER_FORMAT_SUFFIX);
      path = other;
      if (!atomic_exchange(&said_other_format, 1)) {
        const char *parts[] = { "gemmshim: GEMMSHIM_LOG ", cfg->log_path,
                                " is not a v4 gemmshim log (an older gemmshim's?): it is left as "
                                "it is, and this process's rows go to ", other, "\n" };
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
          write_all(2, parts[i], strlen(parts[i]));
      }
      fd = open_locked(path);
      kind = fd >= 0 ? log_kind(fd) : LOG_OTHER;
      if (fd >= 0 && kind == LOG_OTHER) {
        say("gemmshim: not writing the log: neither file is a v4 gemmshim log: ", path);
        close(fd);
        fd = -1;
        rc = -1;
        path = NULL;
      }
    }
    if (fd >= 0) {
      rc |= write_rows(fd, kind);
      close(fd);   /* releases the lock */
    } else if (path) {
      say("gemmshim: cannot write GEMMSHIM_LOG ", path);
      rc = -1;
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
    for (int r = 0; r < GS_TALLY_ROUTES; r++)
      for (int why = 0; why < GS_R_COUNT; why++) atomic_store(&t->by_route[r][why], 0);
    for (unsigned i = 0; i < SLOTS; i++) {
      row *r = &t->rows[i];
      atomic_store(&r->ready, 0);
      atomic_store(&r->count, 0);
      atomic_store(&r->written, 0);
      atomic_store(&r->timed, 0);
      atomic_store(&r->time_ns, 0);
      atomic_store(&r->captured, 0);
      atomic_store(&r->dropped, 0);
      memset(&r->time_written, 0, sizeof r->time_written);
      atomic_uint *h = atomic_load(&r->hist);
      for (unsigned b = 0; h && b < 2 * GS_TIME_BINS; b++) atomic_store(&h[b], 0);
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
  atomic_store(&said_other_format, 0);   /* its own file, its own message */
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
