/* The call log read into what `gemmshim run` and `record` say at the end
 * (run_summary.h). Columns are found by their header names: v1 logs have
 * 16, v2 appends 21, v3 the 5 time columns, v4 the workspace; later
 * versions may append more. */
#include "run_summary.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../dispatch/names.h"

#define MAX_FIELDS 256

/* The columns every version has (v1's), and the ones v2 added that the
 * summary reads. */
enum col {
  C_PID, C_ENTRY, C_A, C_B, C_C, C_COMPUTE, C_LAYOUT, C_EPILOGUE, C_M, C_N, C_K, C_BATCH,
  C_ROUTE, C_REASON, C_COUNT, C_DEVICE,
  C_N_REQUIRED,
  C_ENTRY_CLASS = C_N_REQUIRED, C_GPU_UUID,
  C_ALIGN_A, C_ALIGN_B, C_ALIGN_C, C_ALIGN_D, C_ALIGN_LDA, C_ALIGN_LDB, C_ALIGN_LDC,
  C_ALIGN_LDD, C_MATH_MODE,
  /* v3: GEMMSHIM_TIME's, not part of what makes a row distinct */
  C_TIMED, C_MEDIAN_US, C_EST_TOTAL_US, C_CAPTURED, C_TIME_DROPPED,
  /* v4: a cuBLASLt call's workspace */
  C_WORKSPACE,
  C_N_COLS
};
static const char *const col_names[C_N_COLS] = {
  "pid", "entry", "a_type", "b_type", "c_type", "compute", "layout", "epilogue", "m", "n", "k",
  "batch", "route", "reason", "count", "device",
  "entry_class", "gpu_uuid",
  "align_a", "align_b", "align_c", "align_d", "align_lda", "align_ldb", "align_ldc", "align_ldd",
  "math_mode",
  "timed", "median_us", "est_total_us", "captured", "time_dropped",
  "workspace",
};


typedef struct reader {
  rs_row_fn fn;
  void *ctx;
  int version;          /* the highest log version read (1 for v1) */
  const char *source;
  int line;
  char *err;
  int have_header;
  int n_fields;         /* in the header */
  int col[C_N_COLS];    /* field index of each column, -1 when absent */
  char *header;         /* the header line's text, to skip its repeats */
  int version_line;     /* a "# gemmshim log vN" line was read */
} reader;

__attribute__((format(printf, 2, 3))) static int complain(reader *r, const char *fmt, ...)
{
  int n = snprintf(r->err, RS_ERR_LEN, "%s:%d: ", r->source, r->line);
  if (n < 0 || n >= RS_ERR_LEN) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err + n, RS_ERR_LEN - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

/* ---- sets: distinct rows and pids ------------------------------------- */

static uint64_t fnv(const char *p)
{
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *p; p++) {
    h ^= (unsigned char)*p;
    h *= 0x100000001b3ull;
  }
  return h;
}

/* Adds a copy of key unless it is there; returns 1 when added, 0 when
 * there, -1 when out of memory. Kept at most half full. */
static int row_set_add(rs_summary *s, const char *key)
{
  if (2 * (s->distinct + 1) > s->row_slots) {
    size_t n = s->row_slots ? 2 * s->row_slots : 64;
    char **grown = calloc(n, sizeof *grown);
    if (!grown) return -1;
    for (size_t i = 0; i < s->row_slots; i++) {
      if (!s->row_set[i]) continue;
      size_t j = fnv(s->row_set[i]) & (n - 1);
      while (grown[j]) j = (j + 1) & (n - 1);
      grown[j] = s->row_set[i];
    }
    free(s->row_set);
    s->row_set = grown;
    s->row_slots = n;
  }
  size_t j = fnv(key) & (s->row_slots - 1);
  for (; s->row_set[j]; j = (j + 1) & (s->row_slots - 1))
    if (!strcmp(s->row_set[j], key)) return 0;
  if (!(s->row_set[j] = strdup(key))) return -1;
  s->distinct++;
  return 1;
}

