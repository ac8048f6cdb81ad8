/* gemmshim-report's library: parse the A/B CSV, read the call log (through
 * run_summary.c, the log's one reader), aggregate per shape class, render a
 * text table, CSV or an SVG chart. See report.h. */
#include "report.h"
#include "run_summary.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { AB_FIELDS = 19, WHAT_LEN = 320 };


/* ---- messages ----------------------------------------------------------- */

/* Fill a row parser's "what is wrong" and return -1, so parsers can say
 * `return complain(...)`. */
static int complain(char *what, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, WHAT_LEN, fmt, ap);
  va_end(ap);
  return -1;
}

static int file_error(char *err, const char *path, long line, const char *what)
{
  if (line > 0)
    snprintf(err, REPORT_ERR_LEN, "%s:%ld: %s", path, line, what);
  else
    snprintf(err, REPORT_ERR_LEN, "%s: %s", path, what);
  return -1;
}

/* ---- fields and numbers ------------------------------------------------- */

/* Split line in place at commas. Returns the number of fields found, which
 * may exceed max (only the first max are stored). */
static int split_fields(char *line, char **fields, int max)
{
  int n = 0;
  char *p = line;
  for (;;) {
    char *comma = strchr(p, ',');
    if (n < max) fields[n] = p;
    n++;
    if (!comma) return n;
    *comma = '\0';
    p = comma + 1;
  }
}

/* strto* skip leading blanks and accept empty strings as 0: refuse both,
 * a number must be the whole field. */
static int starts_like_number(const char *s)
{
  return *s && *s != ' ' && *s != '\t';
}

static int parse_ll(const char *s, long long *out)
{
  if (!starts_like_number(s)) return -1;
  char *end;
  errno = 0;
  *out = strtoll(s, &end, 10);
  return (*end || errno == ERANGE) ? -1 : 0;
}

/* Accepts nan and inf: error columns carry them when a kernel fails. */
static int parse_double(const char *s, double *out)
{
  if (!starts_like_number(s)) return -1;
  char *end;
  *out = strtod(s, &end);
  return *end ? -1 : 0;
}

static int get_int(const char *s, const char *col, long long min, long long *out, char *what)
{
  if (parse_ll(s, out)) return complain(what, "%s: '%.40s' is not an integer", col, s);
  if (*out >= min) return 0;
  if (min == 0) return complain(what, "%s is negative (%lld)", col, *out);
  return complain(what, "%s must be at least %lld (got %lld)", col, min, *out);
}

static int get_finite(const char *s, const char *col, double min, double *out, char *what)
{
  if (parse_double(s, out)) return complain(what, "%s: '%.40s' is not a number", col, s);
  if (!isfinite(*out) || *out < min)
    return complain(what, "%s must be a finite number >= %g (got %.40s)", col, min, s);
  return 0;
}

static int get_positive(const char *s, const char *col, double *out, char *what)
{
  if (parse_double(s, out)) return complain(what, "%s: '%.40s' is not a number", col, s);
  if (!isfinite(*out) || *out <= 0)
    return complain(what, "%s must be a positive finite number (got %.40s)", col, s);
  return 0;
}

/* An error metric: non-negative, or nan/inf, which is a failure to report. */
static int get_error_metric(const char *s, const char *col, double *out, char *what)
{
  if (parse_double(s, out)) return complain(what, "%s: '%.40s' is not a number", col, s);
  if (isfinite(*out) && *out < 0) return complain(what, "%s is negative (%.40s)", col, s);
  if (isinf(*out)) *out = INFINITY; /* -inf is no better than +inf */
  return 0;
}

static int get_name(const char *s, const char *col, size_t cap, char *out, char *what)
{
  size_t len = strlen(s);
  if (len == 0) return complain(what, "%s is empty", col);
  if (len >= cap) return complain(what, "%s is longer than %zu characters", col, cap - 1);
  memcpy(out, s, len + 1);
  return 0;
}

static int get_layout(const char *s, char *out, char *what)
{
  int ok = strlen(s) == 2 && strchr("NTC", s[0]) && strchr("NTC", s[1]);
  if (!ok) return complain(what, "layout: '%.40s' is not one of NN, TN, NT, TT", s);
  memcpy(out, s, 3);
  return 0;
}

/* ---- reading a CSV file ------------------------------------------------- */

typedef int (*row_parser)(report *r, char **fields, char *what);

typedef struct csv_format {
  const char *header;
  int nfields;
  const char *wrong_file_header; /* the other format's header ... */
  const char *wrong_file_hint;   /* ... and what to say when it is found */
  row_parser parse_row;
} csv_format;

static int check_header(const csv_format *fmt, const char *line, char *what)
{
  if (!strcmp(line, fmt->header)) return 0;
  /* the call log: v1 starts with its header, later versions with a line
   * "# gemmshim log vN" */
  if (!strncmp(line, fmt->wrong_file_header, strlen(fmt->wrong_file_header)) ||
      !strncmp(line, RS_LOG_VERSION_PREFIX, strlen(RS_LOG_VERSION_PREFIX)))
    return complain(what, "%s", fmt->wrong_file_hint);
  return complain(what, "wrong header: expected '%s'", fmt->header);
}

/* A line whose first field is the first column's name is a header, which
 * another process appending to the file repeats: it must match exactly. */
static int looks_like_header(const csv_format *fmt, const char *line)
{
  size_t first = strcspn(fmt->header, ",");
  return !strncmp(line, fmt->header, first) && (line[first] == ',' || !line[first]);
}

static int check_repeated_header(const csv_format *fmt, const char *line, char *what)
{
  if (!strcmp(line, fmt->header)) return 0;
  return complain(what, "a header that differs from '%s'", fmt->header);
}

/* One data line: split, count, hand to the format's parser. */
static int handle_row(report *r, const csv_format *fmt, char *line, int has_newline, char *what)
{
  char *fields[AB_FIELDS];
  int n = split_fields(line, fields, fmt->nfields);
  int rc;
  if (n != fmt->nfields)
    rc = complain(what, "expected %d fields, found %d", fmt->nfields, n);
  else
    rc = fmt->parse_row(r, fields, what);
  if (rc && !has_newline) {
    /* an incomplete last line: most likely a writer that was killed */
    char detail[WHAT_LEN];
    snprintf(detail, sizeof detail, "%s", what);
    complain(what, "truncated last line (no newline at end of file): %s", detail);
  }
  return rc;
}

/* Strip the line end; returns whether there was a newline. */
static int chomp(char *line, size_t *len)
{
  int has_newline = *len > 0 && line[*len - 1] == '\n';
  if (has_newline) line[--*len] = '\0';
  if (*len > 0 && line[*len - 1] == '\r') line[--*len] = '\0';
  return has_newline;
}

