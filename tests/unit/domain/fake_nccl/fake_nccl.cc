// A fake NCCL for the adaptor tests: exports NCCL's C names with NCCL's ABI and records what it is given.
// It moves no data. Built three times (tests/unit/domain/CMakeLists.txt):
//   fake_nccl           every symbol the adaptor uses, version 2.23.4
//   fake_nccl_minimal   FAKE_NCCL_NO_OPTIONAL: none of the optional symbols, version 2.7.8 (old code form)
//   fake_nccl_broken    FAKE_NCCL_NO_REQUIRED: lacks ncclAllGather and ncclSend
#include "fake_nccl.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {

using Result = int;  // ncclResult_t
constexpr Result kSuccess = 0;
constexpr Result kInvalidArgument = 4;

struct Comm {
  FakeNcclCommInfo info{};
  FakeNcclCall last{};
};

std::mutex gMutex;
FakeNcclCounters gCounters{};
std::string gFailCall;
Result gFailResult = kSuccess;
std::string gFailText;
std::atomic<int> gIdCounter{0};
thread_local std::string tLastError;

/// kSuccess, or the injected failure when `call` is the armed one (then disarmed).
Result injected(const char* call) {
  std::lock_guard<std::mutex> lock(gMutex);
  if (gFailCall != call) return kSuccess;
  gFailCall.clear();
  tLastError = gFailText;
  return gFailResult;
}

void count(int FakeNcclCounters::*field) {
  std::lock_guard<std::mutex> lock(gMutex);
  ++(gCounters.*field);
}

Result record(const char* name, const void* send, void* recv, size_t count, int type, int op, int rootOrPeer,
              void* comm, void* stream) {
  if (!comm) return kInvalidArgument;
  Result r = injected(name);
  if (r != kSuccess) return r;
  FakeNcclCall& c = static_cast<Comm*>(comm)->last;
  std::memset(&c, 0, sizeof c);
  std::strncpy(c.name, name, sizeof c.name - 1);
  c.send = send;
  c.recv = recv;
  c.count = count;
  c.datatype = type;
  c.op = op;
  c.rootOrPeer = rootOrPeer;
  c.stream = stream;
  return kSuccess;
}

struct UniqueId {
  char internal[128];
};

Result initComm(void** comm, int nranks, const UniqueId& id, int rank, const void* config) {
  Result r = injected("ncclCommInitRank");
  if (r != kSuccess) return r;
  if (rank < 0 || rank >= nranks) return kInvalidArgument;
  auto* c = new Comm;
  c->info.nranks = nranks;
  c->info.rank = rank;
  std::memcpy(c->info.id, id.internal, sizeof c->info.id);
  c->info.config = config;
  count(&FakeNcclCounters::commInit);
  *comm = c;
  return kSuccess;
}

}  // namespace

// ---- control interface ----
FAKE_API void fakeNcclLastCall(void* comm, FakeNcclCall* out) { *out = static_cast<Comm*>(comm)->last; }
FAKE_API void fakeNcclCommInfo(void* comm, FakeNcclCommInfo* out) { *out = static_cast<Comm*>(comm)->info; }
FAKE_API void fakeNcclCounters(FakeNcclCounters* out) {
  std::lock_guard<std::mutex> lock(gMutex);
  *out = gCounters;
}
FAKE_API void fakeNcclFailNext(const char* call, int result, const char* text) {
  std::lock_guard<std::mutex> lock(gMutex);
  gFailCall = call;
  gFailResult = result;
  gFailText = text;
}
FAKE_API void fakeNcclSetAsyncError(void* comm, int result) { static_cast<Comm*>(comm)->info.asyncError = result; }

// ---- NCCL API ----
FAKE_API Result ncclGetVersion(int* version) {
#ifdef FAKE_NCCL_NO_OPTIONAL
  *version = 2708;
#else
  *version = 22304;
#endif
  return kSuccess;
}

FAKE_API Result ncclGetUniqueId(UniqueId* id) {
  Result r = injected("ncclGetUniqueId");
  if (r != kSuccess) return r;
  int n = ++gIdCounter;
  for (int i = 0; i < 128; ++i) id->internal[i] = static_cast<char>(i * 7 + n);
  std::memcpy(id->internal, "FAKE", 4);
  count(&FakeNcclCounters::getUniqueId);
  return kSuccess;
}