static int pid_set_add(rs_summary *s, long long pid)
{
  if (2 * (s->processes + 1) > s->pid_slots) {
    size_t n = s->pid_slots ? 2 * s->pid_slots : 16;
    long long *grown = calloc(n, sizeof *grown);
    if (!grown) return -1;
    for (size_t i = 0; i < s->pid_slots; i++) {
      if (!s->pid_set[i]) continue;
      size_t j = (size_t)s->pid_set[i] & (n - 1);
      while (grown[j]) j = (j + 1) & (n - 1);
      grown[j] = s->pid_set[i];
    }
    free(s->pid_set);
    s->pid_set = grown;
    s->pid_slots = n;
  }
  size_t j = (size_t)(pid + 1) & (s->pid_slots - 1);
  for (; s->pid_set[j]; j = (j + 1) & (s->pid_slots - 1))
    if (s->pid_set[j] == pid + 1) return 0;
  s->pid_set[j] = pid + 1;
  s->processes++;
  return 1;
}

static int route_add(rs_summary *s, const char *name, unsigned long long calls, double flops)
{
  for (size_t i = 0; i < s->n_routes; i++)
    if (!strcmp(s->routes[i].name, name)) {
      s->routes[i].calls += calls;
      s->routes[i].flops += flops;
      return 0;
    }
  if (s->n_routes == s->routes_cap) {
    size_t cap = s->routes_cap ? 2 * s->routes_cap : 8;
    rs_route *grown = realloc(s->routes, cap * sizeof *grown);
    if (!grown) return -1;
    s->routes = grown;
    s->routes_cap = cap;
  }
  rs_route *r = &s->routes[s->n_routes++];
  snprintf(r->name, sizeof r->name, "%s", name);
  r->calls = calls;
  r->flops = flops;
  return 0;
}

void rs_init(rs_summary *s)
{
  memset(s, 0, sizeof *s);
}

void rs_free(rs_summary *s)
{
  for (size_t i = 0; i < s->row_slots; i++) free(s->row_set[i]);
  free(s->row_set);
  free(s->pid_set);
  free(s->routes);
  memset(s, 0, sizeof *s);
}

/* ---- fields ----------------------------------------------------------- */

/* Split a line at commas, in place. A field may be quoted ("a,b", with ""
 * for a quote): the log does not quote today, but a GPU name may one day
 * need it. Returns the number of fields, or -1 for a quote left open. */
static int split(char *line, char **f, int max)
{
  int n = 0;
  char *p = line;
  for (;;) {
    char *start = p, *out = p;
    if (*p == '"') {
      p++;
      for (;;) {
        if (!*p) return -1;
        if (*p == '"' && p[1] == '"') { *out++ = '"'; p += 2; continue; }
        if (*p == '"') { p++; break; }
        *out++ = *p++;
      }
      if (*p && *p != ',') return -1;
    } else {
      while (*p && *p != ',') p++;
      out = p;
    }
    int last = !*p;
    *out = '\0';
    if (n < max) f[n] = start;
    n++;
    if (last) break;
    p++;
  }
  return n;
}

static int get_int(reader *r, const char *s, const char *name, long long min, long long *out)
{
  errno = 0;
  char *end;
  long long v = strtoll(s, &end, 10);
  if (!s[0] || *end || errno) return complain(r, "%s: '%.40s' is not an integer", name, s);
  if (v < min) return complain(r, "%s is %lld (at least %lld)", name, v, min);
  *out = v;
  return 0;
}

/* align_*: a power of two in bytes, or '-', empty or 0 for not given.
 * Gives the smaller of *align and the value, at most 16. */
static int get_align(reader *r, const char *s, const char *name, int *align)
{
  if (!s[0] || !strcmp(s, "-") || !strcmp(s, "0")) return 0;
  long long v;
  if (get_int(r, s, name, 1, &v)) return -1;
  if (v & (v - 1)) return complain(r, "%s is %lld (a power of two, in bytes)", name, v);
  if (v < *align) *align = (int)v;
  return 0;
}