/* Every line of one line-oriented stream. A header starts the file and may
 * reappear wherever another process appended its block. */
static int read_lines(report *r, const csv_format *fmt, FILE *f, long *lineno, char *what)
{
  char *line = NULL;
  size_t cap = 0;
  ssize_t got;
  int rc = 0;
  while (rc == 0 && (got = getline(&line, &cap, f)) >= 0) {
    size_t len = (size_t)got;
    ++*lineno;
    int has_newline = chomp(line, &len);
    if (strlen(line) != len)
      rc = complain(what, "binary data (a NUL byte) in the line");
    else if (*lineno == 1)
      rc = check_header(fmt, line, what);
    else if (looks_like_header(fmt, line))
      rc = check_repeated_header(fmt, line, what);
    else
      rc = handle_row(r, fmt, line, has_newline, what);
  }
  free(line);
  if (rc == 0 && ferror(f)) rc = complain(what, "read error: %s", strerror(errno));
  if (rc == 0 && *lineno == 0) { *lineno = 1; rc = complain(what, "empty file: no header"); }
  return rc;
}

static int read_csv(report *r, const csv_format *fmt, const char *path, char *err)
{
  FILE *f = fopen(path, "r");
  if (!f) {
    char what[WHAT_LEN];
    snprintf(what, sizeof what, "cannot open: %s", strerror(errno));
    return file_error(err, path, 0, what);
  }
  char what[WHAT_LEN];
  long lineno = 0;
  int rc = read_lines(r, fmt, f, &lineno, what);
  fclose(f);
  return rc ? file_error(err, path, lineno, what) : 0;
}

/* ---- shape classes ------------------------------------------------------ */

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

static uint64_t class_hash(const report_class *c)
{
  long long dims[4] = { c->m, c->n, c->k, c->batch };
  uint64_t h = fnv1a(14695981039346656037ULL, dims, sizeof dims);
  h = fnv1a(h, c->layout, strlen(c->layout));
  h = fnv1a(h, c->a_type, strlen(c->a_type) + 1);
  h = fnv1a(h, c->c_type, strlen(c->c_type) + 1);
  return fnv1a(h, c->kernel, strlen(c->kernel));
}

static int same_class(const report_class *a, const report_class *b)
{
  return a->m == b->m && a->n == b->n && a->k == b->k && a->batch == b->batch &&
         !strcmp(a->layout, b->layout) && !strcmp(a->a_type, b->a_type) &&
         !strcmp(a->c_type, b->c_type) && !strcmp(a->kernel, b->kernel);
}

/* The slot holding key, or the empty slot where it belongs. */
static size_t index_slot(const report *r, const report_class *key)
{
  size_t mask = r->index_size - 1;
  size_t i = (size_t)class_hash(key) & mask;
  while (r->index[i] && !same_class(&r->classes[r->index[i] - 1], key)) i = (i + 1) & mask;
  return i;
}

static int rebuild_index(report *r, size_t size)
{
  size_t *index = calloc(size, sizeof *index);
  if (!index) return -1;
  free(r->index);
  r->index = index;
  r->index_size = size;
  for (size_t c = 0; c < r->nclasses; c++) r->index[index_slot(r, &r->classes[c])] = c + 1;
  return 0;
}

static report_class *add_class(report *r, const report_class *key)
{
  if (r->nclasses == r->classes_cap) {
    size_t cap = r->classes_cap ? 2 * r->classes_cap : 16;
    report_class *grown = realloc(r->classes, cap * sizeof *grown);
    if (!grown) return NULL;
    r->classes = grown;
    r->classes_cap = cap;
  }
  report_class *c = &r->classes[r->nclasses++];
  *c = *key;
  return c;
}

/* The class of key, created on first sight; NULL when out of memory. */
static report_class *find_class(report *r, const report_class *key)
{
  /* keep the table at most half full so probes stay short */
  if (2 * (r->nclasses + 1) > r->index_size &&
      rebuild_index(r, r->index_size ? 2 * r->index_size : 64))
    return NULL;
  size_t slot = index_slot(r, key);
  if (r->index[slot]) return &r->classes[r->index[slot] - 1];
  report_class *c = add_class(r, key);
  if (c) r->index[slot] = r->nclasses;
  return c;
}

static int add_sample(report_class *c, double ours_us, double cublas_us)
{
  if (c->calls == c->samples_cap) {
    size_t cap = c->samples_cap ? 2 * c->samples_cap : 8;
    double *ours = realloc(c->ours_us, cap * sizeof *ours);
    if (!ours) return -1;
    c->ours_us = ours;
    double *cublas = realloc(c->cublas_us, cap * sizeof *cublas);
    if (!cublas) return -1;
    c->cublas_us = cublas;
    c->samples_cap = cap;
  }
  c->ours_us[c->calls] = ours_us;
  c->cublas_us[c->calls] = cublas_us;
  c->calls++;
  return 0;
}

/* nan is the worst of all: a comparison that failed outright. */
static double worst_of(double worst, double x)
{
  if (isnan(worst)) return worst;
  if (isnan(x)) return x;
  return x > worst ? x : worst;
}

/* ---- the A/B CSV -------------------------------------------------------- */

typedef struct ab_row {
  report_class key;
  double time_s, ours_us, cublas_us, speedup, max_abs, max_rel, rel_fro;
  long long pid, device;
  int shadow;
} ab_row;

enum { AB_TIME, AB_PID, AB_ENTRY, AB_A_TYPE, AB_C_TYPE, AB_LAYOUT, AB_M, AB_N, AB_K,
       AB_BATCH, AB_KERNEL, AB_MODE, AB_OURS, AB_CUBLAS, AB_SPEEDUP, AB_MAX_ABS,
       AB_MAX_REL, AB_REL_FRO, AB_DEVICE };

static int get_mode(const char *s, int *shadow, char *what)
{
  if (!strcmp(s, "use")) { *shadow = 0; return 0; }
  /* a first-use self-check is compared like shadow mode: cuBLAS served */
  if (!strcmp(s, "shadow") || !strcmp(s, "selfcheck")) { *shadow = 1; return 0; }
  return complain(what, "mode: '%.40s' is not use, shadow or selfcheck", s);
}

static int parse_ab_key(char **f, report_class *key, char *what)
{
  char entry[REPORT_NAME_LEN];
  memset(key, 0, sizeof *key);
  if (get_name(f[AB_ENTRY], "entry", sizeof entry, entry, what) ||
      get_name(f[AB_A_TYPE], "a_type", sizeof key->a_type, key->a_type, what) ||
      get_name(f[AB_C_TYPE], "c_type", sizeof key->c_type, key->c_type, what) ||
      get_layout(f[AB_LAYOUT], key->layout, what) ||
      get_int(f[AB_M], "m", 0, &key->m, what) ||
      get_int(f[AB_N], "n", 0, &key->n, what) ||
      get_int(f[AB_K], "k", 0, &key->k, what) ||
      get_int(f[AB_BATCH], "batch", 1, &key->batch, what) ||
      get_name(f[AB_KERNEL], "kernel", sizeof key->kernel, key->kernel, what))
    return -1;
  return 0;
}

