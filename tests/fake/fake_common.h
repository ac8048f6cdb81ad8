/* Recording shared by both fakes (each library has its own copy). */
#include <pthread.h>
#include <string.h>

#include "fake.h"

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static fake_call fake_last_call;
static int fake_status;
static struct { char name[48]; int count; } fake_counts[32];
static int fake_quiet;

int fake_record(const char *name, const uint64_t *w, int n)
{
  if (fake_quiet) return fake_status;  /* timing runs: no lock, no copy */
  pthread_mutex_lock(&fake_lock);
  memset(&fake_last_call, 0, sizeof fake_last_call);
  strncpy(fake_last_call.name, name, sizeof fake_last_call.name - 1);
  fake_last_call.n = n;
  memcpy(fake_last_call.w, w, (size_t)n * sizeof *w);
  for (int i = 0; i < 32; i++) {
    if (!fake_counts[i].name[0]) strncpy(fake_counts[i].name, name, sizeof fake_counts[i].name - 1);
    if (!strcmp(fake_counts[i].name, name)) {
      fake_counts[i].count++;
      break;
    }
  }
  int st = fake_status;
  pthread_mutex_unlock(&fake_lock);
  return st;
}

const fake_call *fake_last(void) { return &fake_last_call; }

int fake_count(const char *name)
{
  int c = 0;
  pthread_mutex_lock(&fake_lock);
  for (int i = 0; i < 32; i++)
    if (!strcmp(fake_counts[i].name, name)) c = fake_counts[i].count;
  pthread_mutex_unlock(&fake_lock);
  return c;
}

void fake_set_status(int status) { fake_status = status; }
void fake_set_quiet(int quiet) { fake_quiet = quiet; }

void fake_reset(void)
{
  pthread_mutex_lock(&fake_lock);
  memset(&fake_last_call, 0, sizeof fake_last_call);
  memset(fake_counts, 0, sizeof fake_counts);
  fake_status = 0;
  pthread_mutex_unlock(&fake_lock);
}
