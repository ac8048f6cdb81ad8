/* The route table as data: parse, validate, look up (route_table.h). */
#define _GNU_SOURCE   /* strtod_l */
#include "route_table.h"

#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

/* ---- the call key -------------------------------------------------------- */

void gs_rt_format_uuid(const unsigned char u[16], int mig, char out[48])
{
  snprintf(out, 48, "%s-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
           mig ? "MIG" : "GPU", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
           u[11], u[12], u[13], u[14], u[15]);
}

int gs_rt_entry_class_of(const gs_gemm *g)
{
  return g->is_lt ? GS_EC_LT : g->is_batched_api ? GS_EC_BATCHED : GS_EC_GEMM;
}

void gs_rt_key_of(const gs_gemm *g, gs_rt_key *out)
{
  memset(out, 0, sizeof *out);
  out->entry_class = gs_rt_entry_class_of(g);
  out->a_type = g->a_type;
  out->b_type = g->b_type;
  out->c_type = g->c_type;
  out->compute = g->compute_type;
  out->epilogue = g->is_lt ? g->epilogue : GS_NONE;
  gs_layout_name(g, out->layout);
  out->m = g->m;
  out->n = g->n;
  out->k = g->k;
  out->batch = g->batch;
  /* the smallest alignment of several values is that of their OR */
  uint64_t any = (uintptr_t)g->A | (uintptr_t)g->B | (uintptr_t)g->C | (uintptr_t)g->D |
                 (uint64_t)g->lda * (uint64_t)gs_dtype_bytes(g->a_type) |
                 (uint64_t)g->ldb * (uint64_t)gs_dtype_bytes(g->b_type) |
                 (uint64_t)g->ldc * (uint64_t)gs_dtype_bytes(g->c_type);
  if (g->is_lt) any |= (uint64_t)g->ldd * (uint64_t)gs_dtype_bytes(g->d_type);
  /* a batch's later items start a stride further on */
  if (g->batch > 1)
    any |= (uint64_t)g->stride_a * (uint64_t)gs_dtype_bytes(g->a_type) |
           (uint64_t)g->stride_b * (uint64_t)gs_dtype_bytes(g->b_type) |
           (uint64_t)g->stride_c * (uint64_t)gs_dtype_bytes(g->c_type) |
           (g->is_lt ? (uint64_t)g->stride_d * (uint64_t)gs_dtype_bytes(g->d_type) : 0);
  out->align = gs_rt_align_of(any);
}

static const char *const class_names[GS_EC_COUNT] = { "gemm", "gemm_batched", "lt" };

const char *gs_rt_entry_class_name(int c)
{
  return c >= 0 && c < GS_EC_COUNT ? class_names[c] : "-";
}

int gs_rt_entry_class_from_name(const char *name)
{
  for (int c = 0; c < GS_EC_COUNT; c++)
    if (!strcmp(name, class_names[c])) return c;
  return -1;
}

/* ---- validators ---------------------------------------------------------- */

static const char *const validator_names[GS_V_COUNT] = {
  [GS_V_GPU_NAME] = "gpu_name",
  [GS_V_COMPUTE_CAPABILITY] = "compute_capability",
  [GS_V_SM_COUNT] = "sm_count",
  [GS_V_CUBLAS_VERSION] = "cublas_version",
  [GS_V_SHIM_VERSION] = "shim_version",
  [GS_V_KERNEL_TABLE] = "kernel_table",
  [GS_V_DRIVER_VERSION] = "driver_version",
  [GS_V_POWER_LIMIT_W] = "power_limit_w",
};

const char *gs_rt_validator_name(int v)
{
  return v >= 0 && v < GS_V_COUNT ? validator_names[v] : "?";
}

