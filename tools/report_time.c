/* The report's time view: where GEMM time went, from the call log's v3
 * time columns (GEMMSHIM_TIME). Rows are grouped by shape, layout, types
 * and route; a group's time is the sum of its rows' estimated totals. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run_summary.h"

static int same_group(const report_time_group *g, const rs_row *row)
{
  return g->m == row->dims[0] && g->n == row->dims[1] && g->k == row->dims[2] &&
         g->batch == row->dims[3] && !strcmp(g->layout, row->layout) &&
         !strcmp(g->a_type, row->a_type) && !strcmp(g->c_type, row->c_type) &&
         !strcmp(g->route, row->route);
}

static report_time_group *group_of(report_time *t, const rs_row *row)
{
  for (size_t i = 0; i < t->n; i++)
    if (same_group(&t->groups[i], row)) return &t->groups[i];
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 16;
    report_time_group *grown = realloc(t->groups, cap * sizeof *grown);
    if (!grown) return NULL;
    t->groups = grown;
    t->cap = cap;
  }
  report_time_group *g = &t->groups[t->n++];
  memset(g, 0, sizeof *g);
  g->m = row->dims[0];
  g->n = row->dims[1];
  g->k = row->dims[2];
  g->batch = row->dims[3];
  snprintf(g->layout, sizeof g->layout, "%s", row->layout);
  snprintf(g->a_type, sizeof g->a_type, "%s", row->a_type);
  snprintf(g->c_type, sizeof g->c_type, "%s", row->c_type);
  snprintf(g->route, sizeof g->route, "%s", row->route);
  return g;
}

int report_time_add(report_time *t, const rs_row *row)
{
  if (row->timed < 0) {   /* the log has no time for it */
    t->untimed_calls += (unsigned long long)row->count;
    return 0;
  }
  t->timed_logs = 1;
  t->calls += (unsigned long long)row->count;
  t->timed += (unsigned long long)row->timed;
  t->captured += row->captured > 0 ? (unsigned long long)row->captured : 0;
  t->dropped += row->time_dropped > 0 ? (unsigned long long)row->time_dropped : 0;
  if (row->other) return 0;
  if (row->est_total_us < 0) {   /* none of its calls was timed */
    t->unmeasured_calls += (unsigned long long)row->count;
    return 0;
  }
  report_time_group *g = group_of(t, row);
  if (!g) return -1;
  g->calls += (unsigned long long)row->count;
  g->timed += (unsigned long long)row->timed;
  g->total_us += row->est_total_us;
  if (row->median_us >= 0 && row->timed > 0) {
    /* the median of a group of rows: its rows' medians weighted by their
     * samples (one row per shape and route is the usual case) */
    g->median_weight += (double)row->timed;
    g->median_sum += row->median_us * (double)row->timed;
  }
  t->total_us += row->est_total_us;
  return 0;
}

static int by_time(const void *a, const void *b)
{
  const report_time_group *x = a, *y = b;
  if (x->total_us != y->total_us) return x->total_us < y->total_us ? 1 : -1;
  long long dx[4] = { x->m, x->n, x->k, x->batch }, dy[4] = { y->m, y->n, y->k, y->batch };
  for (int i = 0; i < 4; i++)
    if (dx[i] != dy[i]) return dx[i] < dy[i] ? -1 : 1;
  int c = strcmp(x->route, y->route);
  if (!c) c = strcmp(x->layout, y->layout);
  if (!c) c = strcmp(x->a_type, y->a_type);
  if (!c) c = strcmp(x->c_type, y->c_type);
  return c;
}

void report_time_finish(report_time *t)
{
  if (t->n) qsort(t->groups, t->n, sizeof *t->groups, by_time);
  t->n_routes = 0;
  for (size_t i = 0; i < t->n; i++) {
    const report_time_group *g = &t->groups[i];
    size_t r = 0;
    while (r < t->n_routes && strcmp(t->routes[r].name, g->route)) r++;
    if (r == t->n_routes) {
      if (r == REPORT_TIME_ROUTES) continue;   /* kept out of the route lines only */
      snprintf(t->routes[r].name, sizeof t->routes[r].name, "%s", g->route);
      t->routes[r].total_us = 0;
      t->routes[r].calls = 0;
      t->n_routes++;
    }
    t->routes[r].total_us += g->total_us;
    t->routes[r].calls += g->calls;
  }
}

