/* gemmshim tune's logic (tune.h). */
#include "tune.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../dispatch/route_table.h"

int tn_say(char err[TN_ERR_LEN], const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, TN_ERR_LEN, fmt, ap);
  va_end(ap);
  return -1;
}

static void copy(char *dst, size_t len, const char *src) { snprintf(dst, len, "%s", src); }

/* ---- keys --------------------------------------------------------------- */

static int key_cmp(const tn_key *a, const tn_key *b)
{
  int c;
  if ((c = strcmp(a->entry, b->entry)) || (c = strcmp(a->a_type, b->a_type)) ||
      (c = strcmp(a->b_type, b->b_type)) || (c = strcmp(a->c_type, b->c_type)) ||
      (c = strcmp(a->compute, b->compute)) || (c = strcmp(a->layout, b->layout)) ||
      (c = strcmp(a->epilogue, b->epilogue)))
    return c;
  const long long x[5] = { a->m, a->n, a->k, a->batch, a->align };
  const long long y[5] = { b->m, b->n, b->k, b->batch, b->align };
  for (int i = 0; i < 5; i++)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

static int key_cmp_void(const void *a, const void *b) { return key_cmp(a, b); }

static void key_text(const tn_key *k, char *out, size_t len)
{
  snprintf(out, len, "%s,%s,%s,%s,%s,%s,%s,%lld,%lld,%lld,%lld,%d", k->entry, k->a_type,
           k->b_type, k->c_type, k->compute, k->layout, k->epilogue, k->m, k->n, k->k, k->batch,
           k->align);
}

/* The key and the workspace measured with, as the measurements' CSV has
 * them: bytes, or LEAST..MOST where the calls gave several ('-': a BLAS
 * call). */
static void measured_key_text(const tn_key *k, char *out, size_t len)
{
  char key[400];
  key_text(k, key, sizeof key);
  if (strcmp(k->entry, "lt") || k->workspace < 0) snprintf(out, len, "%s,-", key);
  else if (k->workspace == k->workspace_max) snprintf(out, len, "%s,%lld", key, k->workspace);
  else snprintf(out, len, "%s,%lld..%lld", key, k->workspace, k->workspace_max);
}

static int is_dtype(const char *t)
{
  return !strcmp(t, "f32") || !strcmp(t, "bf16") || !strcmp(t, "f16");
}

/* The bench's buffers are cudaMalloc'ed (256-byte aligned) with the
 * tightest leading dimensions: lda = k or m, ldb = n or k, ldc = m. */
static int bench_aligned(const tn_key *k)
{
  const long long es = !strcmp(k->a_type, "f32") ? 4 : 2;
  const long long lda = k->layout[0] == 'T' ? k->k : k->m;
  const long long ldb = k->layout[1] == 'T' ? k->n : k->k;
  return (lda * es) % 16 == 0 && (ldb * es) % 16 == 0 && (k->m * es) % 16 == 0;
}

/* The bench makes: cublasGemmEx with A = B = C of one type, FP32 compute
 * (cublasSgemm for f32, in the default math mode), no epilogue, 16-byte
 * aligned, or its strided-batched form (cublasGemmStridedBatchedEx,
 * cublasSgemmStridedBatched) with the items packed; or cublasLtMatmul with
 * A = B = C = D of one type, CUBLAS_COMPUTE_32F, the epilogue DEFAULT or
 * BIAS (a bias of the output's type), the call's workspace, and a batch in
 * its layouts. A call is measured only when it is one of those. */
int tn_measurable(const tn_key *k, char *why, size_t len)
{
  const char *no = NULL;
  const int lt = !strcmp(k->entry, "lt");
  if (strcmp(k->entry, "gemm") && strcmp(k->entry, "gemm_batched") && !lt)
    no = "the entry point is not known";
  else if (k->batch < 1 || k->batch > 2147483647LL) no = "the batch count is not 1 .. 2^31 - 1";
  else if (!strcmp(k->entry, "gemm") && k->batch != 1)
    no = "a batch count on a plain GEMM entry (a log of another build?)";
  else if (k->batch > 1 && !strcmp(k->a_type, "f32"))
    no = "no candidate takes a batch of FP32 products (our kernels take one product a call; "
         "cuBLASLt's algorithms route 16-bit data)";
  else if (strcmp(k->a_type, k->b_type) || strcmp(k->a_type, k->c_type) || !is_dtype(k->a_type))
    no = "only A = B = C of f32, bf16 or f16 is measured";
  else if (lt ? strcmp(k->epilogue, "default") && strcmp(k->epilogue, "bias")
              : strcmp(k->epilogue, "-"))
    no = lt ? "only the epilogues default and bias are measured" : "the call has an epilogue";
  else if (lt && k->workspace < 0)
    no = "the log does not give the cuBLASLt call's workspace (a log before v4: record again)";
  else if (lt && (k->workspace > TN_MAX_WORKSPACE || k->workspace_max > TN_MAX_WORKSPACE))
    no = "the cuBLASLt call's workspace is over the 2^31 - 1 bytes the bench gives";
  else if (k->align != 16) no = "only 16-byte aligned calls are measured";
  else if (!bench_aligned(k))
    no = "the bench's call (leading dimensions m, k or n) would not be 16-byte aligned";
  else if (!lt && !strcmp(k->a_type, "f32") ? strcmp(k->compute, "-") && strcmp(k->compute, "32f")
                                             : strcmp(k->compute, "32f"))
    no = "the compute type is not the one measured (32f)";
  else if (!strcmp(k->a_type, "f32") && k->math_mode > 0 && (k->math_mode & 0xf))
    no = "FP32 calls in a math mode other than the default are not measured yet";
  else if (k->m < 1 || k->n < 1 || k->k < 1 || k->m > 2147483647LL || k->n > 2147483647LL ||
           k->k > 2147483647LL)
    no = "a dimension is not between 1 and 2^31 - 1";
  else if (strlen(k->layout) != 2 || !strchr("NT", k->layout[0]) || !strchr("NT", k->layout[1]))
    no = "the layout is not NN, TN, NT or TT";
  if (why && len) copy(why, len, no ? no : "");
  return no == NULL;
}

/* "MxNxK", then " batch B" for a strided batch (the batched entry, or a
 * batch in cuBLASLt's layouts): the call as the progress lines name it. */
static const char *dims_text(const tn_key *k, char out[96])
{
  int n = snprintf(out, 96, "%lldx%lldx%lld", k->m, k->n, k->k);
  if (n > 0 && n < 96 && (!strcmp(k->entry, "gemm_batched") || k->batch != 1))
    snprintf(out + n, 96 - (size_t)n, " batch %lld", k->batch);
  return out;
}

void tn_plan_init(tn_plan *p) { memset(p, 0, sizeof *p); }

void tn_plan_free(tn_plan *p)
{
  free(p->keys);
  free(p->skipped);
  free(p->skip_why);
  memset(p, 0, sizeof *p);
}

int tn_plan_add(tn_plan *p, const tn_key *k)
{
  /* A cuBLASLt call is measured with the least and the most workspace its
   * calls gave, and not at all when a row does not say: its rows meet
   * across the two lists (nothing else outside the table's key decides
   * whether it can be measured: it has no math mode). */
  if (!strcmp(k->entry, "lt")) {
    for (size_t i = 0; i < p->n_skipped; i++)
      if (!key_cmp(&p->skipped[i], k)) return 0;
    for (size_t i = 0; i < p->n; i++) {
      tn_key *seen = &p->keys[i];
      if (key_cmp(seen, k)) continue;
      if (k->workspace >= 0) {
        if (k->workspace < seen->workspace) seen->workspace = k->workspace;
        if (k->workspace_max > seen->workspace_max) seen->workspace_max = k->workspace_max;
        return 0;
      }
      memmove(seen, seen + 1, (p->n - i - 1) * sizeof *seen);
      p->n--;
      break;
    }
  }
  char why[TN_WHY_LEN];
  int ok = tn_measurable(k, why, sizeof why);
  /* other calls: each list keeps a call once (an FP32 call in a TF32
   * math mode is skipped while the same call in the default mode is
   * measured: the table's key does not hold the math mode) */
  const tn_key *list = ok ? p->keys : p->skipped;
  const size_t n = ok ? p->n : p->n_skipped;
  for (size_t i = 0; i < n; i++)
    if (!key_cmp(&list[i], k)) return 0;
  if (ok) {
    if (p->n == p->cap) {
      size_t cap = p->cap ? 2 * p->cap : 32;
      tn_key *nk = realloc(p->keys, cap * sizeof *nk);
      if (!nk) return -1;
      p->keys = nk, p->cap = cap;
    }
    p->keys[p->n++] = *k;
    return 0;
  }
  if (p->n_skipped == p->skipped_cap) {
    size_t cap = p->skipped_cap ? 2 * p->skipped_cap : 16;
    tn_key *nk = realloc(p->skipped, cap * sizeof *nk);
    if (!nk) return -1;
    p->skipped = nk;
    char (*nw)[TN_WHY_LEN] = realloc(p->skip_why, cap * sizeof *nw);
    if (!nw) return -1;
    p->skip_why = nw, p->skipped_cap = cap;
  }
  p->skipped[p->n_skipped] = *k;
  copy(p->skip_why[p->n_skipped++], sizeof p->skip_why[0], why);
  return 0;
}

static int add_row(const rs_row *r, void *ctx)
{
  if (r->other || r->bad_args) return 0;   /* no shape to measure */
  tn_key k;
  memset(&k, 0, sizeof k);
  copy(k.entry, sizeof k.entry, gs_rt_entry_class_name(r->entry_class));
  copy(k.a_type, sizeof k.a_type, r->a_type);
  copy(k.b_type, sizeof k.b_type, r->b_type);
  copy(k.c_type, sizeof k.c_type, r->c_type);
  copy(k.compute, sizeof k.compute, r->compute);
  copy(k.layout, sizeof k.layout, r->layout);
  copy(k.epilogue, sizeof k.epilogue, r->epilogue);
  k.m = r->dims[0], k.n = r->dims[1], k.k = r->dims[2], k.batch = r->dims[3];
  k.align = r->align;
  k.math_mode = r->math_mode;
  k.workspace = k.workspace_max = r->workspace;
  return tn_plan_add(ctx, &k);
}

int tn_plan_add_log(tn_plan *p, const char *path, char err[TN_ERR_LEN])
{
  char rerr[RS_ERR_LEN];
  if (rs_read_file(path, 0, add_row, p, NULL, rerr)) return tn_say(err, "%s", rerr);
  return 0;
}

int tn_plan_add_shapes(tn_plan *p, const char *path, char err[TN_ERR_LEN])
{
  FILE *f = fopen(path, "r");
  if (!f) return tn_say(err, "%s: %s", path, strerror(errno));
  char line[512];
  int rc = 0;
  for (int ln = 1; fgets(line, sizeof line, f); ln++) {
    if (!strchr(line, '\n') && !feof(f)) {
      rc = tn_say(err, "%s:%d: the line is too long", path, ln);
      break;
    }
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    long long m, n, k, ws = -1;
    char lay[8], dt[16], entry[8] = "", wstext[24] = "", epi[16] = "default", extra[2];
    int got = sscanf(line, "%lld %lld %lld %7s %15s %7s %23s %15s %1s", &m, &n, &k, lay, dt,
                     entry, wstext, epi, extra);
    if (got >= 7) {
      char *end;
      errno = 0;
      ws = strtoll(wstext, &end, 10);
      if (errno || *end || end == wstext || ws > TN_MAX_WORKSPACE) ws = -1;
    }
    if (got <= 0) continue;
    tn_key key;
    memset(&key, 0, sizeof key);
    if (got >= 5 && strlen(lay) == 2) {
      key.layout[0] = (char)(lay[0] == 'n' ? 'N' : lay[0] == 't' ? 'T' : lay[0]);
      key.layout[1] = (char)(lay[1] == 'n' ? 'N' : lay[1] == 't' ? 'T' : lay[1]);
    }
    const int lt = got >= 7 && got <= 8 && !strcmp(entry, "lt") && ws >= 0 &&
                   (!strcmp(epi, "default") || !strcmp(epi, "bias"));
    /* "batched N": the strided-batched entry with N items */
    const int batched = got == 7 && !strcmp(entry, "batched") && ws >= 1 && ws <= 2147483647LL;
    if ((got != 5 && !lt && !batched) || !is_dtype(dt) || m < 1 || n < 1 || k < 1 || m > 2147483647LL ||
        n > 2147483647LL || k > 2147483647LL || !strchr("NT", key.layout[0]) ||
        !key.layout[0] || !strchr("NT", key.layout[1]) || !key.layout[1]) {
      rc = tn_say(err, "%s:%d: expected \"m n k layout dtype\" (dims 1 .. 2^31 - 1, layout NN, TN, "
                    "NT or TT, dtype f32, bf16 or f16), then for a cuBLASLt call \"lt WORKSPACE "
                    "[default|bias]\" (bytes 0 .. 2^31 - 1), or for a strided-batched call "
                    "\"batched N\" (items 1 .. 2^31 - 1)", path, ln);
      break;
    }
    copy(key.entry, sizeof key.entry, lt ? "lt" : batched ? "gemm_batched" : "gemm");
    copy(key.a_type, sizeof key.a_type, dt);
    copy(key.b_type, sizeof key.b_type, dt);
    copy(key.c_type, sizeof key.c_type, dt);
    copy(key.compute, sizeof key.compute, strcmp(dt, "f32") || lt ? "32f" : "-");
    copy(key.epilogue, sizeof key.epilogue, lt ? epi : "-");
    key.m = m, key.n = n, key.k = k, key.batch = batched ? ws : 1, key.align = 16;
    key.math_mode = lt ? -1 : 0;   /* a cuBLASLt call has none */
    key.workspace = key.workspace_max = lt ? ws : -1;   /* (batched: ws held N) */
    if (tn_plan_add(p, &key)) {
      rc = tn_say(err, "out of memory");
      break;
    }
  }
  if (!rc && ferror(f)) rc = tn_say(err, "%s: %s", path, strerror(errno));
  fclose(f);
  return rc;
}

void tn_plan_sort(tn_plan *p)
{
  if (p->n) qsort(p->keys, p->n, sizeof *p->keys, key_cmp_void);
}

/* ---- the verdict ---------------------------------------------------------- */

void tn_decide(const tn_sample self[TN_PASSES], const tn_kernel *kernels, size_t n_kernels,
               const tn_sample *cand, tn_verdict *out)
{
  memset(out, 0, sizeof *out);
  copy(out->route, sizeof out->route, "cublas");
  out->ratio = 1;
  out->time_us = -1;
  int calibrated = 1;
  for (int p = 0; p < TN_PASSES; p++) {
    if (self[p].outcome != TN_MEASURED || !(self[p].ratio > 0)) {
      calibrated = 0;
      continue;
    }
    double dev = fabs(self[p].ratio - 1);
    if (dev > out->noise) out->noise = dev;
    if (self[p].cublas_us > out->time_us) out->time_us = self[p].cublas_us;
  }
  out->threshold = GS_RT_MIN_RATIO > 1 + out->noise ? GS_RT_MIN_RATIO : 1 + out->noise;
  if (!calibrated) {
    const tn_sample *no = self[0].outcome != TN_MEASURED ? &self[0] : &self[1];
    if (no->outcome == TN_OUTSIDE)
      snprintf(out->why, sizeof out->why, "cuBLAS itself does not make the call here (%.180s): "
               "no route", no->why);
    else
      copy(out->why, sizeof out->why,
           "cuBLAS against itself was not measured in both passes: no noise, no route");
    out->threshold = INFINITY;
    return;
  }
  /* the best candidate by its lower ratio; the reason the best of those
   * that lost lost, for the record */
  double best = 0, best_loser = -1;
  char loser[200] = "";
  for (size_t i = 0; i < n_kernels; i++) {
    const tn_sample *s = &cand[i * TN_PASSES];
    int measured = 1;
    double lo = INFINITY, slow = 0;
    for (int p = 0; p < TN_PASSES; p++) {
      if (s[p].outcome != TN_MEASURED || !(s[p].ratio > 0)) measured = 0;
      else {
        if (s[p].ratio < lo) lo = s[p].ratio;
        if (s[p].ours_us > slow) slow = s[p].ours_us;
      }
    }
    if (!measured) continue;
    if (lo >= out->threshold && lo > best) {
      best = lo;
      copy(out->route, sizeof out->route, kernels[i].name);
      copy(out->algo, sizeof out->algo, kernels[i].algo);
      out->ratio = lo;
      out->time_us = slow;
      out->pdl = s[0].pdl && s[1].pdl;
    } else if (lo < out->threshold && lo > best_loser) {
      best_loser = lo;
      snprintf(loser, sizeof loser, "%s %.3fx and %.3fx, below %.3fx", kernels[i].name,
               s[0].ratio, s[1].ratio, out->threshold);
    }
  }
  if (best > 0)
    snprintf(out->why, sizeof out->why, "%s at %.3fx or better in both passes (at least %.3fx: "
             "1.02, or 1 + noise %.1f%%)", out->route, out->ratio, out->threshold,
             100 * out->noise);
  else if (loser[0])
    snprintf(out->why, sizeof out->why, "cublas: best candidate %s (noise %.1f%%)", loser,
             100 * out->noise);
  else
    snprintf(out->why, sizeof out->why, "cublas: no kernel measured on this call (noise %.1f%%)",
             100 * out->noise);
}

/* ---- the table -------------------------------------------------------- */

typedef struct row {
  tn_key key;
  char *line;        /* the table's line, without its newline */
} row;

typedef struct rows {
  row *r;
  size_t n, cap;
} rows;

static void rows_free(rows *t)
{
  for (size_t i = 0; i < t->n; i++) free(t->r[i].line);
  free(t->r);
  memset(t, 0, sizeof *t);
}

static row *rows_find(const rows *t, const tn_key *k)
{
  for (size_t i = 0; i < t->n; i++)
    if (!key_cmp(&t->r[i].key, k)) return &t->r[i];
  return NULL;
}

static int rows_add(rows *t, const tn_key *k, const char *line)
{
  char *copy_line = strdup(line);
  if (!copy_line) return -1;
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 32;
    row *nr = realloc(t->r, cap * sizeof *nr);
    if (!nr) {
      free(copy_line);
      return -1;
    }
    t->r = nr, t->cap = cap;
  }
  t->r[t->n].key = *k;
  t->r[t->n++].line = copy_line;
  return 0;
}

