/* dlopen'ed by test_dlsym's loader-lock scenario while another thread makes
 * the process's first cuBLASLt call: its constructor runs with the loader
 * lock held and looks cublasLtMatmul up on the fake's handle. With a lookup
 * that waited for the other thread's search of cuBLAS (which waits for the
 * loader lock), the process would hang. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern volatile int gsdl_plug_started;
void *gsdl_plug_found;

__attribute__((constructor)) static void look_up_under_the_loader_lock(void)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/libcublasLt.so.13", getenv("GS_FAKE_DIR"));
  void *lt = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  gsdl_plug_started = 1;
  usleep(300000);   /* the other thread is in its first call by now */
  gsdl_plug_found = lt ? dlsym(lt, "cublasLtMatmul") : NULL;
}