static int parse_ab_row(char **f, ab_row *row, char *what)
{
  if (get_finite(f[AB_TIME], "time_s", 0, &row->time_s, what) ||
      get_int(f[AB_PID], "pid", 0, &row->pid, what) ||
      parse_ab_key(f, &row->key, what) ||
      get_mode(f[AB_MODE], &row->shadow, what) ||
      get_positive(f[AB_OURS], "ours_us", &row->ours_us, what) ||
      get_positive(f[AB_CUBLAS], "cublas_us", &row->cublas_us, what) ||
      get_finite(f[AB_SPEEDUP], "speedup", 0, &row->speedup, what) ||
      get_error_metric(f[AB_MAX_ABS], "max_abs", &row->max_abs, what) ||
      get_error_metric(f[AB_MAX_REL], "max_rel", &row->max_rel, what) ||
      get_error_metric(f[AB_REL_FRO], "rel_fro", &row->rel_fro, what) ||
      get_int(f[AB_DEVICE], "device", 0, &row->device, what))
    return -1;
  return 0;
}

static int add_ab_row(report *r, char **fields, char *what)
{
  ab_row row;
  if (parse_ab_row(fields, &row, what)) return -1;
  report_class *c = find_class(r, &row.key);
  if (!c || add_sample(c, row.ours_us, row.cublas_us)) return complain(what, "out of memory");
  c->shadow_calls += row.shadow;
  c->sum_ours_us += row.ours_us;
  c->sum_cublas_us += row.cublas_us;
  c->worst_max_abs = worst_of(c->worst_max_abs, row.max_abs);
  c->worst_max_rel = worst_of(c->worst_max_rel, row.max_rel);
  c->worst_rel_fro = worst_of(c->worst_rel_fro, row.rel_fro);
  int failed = !isfinite(row.max_abs) || !isfinite(row.max_rel) || !isfinite(row.rel_fro);
  c->nonfinite_calls += failed;
  r->compared_calls++;
  r->shadow_calls += row.shadow;
  r->nonfinite_calls += failed;
  r->sum_ours_us += row.ours_us;
  r->sum_cublas_us += row.cublas_us;
  return 0;
}

static const csv_format ab_format = {
  REPORT_AB_HEADER, AB_FIELDS, REPORT_SUMMARY_HEADER,
  "this is the call log (GEMMSHIM_LOG), not the A/B CSV: pass it with --summary",
  add_ab_row,
};

int report_load(report *r, const char *path, char err[REPORT_ERR_LEN])
{
  if (read_csv(r, &ab_format, path, err)) return -1;
  r->ab_files++;
  return 0;
}

/* ---- the call log (--summary) ------------------------------------------- */

static int count_add(report_count_list *list, const char *name, unsigned long long calls,
                     double flops)
{
  for (size_t i = 0; i < list->n; i++)
    if (!strcmp(list->items[i].name, name)) {
      list->items[i].calls += calls;
      list->items[i].flops += flops;
      return 0;
    }
  if (list->n == list->cap) {
    size_t cap = list->cap ? 2 * list->cap : 8;
    report_count *grown = realloc(list->items, cap * sizeof *grown);
    if (!grown) return -1;
    list->items = grown;
    list->cap = cap;
  }
  report_count *item = &list->items[list->n++];
  snprintf(item->name, sizeof item->name, "%s", name);
  item->calls = calls;
  item->flops = flops;
  return 0;
}

/* One row of the log (read by run_summary.c, the log's one reader). */
static int tally_summary_row(const rs_row *row, void *ctx)
{
  report_summary *s = ctx;
  unsigned long long calls = (unsigned long long)row->count;
  if (report_time_add(&s->time, row)) return -1;
  /* a sampled call A/B could not compare: our kernel still served it */
  int skipped = !strncmp(row->reason, "ab_skipped_", 11);
  if (skipped && count_add(&s->not_compared, row->reason, calls, 0)) return -1;
  s->gemm_calls += calls;
  if (row->other) { s->other_calls += calls; return 0; }
  s->bad_args_calls += row->bad_args ? calls : 0;
  double flops = rs_row_flops(row);
  s->flops_known += flops;
  if (rs_row_ours(row)) {
    s->routed_calls += calls;
    s->flops_ours += flops;
    return count_add(&s->routed, row->route, calls, flops);
  }
  s->forwarded_calls += calls;
  return count_add(&s->forwarded, row->reason, calls, flops);
}

int report_load_summary(report *r, const char *path, char err[REPORT_ERR_LEN])
{
  char why[RS_ERR_LEN];
  if (rs_read_file(path, 0, tally_summary_row, &r->summary, NULL, why)) {
    snprintf(err, REPORT_ERR_LEN, "%s", why);
    return -1;
  }
  r->summary.files++;
  return 0;
}

/* ---- aggregation -------------------------------------------------------- */

