// Local registrations, imported remote registrations and requests: the objects behind the C handles.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/deadline.hpp"
#include "core/result.hpp"
#include "rma/descriptor.hpp"
#include "rma/piece_plan.hpp"
#include "rma/region_table.hpp"

namespace hetccl::rma {

class RmaService;

/// A local registration (hetcclMem_t).
struct LocalMem {
  std::shared_ptr<RmaService> service;
  unsigned char* base = nullptr;
  uint64_t bytes = 0;
  MemKind kind = MemKind::Host;
  RegionRef ref;
  DescriptorBytes descriptor{};
  std::atomic<int> pending{0};  ///< requests that use it and are not finished
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
  Deadline deadline{Clock::time_point{}};
  State state = State::Pending;
  Result code = Result::Success;
  std::string message;
};

}  // namespace hetccl::rma