/* A time column: '-' (or absent, or empty) for not measured: -1. */
static int get_time_count(reader *r, char **f, int c, long long *out)
{
  *out = -1;
  if (r->col[c] < 0) return 0;
  const char *s = f[r->col[c]];
  if (!s[0] || !strcmp(s, "-")) return 0;
  return get_int(r, s, col_names[c], 0, out);
}

static int get_time_us(reader *r, char **f, int c, double *out)
{
  *out = -1;
  if (r->col[c] < 0) return 0;
  const char *s = f[r->col[c]];
  if (!s[0] || !strcmp(s, "-")) return 0;
  errno = 0;
  char *end;
  double v = strtod(s, &end);
  if (*end || errno || !(v >= 0))
    return complain(r, "%s: '%.40s' is not a number of microseconds", col_names[c], s);
  *out = v;
  return 0;
}

/* ---- lines ------------------------------------------------------------ */

static int is_header(char **f, int n)
{
  int pid = 0, count = 0;
  for (int i = 0; i < n; i++) {
    pid |= !strcmp(f[i], "pid");
    count |= !strcmp(f[i], "count");
  }
  return pid && count;
}

static int header_line(reader *r, char **f, int n, const char *text)
{
  for (int c = 0; c < C_N_COLS; c++) r->col[c] = -1;
  for (int i = 0; i < n; i++)
    for (int c = 0; c < C_N_COLS; c++)
      if (r->col[c] < 0 && !strcmp(f[i], col_names[c])) r->col[c] = i;
  for (int c = 0; c < C_N_REQUIRED; c++)
    if (r->col[c] < 0) return complain(r, "the header has no column '%s'", col_names[c]);
  free(r->header);
  if (!(r->header = strdup(text))) return complain(r, "out of memory");
  r->have_header = 1;
  r->n_fields = n;
  if (!r->version_line && r->version < 1) r->version = 1;  /* v1 had no "#" line */
  return 0;
}

/* Why the first line is not a call log's header, in words. */
static int not_a_log(reader *r, char **f)
{
  if (!strcmp(f[0], "time_s"))
    return complain(r, "this is the A/B CSV (GEMMSHIM_AB_LOG), not the call log (GEMMSHIM_LOG)");
  if (!strcmp(f[0], "Validator") || !strcmp(f[0], "entry"))
    return complain(r, "this is a route table (GEMMSHIM_TABLE), not the call log (GEMMSHIM_LOG)");
  return complain(r, "no header line (pid,entry,...): not a call log (GEMMSHIM_LOG)");
}

/* The entry class of a v1 row, which has no column for it: from the name
 * of the entry point. */
static int class_of_entry(const char *entry)
{
  if (!strncmp(entry, "cublasLt", 8)) return GS_EC_LT;
  if (strstr(entry, "Batched")) return GS_EC_BATCHED;
  return GS_EC_GEMM;
}

/* The table's time for a row served by its route; adds to the estimate
 * when the row for its key names the same route and gives a time. */
static void estimate(rs_summary *s, const rs_row *row)
{
  if (!s->table_for || row->entry_class < 0) return;
  const gs_route_table *t = s->table_for(row->gpu_uuid, s->table_ctx);
  if (!t) return;
  gs_rt_key k;
  memset(&k, 0, sizeof k);
  int a, b, c, compute, epilogue;
  /* a name this build does not know: no row can hold it */
  if (gs_dtype_from_name(row->a_type, &a) || gs_dtype_from_name(row->b_type, &b) ||
      gs_dtype_from_name(row->c_type, &c) || gs_compute_from_name(row->compute, &compute) ||
      gs_epilogue_from_name(row->epilogue, &epilogue) || strlen(row->layout) >= sizeof k.layout)
    return;
  k.entry_class = row->entry_class;
  k.a_type = a;
  k.b_type = b;
  k.c_type = c;
  k.compute = compute;
  k.epilogue = epilogue;
  k.align = row->align;
  strcpy(k.layout, row->layout);
  k.m = row->dims[0];
  k.n = row->dims[1];
  k.k = row->dims[2];
  k.batch = row->dims[3];
  const gs_rt_row *found = gs_rt_find(t, &k);
  if (!found || strcmp(found->route, row->route) || !(found->time_us > 0)) return;
  s->saved_us += (double)row->count * found->time_us * (found->ratio - 1);
  s->estimated_calls += (unsigned long long)row->count;
}

