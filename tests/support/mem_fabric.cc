#include "support/mem_fabric.hpp"

#include "core/error.hpp"

namespace hetccl::transport::mem {

Fabric::Fabric(int nranks, size_t eagerBytes)
    : nranks_(nranks), eagerBytes_(eagerBytes), dead_(std::make_unique<std::atomic<bool>[]>(nranks)) {
  if (nranks < 1) throw InvalidArgument(concat("mem fabric: nranks ", nranks, " < 1"));
  channels_.reserve(static_cast<size_t>(nranks) * nranks);
  for (int i = 0; i < nranks * nranks; ++i) channels_.push_back(std::make_unique<Channel>());
  for (int r = 0; r < nranks; ++r) dead_[r].store(false);
}

void Fabric::kill(int rank) {
  if (rank < 0 || rank >= nranks_) throw InvalidArgument(concat("mem fabric: cannot kill rank ", rank));
  dead_[rank].store(true, std::memory_order_release);
}

}  // namespace hetccl::transport::mem