const char *gs_rt_identity_value(const gs_rt_identity *id, int v)
{
  switch (v) {
  case GS_V_GPU_NAME: return id->gpu_name;
  case GS_V_COMPUTE_CAPABILITY: return id->compute_capability;
  case GS_V_SM_COUNT: return id->sm_count;
  case GS_V_CUBLAS_VERSION: return id->cublas_version;
  case GS_V_SHIM_VERSION: return id->shim_version;
  case GS_V_KERNEL_TABLE: return id->kernel_table;
  case GS_V_DRIVER_VERSION: return id->driver_version;
  case GS_V_POWER_LIMIT_W: return id->power_limit_w;
  default: return "";
  }
}

int gs_rt_validate(const gs_route_table *t, const gs_rt_identity *id, char *why, size_t why_len,
                   char *soft, size_t soft_len)
{
  if (why_len) why[0] = '\0';
  if (soft_len) soft[0] = '\0';
  for (int v = 0; v < GS_V_N_HARD; v++) {
    const char *found = gs_rt_identity_value(id, v);
    if (!t->has[v]) {
      snprintf(why, why_len, "validator %s is missing (this GPU: '%s')", validator_names[v],
               found[0] ? found : "unknown");
      return -1;
    }
    if (strcmp(t->value[v], found)) {
      snprintf(why, why_len, "%s is '%s' in the table, '%s' here", validator_names[v], t->value[v],
               found[0] ? found : "unknown");
      return -1;
    }
  }
  size_t used = 0;
  for (int v = GS_V_N_HARD; v < GS_V_COUNT; v++) {
    const char *found = gs_rt_identity_value(id, v);
    if (!t->has[v] || !found[0] || !strcmp(t->value[v], found)) continue;
    if (used < soft_len) {
      int w = snprintf(soft + used, soft_len - used, "%s%s is '%s' in the table, '%s' here",
                       used ? "; " : "", validator_names[v], t->value[v], found);
      if (w > 0) used += (size_t)w;
    }
  }
  return 0;
}

/* FNV-1a over the kernel table's data. Function pointers are left out
 * (they differ between builds); the kernels' code is what shim_version
 * names. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

void gs_rt_kernel_table_hash(const gs_variant *const *variants, size_t n, char out[17])
{
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) {
    const gs_variant *v = variants[i];
    /* doubles by their bits: %g would follow the host's LC_NUMERIC */
    uint64_t tol[3];
    memcpy(&tol[0], &v->selfcheck_tol, sizeof tol[0]);
    memcpy(&tol[1], &v->err_vs_cublas, sizeof tol[1]);
    memcpy(&tol[2], &v->err_floor, sizeof tol[2]);
    char buf[512];
    int len = snprintf(buf, sizeof buf,
                       "%s|%d.%d|%d|%u|%u|%d|%d|%d|%lld,%lld,%lld|%lld|%lld|%d|%d|%llx|%llx|%llx|%d|%d|"
                       "%d|%d|%d|%u|%lld|%d\n",
                       v->name, v->cc_major, v->cc_minor, v->data_type, v->layouts, v->epilogues,
                       v->bias_type, v->elem_bytes, v->align_bytes, (long long)v->m_mult,
                       (long long)v->n_mult, (long long)v->k_mult, (long long)v->n_max,
                       (long long)v->k_min, v->honours_sm_target, v->nonfinite_as_fp64,
                       (unsigned long long)tol[0],
                       (unsigned long long)tol[1], (unsigned long long)tol[2], v->path_of != NULL,
                       v->runs_cublaslt, v->scratch_bytes != NULL, v->launches_pdl != NULL,
                       v->takes_batch, v->layouts_few_rows, (long long)v->m_max,
                       v->out_align_bytes);
    if (len > 0) h = fnv(h, buf, (size_t)len < sizeof buf ? (size_t)len : sizeof buf - 1);
  }
  snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* ---- parsing --------------------------------------------------------------- */

#define GS_RT_MAX_BYTES ((long long)64 << 20)