/* The row's text less the pid and the count: what makes calls distinct. */
static int distinct_key(reader *r, char **f, int n, char *buf, size_t len)
{
  size_t used = 0;
  for (int i = 0; i < n; i++) {
    int measured = 0;
    for (int c = C_TIMED; c <= C_TIME_DROPPED; c++) measured |= i == r->col[c];
    if (measured || i == r->col[C_PID] || i == r->col[C_COUNT]) continue;
    int w = snprintf(buf + used, len - used, "%s%s", used ? "," : "", f[i]);
    if (w < 0 || (size_t)w >= len - used) return -1;
    used += (size_t)w;
  }
  return 0;
}

static int row_line(reader *r, char **f, int n, char *scratch, size_t scratch_len)
{
  if (n != r->n_fields) return complain(r, "%d fields, the header has %d", n, r->n_fields);
#define F(c) (f[r->col[c]])
  long long pid, count, device, dims[4];
  if (get_int(r, F(C_PID), "pid", 0, &pid) || get_int(r, F(C_COUNT), "count", 0, &count) ||
      get_int(r, F(C_DEVICE), "device", -1, &device))
    return -1;
  static const int dim_cols[4] = { C_M, C_N, C_K, C_BATCH };
  for (int i = 0; i < 4; i++)
    if (get_int(r, F(dim_cols[i]), col_names[dim_cols[i]], -1, &dims[i])) return -1;
  const char *entry = F(C_ENTRY), *route = F(C_ROUTE), *reason = F(C_REASON);
  static const int named[] = { C_ENTRY, C_A, C_B, C_C, C_COMPUTE, C_LAYOUT, C_EPILOGUE,
                               C_ROUTE, C_REASON };
  for (size_t i = 0; i < sizeof named / sizeof *named; i++)
    if (!F(named[i])[0]) return complain(r, "%s is empty", col_names[named[i]]);
  if (strlen(route) >= RS_NAME_LEN) return complain(r, "route: '%.40s...' is too long", route);
  int other = !strcmp(entry, "(other)");
  int bad_args = !strcmp(reason, "bad_args");
  /* negative sizes mark a shape the shim could not know, nothing else */
  for (int i = 0; i < 4; i++)
    if (dims[i] < 0 && !other && !bad_args)
      return complain(r, "%s is %lld in a row that is neither (other) nor bad_args",
                      col_names[dim_cols[i]], dims[i]);
  int entry_class = -1;
  if (r->col[C_ENTRY_CLASS] >= 0) {
    const char *ec = F(C_ENTRY_CLASS);
    entry_class = gs_rt_entry_class_from_name(ec);
    if (entry_class < 0 && strcmp(ec, "-"))
      return complain(r, "entry_class: '%.40s' is not gemm, gemm_batched, lt or -", ec);
  } else if (!other) {
    entry_class = class_of_entry(entry);
  }
  /* The alignment class; a v1 log does not say: taken as 16, which every
   * kernel of this build needs to serve a call. */
  int align = 16;
  for (int c = C_ALIGN_A; c <= C_ALIGN_LDD && !other; c++)   /* (other): -1, unknown */
    if (r->col[c] >= 0 && get_align(r, F(c), col_names[c], &align)) return -1;
  /* the handle's math mode as the log wrote it (v2 on): -1 when it does
   * not say, or says something else than a mode (only tune reads it) */
  long long math_mode = -1;
  if (r->col[C_MATH_MODE] >= 0 && !other) {
    char *end;
    errno = 0;
    long long v = strtoll(F(C_MATH_MODE), &end, 10);
    if (F(C_MATH_MODE)[0] && !*end && !errno && v >= 0) math_mode = v;
  }
  /* v4: the bytes of workspace a cuBLASLt call gave; -1 where the log does
   * not say (a BLAS call, an older log) */
  long long workspace = -1;
  if (r->col[C_WORKSPACE] >= 0 && !other && strcmp(F(C_WORKSPACE), "-") &&
      get_int(r, F(C_WORKSPACE), "workspace", 0, &workspace))
    return -1;
  long long timed, captured, time_dropped;
  double median_us, est_total_us;
  if (get_time_count(r, f, C_TIMED, &timed) || get_time_count(r, f, C_CAPTURED, &captured) ||
      get_time_count(r, f, C_TIME_DROPPED, &time_dropped) ||
      get_time_us(r, f, C_MEDIAN_US, &median_us) || get_time_us(r, f, C_EST_TOTAL_US, &est_total_us))
    return -1;
  rs_row row = { .pid = pid, .count = count, .device = device,
                 .dims = { dims[0], dims[1], dims[2], dims[3] },
                 .entry = entry, .a_type = F(C_A), .b_type = F(C_B), .c_type = F(C_C),
                 .compute = F(C_COMPUTE), .layout = F(C_LAYOUT), .epilogue = F(C_EPILOGUE),
                 .route = route, .reason = reason,
                 .gpu_uuid = r->col[C_GPU_UUID] >= 0 ? F(C_GPU_UUID) : "",
                 .other = other, .bad_args = bad_args, .entry_class = entry_class,
                 .align = align, .math_mode = math_mode, .workspace = workspace,
                 .timed = timed, .captured = captured, .time_dropped = time_dropped,
                 .median_us = median_us, .est_total_us = est_total_us };
#undef F
  if (!other) {
    if (distinct_key(r, f, n, scratch, scratch_len)) return complain(r, "the row is too long");
    row.distinct = scratch;
  }
  if (r->fn(&row, r->ctx)) return complain(r, "out of memory");
  return 0;
}