static int compare_doubles(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double report_median(double *v, size_t n)
{
  if (n == 0) return NAN;
  qsort(v, n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Largest share first; ties broken by the key so the order is stable
 * whatever order the files came in. */
static int compare_classes(const void *a, const void *b)
{
  const report_class *x = a, *y = b;
  if (x->share != y->share) return x->share < y->share ? 1 : -1;
  if (x->calls != y->calls) return x->calls < y->calls ? 1 : -1;
  long long dx[4] = { x->m, x->n, x->k, x->batch }, dy[4] = { y->m, y->n, y->k, y->batch };
  for (int i = 0; i < 4; i++)
    if (dx[i] != dy[i]) return dx[i] < dy[i] ? -1 : 1;
  int c = strcmp(x->layout, y->layout);
  if (!c) c = strcmp(x->a_type, y->a_type);
  if (!c) c = strcmp(x->c_type, y->c_type);
  if (!c) c = strcmp(x->kernel, y->kernel);
  return c;
}

static int compare_counts(const void *a, const void *b)
{
  const report_count *x = a, *y = b;
  if (x->calls != y->calls) return x->calls < y->calls ? 1 : -1;
  return strcmp(x->name, y->name);
}

static void sort_counts(report_count_list *list)
{
  if (list->n) qsort(list->items, list->n, sizeof *list->items, compare_counts);
}

static void finish_class(report_class *c)
{
  c->median_ours_us = report_median(c->ours_us, c->calls);
  c->median_cublas_us = report_median(c->cublas_us, c->calls);
  c->speedup = c->median_cublas_us / c->median_ours_us;
}

int report_finish(report *r, char err[REPORT_ERR_LEN])
{
  r->failing_classes = 0;
  r->steady_ours_us = r->steady_cublas_us = 0;
  for (size_t i = 0; i < r->nclasses; i++) {
    finish_class(&r->classes[i]);
    r->failing_classes += r->classes[i].nonfinite_calls > 0;
    r->steady_ours_us += r->classes[i].median_ours_us * (double)r->classes[i].calls;
    r->steady_cublas_us += r->classes[i].median_cublas_us * (double)r->classes[i].calls;
  }
  /* a class's share of the (steady-state) cuBLAS time */
  for (size_t i = 0; i < r->nclasses; i++) {
    report_class *c = &r->classes[i];
    c->share = r->steady_cublas_us > 0
                   ? c->median_cublas_us * (double)c->calls / r->steady_cublas_us : 0;
  }
  if (r->nclasses) qsort(r->classes, r->nclasses, sizeof *r->classes, compare_classes);
  sort_counts(&r->summary.routed);
  sort_counts(&r->summary.forwarded);
  sort_counts(&r->summary.not_compared);
  report_time_finish(&r->summary.time);
  /* sorting moved the classes: the index must follow them */
  if (r->index_size && rebuild_index(r, r->index_size)) {
    snprintf(err, REPORT_ERR_LEN, "out of memory");
    return -1;
  }
  return 0;
}

void report_init(report *r)
{
  memset(r, 0, sizeof *r);
}

void report_free(report *r)
{
  for (size_t i = 0; i < r->nclasses; i++) {
    free(r->classes[i].ours_us);
    free(r->classes[i].cublas_us);
  }
  free(r->classes);
  free(r->index);
  free(r->summary.routed.items);
  free(r->summary.forwarded.items);
  free(r->summary.not_compared.items);
  report_time_free(&r->summary.time);
  memset(r, 0, sizeof *r);
}

/* ---- formatting shared by the writers ----------------------------------- */

const char *report_format_shape(const report_class *c, char *buf, size_t len)
{
  snprintf(buf, len, "%lldx%lldx%lld", c->m, c->n, c->k);
  return buf;
}

static const char *format_dtype(const report_class *c, char *buf, size_t len)
{
  if (!strcmp(c->a_type, c->c_type))
    snprintf(buf, len, "%s", c->a_type);
  else
    snprintf(buf, len, "%s->%s", c->a_type, c->c_type);
  return buf;
}

static const char *format_error(double x, char *buf, size_t len)
{
  if (isnan(x)) snprintf(buf, len, "nan");
  else if (isinf(x)) snprintf(buf, len, "inf");
  else snprintf(buf, len, "%.2e", x);
  return buf;
}

static const char *format_check(const report_class *c, char *buf, size_t len)
{
  if (c->nonfinite_calls)
    snprintf(buf, len, "FAIL: %zu nan/inf", c->nonfinite_calls);
  else
    snprintf(buf, len, "ok");
  return buf;
}

static const char *format_speedup(double speedup, char *buf, size_t len)
{
  snprintf(buf, len, speedup < 1000 ? "%.3fx" : "%.3gx", speedup);
  return buf;
}

/* A share that rounds to 0.0% but is not zero says so. */
static const char *format_share(double share, char *buf, size_t len)
{
  if (share > 0 && share < 0.0005)
    snprintf(buf, len, "<0.1%%");
  else
    snprintf(buf, len, "%.1f%%", 100 * share);
  return buf;
}

static double percent(double part, double whole)
{
  return whole > 0 ? 100.0 * part / whole : 0;
}

/* ---- text table --------------------------------------------------------- */

enum { TABLE_COLS = 13, CELL_LEN = 128 };

typedef struct column {
  const char *title;
  int right; /* numbers align right */
} column;

static const column class_columns[TABLE_COLS] = {
  { "shape m x n x k", 0 }, { "batch", 1 }, { "layout", 0 }, { "dtype", 0 },
  { "kernel", 0 }, { "calls", 1 }, { "share", 1 }, { "median ours us", 1 },
  { "median cuBLAS us", 1 }, { "speedup", 1 }, { "worst rel_fro", 1 },
  { "worst max_rel", 1 }, { "check", 0 },
};

typedef char cell[CELL_LEN];

static void class_cells(const report_class *c, cell *row)
{
  report_format_shape(c, row[0], CELL_LEN);
  snprintf(row[1], CELL_LEN, "%lld", c->batch);
  snprintf(row[2], CELL_LEN, "%s", c->layout);
  format_dtype(c, row[3], CELL_LEN);
  snprintf(row[4], CELL_LEN, "%s", c->kernel);
  snprintf(row[5], CELL_LEN, "%zu", c->calls);
  format_share(c->share, row[6], CELL_LEN);
  snprintf(row[7], CELL_LEN, "%.2f", c->median_ours_us);
  snprintf(row[8], CELL_LEN, "%.2f", c->median_cublas_us);
  format_speedup(c->speedup, row[9], CELL_LEN);
  format_error(c->worst_rel_fro, row[10], CELL_LEN);
  format_error(c->worst_max_rel, row[11], CELL_LEN);
  format_check(c, row[12], CELL_LEN);
}

static void print_row(FILE *out, const cell *row, const size_t *width)
{
  for (int col = 0; col < TABLE_COLS; col++) {
    const char *sep = col ? "  " : "";
    int w = (int)width[col];
    if (col == TABLE_COLS - 1 && !class_columns[col].right)
      fprintf(out, "%s%s", sep, row[col]); /* no trailing blanks */
    else if (class_columns[col].right)
      fprintf(out, "%s%*s", sep, w, row[col]);
    else
      fprintf(out, "%s%-*s", sep, w, row[col]);
  }
  fputc('\n', out);
}

/* Column widths are the widest cell, so every column lines up. */
static int write_class_table(const report *r, FILE *out)
{
  size_t nrows = r->nclasses + 1;
  cell *cells = malloc(nrows * TABLE_COLS * sizeof *cells);
  if (!cells) return -1;
  size_t width[TABLE_COLS] = { 0 };
  for (int col = 0; col < TABLE_COLS; col++)
    snprintf(cells[col], CELL_LEN, "%s", class_columns[col].title);
  for (size_t i = 0; i < r->nclasses; i++) class_cells(&r->classes[i], cells + (i + 1) * TABLE_COLS);
  for (size_t i = 0; i < nrows * TABLE_COLS; i++) {
    size_t len = strlen(cells[i]);
    if (len > width[i % TABLE_COLS]) width[i % TABLE_COLS] = len;
  }
  print_row(out, cells, width);
  for (int col = 0; col < TABLE_COLS; col++) {
    fprintf(out, "%s", col ? "  " : "");
    for (size_t j = 0; j < width[col]; j++) fputc('-', out);
  }
  fputc('\n', out);
  for (size_t i = 1; i < nrows; i++) print_row(out, cells + i * TABLE_COLS, width);
  free(cells);
  return 0;
}

static void write_totals(const report *r, FILE *out)
{
  double saved_us = r->steady_cublas_us - r->steady_ours_us;
  fprintf(out, "\nTotals over %zu compared calls (%zu shape classes, %d A/B file%s",
          r->compared_calls, r->nclasses, r->ab_files, r->ab_files == 1 ? "" : "s");
  if (r->shadow_calls)
    fprintf(out, "; %zu in shadow mode or first-use self-checks, where cuBLAS served",
            r->shadow_calls);
  fprintf(out, "):\n");
  fprintf(out, "  (steady state: each shape class's median time x its calls)\n");
  fprintf(out, "  %-24s %12.3f ms\n", "cuBLAS time", r->steady_cublas_us / 1000);
  fprintf(out, "  %-24s %12.3f ms\n", "our time", r->steady_ours_us / 1000);
  fprintf(out, "  %-24s %12.3f ms  (%.2f%% of cuBLAS time)\n",
          saved_us >= 0 ? "time saved" : "time LOST", fabs(saved_us) / 1000,
          percent(fabs(saved_us), r->steady_cublas_us));
  fprintf(out, "  %-24s %12.3fx  (cuBLAS time / our time)\n", "overall speedup",
          r->steady_cublas_us / r->steady_ours_us);
  fprintf(out, "  %-24s %12.3f / %.3f ms  (raw sums, cuBLAS / ours: first calls included)\n",
          "measured", r->sum_cublas_us / 1000, r->sum_ours_us / 1000);
  if (r->nonfinite_calls)
    fprintf(out, "  %-24s %12zu call%s in %zu shape class%s had nan/inf errors\n",
            "NUMERIC FAILURES", r->nonfinite_calls, r->nonfinite_calls == 1 ? "" : "s",
            r->failing_classes, r->failing_classes == 1 ? "" : "es");
  else
    fprintf(out, "  %-24s %12s  (every error finite)\n", "numeric failures", "none");
}

static void write_forward_reasons(const report_summary *s, FILE *out)
{
  fprintf(out, "  %-34s %12llu", "forwarded to cuBLAS", s->forwarded_calls);
  for (size_t i = 0; i < s->forwarded.n; i++)
    fprintf(out, "%s%s %llu", i ? ", " : "  (", s->forwarded.items[i].name,
            s->forwarded.items[i].calls);
  fprintf(out, "%s\n", s->forwarded.n ? ")" : "");
}

static void write_routes(const report *r, FILE *out)
{
  const report_summary *s = &r->summary;
  for (size_t i = 0; i < s->routed.n; i++) {
    char label[REPORT_NAME_LEN + 16];
    snprintf(label, sizeof label, "routed to %s", s->routed.items[i].name);
    fprintf(out, "  %-34s %12llu  (%.2f%% of calls)\n", label, s->routed.items[i].calls,
            percent((double)s->routed.items[i].calls, (double)s->gemm_calls));
  }
  if (!s->routed.n) fprintf(out, "  %-34s %12d\n", "routed to our kernels", 0);
  write_forward_reasons(s, out);
  if (s->other_calls)
    fprintf(out, "  %-34s %12llu  (route and shape unknown)\n", "(other) overflow row",
            s->other_calls);
}

static void write_flop_share(const report *r, FILE *out)
{
  const report_summary *s = &r->summary;
  const char *label = "share of GEMM FLOPs on our kernels";
  if (s->flops_known > 0)
    fprintf(out, "  %-34s %11.2f%%  (%.4g of %.4g FLOPs in calls of known shape)\n", label,
            percent(s->flops_ours, s->flops_known), s->flops_ours, s->flops_known);
  else
    fprintf(out, "  %-34s %12s  (no call of known shape)\n", label, "n/a");
  if (s->other_calls || s->bad_args_calls)
    fprintf(out, "  %-34s %12llu  (%llu in the (other) row, %llu bad_args: FLOPs unknown)\n",
            "calls left out of the FLOP share", s->other_calls + s->bad_args_calls,
            s->other_calls, s->bad_args_calls);
  if (s->routed_calls && r->ab_files)
    fprintf(out, "  %-34s %12zu  of %llu routed calls (%.2f%%)\n", "compared by A/B",
            r->compared_calls, s->routed_calls,
            percent((double)r->compared_calls, (double)s->routed_calls));
}

static void write_not_compared(const report_summary *s, FILE *out)
{
  fprintf(out, "\nNot compared by A/B (routed calls A/B skipped):\n");
  if (!s->not_compared.n) fprintf(out, "  none recorded\n");
  for (size_t i = 0; i < s->not_compared.n; i++)
    fprintf(out, "  %-34s %12llu\n", s->not_compared.items[i].name,
            s->not_compared.items[i].calls);
}

static void write_summary(const report *r, FILE *out)
{
  const report_summary *s = &r->summary;
  fprintf(out, "\nAll GEMM calls, from the call log (%d file%s):\n", s->files,
          s->files == 1 ? "" : "s");
  fprintf(out, "  %-34s %12llu\n", "GEMM calls", s->gemm_calls);
  write_routes(r, out);
  write_flop_share(r, out);
  if (r->ab_files) write_not_compared(s, out);
  report_time_write_text(&s->time, out);
}

int report_write_text(const report *r, FILE *out)
{
  if (!r->compared_calls && !r->ab_files) {
    /* the call logs alone */
  } else if (!r->compared_calls) {
    fprintf(out, "no compared calls (%d A/B file%s read)\n", r->ab_files,
            r->ab_files == 1 ? "" : "s");
  } else {
    fprintf(out, "gemmshim A/B report: per shape class, sorted by share of cuBLAS time; "
                 "us are medians, speedup = median cuBLAS / median ours\n\n");
    if (write_class_table(r, out)) return -1;
    write_totals(r, out);
  }
  if (r->summary.files) write_summary(r, out);
  return ferror(out) ? -1 : 0;
}

/* ---- CSV ---------------------------------------------------------------- */

int report_write_csv(const report *r, FILE *out)
{
  fprintf(out, "m,n,k,batch,layout,a_type,c_type,kernel,calls,shadow_calls,share_pct,"
               "ours_median_us,cublas_median_us,speedup,worst_rel_fro,worst_max_rel,"
               "worst_max_abs,nonfinite_calls\n");
  for (size_t i = 0; i < r->nclasses; i++) {
    const report_class *c = &r->classes[i];
    fprintf(out, "%lld,%lld,%lld,%lld,%s,%s,%s,%s,%zu,%zu,%.4f,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%zu\n",
            c->m, c->n, c->k, c->batch, c->layout, c->a_type, c->c_type, c->kernel, c->calls,
            c->shadow_calls, 100 * c->share, c->median_ours_us, c->median_cublas_us,
            c->speedup, c->worst_rel_fro, c->worst_max_rel, c->worst_max_abs,
            c->nonfinite_calls);
  }
  return ferror(out) ? -1 : 0;
}

/* ---- SVG ---------------------------------------------------------------- */

enum { SVG_MAX_ROWS = 50 };

/* Geometry of the chart, in px. */
#define ROW_H 24.0
#define TOP 108.0
#define MARGIN 16.0
#define CHAR_W 7.3 /* DejaVu Sans Mono at 12px */
#define SPEED_W 440.0
#define PANEL_GAP 56.0
#define ERR_W 330.0
#define SLOT_GAP 30.0 /* the "0" slot left of the log axis */
#define FAIL_GAP 48.0 /* the "nan/inf" slot right of it */

#define WIN_COLOUR "#2e8b3e"
#define LOSS_COLOUR "#d1362f"
#define FRO_COLOUR "#1f5fa8"
#define MAXREL_COLOUR "#e07b00"

typedef struct label_cols {
  double x[5]; /* shape, layout, dtype, kernel, share (right edge) */
  int show_kernel;
} label_cols;

typedef struct chart {
  const report *r;
  size_t rows;
  label_cols labels;
  double speed_x0, speed_lo, speed_hi;
  double err_x0, err_lo, err_hi; /* log10 decades */
  double width, height;
} chart;

static void xml_text(FILE *out, const char *s)
{
  for (; *s; s++) {
    switch (*s) {
    case '&': fputs("&amp;", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '"': fputs("&quot;", out); break;
    default: fputc(*s, out);
    }
  }
}

static void svg_text(FILE *out, double x, double y, const char *anchor, const char *attrs,
                     const char *text)
{
  fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" %s>", x, y, anchor, attrs);
  xml_text(out, text);
  fputs("</text>\n", out);
}

/* Unit roundoff of a storage type: the scale an output difference of one
 * rounding has. NaN when the type is not known. */
static double unit_roundoff(const char *type)
{
  static const struct { const char *name; double u; } table[] = {
    { "f64", 0x1p-53 }, { "f32", 0x1p-24 }, { "tf32", 0x1p-11 }, { "f16", 0x1p-11 },
    { "bf16", 0x1p-8 }, { "e4m3", 0x1p-4 }, { "e5m2", 0x1p-3 },
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(type, table[i].name)) return table[i].u;
  return NAN;
}

static void shape_label(const report_class *c, char *buf, size_t len)
{
  char shape[64];
  report_format_shape(c, shape, sizeof shape);
  if (c->batch > 1)
    snprintf(buf, len, "%s b%lld", shape, c->batch);
  else
    snprintf(buf, len, "%s", shape);
}

static void widen(size_t *width, size_t len)
{
  if (len > *width) *width = len;
}

/* Label columns as wide as their longest text (monospace, so it is exact). */
static void layout_labels(chart *ch)
{
  size_t w[4] = { 22, 6, 5, 6 }; /* at least as wide as the headings */
  char buf[CELL_LEN];
  for (size_t i = 0; i < ch->rows; i++) {
    const report_class *c = &ch->r->classes[i];
    shape_label(c, buf, sizeof buf);
    widen(&w[0], strlen(buf));
    widen(&w[2], strlen(format_dtype(c, buf, sizeof buf)));
    widen(&w[3], strlen(c->kernel));
    if (strcmp(c->kernel, ch->r->classes[0].kernel)) ch->labels.show_kernel = 1;
  }
  double x = MARGIN;
  for (int col = 0; col < 4; col++) {
    ch->labels.x[col] = x;
    if (col < 3 || ch->labels.show_kernel) x += w[col] * CHAR_W + 14;
  }
  ch->labels.x[4] = x + 6 * CHAR_W; /* share, right-aligned */
  ch->speed_x0 = ch->labels.x[4] + 28;
}

/* Speedups past this are drawn at it (the label still says the value):
 * one absurd timing must not squash every other bar. */
#define SPEED_CAP 100.0

static double capped_speedup(const report_class *c)
{
  return isfinite(c->speedup) && c->speedup < SPEED_CAP ? c->speedup : SPEED_CAP;
}

/* Domain of the speedup axis: always shows 1.0, with room for value labels. */
static void speed_domain(chart *ch)
{
  double lo = 1, hi = 1;
  for (size_t i = 0; i < ch->rows; i++) {
    double s = capped_speedup(&ch->r->classes[i]);
    if (s < lo) lo = s;
    if (s > hi) hi = s;
  }
  double span = hi - lo < 0.1 ? 0.1 : hi - lo;
  ch->speed_lo = lo - 0.2 * span;
  ch->speed_hi = hi + 0.2 * span;
  if (ch->speed_lo < 0) ch->speed_lo = 0;
}

static void err_extend(double x, double *lo, double *hi)
{
  if (!isfinite(x) || x <= 0) return;
  if (x < *lo) *lo = x;
  if (x > *hi) *hi = x;
}

/* Whole decades covering every finite positive error and roundoff mark. */
static void err_domain(chart *ch)
{
  double lo = INFINITY, hi = 0;
  for (size_t i = 0; i < ch->rows; i++) {
    const report_class *c = &ch->r->classes[i];
    err_extend(c->worst_rel_fro, &lo, &hi);
    err_extend(c->worst_max_rel, &lo, &hi);
    err_extend(unit_roundoff(c->c_type), &lo, &hi);
  }
  if (hi == 0) { lo = 1e-8; hi = 1e-2; }
  ch->err_lo = floor(log10(lo));
  ch->err_hi = ceil(log10(hi));
  if (ch->err_hi - ch->err_lo < 3) ch->err_lo = ch->err_hi - 3;
}

static void layout_chart(chart *ch, const report *r)
{
  memset(ch, 0, sizeof *ch);
  ch->r = r;
  ch->rows = r->nclasses < SVG_MAX_ROWS ? r->nclasses : SVG_MAX_ROWS;
  layout_labels(ch);
  speed_domain(ch);
  err_domain(ch);
  ch->err_x0 = ch->speed_x0 + SPEED_W + PANEL_GAP + SLOT_GAP;
  ch->width = ch->err_x0 + ERR_W + FAIL_GAP + 32 + MARGIN;
  ch->height = TOP + ch->rows * ROW_H + 56;
}

static double speed_x(const chart *ch, double s)
{
  return ch->speed_x0 + (s - ch->speed_lo) / (ch->speed_hi - ch->speed_lo) * SPEED_W;
}

static double err_x(const chart *ch, double e)
{
  if (isnan(e) || isinf(e)) return ch->err_x0 + ERR_W + FAIL_GAP; /* the failure slot */
  if (e <= 0) return ch->err_x0 - SLOT_GAP;                     /* the zero slot */
  return ch->err_x0 + (log10(e) - ch->err_lo) / (ch->err_hi - ch->err_lo) * ERR_W;
}

static double row_y(size_t i)
{
  return TOP + i * ROW_H;
}

static double bottom(const chart *ch)
{
  return row_y(ch->rows);
}

/* A step of 1, 2 or 5 times a power of ten giving about six ticks. */
static double tick_step(double span)
{
  double raw = span / 6, mag = pow(10, floor(log10(raw)));
  double step = raw <= mag ? mag : raw <= 2 * mag ? 2 * mag : raw <= 5 * mag ? 5 * mag : 10 * mag;
  return step;
}

static void svg_title(const chart *ch, FILE *out)
{
  const report *r = ch->r;
  char line[256];
  svg_text(out, MARGIN, 26, "start", "font-size=\"17\" font-weight=\"bold\"",
           "gemmshim A/B: speedup over cuBLAS and worst error, per shape class");
  double saved = r->steady_cublas_us - r->steady_ours_us;
  snprintf(line, sizeof line,
           "%zu compared calls in %zu classes; steady-state speedup %.3fx; time %s %.3f ms "
           "(%.2f%% of cuBLAS time; medians x calls)",
           r->compared_calls, r->nclasses, r->steady_cublas_us / r->steady_ours_us,
           saved >= 0 ? "saved" : "lost", fabs(saved) / 1000,
           percent(fabs(saved), r->steady_cublas_us));
  svg_text(out, MARGIN, 48, "start", "fill=\"#444\"", line);
  if (r->nonfinite_calls) {
    snprintf(line, sizeof line, "NUMERIC FAILURES: %zu call%s in %zu class%s had nan/inf errors",
             r->nonfinite_calls, r->nonfinite_calls == 1 ? "" : "s", r->failing_classes,
             r->failing_classes == 1 ? "" : "es");
    svg_text(out, MARGIN, 68, "start", "fill=\"" LOSS_COLOUR "\" font-weight=\"bold\"", line);
  }
}

static void svg_headings(const chart *ch, FILE *out)
{
  const char *bold = "font-weight=\"bold\"";
  const char *grey = "fill=\"#555\"";
  double y = TOP - 12;
  svg_text(out, ch->labels.x[0], y, "start", bold, "m x n x k (bN: batch N)");
  svg_text(out, ch->labels.x[1], y, "start", bold, "layout");
  svg_text(out, ch->labels.x[2], y, "start", bold, "dtype");
  if (ch->labels.show_kernel) svg_text(out, ch->labels.x[3], y, "start", bold, "kernel");
  svg_text(out, ch->labels.x[4], y, "end", bold, "share");
  svg_text(out, ch->speed_x0, y - 16, "start", bold, "speedup (median cuBLAS us / median ours)");
  svg_text(out, ch->speed_x0, y, "start", grey, "right of 1.0: ours faster");
  svg_text(out, ch->err_x0 - SLOT_GAP, y - 16, "start", bold, "worst error vs cuBLAS (log scale)");
}

/* Legend of the error panel, drawn with the markers themselves. */
static void svg_legend(const chart *ch, FILE *out)
{
  double x = ch->err_x0 - SLOT_GAP, y = TOP - 16;
  fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\"/>\n", x + 5, y, FRO_COLOUR);
  svg_text(out, x + 14, y + 4, "start", "", "rel_fro");
  x += 76;
  fprintf(out, "<path d=\"M%.1f %.1fl5 5l-5 5l-5 -5z\" fill=\"white\" stroke=\"%s\" "
               "stroke-width=\"2\"/>\n", x + 5, y - 5, MAXREL_COLOUR);
  svg_text(out, x + 14, y + 4, "start", "", "max_rel");
  x += 82;
  fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#777\" "
               "stroke-width=\"2\"/>\n", x + 4, y - 7, x + 4, y + 7);
  svg_text(out, x + 12, y + 4, "start", "", "unit roundoff of c_type");
}

static void svg_row_background(const chart *ch, FILE *out)
{
  for (size_t i = 0; i < ch->rows; i += 2)
    fprintf(out, "<rect x=\"0\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f2f4f7\"/>\n",
            row_y(i), ch->width, ROW_H);
}

static void svg_speed_axis(const chart *ch, FILE *out)
{
  double step = tick_step(ch->speed_hi - ch->speed_lo);
  int decimals = step >= 1 ? 1 : (int)ceil(-log10(step) - 1e-9);
  double y0 = TOP - 4, y1 = bottom(ch);
  for (double t = ceil(ch->speed_lo / step) * step; t <= ch->speed_hi + 1e-9; t += step) {
    double x = speed_x(ch, t);
    char label[32];
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d0d4da\"/>\n",
            x, y0, x, y1);
    snprintf(label, sizeof label, "%.*fx", decimals, t);
    svg_text(out, x, y1 + 16, "middle", "fill=\"#444\"", label);
  }
  double one = speed_x(ch, 1.0);
  fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222\" "
               "stroke-width=\"1.5\"/>\n", one, y0, one, y1 + 4);
  svg_text(out, one, y1 + 32, "middle", "font-weight=\"bold\"", "1.0 = cuBLAS");
}