enum col {
  C_ENTRY, C_A, C_B, C_C, C_COMPUTE, C_LAYOUT, C_EPILOGUE, C_M, C_N, C_K, C_BATCH, C_ALIGN,
  C_ROUTE, C_TIME, C_RATIO, C_LT_ALGO, C_LAUNCH, C_COUNT
};
static const char *const col_names[C_COUNT] = {
  "entry", "a_type", "b_type", "c_type", "compute", "layout", "epilogue", "m", "n", "k",
  "batch", "align", "route", "time_us", "ratio", "lt_algo", "launch"
};
/* Columns a table may leave out (older tables have neither lt_algo nor
 * launch nor, written by hand, time_us). */
static int optional_col(int c) { return c == C_TIME || c == C_LT_ALGO || c == C_LAUNCH; }

#define MAX_FIELDS 64

typedef struct parser {
  gs_route_table *t;
  const gs_variant *const *variants;
  size_t n_variants;
  FILE *warn;
  int line;
  int have_header, header_ok;
  int col[C_COUNT];      /* field index of each column, -1 when absent */
  size_t cap;
  uint32_t *seen;        /* rows by their fields, to find duplicates: row + 1 */
  size_t seen_slots;     /* a power of two, at most half full */
} parser;

__attribute__((format(printf, 2, 3))) static void bad(parser *p, const char *fmt, ...)
{
  p->t->n_bad++;
  if (!p->warn) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(p->warn, "gemmshim: %s:%d: ", p->t->source, p->line);
  vfprintf(p->warn, fmt, ap);
  fputs("; line ignored\n", p->warn);
  va_end(ap);
}

static char *trim(char *s)
{
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) s[--n] = '\0';
  return s;
}

static int split(char *line, char **f)
{
  int n = 0;
  for (char *s = line;;) {
    char *comma = strchr(s, ',');
    if (comma) *comma = '\0';   /* cut first, so the field's own end is trimmed */
    if (n < MAX_FIELDS) f[n++] = trim(s);
    if (!comma) break;
    s = comma + 1;
  }
  return n;
}

static int parse_i64(const char *s, int64_t *out)
{
  if (!isdigit((unsigned char)s[0])) return -1;
  errno = 0;
  char *end;
  long long v = strtoll(s, &end, 10);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

/* A size: a number, lo-hi, or '*'; every bound at least 1. */
static int parse_range(const char *s, gs_rt_range *r, int *exact)
{
  if (!strcmp(s, "*")) {
    r->lo = 1;
    r->hi = INT64_MAX;
    *exact = 0;
    return 0;
  }
  char buf[64];
  if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf) return -1;
  char *dash = strchr(buf, '-');
  if (dash) {
    *dash = '\0';
    if (parse_i64(buf, &r->lo) || parse_i64(dash + 1, &r->hi) || r->lo > r->hi) return -1;
    *exact = 0;
  } else {
    if (parse_i64(buf, &r->lo)) return -1;
    r->hi = r->lo;
  }
  return r->lo >= 1 ? 0 : -1;
}

/* A field named by a lookup (types, compute, epilogue), or '*'. */
static int parse_named(const char *s, int (*lookup)(const char *, int *), int32_t *out, int *exact)
{
  if (!strcmp(s, "*")) {
    *out = GS_RT_ANY;
    *exact = 0;
    return 0;
  }
  int v;
  if (lookup(s, &v)) return -1;
  *out = v;
  return 0;
}

static int entry_lookup(const char *s, int *out)
{
  int c = gs_rt_entry_class_from_name(s);
  if (c < 0) return -1;
  *out = c;
  return 0;
}

static int align_lookup(const char *s, int *out)
{
  int64_t v;
  if (parse_i64(s, &v) || v < 1 || v > 16 || (v & (v - 1))) return -1;
  *out = (int)v;
  return 0;
}

/* Numbers as a table writes them, in the C locale whatever the host
 * program set (a comma-decimal LC_NUMERIC would misread "1.5"). */