/* The summary: one row's calls, FLOPs and route. */
static int summary_row(const rs_row *row, void *ctx)
{
  rs_summary *s = ctx;
  unsigned long long calls = (unsigned long long)row->count;
  s->calls += calls;
  if (pid_set_add(s, row->pid) < 0) return -1;
  if (row->other) {
    s->unknown_calls += calls;
    return 0;
  }
  if (row_set_add(s, row->distinct) < 0) return -1;
  if (row->bad_args) {
    s->bad_args_calls += calls;
    return 0;
  }
  double flops = rs_row_flops(row);
  s->flops += flops;
  int ours = rs_row_ours(row);
  int failed = !strcmp(row->reason, "kernel_failed");   /* ours ran, and failed */
  if (route_add(s, ours || failed ? row->route : "cublas", calls, flops)) return -1;
  if (ours) estimate(s, row);
  return 0;
}

double rs_row_flops(const rs_row *row)
{
  if (row->other || row->bad_args) return 0;
  /* double: 2*m*n*k*batch*count overflows 64-bit integers on real logs */
  return 2.0 * (double)row->dims[0] * (double)row->dims[1] * (double)row->dims[2] *
         (double)row->dims[3] * (double)row->count;
}

/* Whose result the caller got: ours for these reasons (A/B use mode; an
 * A/B sample that could not be compared was still served by ours), else
 * cuBLAS's. */
int rs_row_ours(const rs_row *row)
{
  return !strcmp(row->reason, "routed") || !strcmp(row->reason, "ab_compared") ||
         !strncmp(row->reason, "ab_skipped_", 11);
}