static void svg_err_tick(const chart *ch, FILE *out, double x, const char *label)
{
  double y0 = TOP - 4, y1 = bottom(ch);
  fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d0d4da\"/>\n",
          x, y0, x, y1);
  svg_text(out, x, y1 + 16, "middle", "fill=\"#444\"", label);
}

static void svg_err_axis(const chart *ch, FILE *out)
{
  int decades = (int)(ch->err_hi - ch->err_lo);
  int every = decades > 8 ? 2 : 1; /* keep the labels from touching */
  for (int d = 0; d <= decades; d += every) {
    char label[16];
    snprintf(label, sizeof label, "1e%d", (int)ch->err_lo + d);
    svg_err_tick(ch, out, err_x(ch, pow(10, ch->err_lo + d)), label);
  }
  svg_err_tick(ch, out, err_x(ch, 0), "0");
  svg_text(out, err_x(ch, NAN), bottom(ch) + 16, "middle",
           "fill=\"" LOSS_COLOUR "\" font-weight=\"bold\"", "nan/inf");
}

static void svg_row_labels(const chart *ch, FILE *out, size_t i, const report_class *c)
{
  const char *attrs = c->nonfinite_calls
                          ? "font-family=\"DejaVu Sans Mono, monospace\" fill=\"" LOSS_COLOUR "\""
                          : "font-family=\"DejaVu Sans Mono, monospace\"";
  double y = row_y(i) + 16.5;
  char buf[CELL_LEN];
  shape_label(c, buf, sizeof buf);
  svg_text(out, ch->labels.x[0], y, "start", attrs, buf);
  svg_text(out, ch->labels.x[1], y, "start", attrs, c->layout);
  svg_text(out, ch->labels.x[2], y, "start", attrs, format_dtype(c, buf, sizeof buf));
  if (ch->labels.show_kernel) svg_text(out, ch->labels.x[3], y, "start", attrs, c->kernel);
  svg_text(out, ch->labels.x[4], y, "end", attrs, format_share(c->share, buf, sizeof buf));
}

