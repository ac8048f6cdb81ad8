#include "context.h"

#include <stdlib.h>

/* Looked up on every routed call: a scan of atomic pointers, no lock.
 * Entries are added (and, past GS_MAX_CONTEXTS, replaced oldest first)
 * under add_lock. */
static _Atomic(gs_ctx *) table[GS_MAX_CONTEXTS];
static unsigned next_slot;
static pthread_mutex_t add_lock = PTHREAD_MUTEX_INITIALIZER;

static gs_ctx *find(uint64_t id)
{
  for (int i = 0; i < GS_MAX_CONTEXTS; i++) {
    gs_ctx *c = atomic_load_explicit(&table[i], memory_order_acquire);
    if (c && c->id == id) return c;
  }
  return NULL;
}

gs_ctx *gs_ctx_of(uint64_t id, int device, void *handle)
{
  gs_ctx *c = find(id);
  if (c) return c;
  pthread_mutex_lock(&add_lock);
  c = find(id);
  if (!c) {
    c = calloc(1, sizeof *c);
    if (c) {
      c->id = id;
      c->device = device;
      c->handle = handle;
      pthread_mutex_init(&c->lock, NULL);
      pthread_mutex_init(&c->ab_lock, NULL);
      atomic_store_explicit(&table[next_slot++ % GS_MAX_CONTEXTS], c, memory_order_release);
    }
  }
  pthread_mutex_unlock(&add_lock);
  return c;
}

void gs_ctx_forget_all(void)
{
  pthread_mutex_lock(&add_lock);
  for (int i = 0; i < GS_MAX_CONTEXTS; i++) atomic_store(&table[i], NULL);
  next_slot = 0;
  pthread_mutex_unlock(&add_lock);
}