static int row_cmp(const void *a, const void *b)
{
  return key_cmp(&((const row *)a)->key, &((const row *)b)->key);
}

/* What an earlier tune wrote (no launch column): its kernel rows do not say
 * whether they were measured with programmatic dependent launch. */
#define TABLE_HEADER_NO_LAUNCH \
  "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio,lt_algo"
#define TABLE_HEADER TABLE_HEADER_NO_LAUNCH ",launch"
#define TABLE_NOTE                                                                          \
  "# gemmshim tune: each call timed in two passes, interleaved with cuBLAS on rotated "     \
  "inputs; a kernel routed only at max(1.02, 1 + noise) x cuBLAS or better in both, noise " \
  "being cuBLAS timed against itself"

/* The whole table, to a temporary file beside path, then renamed over it:
 * a reader (or a Ctrl-C) never sees half a table. */
static int write_table(const char *path, const char *validators, rows *t, char err[TN_ERR_LEN])
{
  qsort(t->r, t->n, sizeof *t->r, row_cmp);
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
    return tn_say(err, "%s: the name is too long", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return tn_say(err, "cannot write %s: %s", tmp, strerror(errno));
  fputs(TABLE_NOTE "\n", f);
  fputs(validators, f);
  fputs(TABLE_HEADER "\n", f);
  for (size_t i = 0; i < t->n; i++) fprintf(f, "%s\n", t->r[i].line);
  int bad = ferror(f);
  if (fflush(f) || fsync(fileno(f))) bad = 1;
  if (fclose(f)) bad = 1;
  if (bad) {
    unlink(tmp);
    return tn_say(err, "cannot write %s: %s", tmp, strerror(errno));
  }
  if (rename(tmp, path)) {
    int e = errno;
    unlink(tmp);
    return tn_say(err, "cannot replace %s: %s", path, strerror(e));
  }
  return 0;
}

/* The fields of a row's key from its text; -1 when the row is not one the
 * tuner writes (a range or '*' in a key field). */
static int parse_row_key(const char *line, tn_key *k)
{
  char buf[2048];
  copy(buf, sizeof buf, line);
  char *f[18];
  int n = 0;
  for (char *s = buf; n < 18;) {
    f[n++] = s;
    char *c = strchr(s, ',');
    if (!c) break;
    *c = '\0';
    s = c + 1;
  }
  if (n != 17) return -1;
  memset(k, 0, sizeof *k);
  copy(k->entry, sizeof k->entry, f[0]);
  copy(k->a_type, sizeof k->a_type, f[1]);
  copy(k->b_type, sizeof k->b_type, f[2]);
  copy(k->c_type, sizeof k->c_type, f[3]);
  copy(k->compute, sizeof k->compute, f[4]);
  copy(k->layout, sizeof k->layout, f[5]);
  copy(k->epilogue, sizeof k->epilogue, f[6]);
  long long v[5];
  for (int i = 0; i < 5; i++) {
    char *end;
    errno = 0;
    v[i] = strtoll(f[7 + i], &end, 10);
    if (!f[7 + i][0] || *end || errno) return -1;
  }
  for (int i = 0; i < 7; i++)
    if (strchr(f[i], '*')) return -1;
  k->m = v[0], k->n = v[1], k->k = v[2], k->batch = v[3], k->align = (int)v[4];
  k->math_mode = -1;
  k->workspace = k->workspace_max = -1;
  return 0;
}

/* A table written by an earlier run, to go on with: its validators must be
 * this GPU's, each of its rows one the tuner writes. */
static int load_table(const char *path, const char *validators, int no_pdl, rows *t,
                      char err[TN_ERR_LEN])
{
  FILE *f = fopen(path, "r");
  if (!f)
    return tn_say(err, "--resume: %s: %s%s", path, strerror(errno),
                errno == ENOENT ? " (nothing to resume: tune without --resume)" : "");
  char line[2048];
  int ln = 0, rc = 0, header = 0;
  size_t n_valid = 0;
  while (!rc && fgets(line, sizeof line, f)) {
    ln++;
    line[strcspn(line, "\r\n")] = '\0';
    if (!line[0] || line[0] == '#') continue;
    if (!strncmp(line, "Validator,", 10)) {
      /* the same line must be among this GPU's */
      const char *p = validators;
      size_t len = strlen(line);
      int found = 0;
      while (*p && !found) {
        size_t l = strcspn(p, "\n");
        found = l == len && !memcmp(p, line, len);
        p += l + (p[l] == '\n');
      }
      if (!found) {
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(line + 10, ","), line + 10);
        const char *value = strchr(line + 10, ',');
        value = value ? value + 1 : "";
        char needle[160];
        snprintf(needle, sizeof needle, "Validator,%s,", key);
        const char *mine = strstr(validators, needle);
        char here[160] = "not known here";
        if (mine) {
          mine += strlen(needle);
          snprintf(here, sizeof here, "'%.*s' here", (int)strcspn(mine, "\n"), mine);
        }
        rc = tn_say(err, "--resume: %s:%d: %s was measured where %s is '%s', %s: tune into another "
                      "file", path, ln, path, key, value, here);
      }
      n_valid++;
      continue;
    }
    if (!strcmp(line, TABLE_HEADER)) {
      header = 1;
      continue;
    }
    if (!strcmp(line, TABLE_HEADER_NO_LAUNCH)) {
      rc = tn_say(err, "--resume: %s:%d: written by an older gemmshim tune (no column launch: its "
                  "rows do not say how their kernels launched): tune into another file", path, ln);
      continue;
    }
    tn_key k;
    if (!header || parse_row_key(line, &k))
      rc = tn_say(err, "--resume: %s:%d: not a row gemmshim tune writes: tune into another file",
               path, ln);
    else if (rows_find(t, &k))
      rc = tn_say(err, "--resume: %s:%d: a second row for the same call", path, ln);
    else if (no_pdl && strlen(line) > 4 && !strcmp(line + strlen(line) - 4, ",pdl"))
      rc = tn_say(err, "--resume: %s:%d: measured with programmatic dependent launch, which "
                  "GEMMSHIM_PDL=0 turns off here: tune into another file, or resume without "
                  "GEMMSHIM_PDL=0", path, ln);
    else if (rows_add(t, &k, line))
      rc = tn_say(err, "out of memory");
  }
  if (!rc && ferror(f)) rc = tn_say(err, "--resume: %s: %s", path, strerror(errno));
  fclose(f);
  if (!rc && (!header || !n_valid))
    rc = tn_say(err, "--resume: %s: no validators or no header: not a table gemmshim tune wrote", path);
  if (!rc) {
    /* every validator of this GPU must have been in the table, too */
    size_t mine = 0;
    for (const char *p = validators; (p = strstr(p, "Validator,")); p += 10) mine++;
    if (mine != n_valid)
      rc = tn_say(err, "--resume: %s has %zu validators, this GPU %zu: tune into another file", path,
               n_valid, mine);
  }
  return rc;
}