/* A "#" line: the version line, or a comment. */
static int comment_line(reader *r, const char *text)
{
  if (strncmp(text, RS_LOG_VERSION_PREFIX, strlen(RS_LOG_VERSION_PREFIX))) return 0;
  long long v;
  if (get_int(r, text + strlen(RS_LOG_VERSION_PREFIX), "the log version", 1, &v)) return -1;
  if (v > r->version) r->version = (int)v;
  r->version_line = 1;
  return 0;
}

int rs_read_text(const char *text, size_t len, const char *source, long long skip,
                 rs_row_fn fn, void *ctx, int *version, char err[RS_ERR_LEN])
{
  reader r = { .fn = fn, .ctx = ctx, .source = source, .err = err };
  err[0] = '\0';
  char *buf = malloc(len + 1);
  char **f = malloc(MAX_FIELDS * sizeof *f);
  char *scratch = malloc(len + 1);
  int rc = 0;
  if (!buf || !f || !scratch) {
    snprintf(err, RS_ERR_LEN, "%s: out of memory", source);
    rc = -1;
    goto out;
  }
  memcpy(buf, text, len);
  buf[len] = '\0';
  size_t at = 0;
  while (rc == 0 && at < len) {
    char *line = buf + at;
    size_t start = at;
    char *nl = memchr(line, '\n', len - at);
    at = nl ? (size_t)(nl - buf) + 1 : len;
    if (nl) *nl = '\0';
    r.line++;
    size_t n = strlen(line);
    if (n != (at - start) - (nl != NULL)) {
      rc = complain(&r, "a NUL byte: not a text file");
      break;
    }
    if (n && line[n - 1] == '\r') line[--n] = '\0';
    if (!n) continue;
    if (line[0] == '#') { rc = comment_line(&r, line); continue; }
    /* a repeat of the header: another block, or files put together */
    if (r.have_header && !strcmp(line, r.header)) continue;
    char *saved = strdup(line);   /* split cuts the line up; a header is kept whole */
    if (!saved) { rc = complain(&r, "out of memory"); break; }
    int nf = split(line, f, MAX_FIELDS);
    if (nf < 0) rc = complain(&r, "a quote is not closed");
    else if (nf > MAX_FIELDS) rc = complain(&r, "%d fields: too many", nf);
    else if (is_header(f, nf)) rc = header_line(&r, f, nf, saved);
    else if (!r.have_header) rc = not_a_log(&r, f);
    else if ((long long)start >= skip) rc = row_line(&r, f, nf, scratch, len + 1);
    free(saved);
  }
  if (rc == 0 && r.version_line && !r.have_header) {
    r.line++;
    rc = complain(&r, "no header line after the version line (the log is cut short)");
  }
  if (rc == 0 && version) *version = r.version;
out:
  free(r.header);
  free(scratch);
  free(f);
  free(buf);
  return rc;
}

int rs_read_file(const char *path, long long skip, rs_row_fn fn, void *ctx, int *version,
                 char err[RS_ERR_LEN])
{
  FILE *in = fopen(path, "rb");
  if (!in) {
    snprintf(err, RS_ERR_LEN, "%s: %s", path, strerror(errno));
    return -1;
  }
  size_t cap = 1 << 16, len = 0;
  char *text = malloc(cap);
  while (text) {
    len += fread(text + len, 1, cap - len, in);
    if (len < cap) break;
    char *more = realloc(text, cap * 2);
    if (!more) { free(text); text = NULL; break; }
    text = more;
    cap *= 2;
  }
  int failed = ferror(in);
  int saved_errno = errno;
  fclose(in);
  if (!text || failed) {
    snprintf(err, RS_ERR_LEN, "%s: %s", path, text ? strerror(saved_errno) : "out of memory");
    free(text);
    return -1;
  }
  int rc = rs_read_text(text, len, path, skip, fn, ctx, version, err);
  free(text);
  return rc;
}

static int loaded(rs_summary *s, int rc, int version)
{
  if (rc) return rc;
  if (version > s->version) s->version = version;
  s->files++;
  return 0;
}