static void svg_speed_bar(const chart *ch, FILE *out, size_t i, const report_class *c)
{
  double one = speed_x(ch, 1.0), x = speed_x(ch, capped_speedup(c)), y = row_y(i);
  int win = c->speedup >= 1;
  double left = win ? one : x, w = fabs(x - one);
  char value[32];
  fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
          left, y + 5, w < 1 ? 1 : w, ROW_H - 10, win ? WIN_COLOUR : LOSS_COLOUR);
  svg_text(out, win ? x + 5 : x - 5, y + 16.5, win ? "start" : "end", "fill=\"#222\"",
           format_speedup(c->speedup, value, sizeof value));
}

static void svg_fail_cross(FILE *out, double x, double y)
{
  fprintf(out, "<path d=\"M%.1f %.1fl10 10m0 -10l-10 10\" stroke=\"%s\" stroke-width=\"3\"/>\n",
          x - 5, y - 5, LOSS_COLOUR);
}

static void svg_err_markers(const chart *ch, FILE *out, size_t i, const report_class *c)
{
  double y = row_y(i) + ROW_H / 2;
  double u = unit_roundoff(c->c_type);
  if (!isnan(u))
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#777\" "
                 "stroke-width=\"2\"/>\n", err_x(ch, u), y - 8, err_x(ch, u), y + 8);
  if (isfinite(c->worst_max_rel))
    fprintf(out, "<path d=\"M%.1f %.1fl5 5l-5 5l-5 -5z\" fill=\"white\" stroke=\"%s\" "
                 "stroke-width=\"2\"/>\n", err_x(ch, c->worst_max_rel), y - 5, MAXREL_COLOUR);
  if (isfinite(c->worst_rel_fro))
    fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\"/>\n",
            err_x(ch, c->worst_rel_fro), y, FRO_COLOUR);
  if (c->nonfinite_calls) svg_fail_cross(out, err_x(ch, NAN), y);
}

