/* The routing policy: which kernels of the table the router tries, in what
 * order, and which need the call to opt in. Where each is worth using is
 * in route tables (tables.h): a user's, measured on their GPU, or the
 * built-in defaults (gs_default_routes, in routes.c). Data only; the
 * router (route.c) reads it; the capability of each kernel is in the
 * kernel table (variants.h). */
#ifndef GS_ROUTES_H
#define GS_ROUTES_H

#include <stddef.h>
#include <stdint.h>
#include "gemm.h"
#include "variants.h"

typedef struct gs_route_entry {
  const gs_variant *kernel;
  /* NULL for a kernel that serves whatever it wins; else the opt-in a
   * kernel with other numerics needs: 1 yes, 0 no, -1 not known before
   * load_state (asked again after it). */
  int (*opted_in)(const gs_gemm *g);
} gs_route_entry;

/* In the order the router tries them. A kernel without an entry is never
 * routed, not even under GEMMSHIM_FORCE. */
extern const gs_route_entry gs_routes[];
extern const size_t gs_n_routes;

#endif
