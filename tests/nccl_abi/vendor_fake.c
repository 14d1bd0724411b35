/* A stand-in for the real NCCL in the re-entry test: it defines pncclX with weak ncclX aliases (as NCCL
 * does) and, in vendor_fake_calls.c, calls its own public names through its PLT (as NCCL 2.28 does from
 * ncclEnqueueCheck, init and finalize). Its answers differ from hetccl's, so the test sees who answered. */
#include "vendor_fake.h"

int pncclGetVersion(int* version) {
  *version = kFakeVendorVersion;
  return 0;
}
int ncclGetVersion(int* version) __attribute__((weak, alias("pncclGetVersion")));

/* The fake's communicators are plain addresses; it reports 42 for kFakeVendorComm. */
int pncclCommGetAsyncError(void* comm, int* asyncError) {
  *asyncError = comm == kFakeVendorComm ? 42 : 43;
  return 0;
}
int ncclCommGetAsyncError(void* comm, int* asyncError) __attribute__((weak, alias("pncclCommGetAsyncError")));