void report_time_free(report_time *t)
{
  free(t->groups);
  memset(t, 0, sizeof *t);
}

static double share_pct(double part, double whole)
{
  return whole > 0 ? 100.0 * part / whole : 0;
}

static void group_label(const report_time_group *g, char *buf, size_t len)
{
  char dtype[40];
  if (!strcmp(g->a_type, g->c_type)) snprintf(dtype, sizeof dtype, "%s", g->a_type);
  else snprintf(dtype, sizeof dtype, "%s->%s", g->a_type, g->c_type);
  if (g->batch > 1)
    snprintf(buf, len, "%lldx%lldx%lld b%lld %s %s", g->m, g->n, g->k, g->batch, g->layout, dtype);
  else
    snprintf(buf, len, "%lldx%lldx%lld %s %s", g->m, g->n, g->k, g->layout, dtype);
}

static double group_median(const report_time_group *g)
{
  return g->median_weight > 0 ? g->median_sum / g->median_weight : NAN;
}

void report_time_write_text(const report_time *t, FILE *out)
{
  fprintf(out, "\nGEMM time, from the call log's GEMMSHIM_TIME columns:\n");
  if (!t->timed_logs) {
    fprintf(out, "  not measured (the log was written without GEMMSHIM_TIME)\n");
    return;
  }
  fprintf(out, "  %-34s %12.3f ms  (estimated: each row's mean sampled time x its calls)\n",
          "GEMM time", t->total_us / 1000);
  fprintf(out, "  %-34s %12llu  of %llu calls\n", "calls timed", t->timed, t->calls);
  for (size_t i = 0; i < t->n_routes; i++) {
    char label[REPORT_NAME_LEN + 8];
    snprintf(label, sizeof label, "on %s", t->routes[i].name);
    fprintf(out, "  %-34s %12.3f ms  (%.2f%% of GEMM time, %llu calls)\n", label,
            t->routes[i].total_us / 1000, share_pct(t->routes[i].total_us, t->total_us),
            t->routes[i].calls);
  }
  if (t->captured)
    fprintf(out, "  %-34s %12llu  (graph capture: they run at replay, not timed)\n",
            "calls captured", t->captured);
  if (t->dropped)
    fprintf(out, "  %-34s %12llu  (no event free, or still pending at exit)\n",
            "samples lost", t->dropped);
  if (t->unmeasured_calls || t->untimed_calls)
    fprintf(out, "  %-34s %12llu  (rows with no timed call: not in the total)\n",
            "calls without a time", t->unmeasured_calls + t->untimed_calls);
  if (!t->n) return;
  fprintf(out, "\n  %-40s %-28s %10s %8s %12s %12s %7s\n", "shape m x n x k, layout, dtype",
          "route", "calls", "timed", "median us", "total ms", "share");
  for (size_t i = 0; i < t->n; i++) {
    const report_time_group *g = &t->groups[i];
    char label[160], median[32];
    group_label(g, label, sizeof label);
    double md = group_median(g);
    if (isnan(md)) snprintf(median, sizeof median, "-");
    else snprintf(median, sizeof median, "%.3f", md);
    fprintf(out, "  %-40s %-28s %10llu %8llu %12s %12.3f %6.2f%%\n", label, g->route, g->calls,
            g->timed, median, g->total_us / 1000, share_pct(g->total_us, t->total_us));
  }
}

/* ---- the chart: share of GEMM time by shape, coloured by route ---------- */

#define T_ROWS 40
#define T_ROW_H 20.0
#define T_TOP 96.0
#define T_LABEL_W 330.0
#define T_BAR_W 420.0
#define T_MARGIN 16.0

static const char *const route_colours[] = { "#1f5fa8", "#2e8b3e", "#e07b00", "#8e44ad",
                                             "#d1362f", "#16a2a2", "#7f7f7f", "#b8860b" };

