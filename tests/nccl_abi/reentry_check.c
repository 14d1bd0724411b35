/* reentry_check DROPIN FAKE_VENDOR: with the drop-in first in the global scope (dlopen RTLD_GLOBAL here,
 * LD_PRELOAD in real use), a vendor library's calls to its own public names land in the drop-in, which
 * must hand them back to the vendor (src/nccl_abi/vendor_reentry.hpp) instead of serving them itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "dropin_api.h"
#include "vendor_fake.h"

int main(int argc, char** argv) {
  if (argc != 3) return fprintf(stderr, "usage: reentry_check DROPIN FAKE_VENDOR\n"), 2;
  DropinApi api;
  dropinLoad(&api, argv[1], RTLD_GLOBAL);
  void* vendor = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (!vendor) return fprintf(stderr, "cannot open %s: %s\n", argv[2], dlerror()), 2;
  int (*viaPltVersion)(void) = (int (*)(void))dlsym(vendor, "fakeVendorVersionViaPlt");
  int (*viaPltAsync)(void) = (int (*)(void))dlsym(vendor, "fakeVendorAsyncErrorViaPlt");
  if (!viaPltVersion || !viaPltAsync) return fprintf(stderr, "the fake vendor lacks its test entry points\n"), 2;

  /* Precondition: the global scope resolves ncclGetVersion to the drop-in, so the vendor's PLT does too. */
  Dl_info global, dropin;
  void* first = dlsym(RTLD_DEFAULT, "ncclGetVersion");
  if (!first || !dladdr(first, &global) || !dladdr((void*)api.ncclGetVersion, &dropin) ||
      global.dli_fbase != dropin.dli_fbase) {
    fprintf(stderr, "FAIL: precondition: ncclGetVersion in the global scope is not the drop-in's\n");
    return 1;
  }
  int failures = 0, ours = 0;
  api.ncclGetVersion(&ours);
  for (int round = 0; round < 2; ++round) { /* the second round takes the cached path */
    int v = viaPltVersion(), e = viaPltAsync();
    if (v != kFakeVendorVersion) ++failures, fprintf(stderr, "FAIL: vendor's own ncclGetVersion call gave %d\n", v);
    if (e != 42) ++failures, fprintf(stderr, "FAIL: vendor's own ncclCommGetAsyncError call gave %d\n", e);
  }
  int again = 0;
  api.ncclGetVersion(&again);
  if (ours != 22809 || again != 22809)
    ++failures, fprintf(stderr, "FAIL: the application's call gave %d/%d\n", ours, again);
  printf("reentry_check: %d failures (vendor calls answered by the vendor, application calls by hetccl)\n", failures);
  return failures ? 1 : 0;
}
