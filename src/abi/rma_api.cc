// The RMA entry points (include/hetccl/hetccl_rma.h) over rma::RmaService. Handles are opaque numbers
// looked up in tables (abi/handle_table.hpp).
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "abi/guard.hpp"
#include "abi/handle_table.hpp"
#include "hetccl/hetccl_rma.h"
#include "rma/rma_service.hpp"

using hetccl::abi::guarded;
using hetccl::abi::guardedComm;

namespace hetccl::abi {
namespace {

HandleTable<rma::LocalMem>& mems() {
  static HandleTable<rma::LocalMem> t("the registration (hetcclMem_t)");
  return t;
}
HandleTable<rma::RemoteMem>& remotes() {
  static HandleTable<rma::RemoteMem> t("the remote registration (hetcclRemoteMem_t)");
  return t;
}
HandleTable<rma::Request>& requests() {
  static HandleTable<rma::Request> t("the request (hetcclRequest_t)");
  return t;
}

std::shared_ptr<rma::RmaService> serviceOf(Communicator& c) {
  auto s = std::dynamic_pointer_cast<rma::RmaService>(c.rma());
  if (!s) throw InvalidUsage("RMA is not initialised on this communicator: call hetcclRmaInit first");
  return s;
}

/// The communicator's service, without keeping the communicator referenced (for blocking waits).
std::shared_ptr<rma::RmaService> serviceOf(hetcclComm_t comm) {
  CommRef ref = lookup(comm);
  return serviceOf(*ref->impl);
}

void checkRange(const char* side, size_t offset, size_t bytes, uint64_t size) {
  if (offset > size || bytes > size - offset)
    throw InvalidArgument(concat(side, " range [", offset, ", ", offset, " + ", bytes, ") lies outside its registration of ",
                                 size, " bytes"));
}

std::vector<rma::Range> checkedRanges(const rma::LocalMem& local, const rma::RemoteMem& remote,
                                      const hetcclRmaRange_t* ranges, size_t n) {
  if (local.service != remote.service)
    throw InvalidArgument("the local registration and the remote handle belong to different communicators");
  if (n > 0 && !ranges) throw InvalidArgument("ranges is NULL");
  std::vector<rma::Range> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const hetcclRmaRange_t& r = ranges[i];
    try {
      checkRange("local", r.localOffset, r.bytes, local.bytes);
      checkRange("remote", r.remoteOffset, r.bytes, remote.desc.bytes);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(n == 1 ? std::string(e.what()) : concat("range ", i, ": ", e.what()));
    }
    out.push_back({r.localOffset, r.remoteOffset, r.bytes});
  }
  return out;
}

hetcclResult_t transfer(const char* fn, bool isGet, hetcclMem_t local, hetcclRemoteMem_t remote,
                        const hetcclRmaRange_t* ranges, size_t n, hetcclRequest_t* req) {
  return guarded(fn, [&] {
    if (!req) throw InvalidArgument("req is NULL");
    std::shared_ptr<rma::LocalMem> l = mems().get(local);
    std::shared_ptr<rma::RemoteMem> r = remotes().get(remote);
    std::vector<rma::Range> checked = checkedRanges(*l, *r, ranges, n);
    std::shared_ptr<rma::Request> q = l->service->transfer(isGet, l, *r, checked);
    *req = reinterpret_cast<hetcclRequest_t>(requests().add(std::move(q)));
  });
}

hetcclResult_t transferOnStream(const char* fn, bool isGet, hetcclMem_t local, hetcclRemoteMem_t remote,
                                const hetcclRmaRange_t* ranges, size_t n, hetcclStream_t stream) {
  return guarded(fn, [&] {
    std::shared_ptr<rma::LocalMem> l = mems().get(local);
    std::shared_ptr<rma::RemoteMem> r = remotes().get(remote);
    l->service->transferOnStream(isGet, l, *r, checkedRanges(*l, *r, ranges, n), stream);
  });
}

}  // namespace
}  // namespace hetccl::abi

using namespace hetccl;