static const char *colour_of(const report_time *t, const char *route)
{
  if (!strcmp(route, "cublas")) return "#9aa5b1";
  size_t k = 0;
  for (size_t i = 0; i < t->n_routes; i++) {
    if (!strcmp(t->routes[i].name, "cublas")) continue;
    if (!strcmp(t->routes[i].name, route)) break;
    k++;
  }
  return route_colours[k % (sizeof route_colours / sizeof route_colours[0])];
}

static void xml(FILE *out, const char *s)
{
  for (; *s; s++) {
    if (*s == '&') fputs("&amp;", out);
    else if (*s == '<') fputs("&lt;", out);
    else if (*s == '>') fputs("&gt;", out);
    else if (*s == '"') fputs("&quot;", out);
    else fputc(*s, out);
  }
}

int report_time_write_svg(const report_time *t, FILE *out)
{
  size_t rows = t->n < T_ROWS ? t->n : T_ROWS;
  double width = T_MARGIN * 2 + T_LABEL_W + T_BAR_W + 80;
  double height = T_TOP + (double)rows * T_ROW_H + 40;
  fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Arial, sans-serif\" "
               "font-size=\"12\">\n", width, height, width, height);
  fputs("<title>gemmshim: share of GEMM time</title>\n", out);
  fprintf(out, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", width, height);
  fprintf(out, "<text x=\"%.0f\" y=\"24\" font-size=\"16\">Share of GEMM time, by shape and "
               "route (GEMMSHIM_TIME: %llu of %llu calls timed, %.3f ms in all)</text>\n",
          T_MARGIN, t->timed, t->calls, t->total_us / 1000);
  /* the routes' shares as one stacked bar */
  double x = T_MARGIN, y = 40;
  double full = T_LABEL_W + T_BAR_W;
  for (size_t i = 0; i < t->n_routes; i++) {
    double w = t->total_us > 0 ? full * t->routes[i].total_us / t->total_us : 0;
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"14\" fill=\"%s\">"
                 "<title>", x, y, w, colour_of(t, t->routes[i].name));
    xml(out, t->routes[i].name);
    fprintf(out, ": %.2f%% of GEMM time</title></rect>\n", share_pct(t->routes[i].total_us, t->total_us));
    x += w;
  }
  x = T_MARGIN;
  for (size_t i = 0; i < t->n_routes; i++) {
    fprintf(out, "<rect x=\"%.1f\" y=\"62\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                 "<text x=\"%.1f\" y=\"71\">", x, colour_of(t, t->routes[i].name), x + 14);
    xml(out, t->routes[i].name);
    fprintf(out, " %.1f%%</text>\n", share_pct(t->routes[i].total_us, t->total_us));
    x += 14 + 7.3 * ((double)strlen(t->routes[i].name) + 7) + 12;
  }
  double top_share = rows ? share_pct(t->groups[0].total_us, t->total_us) : 0;
  for (size_t i = 0; i < rows; i++) {
    const report_time_group *g = &t->groups[i];
    char label[160];
    group_label(g, label, sizeof label);
    double share = share_pct(g->total_us, t->total_us);
    double gy = T_TOP + (double)i * T_ROW_H;
    double w = top_share > 0 ? T_BAR_W * share / top_share : 0;
    fprintf(out, "<text x=\"%.0f\" y=\"%.1f\">", T_MARGIN, gy + 14);
    xml(out, label);
    fputs("</text>\n", out);
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"14\" fill=\"%s\"><title>",
            T_MARGIN + T_LABEL_W, gy + 3, w, colour_of(t, g->route));
    xml(out, g->route);
    fprintf(out, ": %llu calls, %.3f ms</title></rect>\n", g->calls, g->total_us / 1000);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">%.1f%%</text>\n", T_MARGIN + T_LABEL_W + w + 6,
            gy + 14, share);
  }
  if (t->n > rows)
    fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" fill=\"#555\">%zu more shapes not drawn</text>\n",
            T_MARGIN, T_TOP + (double)rows * T_ROW_H + 16, t->n - rows);
  fputs("</svg>\n", out);
  return ferror(out) ? -1 : 0;
}
