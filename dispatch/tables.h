/* The route tables a process may use and which one each device uses
 * (route_table.h has the format). Found once, at the first call that a
 * kernel's class could take:
 *   GEMMSHIM_TABLE=path   that table, for every device;
 *   otherwise             the per-user cache, one file per GPU named by the
 *                         UUID CUDA reports (cache_dir/routes-UUID.csv), and
 *                         where a device has none, the built-in defaults
 *                         (routes.c), each used only where its validators
 *                         match the device.
 * After that, lookups take no lock and allocate nothing. */
#ifndef GS_TABLES_H
#define GS_TABLES_H

#include "reason.h"
#include "route_table.h"
#include "variants.h"

/* Before the device is known: could a table send this call to v?
 * GS_R_ROUTED if one of the tables that may apply sends the key to v;
 * otherwise the reason to forward (not_tuned, tuned_cublas,
 * route_unavailable). Cheap: no GPU, no state. */
gs_reason gs_tables_precheck(const gs_rt_key *k, const gs_variant *v);

/* On the device: the verdict of its table, GS_R_ROUTED when its row sends
 * the key to v (*row: that row, which lives as long as the table); else not_tuned, tuned_cublas, route_unavailable or
 * table_refused (said once on stderr per table and device). */
gs_reason gs_tables_decide(int device, const gs_rt_key *k, const gs_variant *v,
                           const gs_rt_row **row);

/* Whether any table that may apply has a row naming v (a user's table, a
 * cache file, or the built-in table of a GPU present in this process): a
 * route that only table rows give (cublaslt) costs a forwarded call nothing
 * more where none does. */
int gs_tables_name(const gs_variant *v);

/* The table a device uses (NULL: none), choosing it if not yet chosen. */
const gs_route_table *gs_tables_for_device(int device);

/* The built-in defaults: one table's text per GPU they were measured on
 * (the routing policy, routes.c; unit tests link their own). A device uses
 * the one whose gpu_name validator is its name, else the first (whose
 * validators then refuse it, said once). */
extern const char *const gs_default_route_tables[];
extern const size_t gs_n_default_route_tables;

/* Forget every table (tests only; not while calls run). */
void gs_tables_reset(void);

#endif
