/* A stand-in for dispatch/gpu.c in unit tests: a GPU whose compute
 * capability, SM count and availability the test sets. */
#include <string.h>

#include "fake_variants.h"

fake_gpu_t fake_gpu = { 1, 0, 9, 0, 132, 0, 0 };

gs_rt_identity fake_identity = {
  .gpu_name = "NVIDIA H200", .compute_capability = "9.0", .sm_count = "132",
  .cublas_version = "13.1.0", .shim_version = PACKAGE_VERSION, .kernel_table = FAKE_KERNEL_TABLE,
  .driver_version = "580.159.04", .power_limit_w = "700",
  .uuid = "GPU-00000000-1111-2222-3333-444444444444",
};
int fake_identity_known = 1;

const gs_rt_identity *gs_gpu_identity(int device)
{
  if (!fake_identity_known || !fake_gpu.present || device != fake_gpu.device) return NULL;
  return &fake_identity;
}

/* The one fake device, by fake_identity's name while present. */
int gs_gpu_name_present(const char *gpu_name)
{
  if (!fake_gpu.present) return -1;
  return !strcmp(gpu_name, fake_identity.gpu_name);
}

int gs_gpu_place_stream(void *stream, gs_gpu_place *out)
{
  (void)stream;
  fake_gpu.placements++;
  if (!fake_gpu.present) return -1;
  out->device = fake_gpu.device;
  out->cc_major = fake_gpu.cc_major;
  out->cc_minor = fake_gpu.cc_minor;
  out->sm_count = fake_gpu.sm_count;
  out->ctx_id = fake_gpu.ctx_id ? fake_gpu.ctx_id : 1 + (unsigned long long)fake_gpu.device;
  out->ctx = gs_ctx_of(out->ctx_id, fake_gpu.device, NULL);
  return 0;
}

int gs_gpu_stream_capturing(void *stream)
{
  (void)stream;
  return 0;
}

void gs_gpu_set_cublas_version(const char *version) { (void)version; }

const char *gs_gpu_cublas_version(void) { return fake_identity.cublas_version; }