FAKE_API const char* ncclGetErrorString(Result r) { return r == kInvalidArgument ? "fake: invalid argument" : "fake: error"; }

FAKE_API Result ncclCommInitRank(void** comm, int nranks, UniqueId id, int rank) {
  return initComm(comm, nranks, id, rank, nullptr);
}

FAKE_API Result ncclCommDestroy(void* comm) {
  count(&FakeNcclCounters::destroy);
  delete static_cast<Comm*>(comm);
  return kSuccess;
}

FAKE_API Result ncclCommAbort(void* comm) {
  count(&FakeNcclCounters::abort);
  delete static_cast<Comm*>(comm);
  return kSuccess;
}

#ifndef FAKE_NCCL_NO_OPTIONAL
FAKE_API const char* ncclGetLastError(void*) { return tLastError.c_str(); }

FAKE_API Result ncclCommInitRankConfig(void** comm, int nranks, UniqueId id, int rank, void* config) {
  return initComm(comm, nranks, id, rank, config);
}

FAKE_API Result ncclCommFinalize(void* comm) {
  Result r = injected("ncclCommFinalize");
  if (r != kSuccess) return r;
  count(&FakeNcclCounters::finalize);
  return kSuccess;
}

FAKE_API Result ncclCommGetAsyncError(void* comm, Result* asyncError) {
  *asyncError = static_cast<Comm*>(comm)->info.asyncError;
  return kSuccess;
}

FAKE_API Result ncclRedOpCreatePreMulSum(int* op, void* scalar, int datatype, int residence, void* comm) {
  std::lock_guard<std::mutex> lock(gMutex);
  ++gCounters.opCreate;
  std::memcpy(gCounters.lastScalar, scalar, 8);
  gCounters.lastScalarType = datatype;
  gCounters.lastResidence = residence;
  *op = 1000 + gCounters.opCreate;
  gCounters.lastCreatedOp = *op;
  return kSuccess;
}

FAKE_API Result ncclRedOpDestroy(int op, void* comm) {
  std::lock_guard<std::mutex> lock(gMutex);
  ++gCounters.opDestroy;
  gCounters.lastDestroyedOp = op;
  return kSuccess;
}
#endif

FAKE_API Result ncclAllReduce(const void* s, void* r, size_t n, int t, int op, void* comm, void* stream) {
  return record("ncclAllReduce", s, r, n, t, op, -1, comm, stream);
}
FAKE_API Result ncclReduceScatter(const void* s, void* r, size_t n, int t, int op, void* comm, void* stream) {
  return record("ncclReduceScatter", s, r, n, t, op, -1, comm, stream);
}
FAKE_API Result ncclBroadcast(const void* s, void* r, size_t n, int t, int root, void* comm, void* stream) {
  return record("ncclBroadcast", s, r, n, t, -1, root, comm, stream);
}
FAKE_API Result ncclReduce(const void* s, void* r, size_t n, int t, int op, int root, void* comm, void* stream) {
  return record("ncclReduce", s, r, n, t, op, root, comm, stream);
}
FAKE_API Result ncclRecv(void* r, size_t n, int t, int peer, void* comm, void* stream) {
  return record("ncclRecv", nullptr, r, n, t, -1, peer, comm, stream);
}
#ifndef FAKE_NCCL_NO_REQUIRED
FAKE_API Result ncclAllGather(const void* s, void* r, size_t n, int t, void* comm, void* stream) {
  return record("ncclAllGather", s, r, n, t, -1, -1, comm, stream);
}
FAKE_API Result ncclSend(const void* s, size_t n, int t, int peer, void* comm, void* stream) {
  return record("ncclSend", s, nullptr, n, t, -1, peer, comm, stream);
}
#endif

FAKE_API Result ncclGroupStart() {
  count(&FakeNcclCounters::groupStart);
  return kSuccess;
}
FAKE_API Result ncclGroupEnd() {
  Result r = injected("ncclGroupEnd");
  if (r != kSuccess) return r;
  count(&FakeNcclCounters::groupEnd);
  return kSuccess;
}
