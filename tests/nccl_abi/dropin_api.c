#define _GNU_SOURCE
#include "dropin_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

void dropinLoad(DropinApi* api, const char* path, int mode) {
  memset(api, 0, sizeof *api);
  void* scope = RTLD_DEFAULT;
  if (path) {
    api->handle = dlopen(path, RTLD_NOW | mode);
    if (!api->handle) {
      fprintf(stderr, "cannot open %s: %s\n", path, dlerror());
      exit(2);
    }
    scope = api->handle;
  }
#define DROPIN_RESOLVE(name)                                                             \
  api->name = (__typeof__(name)*)dlsym(scope, #name);                                    \
  if (!api->name) {                                                                      \
    fprintf(stderr, "%s does not define %s\n", path ? path : "the global scope", #name); \
    exit(2);                                                                             \
  }
  DROPIN_API(DROPIN_RESOLVE)
#undef DROPIN_RESOLVE
  api->ncclAllToAll = (__typeof__(ncclAllToAll)*)dlsym(scope, "ncclAllToAll");
  api->ncclAllToAllv = (__typeof__(ncclAllToAllv)*)dlsym(scope, "ncclAllToAllv");
}

void dropinFail(const DropinApi* api, const char* what) {
  ++failures;
  fprintf(stderr, "FAIL: %s (last error: %s)\n", what, api->ncclGetLastError(NULL));
}

void dropinExpect(const DropinApi* api, ncclResult_t got, ncclResult_t want, const char* what) {
  if (got == want) return;
  ++failures;
  fprintf(stderr, "FAIL: %s returned %d (%s), expected %d (last error: %s)\n", what, (int)got,
          api->ncclGetErrorString(got), (int)want, api->ncclGetLastError(NULL));
}

void dropinExpectMessage(const DropinApi* api, const char* part, const char* what) {
  const char* last = api->ncclGetLastError(NULL);
  if (last && strstr(last, part)) return;
  ++failures;
  fprintf(stderr, "FAIL: %s: last error '%s' does not mention '%s'\n", what, last ? last : "(null)", part);
}

int dropinFailures(void) { return failures; }

static int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void dropinLaunchEnv(int* rank, int* nranks, ncclUniqueId* id) {
  const char* r = getenv("HETCCL_RANK");
  const char* n = getenv("HETCCL_NRANKS");
  const char* hex = getenv("HETCCL_UNIQUE_ID");
  if (!r || !n || !hex || strlen(hex) != 2 * sizeof id->internal) {
    fprintf(stderr, "run under hetccl-run (HETCCL_RANK, HETCCL_NRANKS, HETCCL_UNIQUE_ID missing or garbled)\n");
    exit(2);
  }
  *rank = atoi(r);
  *nranks = atoi(n);
  for (size_t i = 0; i < sizeof id->internal; ++i) {
    int hi = hexDigit(hex[2 * i]), lo = hexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      fprintf(stderr, "HETCCL_UNIQUE_ID is not hex\n");
      exit(2);
    }
    id->internal[i] = (char)(hi << 4 | lo);
  }
}
