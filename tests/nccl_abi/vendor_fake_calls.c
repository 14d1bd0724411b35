/* The fake vendor calling its own public names: separate translation unit, default visibility, -fPIC, so
 * the calls go through the PLT and bind to the first definition in the global scope. */
#include "vendor_fake.h"

int ncclGetVersion(int* version);
int ncclCommGetAsyncError(void* comm, int* asyncError);

int fakeVendorVersionViaPlt(void) {
  int v = 0;
  ncclGetVersion(&v);
  return v;
}

int fakeVendorAsyncErrorViaPlt(void) {
  int e = 0;
  ncclCommGetAsyncError(kFakeVendorComm, &e);
  return e;
}
