// Communicator::split: ranks with the same color form a new communicator over a child bootstrap that
// shares the parent's sockets.
#include <algorithm>

#include "comm/communicator.hpp"
#include "bootstrap/root_cause.hpp"

namespace hetccl {

std::unique_ptr<Communicator> Communicator::split(int color, int key, const CommOptions& options) {
  checkUsable();
  struct Entry {
    int32_t color, key;
  };
  std::vector<Entry> table(size());
  table[rank()] = {color < 0 ? -1 : color, key};
  try {
    boot_->allGather(table.data(), sizeof(Entry));
  } catch (const PeerError& e) {  // as the host executor does: tell the others which rank failed before leaving
    PeerError cause = bootstrap::rootCause(*boot_, e, &aborted_);
    boot_->reportFailure(cause);
    throw cause;
  }
  const uint32_t tag = ++splitCount_;  // every rank splits in the same order
  if (color < 0) return nullptr;
  std::vector<int> members;
  for (int r = 0; r < size(); ++r)
    if (table[r].color == color) members.push_back(r);
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return table[a].key < table[b].key; });
  std::shared_ptr<bootstrap::Bootstrap> child = boot_->split(members, tag);
  auto comm = std::unique_ptr<Communicator>(new Communicator(std::move(child), options, gpu_));
  comm->parentBoot_ = boot_;  // the child bootstrap shares the parent's sockets
  comm->serviceKey_ = serviceKey_;  // one job, one key (descriptors also name their communicator)
  return comm;
}

}  // namespace hetccl
