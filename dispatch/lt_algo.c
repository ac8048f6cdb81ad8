/* A cuBLASLt algorithm as text, and the rules for using it (lt_algo.h). */
#include "lt_algo.h"

#include <cublasLt.h>
#include <cublas_api.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_ID, F_TILE, F_SPLITK, F_REDUCTION, F_SWIZZLE, F_CUSTOM, F_STAGES, F_INNER, F_CLUSTER,
       F_WORKSPACE, F_RAW, F_COUNT };
static const char *const field_names[F_COUNT] = {
  "id", "tile", "splitk", "reduction", "swizzle", "custom", "stages", "inner", "cluster",
  "workspace", "raw"
};

static int parse_u64(const char *s, size_t len, uint64_t *out)
{
  char buf[32];
  if (!len || len >= sizeof buf) return -1;
  memcpy(buf, s, len);
  buf[len] = '\0';
  for (size_t i = 0; i < len; i++)
    if (!isdigit((unsigned char)buf[i])) return -1;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(buf, &end, 10);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

static int hex_digit(char c)
{
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* 128 hex digits, the 64 bytes in memory order. */
static int parse_raw(const char *s, size_t len, uint64_t raw[8])
{
  if (len != 128) return -1;
  unsigned char *b = (unsigned char *)raw;
  for (size_t i = 0; i < 64; i++) {
    int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return -1;
    b[i] = (unsigned char)(hi << 4 | lo);
  }
  return 0;
}

int gs_lt_algo_parse(const char *text, gs_lt_algo *out, char *why, size_t why_len)
{
  gs_lt_algo a;
  memset(&a, 0, sizeof a);
  int seen[F_COUNT] = { 0 };
  const char *p = text;
  while (*p) {
    const char *end = strchr(p, ';');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *eq = memchr(p, '=', len);
    if (!eq) {
      snprintf(why, why_len, "'%.*s' is not name=value", (int)len, p);
      return -1;
    }
    size_t name_len = (size_t)(eq - p);
    const char *val = eq + 1;
    size_t val_len = len - name_len - 1;
    int f = -1;
    for (int i = 0; i < F_COUNT; i++)
      if (strlen(field_names[i]) == name_len && !strncmp(p, field_names[i], name_len)) f = i;
    if (f < 0) {
      snprintf(why, why_len, "unknown field '%.*s'", (int)name_len, p);
      return -1;
    }
    if (seen[f]++) {
      snprintf(why, why_len, "field %s given twice", field_names[f]);
      return -1;
    }
    uint64_t v = 0;
    int bad = f == F_RAW ? parse_raw(val, val_len, a.raw) : parse_u64(val, val_len, &v);
    /* each field's range is its attribute's type's */
    uint64_t max = f == F_WORKSPACE ? UINT64_MAX
                   : f == F_INNER || f == F_CLUSTER ? UINT16_MAX
                   : f == F_ID || f == F_SPLITK ? INT32_MAX
                                                : UINT32_MAX;
    if (bad || v > max) {
      snprintf(why, why_len, "%s '%.*s' is not %s", field_names[f], (int)val_len, val,
               f == F_RAW ? "128 hex digits" : "a number in the attribute's range");
      return -1;
    }
    switch (f) {
    case F_ID: a.id = (int32_t)v; break;
    case F_TILE: a.tile = (uint32_t)v; break;
    case F_SPLITK: a.splitk = (int32_t)v; break;
    case F_REDUCTION: a.reduction = (uint32_t)v; break;
    case F_SWIZZLE: a.swizzle = (uint32_t)v; break;
    case F_CUSTOM: a.custom = (uint32_t)v; break;
    case F_STAGES: a.stages = (uint32_t)v; break;
    case F_INNER: a.inner = (uint16_t)v; break;
    case F_CLUSTER: a.cluster = (uint16_t)v; break;
    case F_WORKSPACE: a.workspace = v; break;
    case F_RAW: a.has_raw = 1; break;
    }
    p = end ? end + 1 : p + len;
  }
  for (int f = 0; f < F_RAW; f++)
    if (!seen[f]) {
      snprintf(why, why_len, "field %s is missing", field_names[f]);
      return -1;
    }
  if (a.splitk < 1) {
    snprintf(why, why_len, "splitk is at least 1");
    return -1;
  }
  *out = a;
  return 0;
}

void gs_lt_algo_format(const gs_lt_algo *a, char out[GS_LT_ALGO_TEXT])
{
  int n = snprintf(out, GS_LT_ALGO_TEXT,
                   "id=%d;tile=%u;splitk=%d;reduction=%u;swizzle=%u;custom=%u;stages=%u;"
                   "inner=%u;cluster=%u;workspace=%" PRIu64,
                   a->id, a->tile, a->splitk, a->reduction, a->swizzle, a->custom, a->stages,
                   (unsigned)a->inner, (unsigned)a->cluster, a->workspace);
  if (a->has_raw && n > 0 && n + 5 + 128 < GS_LT_ALGO_TEXT) {
    char *p = out + n;
    p += sprintf(p, ";raw=");
    const unsigned char *b = (const unsigned char *)a->raw;
    for (int i = 0; i < 64; i++) p += sprintf(p, "%02x", b[i]);
  }
}

int gs_lt_algo_reduces_in_output_type(const gs_lt_algo *a)
{
  return a->splitk > 1 && (a->reduction == CUBLASLT_REDUCTION_SCHEME_INPLACE ||
                           a->reduction == CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE);
}

int gs_lt_algo_fits_call(const gs_lt_algo *a, const gs_gemm *g)
{
  /* a cuBLASLt caller may have kept such schemes out of its own choice
   * (the heuristic's REDUCTION_SCHEME_MASK, which the shim never sees) */
  if (g->is_lt) return a->workspace <= (uint64_t)g->workspace_size &&
                       !gs_lt_algo_reduces_in_output_type(a);
  if (a->workspace) return 0;
  if ((g->math_mode & CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) &&
      gs_lt_algo_reduces_in_output_type(a))
    return 0;
  return 1;
}

int gs_lt_compute_of(const gs_gemm *g)
{
  return g->compute_type == GS_NONE ? CUBLAS_COMPUTE_32F : g->compute_type;
}