static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static void make_c_locale(void) { c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

static int parse_double(const char *s, double *out)
{
  /* plain decimal only: strtod would also take hex floats and inf */
  for (const char *c = s; *c; c++)
    if (!isdigit((unsigned char)*c) && !strchr(".eE+-", *c)) return -1;
  pthread_once(&c_locale_once, make_c_locale);
  errno = 0;
  char *end;
  double v = c_locale ? strtod_l(s, &end, c_locale) : strtod(s, &end);
  if (errno || end == s || *end || !(v > 0) || v != v || v > 1e300) return -1;
  *out = v;
  return 0;
}

static int valid_route(const char *s)
{
  if (!s[0] || strlen(s) >= sizeof ((gs_rt_row *)0)->route) return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && !strchr("_.:-+", *s)) return 0;
  return 1;
}

static void validator_line(parser *p, char **f, int n)
{
  if (p->have_header) { bad(p, "a validator after the header line (validators come first)"); return; }
  if (n != 3 || !f[1][0] || !f[2][0]) { bad(p, "a validator is Validator,KEY,VALUE"); return; }
  for (int v = 0; v < GS_V_COUNT; v++) {
    if (strcmp(f[1], validator_names[v])) continue;
    if (p->t->has[v]) { bad(p, "validator %s given twice", f[1]); return; }
    if (strlen(f[2]) >= sizeof p->t->value[v]) { bad(p, "validator %s: value too long", f[1]); return; }
    p->t->has[v] = 1;
    strcpy(p->t->value[v], f[2]);
    return;
  }
  bad(p, "unknown validator '%s'", f[1]);
}

static void header_line(parser *p, char **f, int n)
{
  if (p->have_header) { bad(p, "a second header line"); return; }
  p->have_header = 1;
  for (int c = 0; c < C_COUNT; c++) p->col[c] = -1;
  for (int i = 0; i < n; i++)
    for (int c = 0; c < C_COUNT; c++)
      if (!strcmp(f[i], col_names[c])) {
        if (p->col[c] < 0) p->col[c] = i;
      }
  for (int c = 0; c < C_COUNT; c++)
    if (!optional_col(c) && p->col[c] < 0) {
      bad(p, "the header has no column '%s', so no row can be read", col_names[c]);
      return;
    }
  p->header_ok = 1;
}

static int same_fields(const gs_rt_row *a, const gs_rt_row *b)
{
  return a->entry_class == b->entry_class && a->a_type == b->a_type && a->b_type == b->b_type &&
         a->c_type == b->c_type && a->compute == b->compute && a->epilogue == b->epilogue &&
         a->align == b->align && !strcmp(a->layout, b->layout) && a->m.lo == b->m.lo &&
         a->m.hi == b->m.hi && a->n.lo == b->n.lo && a->n.hi == b->n.hi && a->k.lo == b->k.lo &&
         a->k.hi == b->k.hi && a->batch.lo == b->batch.lo && a->batch.hi == b->batch.hi &&
         a->needs_pdl == b->needs_pdl;
}

static uint64_t fields_hash(const gs_rt_row *r)
{
  const int64_t parts[] = { r->entry_class, r->a_type, r->b_type, r->c_type, r->compute,
                            r->epilogue, r->align, r->layout[0], r->layout[1], r->m.lo,
                            r->m.hi, r->n.lo, r->n.hi, r->k.lo, r->k.hi, r->batch.lo,
                            r->batch.hi, r->needs_pdl };
  return fnv(0xcbf29ce484222325ull, parts, sizeof parts);
}

/* The earlier row with the same fields, if any (a hash set: a table of many
 * rows is read in linear time). */
static const gs_rt_row *seen_before(const parser *p, const gs_rt_row *r)
{
  if (!p->seen_slots) return NULL;
  for (size_t s = fields_hash(r) & (p->seen_slots - 1); p->seen[s];
       s = (s + 1) & (p->seen_slots - 1))
    if (same_fields(&p->t->rows[p->seen[s] - 1], r)) return &p->t->rows[p->seen[s] - 1];
  return NULL;
}

static void seen_insert(uint32_t *slots, size_t n_slots, const gs_rt_row *rows, uint32_t i)
{
  size_t s = fields_hash(&rows[i]) & (n_slots - 1);
  while (slots[s]) s = (s + 1) & (n_slots - 1);
  slots[s] = i + 1;
}