int rs_load_text(rs_summary *s, const char *text, size_t len, const char *source,
                 long long skip, char err[RS_ERR_LEN])
{
  int version = 0;
  int rc = rs_read_text(text, len, source, skip, summary_row, s, &version, err);
  return loaded(s, rc, version);
}

int rs_load(rs_summary *s, const char *path, long long skip, char err[RS_ERR_LEN])
{
  int version = 0;
  int rc = rs_read_file(path, skip, summary_row, s, &version, err);
  return loaded(s, rc, version);
}

/* ---- what is said ----------------------------------------------------- */

double rs_share(const rs_summary *s, const char *route)
{
  if (!(s->flops > 0)) return 0;
  for (size_t i = 0; i < s->n_routes; i++)
    if (!strcmp(s->routes[i].name, route)) return s->routes[i].flops / s->flops;
  return 0;
}

static int by_flops(const void *a, const void *b)
{
  const rs_route *x = a, *y = b;
  if (x->flops != y->flops) return x->flops < y->flops ? 1 : -1;
  return strcmp(x->name, y->name);
}

static const char *duration(double us, char *buf, size_t len)
{
  double a = us < 0 ? -us : us;
  if (a < 1e3) snprintf(buf, len, "%.1f us", a);
  else if (a < 1e6) snprintf(buf, len, "%.2f ms", a / 1e3);
  else snprintf(buf, len, "%.2f s", a / 1e6);
  return buf;
}

static const char *plural(unsigned long long n) { return n == 1 ? "" : "s"; }

void rs_write_run(const rs_summary *s, FILE *out)
{
  if (!s->calls) {
    fputs("gemmshim: no GEMM call seen\n", out);
    return;
  }
  fprintf(out, "gemmshim: %llu GEMM call%s", s->calls, plural(s->calls));
  if (s->processes > 1) fprintf(out, " in %zu processes", s->processes);
  if (s->unknown_calls) fprintf(out, " (%llu of unknown shape)", s->unknown_calls);
  if (!(s->flops > 0)) {
    fputs("; none of a known shape\n", out);
  } else {
    rs_route *sorted = malloc(s->n_routes * sizeof *sorted);
    const rs_route *list = s->routes;
    if (sorted) {
      memcpy(sorted, s->routes, s->n_routes * sizeof *sorted);
      qsort(sorted, s->n_routes, sizeof *sorted, by_flops);
      list = sorted;
    }
    fputs("; share of GEMM FLOPs:", out);
    for (size_t i = 0; i < s->n_routes; i++) {
      double pct = 100 * list[i].flops / s->flops;
      if (pct > 0 && pct < 0.05) fprintf(out, "%s %s <0.1%%", i ? "," : "", list[i].name);
      else fprintf(out, "%s %s %.1f%%", i ? "," : "", list[i].name, pct);
    }
    fputc('\n', out);
    free(sorted);
  }
  if (s->estimated_calls) {
    char buf[32];
    fprintf(out, "gemmshim: estimated time %s: %s over %llu routed call%s (the route table's times)\n",
            s->saved_us < 0 ? "lost" : "saved", duration(s->saved_us, buf, sizeof buf),
            s->estimated_calls, plural(s->estimated_calls));
  }
}

void rs_write_record(const rs_summary *s, const char *path, const char *cmd, FILE *out)
{
  if (!s->calls) {
    fprintf(out, "gemmshim: %s made no GEMM call: nothing recorded (%s is empty)\n", cmd, path);
    return;
  }
  fprintf(out, "gemmshim: recorded %zu distinct call%s (%llu call%s) in %s\n", s->distinct,
          plural(s->distinct), s->calls, plural(s->calls), path);
  if (s->unknown_calls)
    fprintf(out,
            "gemmshim: %llu of those calls are in (other) rows: a thread made more distinct "
            "calls than the log keeps, their shapes are not recorded\n",
            s->unknown_calls);
}