/* ---- the measurements' CSV ---------------------------------------------- */

#define CSV_HEADER                                                                             \
  "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,workspace,candidate,"  \
  "pass,outcome,ours_us,cublas_us,ratio,ours_err,cublas_err,sm_mhz,note"

/* Whether the measurements' CSV at path has a first line other than this
 * build's header (an older gemmshim's columns): not appended to. */
static int csv_other_columns(const char *path)
{
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[512];
  int other = fgets(line, sizeof line, f) && strcmp(line, CSV_HEADER "\n") != 0;
  fclose(f);
  return other;
}

static const char *outcome_name(tn_outcome o)
{
  switch (o) {
  case TN_MEASURED: return "measured";
  case TN_OUTSIDE: return "outside";
  case TN_WRONG: return "wrong";
  case TN_FAILED: return "failed";
  }
  return "?";
}

/* A note fit for a CSV field: no commas, quotes or newlines. */
static void csv_note(const char *in, char *out, size_t len)
{
  size_t j = 0;
  for (size_t i = 0; in[i] && j + 1 < len; i++)
    out[j++] = in[i] == ',' ? ';' : in[i] == '"' || in[i] == '\n' || in[i] == '\r' ? ' ' : in[i];
  out[j] = '\0';
}

static void csv_sample(FILE *f, const char *key, const char *cand, int pass, const tn_sample *s)
{
  char note[TN_ALGO_LEN + 64];
  csv_note(s->why, note, sizeof note);
  if (s->outcome == TN_MEASURED || s->outcome == TN_WRONG)
    fprintf(f, "%s,%s,%d,%s,%.2f,%.2f,%.4f,%.3e,%.3e,%d,%s\n", key, cand, pass + 1,
            outcome_name(s->outcome), s->ours_us, s->cublas_us, s->ratio, s->ours_err,
            s->cublas_err, s->sm_mhz, note);
  else
    fprintf(f, "%s,%s,%d,%s,-,-,-,-,-,-,%s\n", key, cand, pass + 1, outcome_name(s->outcome),
            note);
}