/* The row just added, into the set (grown to stay at most half full). */
static int remember_row(parser *p)
{
  size_t n = p->t->n_rows;
  if (2 * n > p->seen_slots) {
    size_t slots = p->seen_slots ? 2 * p->seen_slots : 64;
    uint32_t *grown = calloc(slots, sizeof *grown);
    if (!grown) return -1;
    for (size_t i = 0; i + 1 < n; i++) seen_insert(grown, slots, p->t->rows, (uint32_t)i);
    free(p->seen);
    p->seen = grown;
    p->seen_slots = slots;
  }
  seen_insert(p->seen, p->seen_slots, p->t->rows, (uint32_t)(n - 1));
  return 0;
}

static void row_line(parser *p, char **f, int n)
{
  if (!p->have_header) { bad(p, "a row before the header line (entry,a_type,...)"); return; }
  if (!p->header_ok) { bad(p, "the header line is incomplete"); return; }
  for (int c = 0; c < C_COUNT; c++)
    if (p->col[c] >= n) { bad(p, "%d fields, the header has more", n); return; }
  gs_rt_row r;
  memset(&r, 0, sizeof r);
  r.exact = 1;
  r.line = p->line;
  int v;
  const char *s;
#define FIELD(c) (f[p->col[c]])
  s = FIELD(C_ENTRY);
  if (!strcmp(s, "*")) { r.entry_class = GS_RT_ANY; r.exact = 0; }
  else if (entry_lookup(s, &v)) { bad(p, "entry '%s' is not gemm, gemm_batched, lt or *", s); return; }
  else r.entry_class = v;
  const struct { int col; int32_t *out; int (*lookup)(const char *, int *); } named[] = {
    { C_A, &r.a_type, gs_dtype_from_name },   { C_B, &r.b_type, gs_dtype_from_name },
    { C_C, &r.c_type, gs_dtype_from_name },   { C_COMPUTE, &r.compute, gs_compute_from_name },
    { C_EPILOGUE, &r.epilogue, gs_epilogue_from_name }, { C_ALIGN, &r.align, align_lookup },
  };
  for (size_t i = 0; i < sizeof named / sizeof *named; i++)
    if (parse_named(FIELD(named[i].col), named[i].lookup, named[i].out, &r.exact)) {
      bad(p, "%s '%s' is not one the log writes", col_names[named[i].col], FIELD(named[i].col));
      return;
    }
  s = FIELD(C_LAYOUT);
  if (!strcmp(s, "*")) r.exact = 0;
  else if (strlen(s) == 2 && strchr("NT", s[0]) && strchr("NT", s[1])) strcpy(r.layout, s);
  else { bad(p, "layout '%s' is not NN, TN, NT, TT or *", s); return; }
  const struct { int col; gs_rt_range *out; } sizes[] = {
    { C_M, &r.m }, { C_N, &r.n }, { C_K, &r.k }, { C_BATCH, &r.batch },
  };
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    if (parse_range(FIELD(sizes[i].col), sizes[i].out, &r.exact)) {
      bad(p, "%s '%s' is not a size, a range lo-hi or *", col_names[sizes[i].col],
          FIELD(sizes[i].col));
      return;
    }
  s = FIELD(C_ROUTE);
  if (!valid_route(s)) { bad(p, "route '%s' is not a kernel name, cublas or another word", s); return; }
  strcpy(r.route, s);
  r.kernel = NULL;
  for (size_t i = 0; i < p->n_variants; i++)
    if (!strcmp(p->variants[i]->name, s)) r.kernel = p->variants[i];
  r.time_us = -1;
  if (p->col[C_TIME] >= 0) {
    s = FIELD(C_TIME);
    if (s[0] && strcmp(s, "-") && parse_double(s, &r.time_us)) {
      bad(p, "time_us '%s' is not a positive number, '-' or empty", s);
      return;
    }
  }
  s = FIELD(C_RATIO);
  r.ratio = 0;
  if (strcmp(s, "-") && parse_double(s, &r.ratio)) {
    bad(p, "ratio '%s' is not a positive number or '-'", s);
    return;
  }
  /* a cuBLASLt algorithm: the route cublaslt needs one, no other route has one */
  s = p->col[C_LT_ALGO] >= 0 ? FIELD(C_LT_ALGO) : "";
  /* (read without the kernel table, as the gemmshim command does: by its name) */
  int wants_algo = r.kernel ? r.kernel->runs_cublaslt : !strcmp(r.route, GS_RT_LT_ROUTE);
  if (s[0] && strcmp(s, "-")) {
    char why[160];
    if (!wants_algo) { bad(p, "lt_algo is given, but route %s is not a cuBLASLt route", r.route); return; }
    if (gs_lt_algo_parse(s, &r.algo, why, sizeof why)) { bad(p, "lt_algo: %s", why); return; }
    r.has_algo = 1;
  } else if (wants_algo) {
    bad(p, "route %s needs its algorithm in column lt_algo", r.route);
    return;
  }
  s = p->col[C_LAUNCH] >= 0 ? FIELD(C_LAUNCH) : "";
  if (!strcmp(s, "pdl")) r.needs_pdl = 1;
  else if (s[0] && strcmp(s, "plain") && strcmp(s, "-")) {
    bad(p, "launch '%s' is not plain, pdl, '-' or empty", s);
    return;
  }
#undef FIELD
  const gs_rt_row *earlier = seen_before(p, &r);
  if (earlier) {
    bad(p, "the same key as line %d", earlier->line);
    return;
  }
  if (p->t->n_rows == p->cap) {
    size_t nc = p->cap ? 2 * p->cap : 32;
    gs_rt_row *m = realloc(p->t->rows, nc * sizeof *m);
    if (!m) { bad(p, "out of memory"); return; }
    p->t->rows = m;
    p->cap = nc;
  }
  p->t->rows[p->t->n_rows++] = r;
  if (remember_row(p)) bad(p, "out of memory");
}

