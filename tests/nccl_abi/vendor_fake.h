/* The fake NCCL-family library of the re-entry test (vendor_fake.c). */
#ifndef HETCCL_TESTS_NCCL_ABI_VENDOR_FAKE_H_
#define HETCCL_TESTS_NCCL_ABI_VENDOR_FAKE_H_

#define kFakeVendorVersion 12345
#define kFakeVendorComm ((void*)0x1234)

/* Call ncclGetVersion / ncclCommGetAsyncError(kFakeVendorComm) from inside the fake library. */
int fakeVendorVersionViaPlt(void);
int fakeVendorAsyncErrorViaPlt(void);

#endif
