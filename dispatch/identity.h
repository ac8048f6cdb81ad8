/* A device as the route tables' validators see it: one reader for the
 * library (gpu.c reads it once per device) and for the tools that write
 * tables (gemmshim-bench --identity, which gemmshim tune asks). */
#ifndef GS_IDENTITY_H
#define GS_IDENTITY_H

#include "route_table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Everything of gs_rt_identity but cublas_version (left "": who asks knows
 * which cuBLAS it calls): name, UUID (a MIG instance's own), compute
 * capability, SM count, this build's version and kernel-table hash, and,
 * through NVML when it can be loaded, the driver version and the enforced
 * power limit ("" otherwise). Returns 0, or -1 when the CUDA runtime cannot
 * describe the device (the fields it could not read stay ""). */
int gs_identity_read(int dev, gs_rt_identity *id);

/* A driver function as it was at CUDA version `version` (12000: 12.0),
 * through the runtime (nothing here links libcuda); NULL when absent. */
void *gs_driver_entry(const char *name, unsigned version);

#ifdef __cplusplus
}
#endif

#endif