/* ---- the run ---------------------------------------------------------- */

static void format_row(const tn_key *k, const tn_verdict *v, char *out, size_t len)
{
  char key[512], t[32];
  key_text(k, key, sizeof key);
  if (v->time_us > 0) snprintf(t, sizeof t, "%.2f", v->time_us);
  else copy(t, sizeof t, "-");
  snprintf(out, len, "%s,%s,%s,%.4f,%s,%s", key, v->route, t, v->ratio, v->algo[0] ? v->algo : "-",
           v->pdl ? "pdl" : "plain");
}

int tn_run(tn_plan *p, const tn_kernel *kernels, size_t n_kernels, const tn_run_opts *o,
           const tn_ops *ops, tn_run_result *res, char err[TN_ERR_LEN])
{
  memset(res, 0, sizeof *res);
  rows t = { 0 };
  struct stat st;
  if (o->resume) {
    if (load_table(o->table_path, o->validators, o->no_pdl, &t, err)) {
      rows_free(&t);
      return -1;
    }
    res->kept = t.n;
  } else if (stat(o->table_path, &st) == 0) {
    return tn_say(err, "%s exists: --resume to go on with it, or remove it", o->table_path);
  }
  if (o->resume && csv_other_columns(o->csv_path)) {
    rows_free(&t);
    return tn_say(err, "--resume: %s has other columns than this gemmshim writes (an older "
                       "one's?): move it away to go on", o->csv_path);
  }
  FILE *csv = fopen(o->csv_path, o->resume ? "a" : "w");
  if (!csv) {
    rows_free(&t);
    return tn_say(err, "cannot write %s: %s", o->csv_path, strerror(errno));
  }
  if (ftell(csv) == 0) fprintf(csv, CSV_HEADER "\n");

  tn_plan_sort(p);
  size_t todo = 0;
  for (size_t i = 0; i < p->n; i++) todo += rows_find(&t, &p->keys[i]) == NULL;
  const double start = ops->now(ops->ctx);
  size_t done = 0;
  int rc = 0, calibrated_any = 0;
  tn_sample *cand = calloc(n_kernels ? n_kernels * TN_PASSES : 1, sizeof *cand);
  /* the candidates the verdict weighs: the kernels, and each cuBLASLt
   * algorithm in place of TN_LT_ROUTE */
  tn_lt_cand (*lt)[TN_LT_MAX] = calloc(TN_PASSES, sizeof *lt);
  tn_kernel *all = calloc(n_kernels + TN_LT_MAX, sizeof *all);
  tn_sample *all_s = calloc((n_kernels + TN_LT_MAX) * TN_PASSES, sizeof *all_s);
  if (!cand || !lt || !all || !all_s) rc = tn_say(err, "out of memory");
  for (size_t i = 0; i < p->n && !rc; i++) {
    const tn_key *k = &p->keys[i];
    if (rows_find(&t, k)) continue;
    const double elapsed = ops->now(ops->ctx) - start;
    const double per_key = done ? elapsed / (double)done : 0;
    if (ops->stop && ops->stop(ops->ctx)) {
      res->stopped = 1;
      break;
    }
    if (o->budget_s > 0 && (elapsed >= o->budget_s || elapsed + per_key > o->budget_s)) {
      res->stopped = 2;
      break;
    }
    tn_sample self[TN_PASSES];
    memset(self, 0, sizeof self);
    /* the first kernel of the call's data type names the type for cuBLAS
     * against itself; with none, nothing could serve the call */
    const tn_kernel *typed = NULL;
    for (size_t j = 0; j < n_kernels && !typed; j++)
      if (!strcmp(kernels[j].dtype, k->a_type)) typed = &kernels[j];
    if (typed && typed->opt_in && typed->opt_in != o->opt_in)   /* any kernel of the type names it */
      for (size_t j = 0; j < n_kernels; j++)
        if (!strcmp(kernels[j].dtype, k->a_type) && !kernels[j].opt_in) typed = &kernels[j];
    if (!typed) {
      res->failed++;
      done++;
      if (ops->progress) {
        char msg[256], dims[96];
        snprintf(msg, sizeof msg, "%s %s %s: no kernel of this build takes %s calls; no row",
                 k->a_type, k->layout, dims_text(k, dims), k->a_type);
        ops->progress(ops->ctx, done, todo, -1, msg);
      }
      continue;
    }
    int stopped = 0, uncalibrated = 0;
    size_t n_lt = 0;
    memset(lt, 0, TN_PASSES * sizeof *lt);
    for (size_t j = 0; j < n_kernels * TN_PASSES; j++) {
      memset(&cand[j], 0, sizeof cand[j]);
      cand[j].outcome = TN_OUTSIDE;
      copy(cand[j].why, sizeof cand[j].why, "not measured");
    }
    for (int pass = 0; pass < TN_PASSES && !rc && !stopped && !uncalibrated; pass++) {
      if (ops->measure(ops->ctx, k, typed->name, 1, pass, &self[pass], err)) rc = -1;
      /* without the noise of this pass there will be no verdict: the
       * kernels are not worth the time */
      if (!rc && self[pass].outcome != TN_MEASURED) uncalibrated = 1;
      for (size_t j = 0; j < n_kernels && !rc && !stopped && !uncalibrated; j++) {
        tn_sample *s = &cand[j * TN_PASSES + pass];
        if (strcmp(kernels[j].dtype, k->a_type)) {
          copy(s->why, sizeof s->why, "another data type");
          continue;
        }
        if (kernels[j].opt_in && kernels[j].opt_in != o->opt_in) {
          copy(s->why, sizeof s->why,
               kernels[j].opt_in == TN_OPT_IN_TC_FAST
                   ? "serves only calls under GEMMSHIM_FP32=tc-fast (--fp32-tc-fast)"
                   : "serves only calls that opted in (--fp32-tc)");
          continue;
        }
        if (!strcmp(kernels[j].name, TN_LT_ROUTE)) {
          if (ops->stop && ops->stop(ops->ctx)) {
            stopped = 1;
            break;
          }
          /* its algorithms are the candidates: the first pass's, again */
          copy(s->why, sizeof s->why, ops->measure_lt ? "each algorithm on its own" : "not measured");
          size_t got = 0;
          if (!ops->measure_lt || (pass > 0 && !n_lt)) continue;
          if (ops->measure_lt(ops->ctx, k, pass, pass ? lt[0] : NULL, pass ? n_lt : 0, lt[pass],
                              pass ? n_lt : TN_LT_MAX, &got, err))
            rc = -1;
          else if (pass == 0)
            n_lt = got < TN_LT_MAX ? got : TN_LT_MAX;
          continue;
        }
        if (pass > 0 && cand[j * TN_PASSES].outcome == TN_OUTSIDE) {
          *s = cand[j * TN_PASSES];   /* its class does not change between passes */
          continue;
        }
        if (ops->stop && ops->stop(ops->ctx)) {
          stopped = 1;
          break;
        }
        if (ops->measure(ops->ctx, k, kernels[j].name, 0, pass, s, err)) rc = -1;
      }
      if (ops->stop && ops->stop(ops->ctx)) stopped = 1;
    }
    if (rc) break;
    if (stopped) {   /* this key's passes are not whole: not written */
      res->stopped = 1;
      break;
    }
    /* cuBLAS itself cannot be measured, before any call was: nothing will
     * be (no GPU the kernels run on, a bench that fails): say so, no
     * table. A call cuBLAS does not take (outside) is that call's alone. */
    const tn_sample *bad = self[0].outcome != TN_MEASURED ? &self[0] : &self[1];
    if (uncalibrated && !calibrated_any && bad->outcome != TN_OUTSIDE) {
      char dims[96];
      rc = tn_say(err, "cuBLAS could not be measured on %s %s %s (%s): %s", k->a_type, k->layout,
                  dims_text(k, dims), bad->outcome == TN_WRONG ? "wrong result" : "failed",
                  bad->why);
      break;
    }
    size_t n_all = 0;
    for (size_t j = 0; j < n_kernels; j++) {
      if (!strcmp(kernels[j].name, TN_LT_ROUTE)) continue;
      all[n_all] = kernels[j];
      for (int pass = 0; pass < TN_PASSES; pass++)
        all_s[n_all * TN_PASSES + pass] = cand[j * TN_PASSES + pass];
      n_all++;
    }
    for (size_t i = 0; i < n_lt; i++) {
      memset(&all[n_all], 0, sizeof all[n_all]);
      copy(all[n_all].name, sizeof all[n_all].name, TN_LT_ROUTE);
      copy(all[n_all].dtype, sizeof all[n_all].dtype, k->a_type);
      copy(all[n_all].algo, sizeof all[n_all].algo, lt[0][i].algo);
      for (int pass = 0; pass < TN_PASSES; pass++) {
        tn_sample *d = &all_s[n_all * TN_PASSES + pass];
        if (pass == 0 || lt[0][i].s.outcome != TN_OUTSIDE) *d = lt[pass][i].s;
        else *d = lt[0][i].s;
        if (pass > 0 && strcmp(lt[pass][i].algo, lt[0][i].algo)) {
          d->outcome = TN_FAILED;   /* a measurer that lost the order: not this algorithm */
          copy(d->why, sizeof d->why, "the second pass measured another algorithm here");
        }
      }
      n_all++;
    }
    tn_verdict v;
    tn_decide(self, all, n_all, all_s, &v);
    /* without the noise there is no verdict, and no row: a later run (or
     * --resume) measures the call again */
    const int calibrated = isfinite(v.threshold);
    calibrated_any |= calibrated;
    char line[1024], key[512];
    if (calibrated) {
      format_row(k, &v, line, sizeof line);
      if (rows_add(&t, k, line)) {
        rc = tn_say(err, "out of memory");
        break;
      }
      if ((rc = write_table(o->table_path, o->validators, &t, err))) break;
    } else {
      res->failed++;
    }
    measured_key_text(k, key, sizeof key);
    for (int pass = 0; pass < TN_PASSES; pass++) {
      csv_sample(csv, key, "cublas_self", pass, &self[pass]);
      for (size_t j = 0; j < n_all; j++)
        if (strcmp(all[j].dtype, k->a_type) == 0 && (!all[j].opt_in || all[j].opt_in == o->opt_in)) {
          char name[TN_NAME_LEN + 16];
          if (all[j].algo[0]) snprintf(name, sizeof name, "%s#%d", all[j].name, lt[0][j - (n_all - n_lt)].rank);
          else copy(name, sizeof name, all[j].name);
          csv_sample(csv, key, name, pass, &all_s[j * TN_PASSES + pass]);
        }
    }
    char note[300];
    csv_note(v.why, note, sizeof note);
    fprintf(csv, "%s,verdict,-,%s,%.2f,-,%.4f,-,-,-,threshold %.4f: %s\n", key, v.route,
            v.time_us, v.ratio, v.threshold, note);
    fflush(csv);
    done++;
    res->tuned += calibrated;
    if (ops->progress) {
      const double now = ops->now(ops->ctx) - start;
      char msg[1024], dims[96];
      snprintf(msg, sizeof msg, "%s %s %s: %s%s", k->a_type, k->layout, dims_text(k, dims), v.why,
               calibrated ? "" : "; no row");
      ops->progress(ops->ctx, done, todo, (now / (double)done) * (double)(todo - done), msg);
    }
  }
  free(cand);
  free(lt);
  free(all);
  free(all_s);
  /* a run that measured nothing still leaves its table (validators, the
   * rows kept), so that --resume has one to go on with */
  if (!rc && !res->tuned && !res->stopped && !o->resume)
    rc = write_table(o->table_path, o->validators, &t, err);
  if (ferror(csv) && !rc) rc = tn_say(err, "cannot write %s", o->csv_path);
  if (fclose(csv) && !rc) rc = tn_say(err, "cannot write %s: %s", o->csv_path, strerror(errno));
  res->left = todo - done;
  for (size_t i = 0; i < t.n; i++) {
    const char *route = strchr(t.r[i].line, ',');
    for (int c = 1; route && c < 12; c++) route = strchr(route + 1, ',');
    if (route && strncmp(route + 1, "cublas,", 7)) res->routed++;
  }
  rows_free(&t);
  return rc;
}
