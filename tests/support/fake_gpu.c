/* A stand-in for dispatch/gpu.c in unit tests: a GPU whose compute
 * capability, SM count and availability the test sets. */
#include "fake_variants.h"

fake_gpu_t fake_gpu = { 1, 0, 9, 0, 132, 0, 0 };

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