/* Hovering a row in a browser shows its numbers. */
static void svg_tooltip(FILE *out, const report_class *c)
{
  char shape[64], dtype[40], fro[24], rel[24], text[512];
  shape_label(c, shape, sizeof shape);
  snprintf(text, sizeof text,
           "%s %s %s %s: %zu calls, %.1f%% of cuBLAS time, ours %.2f us, cuBLAS %.2f us, "
           "%.3fx, worst rel_fro %s, worst max_rel %s",
           shape, c->layout, format_dtype(c, dtype, sizeof dtype), c->kernel, c->calls,
           100 * c->share, c->median_ours_us, c->median_cublas_us, c->speedup,
           format_error(c->worst_rel_fro, fro, sizeof fro),
           format_error(c->worst_max_rel, rel, sizeof rel));
  fputs("<title>", out);
  xml_text(out, text);
  fputs("</title>\n", out);
}

static void svg_rows(const chart *ch, FILE *out)
{
  for (size_t i = 0; i < ch->rows; i++) {
    const report_class *c = &ch->r->classes[i];
    fputs("<g>\n", out);
    svg_tooltip(out, c);
    svg_row_labels(ch, out, i, c);
    svg_speed_bar(ch, out, i, c);
    svg_err_markers(ch, out, i, c);
    fputs("</g>\n", out);
  }
}