/* ---- the index -------------------------------------------------------------- */

/* Rows are hashed by their sizes and A type; the other fields may be
 * wildcards, checked when the row is found. */
static uint64_t key_hash(int32_t a_type, int64_t m, int64_t n, int64_t k, int64_t batch)
{
  const int64_t parts[] = { a_type, m, n, k, batch };
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
    h ^= (uint64_t)parts[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
  }
  return h ^ (h >> 31);
}

static int hashable(const gs_rt_row *r)
{
  return r->a_type != GS_RT_ANY && r->m.lo == r->m.hi && r->n.lo == r->n.hi &&
         r->k.lo == r->k.hi && r->batch.lo == r->batch.hi;
}

static uint64_t row_hash(const gs_rt_row *r)
{
  return key_hash(r->a_type, r->m.lo, r->n.lo, r->k.lo, r->batch.lo);
}

/* How many of the fields that are not hashed the row names exactly: the
 * most specific matching row wins. */
static int specificity(const gs_rt_row *r)
{
  return (r->entry_class != GS_RT_ANY) + (r->b_type != GS_RT_ANY) + (r->c_type != GS_RT_ANY) +
         (r->compute != GS_RT_ANY) + (r->epilogue != GS_RT_ANY) + (r->align != GS_RT_ANY) +
         (r->layout[0] != 0);
}

static int build_index(gs_route_table *t)
{
  size_t exact = 0;
  for (size_t i = 0; i < t->n_rows; i++) exact += hashable(&t->rows[i]);
  t->n_slots = 16;
  while (t->n_slots < 2 * exact) t->n_slots *= 2;
  t->slots = calloc(t->n_slots, sizeof *t->slots);
  t->ranged = calloc(t->n_rows ? t->n_rows : 1, sizeof *t->ranged);
  if (!t->slots || !t->ranged) return -1;
  for (size_t i = 0; i < t->n_rows; i++) {
    if (!hashable(&t->rows[i])) {
      t->ranged[t->n_ranged++] = (uint32_t)i;
      continue;
    }
    for (size_t s = row_hash(&t->rows[i]) & (t->n_slots - 1);; s = (s + 1) & (t->n_slots - 1))
      if (!t->slots[s]) {
        t->slots[s] = (uint32_t)(i + 1);
        break;
      }
  }
  return 0;
}