extern "C" {

HETCCL_API hetcclResult_t hetcclRmaInit(hetcclComm_t comm) {
  return guardedComm("hetcclRmaInit", comm, [&](Communicator& c) { rma::RmaService::init(c); });
}

HETCCL_API hetcclResult_t hetcclMemRegister(hetcclComm_t comm, void* buf, size_t bytes, hetcclMem_t* mem) {
  return guardedComm("hetcclMemRegister", comm, [&](Communicator& c) {
    if (!mem) throw InvalidArgument("mem is NULL");
    if (!buf) throw InvalidArgument("buf is NULL");
    if (bytes == 0) throw InvalidArgument("bytes is 0: a registration must hold at least one byte");
    if (reinterpret_cast<uintptr_t>(buf) + bytes < reinterpret_cast<uintptr_t>(buf))
      throw InvalidArgument("buf + bytes overflows the address space");
    auto m = abi::serviceOf(c)->registerMemory(buf, bytes);
    *mem = reinterpret_cast<hetcclMem_t>(abi::mems().add(std::move(m)));
  });
}

HETCCL_API hetcclResult_t hetcclMemDeregister(hetcclMem_t mem) {
  return guarded("hetcclMemDeregister", [&] {
    std::shared_ptr<rma::LocalMem> m = abi::mems().get(mem);
    m->service->deregister(*m);
    abi::mems().erase(mem);     // the registration has ended: the handle is released whatever follows
    m->service->unmapAtPeers(*m);
  });
}

HETCCL_API hetcclResult_t hetcclMemExport(hetcclMem_t mem, hetcclMemDesc_t* desc) {
  return guarded("hetcclMemExport", [&] {
    if (!desc) throw InvalidArgument("desc is NULL");
    std::shared_ptr<rma::LocalMem> m = abi::mems().get(mem);
    static_assert(sizeof desc->bytes == rma::kDescriptorBytes);
    std::memcpy(desc->bytes, m->descriptor.data(), rma::kDescriptorBytes);
  });
}

HETCCL_API hetcclResult_t hetcclMemQuery(hetcclMem_t mem, hetcclMemKind_t* kind, size_t* bytes) {
  return guarded("hetcclMemQuery", [&] {
    if (!kind) throw InvalidArgument("kind is NULL");
    std::shared_ptr<rma::LocalMem> m = abi::mems().get(mem);
    *kind = static_cast<hetcclMemKind_t>(m->kind);
    if (bytes) *bytes = m->bytes;
  });
}

HETCCL_API hetcclResult_t hetcclMemImport(hetcclComm_t comm, const hetcclMemDesc_t* desc, hetcclRemoteMem_t* remote) {
  return guardedComm("hetcclMemImport", comm, [&](Communicator& c) {
    if (!desc) throw InvalidArgument("desc is NULL");
    if (!remote) throw InvalidArgument("remote is NULL");
    rma::DescriptorBytes bytes;
    std::memcpy(bytes.data(), desc->bytes, bytes.size());
    auto r = abi::serviceOf(c)->import(bytes);
    *remote = reinterpret_cast<hetcclRemoteMem_t>(abi::remotes().add(std::move(r)));
  });
}

HETCCL_API hetcclResult_t hetcclRemoteMemQuery(hetcclRemoteMem_t remote, int* rank, size_t* bytes) {
  return guarded("hetcclRemoteMemQuery", [&] {
    if (!rank) throw InvalidArgument("rank is NULL");
    std::shared_ptr<rma::RemoteMem> r = abi::remotes().get(remote);
    *rank = r->desc.owner;
    if (bytes) *bytes = r->desc.bytes;
  });
}

HETCCL_API hetcclResult_t hetcclRemoteMemRelease(hetcclRemoteMem_t remote) {
  return guarded("hetcclRemoteMemRelease", [&] {
    abi::remotes().get(remote);
    abi::remotes().erase(remote);
  });
}

HETCCL_API hetcclResult_t hetcclPut(hetcclMem_t local, size_t localOffset, hetcclRemoteMem_t remote, size_t remoteOffset,
                                    size_t bytes, hetcclRequest_t* req) {
  const hetcclRmaRange_t range{localOffset, remoteOffset, bytes};
  return abi::transfer("hetcclPut", false, local, remote, &range, 1, req);
}

HETCCL_API hetcclResult_t hetcclGet(hetcclMem_t local, size_t localOffset, hetcclRemoteMem_t remote, size_t remoteOffset,
                                    size_t bytes, hetcclRequest_t* req) {
  const hetcclRmaRange_t range{localOffset, remoteOffset, bytes};
  return abi::transfer("hetcclGet", true, local, remote, &range, 1, req);
}

HETCCL_API hetcclResult_t hetcclPutBatch(hetcclMem_t local, hetcclRemoteMem_t remote, const hetcclRmaRange_t* ranges,
                                         size_t n, hetcclRequest_t* req) {
  return abi::transfer("hetcclPutBatch", false, local, remote, ranges, n, req);
}

HETCCL_API hetcclResult_t hetcclGetBatch(hetcclMem_t local, hetcclRemoteMem_t remote, const hetcclRmaRange_t* ranges,
                                         size_t n, hetcclRequest_t* req) {
  return abi::transfer("hetcclGetBatch", true, local, remote, ranges, n, req);
}

HETCCL_API hetcclResult_t hetcclPutOnStream(hetcclMem_t local, size_t localOffset, hetcclRemoteMem_t remote,
                                            size_t remoteOffset, size_t bytes, hetcclStream_t stream) {
  const hetcclRmaRange_t range{localOffset, remoteOffset, bytes};
  return abi::transferOnStream("hetcclPutOnStream", false, local, remote, &range, 1, stream);
}

HETCCL_API hetcclResult_t hetcclGetOnStream(hetcclMem_t local, size_t localOffset, hetcclRemoteMem_t remote,
                                            size_t remoteOffset, size_t bytes, hetcclStream_t stream) {
  const hetcclRmaRange_t range{localOffset, remoteOffset, bytes};
  return abi::transferOnStream("hetcclGetOnStream", true, local, remote, &range, 1, stream);
}

HETCCL_API hetcclResult_t hetcclPutBatchOnStream(hetcclMem_t local, hetcclRemoteMem_t remote,
                                                 const hetcclRmaRange_t* ranges, size_t n, hetcclStream_t stream) {
  return abi::transferOnStream("hetcclPutBatchOnStream", false, local, remote, ranges, n, stream);
}

HETCCL_API hetcclResult_t hetcclGetBatchOnStream(hetcclMem_t local, hetcclRemoteMem_t remote,
                                                 const hetcclRmaRange_t* ranges, size_t n, hetcclStream_t stream) {
  return abi::transferOnStream("hetcclGetBatchOnStream", true, local, remote, ranges, n, stream);
}

HETCCL_API hetcclResult_t hetcclNotifyOnStream(hetcclComm_t comm, int peer, uint64_t tag, hetcclStream_t stream) {
  return guardedComm("hetcclNotifyOnStream", comm, [&](Communicator& c) {
    auto s = abi::serviceOf(c);
    if (peer < 0 || peer >= s->size()) throw InvalidArgument(concat("peer ", peer, " is outside [0, ", s->size(), ")"));
    if (peer == s->rank()) throw InvalidArgument(concat("peer ", peer, " is this rank"));
    s->notifyOnStream(peer, tag, stream);
  });
}

HETCCL_API hetcclResult_t hetcclRequestTest(hetcclRequest_t req, int* done) {
  return guarded("hetcclRequestTest", [&] {
    if (!done) throw InvalidArgument("done is NULL");
    std::shared_ptr<rma::Request> r = abi::requests().get(req);
    *done = 0;
    *done = r->service->test(*r) ? 1 : 0;
  });
}

HETCCL_API hetcclResult_t hetcclRequestWait(hetcclRequest_t req) {
  return guarded("hetcclRequestWait", [&] {
    std::shared_ptr<rma::Request> r = abi::requests().get(req);
    r->service->wait(*r);
  });
}

HETCCL_API hetcclResult_t hetcclRequestFree(hetcclRequest_t req) {
  return guarded("hetcclRequestFree", [&] {
    std::shared_ptr<rma::Request> r = abi::requests().get(req);
    if (!r->service->finished(*r)) throw InvalidUsage("the request is still pending; wait for it first");
    abi::requests().erase(req);
  });
}

HETCCL_API hetcclResult_t hetcclNotify(hetcclComm_t comm, int peer, uint64_t tag) {
  return guardedComm("hetcclNotify", comm, [&](Communicator& c) {
    auto s = abi::serviceOf(c);
    if (peer < 0 || peer >= s->size()) throw InvalidArgument(concat("peer ", peer, " is outside [0, ", s->size(), ")"));
    if (peer == s->rank()) throw InvalidArgument(concat("peer ", peer, " is this rank"));
    s->notify(peer, tag);
  });
}

HETCCL_API hetcclResult_t hetcclNotifyPoll(hetcclComm_t comm, int* peer, uint64_t* tag, int* received) {
  return guardedComm("hetcclNotifyPoll", comm, [&](Communicator& c) {
    if (!peer || !tag || !received) throw InvalidArgument("peer, tag and received must not be NULL");
    *received = 0;
    int p = -1;
    uint64_t t = 0;
    if (abi::serviceOf(c)->poll(p, t)) {
      *peer = p;
      *tag = t;
      *received = 1;
    }
  });
}

HETCCL_API hetcclResult_t hetcclNotifyWait(hetcclComm_t comm, int peer, uint64_t tag, int timeoutMs) {
  return guarded("hetcclNotifyWait", [&] {
    auto s = abi::serviceOf(comm);  // the communicator is not kept referenced while this waits
    if (peer < 0 || peer >= s->size()) throw InvalidArgument(concat("peer ", peer, " is outside [0, ", s->size(), ")"));
    if (peer == s->rank()) throw InvalidArgument(concat("peer ", peer, " is this rank"));
    if (timeoutMs < -1) throw InvalidArgument(concat("timeoutMs ", timeoutMs, " (expected -1, 0 or a positive count)"));
    const Deadline deadline = timeoutMs < 0 ? Deadline::fromConfig() : Deadline::afterMs(timeoutMs);
    if (!s->waitNotify(peer, tag, deadline))
      throw Error(Result::InProgress, concat("no notification with tag ", tag, " from rank ", peer, " within ",
                                             timeoutMs < 0 ? std::string("HETCCL_TIMEOUT") : concat(timeoutMs, " ms")));
  });
}

}  // extern "C"
