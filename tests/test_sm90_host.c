/* kernels/sm90_host.h: the driver's tensor-map encoder is looked up once,
 * however many threads ask first at the same time, and every thread gets
 * the pointer the driver gave. Run in the ThreadSanitizer build, this also
 * proves the pointer is published with release/acquire ordering: on an Arm
 * host a thread could otherwise see "looked up" before the pointer. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../kernels/sm90_host.h"
#include "support/fake_cudart.h"

#define THREADS 16
static pthread_barrier_t start;

static void *first_lookup(void *arg)
{
  (void)arg;
  pthread_barrier_wait(&start);
  return (void *)get_encode();
}

static void test_sixteen_threads_get_the_same_encoder(void **s)
{
  (void)s;
  fake_cuda_reset();
  pthread_t t[THREADS];
  pthread_barrier_init(&start, NULL, THREADS);
  for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, first_lookup, NULL), 0);
  void *got[THREADS];
  for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_join(t[i], &got[i]), 0);
  assert_non_null(got[0]);
  for (int i = 1; i < THREADS; i++) assert_ptr_equal(got[i], got[0]);
  assert_ptr_equal((void *)get_encode(), got[0]);
  pthread_barrier_destroy(&start);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_sixteen_threads_get_the_same_encoder),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