gs_route_table *gs_rt_parse(const char *text, size_t len, const char *source,
                            const gs_variant *const *variants, size_t n_variants, FILE *warn)
{
  gs_route_table *t = calloc(1, sizeof *t);
  char *buf = malloc(len + 1);
  if (!t || !buf) { free(t); free(buf); return NULL; }
  snprintf(t->source, sizeof t->source, "%s", source);
  memcpy(buf, text, len);
  buf[len] = '\0';
  parser p = { .t = t, .variants = variants, .n_variants = n_variants, .warn = warn };
  if (memchr(text, '\0', len)) {   /* not a text file: nothing of it is read */
    p.line = 1;
    bad(&p, "a NUL byte: not a text file; the table has no rows");
    len = 0;
    buf[0] = '\0';
  }
  char *next = buf;
  while (next && *next) {
    char *line = next;
    char *nl = strchr(line, '\n');
    next = nl ? nl + 1 : NULL;
    if (nl) *nl = '\0';
    p.line++;
    char *s = trim(line);
    if (!s[0] || s[0] == '#') continue;
    char *f[MAX_FIELDS];
    int n = split(s, f);
    if (n >= MAX_FIELDS) { bad(&p, "too many fields"); continue; }
    /* no row has a field "a_type": that line is the header */
    int is_header = 0;
    for (int i = 0; i < n; i++) is_header |= !strcmp(f[i], "a_type");
    if (!strcmp(f[0], "Validator")) validator_line(&p, f, n);
    else if (is_header) header_line(&p, f, n);
    else row_line(&p, f, n);
  }
  free(buf);
  free(p.seen);
  if (build_index(t)) { gs_rt_free(t); return NULL; }
  return t;
}

gs_route_table *gs_rt_load(const char *path, const gs_variant *const *variants, size_t n_variants,
                           FILE *warn)
{
  /* opened without waiting (a FIFO would block the first GEMM call until
   * a writer came), then refused unless a regular file of a table's size */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (warn) fprintf(warn, "gemmshim: route table %s: %s\n", path, strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > GS_RT_MAX_BYTES) {
    if (warn)
      fprintf(warn, "gemmshim: route table %s: %s\n", path,
              !S_ISREG(st.st_mode) ? "not a regular file" : "larger than 64 MB");
    close(fd);
    return NULL;
  }
  FILE *in = fdopen(fd, "r");
  if (!in) {
    if (warn) fprintf(warn, "gemmshim: route table %s: %s\n", path, strerror(errno));
    close(fd);
    return NULL;
  }
  size_t cap = 1 << 16, len = 0;
  char *text = malloc(cap);
  while (text) {
    size_t got = fread(text + len, 1, cap - len, in);
    len += got;
    if (len < cap) break;
    char *more = (long long)cap <= GS_RT_MAX_BYTES ? realloc(text, cap * 2) : NULL;
    if (!more) { free(text); text = NULL; break; }
    text = more;
    cap *= 2;
  }
  int failed = ferror(in) || !text;
  fclose(in);
  if (failed) {
    if (warn) fprintf(warn, "gemmshim: route table %s: cannot be read\n", path);
    free(text);
    return NULL;
  }
  gs_route_table *t = gs_rt_parse(text, len, path, variants, n_variants, warn);
  free(text);
  return t;
}

void gs_rt_free(gs_route_table *t)
{
  if (!t) return;
  free(t->rows);
  free(t->slots);
  free(t->ranged);
  free(t);
}

/* ---- lookup ------------------------------------------------------------------- */

static int field_ok(int32_t row, int32_t key) { return row == GS_RT_ANY || row == key; }
static int range_ok(gs_rt_range r, int64_t v) { return v >= r.lo && v <= r.hi; }

