// Control and inspection interface of the fake NCCL library (fake_nccl.cc), for the adaptor tests. The
// tests reach these functions with dlopen + dlsym on the same file the adaptor loads, so they see the
// very object the adaptor calls.
#pragma once

#include <cstddef>

/// The last collective or point-to-point call made on a fake communicator, arguments exactly as received.
struct FakeNcclCall {
  char name[32];
  const void* send;
  void* recv;
  size_t count;
  int datatype;
  int op;
  int rootOrPeer;  ///< root, peer, or -1
  void* stream;
};

/// What ncclCommInitRank(Config) received for one fake communicator.
struct FakeNcclCommInfo {
  int nranks;
  int rank;
  unsigned char id[128];
  const void* config;  ///< the config pointer given to ncclCommInitRankConfig, or nullptr
  int asyncError;
};

/// Process-wide counters and the last PreMulSum creation.
struct FakeNcclCounters {
  int getUniqueId, commInit, groupStart, groupEnd, finalize, destroy, abort, opCreate, opDestroy;
  unsigned char lastScalar[8];
  int lastScalarType;
  int lastResidence;
  int lastCreatedOp;
  int lastDestroyedOp;
};

extern "C" {
using FakeNcclLastCallFn = void (*)(void* comm, FakeNcclCall* out);
using FakeNcclCommInfoFn = void (*)(void* comm, FakeNcclCommInfo* out);
using FakeNcclCountersFn = void (*)(FakeNcclCounters* out);
/// The next call of the fake API named `call` (e.g. "ncclAllReduce") returns `result` and makes
/// ncclGetLastError return `text` on the calling thread.
using FakeNcclFailNextFn = void (*)(const char* call, int result, const char* text);
using FakeNcclSetAsyncErrorFn = void (*)(void* comm, int result);
}
