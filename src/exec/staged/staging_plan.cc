#include "exec/staged/staging_plan.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace hetccl {
namespace {

using algo::CollKind;

struct Access {
  uintptr_t begin, end;
  bool read, written, fullyWritten;
};

size_t maxExtent(const std::vector<size_t>& counts, const std::vector<size_t>& displs) {
  size_t end = 0;
  for (size_t i = 0; i < counts.size() && i < displs.size(); ++i)
    if (counts[i]) end = std::max(end, displs[i] + counts[i]);
  return end;
}

void addAccesses(const algo::CollOp& op, int rank, int nranks, std::vector<Access>& out) {
  const size_t es = dataTypeSize(op.type), n = op.count * es, all = n * static_cast<size_t>(nranks);
  auto add = [&](const void* p, size_t bytes, bool read, bool written, bool full) {
    if (p && bytes) out.push_back({reinterpret_cast<uintptr_t>(p), reinterpret_cast<uintptr_t>(p) + bytes, read, written, full});
  };
  switch (op.kind) {
    case CollKind::AllReduce: add(op.sendbuff, n, true, false, false); add(op.recvbuff, n, false, true, true); break;
    case CollKind::Broadcast:
      if (rank == op.root) add(op.sendbuff, n, true, false, false);
      add(op.recvbuff, n, false, true, true);
      break;
    case CollKind::Reduce:
      add(op.sendbuff, n, true, false, false);
      if (rank == op.root) add(op.recvbuff, n, false, true, true);
      break;
    case CollKind::AllGather: add(op.sendbuff, n, true, false, false); add(op.recvbuff, all, false, true, true); break;
    case CollKind::ReduceScatter: add(op.sendbuff, all, true, false, false); add(op.recvbuff, n, false, true, true); break;
    case CollKind::AllToAll: add(op.sendbuff, all, true, false, false); add(op.recvbuff, all, false, true, true); break;
    case CollKind::AllToAllv:
      add(op.sendbuff, maxExtent(op.sendcounts, op.sdispls) * es, true, false, false);
      add(op.recvbuff, maxExtent(op.recvcounts, op.rdispls) * es, false, true, false);  // gaps stay untouched
      break;
    case CollKind::Send: add(op.sendbuff, n, true, false, false); break;
    case CollKind::Recv: add(op.recvbuff, n, false, true, true); break;
  }
}

}  // namespace

StagingPlan StagingPlan::build(std::span<const algo::CollOp> ops, int rank, int nranks) {
  std::vector<Access> acc;
  for (const auto& op : ops) addAccesses(op, rank, nranks, acc);
  std::sort(acc.begin(), acc.end(), [](const Access& a, const Access& b) { return a.begin < b.begin; });
  StagingPlan plan;
  for (size_t i = 0; i < acc.size();) {
    StagingRegion r{acc[i].begin, 0, 0, false, false, 0};
    uintptr_t end = acc[i].end;
    bool read = false, written = false, allFull = true;
    size_t j = i;
    // Only overlapping ranges merge: two buffers that merely touch may be separate allocations, and a
    // copy must never span two allocations.
    for (; j < acc.size() && acc[j].begin < end; ++j) {
      end = std::max(end, acc[j].end);
      read |= acc[j].read;
      written |= acc[j].written;
      if (acc[j].written && !acc[j].fullyWritten) allFull = false;
    }
    // A region must come in unless every byte of it is overwritten: written ranges alone, all full (they
    // overlap one another, so they cover the region without gaps).
    bool onlyFullWrites = !read && allFull;
    r.bytes = end - r.device;
    r.copyIn = !onlyFullWrites;
    r.copyOut = written;
    r.hostOffset = plan.hostBytes;
    plan.hostBytes += (r.bytes + 255) / 256 * 256;
    plan.regions.push_back(r);
    i = j;
  }
  return plan;
}

const void* StagingPlan::map(const void* device, void* hostBase) const {
  if (!device) return nullptr;
  auto p = reinterpret_cast<uintptr_t>(device);
  for (const auto& r : regions)
    if (p >= r.device && p <= r.device + r.bytes) return static_cast<char*>(hostBase) + r.hostOffset + (p - r.device);
  return device;  // not a staged range (zero-length buffer): passed through unchanged, never dereferenced
}

std::vector<algo::CollOp> StagingPlan::translate(std::span<const algo::CollOp> ops, void* hostBase) const {
  std::vector<algo::CollOp> out(ops.begin(), ops.end());
  for (auto& op : out) {
    op.sendbuff = map(op.sendbuff, hostBase);
    op.recvbuff = const_cast<void*>(map(op.recvbuff, hostBase));
  }
  return out;
}

}  // namespace hetccl
