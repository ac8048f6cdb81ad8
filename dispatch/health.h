/* Which variants may still serve calls. A variant that failed on a device
 * (launch error, self-check mismatch) is disabled there for the rest of the
 * process; the reason is said once on stderr. */
#ifndef GS_HEALTH_H
#define GS_HEALTH_H

#include "variants.h"

#define GS_MAX_DEVICES 64

int gs_variant_usable(const gs_variant *v, int device);
void gs_variant_disable(const gs_variant *v, int device, const char *why);

#endif