static void svg_footer(const chart *ch, FILE *out)
{
  if (ch->rows == ch->r->nclasses) return;
  char note[128];
  snprintf(note, sizeof note, "showing the %zu of %zu shape classes with the largest share",
           ch->rows, ch->r->nclasses);
  svg_text(out, MARGIN, ch->height - 8, "start", "fill=\"#444\"", note);
}

static void svg_open(FILE *out, double width, double height)
{
  fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Arial, sans-serif\" "
               "font-size=\"12\">\n", width, height, width, height);
  fputs("<title>gemmshim A/B report</title>\n", out);
  fprintf(out, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", width, height);
}

int report_write_svg(const report *r, FILE *out)
{
  if (!r->nclasses) {
    svg_open(out, 420, 60);
    svg_text(out, MARGIN, 36, "start", "font-size=\"16\"", "gemmshim A/B: no compared calls");
    fputs("</svg>\n", out);
    return ferror(out) ? -1 : 0;
  }
  chart ch;
  layout_chart(&ch, r);
  svg_open(out, ch.width, ch.height);
  svg_title(&ch, out);
  svg_row_background(&ch, out);
  svg_speed_axis(&ch, out);
  svg_err_axis(&ch, out);
  svg_headings(&ch, out);
  svg_legend(&ch, out);
  svg_rows(&ch, out);
  svg_footer(&ch, out);
  fputs("</svg>\n", out);
  return ferror(out) ? -1 : 0;
}

/* ---- the whole run ------------------------------------------------------ */

static int load_all(report *r, const report_options *opt, char *err)
{
  for (size_t i = 0; i < opt->n_ab; i++)
    if (report_load(r, opt->ab_paths[i], err)) return -1;
  for (size_t i = 0; i < opt->n_summary; i++)
    if (report_load_summary(r, opt->summary_paths[i], err)) return -1;
  return report_finish(r, err);
}

static int write_svg_file(const report *r, const char *path, int time_chart, FILE *err)
{
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(err, "gemmshim-report: %s: cannot write: %s\n", path, strerror(errno));
    return 1;
  }
  int bad = time_chart ? report_time_write_svg(&r->summary.time, f) : report_write_svg(r, f);
  if (fclose(f) != 0) bad = 1;
  if (bad) fprintf(err, "gemmshim-report: %s: write failed\n", path);
  return bad ? 1 : 0;
}

int report_run(const report_options *opt, FILE *out, FILE *err)
{
  report r;
  char msg[REPORT_ERR_LEN];
  report_init(&r);
  if (load_all(&r, opt, msg)) {
    fprintf(err, "gemmshim-report: %s\n", msg);
    report_free(&r);
    return 2;
  }
  int status = 0;
  if ((opt->csv ? report_write_csv(&r, out) : report_write_text(&r, out)) || fflush(out)) {
    fprintf(err, "gemmshim-report: cannot write the report: %s\n", strerror(errno));
    status = 1;
  }
  if (opt->svg_path && write_svg_file(&r, opt->svg_path, 0, err)) status = 1;
  if (opt->time_svg_path && write_svg_file(&r, opt->time_svg_path, 1, err)) status = 1;
  report_free(&r);
  return status;
}
