#include "user_stream_work.hpp"

#include <chrono>
#include <cstring>
#include <thread>

#include "core/error.hpp"
#include "sim_gpu.hpp"

namespace hetccl::test {
namespace {

using algo::CollKind;

constexpr unsigned char kGarbled = 0x5A;

size_t span(const std::vector<size_t>& counts, const std::vector<size_t>& displs) {
  size_t end = 0;
  for (size_t p = 0; p < counts.size() && p < displs.size(); ++p) end = std::max(end, displs[p] + counts[p]);
  return end;
}

}  // namespace

Extents extentsOf(const algo::CollOp& op, int nranks) {
  const size_t es = dataTypeSize(op.type), one = op.count * es, all = one * static_cast<size_t>(nranks);
  switch (op.kind) {
    case CollKind::AllGather: return {one, all};
    case CollKind::ReduceScatter: return {all, one};
    case CollKind::AllToAll: return {all, all};
    case CollKind::AllToAllv:
      return {span(op.sendcounts, op.sdispls) * es, span(op.recvcounts, op.rdispls) * es};
    case CollKind::Send: return {one, 0};
    case CollKind::Recv: return {0, one};
    default: return {one, one};  // AllReduce, Broadcast, Reduce
  }
}

UserStreamWork::UserStreamWork(void* stream, std::span<const algo::CollOp> group, int nranks)
    : stream_(stream), group_(group), nranks_(nranks) {
  void* gate = nullptr;
  check(sim::plugin().allocPinned(&gate, 64), "allocPinned(gate)");
  gate_ = static_cast<uint64_t*>(gate);
  __atomic_store_n(gate_, 0, __ATOMIC_RELEASE);
  check(sim::plugin().streamWaitFlag(stream_, gate_, 1, 0), "streamWaitFlag(gate)");
  for (const algo::CollOp& op : group_) {
    const size_t bytes = extentsOf(op, nranks_).sendBytes;
    if (!bytes || !op.sendbuff) continue;
    const auto* in = static_cast<const unsigned char*>(op.sendbuff);
    inputs_.push_back({const_cast<void*>(op.sendbuff), std::vector<unsigned char>(in, in + bytes)});
  }
  for (Region& r : inputs_) std::memset(r.at, kGarbled, r.copy.size());  // all first: inputs may overlap
  for (Region& r : inputs_)
    check(sim::plugin().memcpyAsync(r.at, r.copy.data(), r.copy.size(), stream_), "memcpyAsync(input on the user stream)");
}

void UserStreamWork::afterCall() {
  for (const algo::CollOp& op : group_) {
    const size_t bytes = extentsOf(op, nranks_).recvBytes;
    if (bytes && op.recvbuff) outputs_.push_back({op.recvbuff, std::vector<unsigned char>(bytes)});
  }
  for (Region& r : outputs_)
    check(sim::plugin().memcpyAsync(r.copy.data(), r.at, r.copy.size(), stream_), "memcpyAsync(output on the user stream)");
  // Give a group that does not wait for the user's stream time to start on the garbled inputs.
  std::this_thread::sleep_for(std::chrono::microseconds(300));
  __atomic_store_n(gate_, 1, __ATOMIC_RELEASE);
}

void UserStreamWork::finish() {
  check(sim::plugin().streamSynchronize(stream_), "streamSynchronize(user stream)");
  for (Region& r : outputs_) std::memcpy(r.at, r.copy.data(), r.copy.size());
}

UserStreamWork::~UserStreamWork() {
  __atomic_store_n(gate_, 1, __ATOMIC_RELEASE);
  // Work still queued reads the gate and the regions: free them only once the stream is idle (a group
  // that failed is released by its executor, so this ends; if it does not, they are leaked).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (sim::plugin().streamQuery(stream_) != HETCCL_GPU_OK) {
    if (std::chrono::steady_clock::now() > until) {
      new std::vector<Region>(std::move(inputs_));
      new std::vector<Region>(std::move(outputs_));
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  sim::plugin().freePinned(gate_);
}

void UserStreamWork::check(int rc, const char* what) const {
  if (rc != HETCCL_GPU_OK)
    throw Error(Result::UnhandledCudaError, concat(sim::plugin().name, " ", what, ": ", sim::plugin().lastError()));
}

}  // namespace hetccl::test
