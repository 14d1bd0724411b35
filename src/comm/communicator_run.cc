// Running a group: host-buffer groups on the host executor (exec/host/host_executor.hpp), to completion;
// device-buffer groups handed to the device executor (device_executor.hpp), which queues them on the
// caller's stream.
#include "comm/communicator.hpp"
#include "exec/base/device_executor.hpp"
#include "exec/host/host_executor.hpp"

namespace hetccl {

void Communicator::checkUsable() const {
  if (finalized_) throw InvalidUsage("communicator was finalized; only hetcclCommDestroy may follow");
  if (aborted_.load()) throw AbortedError("communicator was aborted");
  if (asyncError() != Result::Success) {
    std::lock_guard<std::mutex> lock(mu_);
    throw Error(asyncError(), concat("communicator failed earlier: ", errorMessage_));
  }
}

void Communicator::run(std::span<const algo::CollOp> ops, void* stream) {
  checkUsable();
  if (!isDeviceGroup(ops)) return hostExec_->enqueue(ops, nullptr);  // reports its failures through fail()
  if (!executor_) throw InternalError(concat("rank ", rank(), ": device buffers, but no device executor"));
  executor_->enqueue(ops, stream);  // a GPU rank always has one; it reports failures through fail()
}

bool Communicator::isDeviceGroup(std::span<const algo::CollOp> ops) const {
  if (!gpu_) return false;
  int device = 0, host = 0;
  const void* last = nullptr;  // an in-place call's buffer (sendbuff == recvbuff) is queried once
  bool lastOnDevice = false;
  auto classify = [&](const void* p) {
    if (!p) return;
    if (p != last) {
      int memType = HETCCL_GPU_MEM_HOST, dev = -1;
      if (gpu_->pointerQuery(p, &memType, &dev) != HETCCL_GPU_OK) memType = HETCCL_GPU_MEM_HOST;
      last = p;
      lastOnDevice = memType == HETCCL_GPU_MEM_DEVICE || memType == HETCCL_GPU_MEM_MANAGED;
    }
    (lastOnDevice ? device : host)++;
  };
  for (const auto& op : ops) {
    classify(op.sendbuff);
    classify(op.recvbuff);
  }
  if (device && host)
    throw InvalidArgument(concat("rank ", rank(), ": a group mixes device and host buffers (", device, " device, ",
                                 host, " host); use one kind per group"));
  return device > 0;
}

}  // namespace hetccl
