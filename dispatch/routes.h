/* The routing policy: which kernels of the table the router tries, in what
 * order, which need the call to opt in, and where each measured a win.
 * Data only (routes.c); a route table file per GPU is to replace the win
 * boxes. The router (route.c) reads it; the capability of each kernel is in
 * the kernel table (variants.h). */
#ifndef GS_ROUTES_H
#define GS_ROUTES_H

#include <stddef.h>
#include <stdint.h>
#include "gemm.h"
#include "variants.h"

/* A box of shapes on which the kernel measured at least 1.02x cuBLAS. */
typedef struct gs_win_rule {
  unsigned layouts;
  int64_t m_min, m_max, n_min, n_max, k_min, k_max;
} gs_win_rule;

typedef struct gs_route_entry {
  const gs_variant *kernel;
  /* NULL for a kernel that serves whatever it wins; else the opt-in a
   * kernel with other numerics needs: 1 yes, 0 no, -1 not known before
   * load_state (asked again after it). */
  int (*opted_in)(const gs_gemm *g);
  const gs_win_rule *wins;
  size_t n_wins;
} gs_route_entry;

/* In the order the router tries them. A kernel without an entry is never
 * routed, not even under GEMMSHIM_FORCE. */
extern const gs_route_entry gs_routes[];
extern const size_t gs_n_routes;

#endif
