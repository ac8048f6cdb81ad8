/* A stand-in NVTX tool for the tests: loaded by NVTX3 through
 * NVTX_INJECTION64_PATH, it writes every domain, category, range push and
 * pop it is given, one line each, to the file named by GS_NVTX_RECORD. */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int depth;

static void say(const char *fmt, ...)
{
  const char *path = getenv("GS_NVTX_RECORD");
  if (!path) return;
  pthread_mutex_lock(&lock);
  FILE *f = fopen(path, "a");
  if (f) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
  }
  pthread_mutex_unlock(&lock);
}

static nvtxDomainHandle_t NVTX_API domain_create(const char *name)
{
  say("domain %s", name);
  static int token;
  return (nvtxDomainHandle_t)&token;
}

static void NVTX_API name_category(nvtxDomainHandle_t d, uint32_t id, const char *name)
{
  (void)d;
  say("category %u %s", id, name);
}

static int NVTX_API range_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
  (void)d;
  say("push %u %s", a->category, a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "?");
  return __atomic_fetch_add(&depth, 1, __ATOMIC_RELAXED);
}

static int NVTX_API range_pop(nvtxDomainHandle_t d)
{
  (void)d;
  say("pop");
  return __atomic_sub_fetch(&depth, 1, __ATOMIC_RELAXED);
}

int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
  const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get_table(NVTX_ETID_CALLBACKS);
  NvtxFunctionTable table;
  unsigned int size = 0;
  if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) ||
      size <= NVTX_CBID_CORE2_DomainCreateA)
    return 0;
  *table[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)domain_create;
  *table[NVTX_CBID_CORE2_DomainNameCategoryA] = (NvtxFunctionPointer)name_category;
  *table[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)range_push;
  *table[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)range_pop;
  say("injected");
  return 1;
}
