// Local registrations, imported remote registrations and requests: the objects behind the C handles.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/deadline.hpp"
#include "core/result.hpp"
#include "device/gpu_runtime.hpp"
#include "rma/descriptor.hpp"
#include "rma/piece_plan.hpp"
#include "rma/region_table.hpp"

namespace hetccl::rma {

class RmaService;
struct OutMsg;
struct Request;

/// A stream-ordered put, get or notification (stream_ops.cc): queued on the user's stream as "write
/// reached, wait for done, write passed" on a slot of pinned words (stream_flags.hpp); started by the
/// progress thread when it sees "reached".
struct StreamOp {
  enum class Kind { Put, Get, Notify };
  Kind kind = Kind::Put;
  int peer = -1;
  void* stream = nullptr;          ///< the user's stream (identity only: ops of one stream start in order)
  uint64_t seq = 0;                ///< the value of its words
  uint64_t* slot = nullptr;        ///< StreamFlags slot
  std::shared_ptr<Request> request;  ///< Put/Get (its `ranges`, `local`); dropped when it finishes
  std::shared_ptr<OutMsg> msg;     ///< what is enqueued to the peer once reached
  Deadline reachBy{Clock::time_point{}};  ///< the stream must get there by then (HETCCL_TIMEOUT)
  std::string what;                ///< "put of N bytes to rank P (host H)", for messages
};

/// A local registration (hetcclMem_t).
struct LocalMem {
  std::shared_ptr<RmaService> service;
  unsigned char* base = nullptr;
  uint64_t bytes = 0;
  MemKind kind = MemKind::Host;
  RegionRef ref;
  DescriptorBytes descriptor{};
  /// Device memory a peer of one host may map (peer_copy.cc): the vendor's IPC handle of its allocation.
  std::optional<device::GpuRuntime::IpcExport> shared;
  /// Requests that hold it (issued, not finished) and whether it was deregistered. Both guarded by the
  /// service's mutex: a transfer holds it only while `deregistered` is false, deregistration succeeds only
  /// while `pending` is 0 -- checked and changed together, so no transfer starts after deregister
  /// returned and none that started is still running (RmaService::holdRegistration / deregister).
  int pending = 0;
  bool deregistered = false;
  /// Per peer: sent a transfer of it that the peer copies itself (so the peer may hold a mapping of its
  /// allocation until told to close it at deregistration). Guarded by the service's mutex.
  std::vector<bool> mappedBy;
};

/// An imported registration of a peer (hetcclRemoteMem_t).
struct RemoteMem {
  std::shared_ptr<RmaService> service;
  Descriptor desc;
};

/// A put or get (hetcclRequest_t). The fields below `deadline` are guarded by the service's mutex.
struct Request {
  enum class State { Pending, Done, Failed };
  uint64_t id = 0;
  int peer = -1;
  bool isGet = false;
  uint64_t totalBytes = 0;
  std::shared_ptr<RmaService> service;
  std::shared_ptr<LocalMem> local;  ///< dropped when the request finishes
  std::vector<Range> ranges;        ///< merged
  bool copiedByTarget = false;      ///< sent as kCopiedByTarget: a GetResp brings no pieces
  bool isUnmap = false;             ///< not a transfer: an Unmap (peer_copy.cc), answered by Unmapped
  Deadline deadline{Clock::time_point{}};
  State state = State::Pending;
  Result code = Result::Success;
  std::string message;
  std::shared_ptr<StreamOp> streamOp;  ///< stream-ordered: released (done word) when this finishes
};

}  // namespace hetccl::rma