static int matches(const gs_rt_row *r, const gs_rt_key *k)
{
  return range_ok(r->m, k->m) && field_ok(r->a_type, k->a_type) &&
         field_ok(r->entry_class, k->entry_class) &&
         field_ok(r->b_type, k->b_type) && field_ok(r->c_type, k->c_type) &&
         field_ok(r->compute, k->compute) && field_ok(r->epilogue, k->epilogue) &&
         field_ok(r->align, k->align) && (!r->layout[0] || !strcmp(r->layout, k->layout)) &&
         range_ok(r->n, k->n) && range_ok(r->k, k->k) &&
         range_ok(r->batch, k->batch);
}

typedef struct speaks_arg {
  const gs_variant *v;
  const gs_route_entry *routes;
  size_t n_routes;
  int pdl;
} speaks_arg;

static int holds_for(const gs_rt_row *r, const speaks_arg *to)
{
  return !to || ((!r->needs_pdl || to->pdl) &&
                 gs_rt_row_speaks_to(r, to->v, to->routes, to->n_routes));
}

/* Between two matching exact rows: the one measured as the kernel
 * launches (a pdl row, where it launches with PDL), then the more
 * specific, then the earlier in the file. */
static int outranks(const gs_rt_row *r, const gs_rt_row *best, const speaks_arg *to)
{
  if (to && to->pdl && r->needs_pdl != best->needs_pdl) return r->needs_pdl;
  if (specificity(r) != specificity(best)) return specificity(r) > specificity(best);
  return r->line < best->line;
}

static const gs_rt_row *find_if(const gs_route_table *t, const gs_rt_key *k, const speaks_arg *to)
{
  if (!t) return NULL;
  const gs_rt_row *best = NULL;
  uint64_t h = key_hash(k->a_type, k->m, k->n, k->k, k->batch);
  for (size_t s = h & (t->n_slots - 1);; s = (s + 1) & (t->n_slots - 1)) {
    uint32_t i = t->slots[s];
    if (!i) break;
    const gs_rt_row *r = &t->rows[i - 1];
    if (matches(r, k) && holds_for(r, to) && (!best || outranks(r, best, to))) best = r;
  }
  if (best) return best;
  /* ranged rows in file order; where a kernel launches with PDL, the rows
   * measured so first */
  for (int pass = to && to->pdl ? 0 : 1; pass < 2; pass++)
    for (size_t i = 0; i < t->n_ranged; i++) {
      const gs_rt_row *r = &t->rows[t->ranged[i]];
      if ((pass || r->needs_pdl) && matches(r, k) && holds_for(r, to)) return r;
    }
  return NULL;
}

const gs_rt_row *gs_rt_find(const gs_route_table *t, const gs_rt_key *k)
{
  return find_if(t, k, NULL);
}

/* The opt-in function of v's route; NULL for none (or no route). */
static int (*opt_in_of(const gs_variant *v, const gs_route_entry *routes,
                       size_t n))(const gs_gemm *)
{
  for (size_t i = 0; i < n; i++)
    if (routes[i].kernel == v) return routes[i].opted_in;
  return NULL;
}

int gs_rt_row_speaks_to(const gs_rt_row *r, const gs_variant *v, const gs_route_entry *routes,
                        size_t n_routes)
{
  if (!r->kernel || r->kernel == v) return 1;
  return opt_in_of(r->kernel, routes, n_routes) == opt_in_of(v, routes, n_routes);
}

const gs_rt_row *gs_rt_find_for(const gs_route_table *t, const gs_rt_key *k, const gs_variant *v,
                                const gs_route_entry *routes, size_t n_routes, int pdl)
{
  const speaks_arg to = { v, routes, n_routes, pdl };
  return find_if(t, k, &to);
}

int gs_rt_row_routes(const gs_rt_row *r)
{
  return r && r->kernel && r->ratio >= GS_RT_MIN_RATIO;
}
