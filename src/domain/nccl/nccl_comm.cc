#include "domain/nccl/nccl_comm.hpp"

#include "core/error.hpp"
#include "core/log.hpp"

namespace hetccl::domain::nccl {

abi::ncclDataType_t toNcclType(DataType type) {
  switch (type) {  // ncclDataType_t values (nccl.h)
    case DataType::Int8: return 0;
    case DataType::Uint8: return 1;
    case DataType::Int32: return 2;
    case DataType::Uint32: return 3;
    case DataType::Int64: return 4;
    case DataType::Uint64: return 5;
    case DataType::Float16: return 6;
    case DataType::Float32: return 7;
    case DataType::Float64: return 8;
    case DataType::Bfloat16: return 9;
    case DataType::Float8e4m3: return 10;
    case DataType::Float8e5m2: return 11;
  }
  throw InvalidArgument(concat("data type ", static_cast<int>(type), " has no vendor equivalent"));
}

abi::ncclRedOp_t toNcclBuiltinOp(RedOpKind kind) {
  switch (kind) {  // ncclRedOp_t values (nccl.h)
    case RedOpKind::Sum: return 0;
    case RedOpKind::Prod: return 1;
    case RedOpKind::Max: return 2;
    case RedOpKind::Min: return 3;
    case RedOpKind::Avg: return 4;
    case RedOpKind::PreMulSum: break;
  }
  throw InvalidArgument(concat("reduction operator ", static_cast<int>(kind), " is not a vendor built-in"));
}

/// The vendor operator for one call. PreMulSum becomes an operator created with this rank's scalar
/// (host-immediate: the library copies the value at creation) and destroyed when the call has returned,
/// which NCCL allows ("as soon as the last call given that operator returns").
class NcclComm::ScopedOp {
 public:
  ScopedOp(const NcclComm& owner, abi::ncclComm_t comm, const ReduceOp& op, DataType type) : owner_(owner) {
    if (op.kind != RedOpKind::PreMulSum) {
      op_ = toNcclBuiltinOp(op.kind);
      return;
    }
    const NcclApi& api = owner.lib_->api();
    if (!api.redOpCreatePreMulSum)
      throw InvalidUsage(concat(owner.lib_->describe(), " has no ncclRedOpCreatePreMulSum (needs NCCL >= 2.11): ",
                                "PreMulSum cannot run inside the domain [", owner.where(), "]"));
    unsigned char scalar[sizeof op.scalar];
    std::copy(std::begin(op.scalar), std::end(op.scalar), scalar);
    owner.lib_->check(api.redOpCreatePreMulSum(&op_, scalar, toNcclType(type), abi::ncclScalarHostImmediate, comm),
                      "ncclRedOpCreatePreMulSum", owner.where());
    comm_ = comm;
  }
  ~ScopedOp() {
    if (!comm_) return;
    abi::ncclResult_t r = owner_.lib_->api().redOpDestroy(op_, comm_);
    if (r != abi::ncclSuccess) HETCCL_WARN(log::kColl, "ncclRedOpDestroy failed (", static_cast<int>(r), ") [", owner_.where(), "]");
  }
  ScopedOp(const ScopedOp&) = delete;
  ScopedOp& operator=(const ScopedOp&) = delete;
  abi::ncclRedOp_t get() const { return op_; }

 private:
  const NcclComm& owner_;
  abi::ncclComm_t comm_ = nullptr;  // set when op_ was created here
  abi::ncclRedOp_t op_ = 0;
};

NcclComm::NcclComm(std::shared_ptr<const NcclLibrary> lib, abi::ncclComm_t comm, int rank, int size)
    : lib_(std::move(lib)),
      comm_(comm),
      rank_(rank),
      size_(size),
      where_(concat(lib_->flavor().name, " domain rank ", rank_, " of ", size_)) {}

NcclComm::~NcclComm() {
  try {
    destroy();
  } catch (const std::exception& e) {
    HETCCL_WARN(log::kInit, "destroying the domain communicator failed: ", e.what());
  }
}

abi::ncclComm_t NcclComm::live(const char* call) const {
  abi::ncclComm_t c = comm_.load(std::memory_order_acquire);
  if (!c) throw InvalidUsage(concat(call, " on a domain communicator that was aborted or destroyed [", where(), "]"));
  return c;
}

void NcclComm::allReduce(const void* send, void* recv, size_t count, DataType type, const ReduceOp& op,
                         Stream stream) {
  abi::ncclComm_t c = live("ncclAllReduce");
  ScopedOp vop(*this, c, op, type);
  lib_->check(lib_->api().allReduce(send, recv, count, toNcclType(type), vop.get(), c, stream), "ncclAllReduce",
              where());
}

void NcclComm::reduceScatter(const void* send, void* recv, size_t recvCount, DataType type, const ReduceOp& op,
                             Stream stream) {
  abi::ncclComm_t c = live("ncclReduceScatter");
  ScopedOp vop(*this, c, op, type);
  lib_->check(lib_->api().reduceScatter(send, recv, recvCount, toNcclType(type), vop.get(), c, stream),
              "ncclReduceScatter", where());
}

void NcclComm::allGather(const void* send, void* recv, size_t sendCount, DataType type, Stream stream) {
  abi::ncclComm_t c = live("ncclAllGather");
  lib_->check(lib_->api().allGather(send, recv, sendCount, toNcclType(type), c, stream), "ncclAllGather", where());
}

void NcclComm::broadcast(const void* send, void* recv, size_t count, DataType type, int root, Stream stream) {
  abi::ncclComm_t c = live("ncclBroadcast");
  lib_->check(lib_->api().broadcast(send, recv, count, toNcclType(type), root, c, stream), "ncclBroadcast", where());
}

void NcclComm::reduce(const void* send, void* recv, size_t count, DataType type, const ReduceOp& op, int root,
                      Stream stream) {
  abi::ncclComm_t c = live("ncclReduce");
  ScopedOp vop(*this, c, op, type);
  lib_->check(lib_->api().reduce(send, recv, count, toNcclType(type), vop.get(), root, c, stream), "ncclReduce",
              where());
}

void NcclComm::send(const void* buf, size_t count, DataType type, int peer, Stream stream) {
  abi::ncclComm_t c = live("ncclSend");
  lib_->check(lib_->api().send(buf, count, toNcclType(type), peer, c, stream), "ncclSend", where());
}

void NcclComm::recv(void* buf, size_t count, DataType type, int peer, Stream stream) {
  abi::ncclComm_t c = live("ncclRecv");
  lib_->check(lib_->api().recv(buf, count, toNcclType(type), peer, c, stream), "ncclRecv", where());
}

void NcclComm::groupStart() { lib_->check(lib_->api().groupStart(), "ncclGroupStart", where()); }

void NcclComm::groupEnd() { lib_->check(lib_->api().groupEnd(), "ncclGroupEnd", where()); }

void NcclComm::checkAsyncError() {
  std::lock_guard<std::mutex> lock(asyncMu_);
  abi::ncclComm_t c = live("ncclCommGetAsyncError");
  if (!lib_->api().commGetAsyncError) return;
  abi::ncclResult_t async = abi::ncclSuccess;
  lib_->check(lib_->api().commGetAsyncError(c, &async), "ncclCommGetAsyncError", where());
  if (async != abi::ncclSuccess && async != abi::ncclInProgress)
    lib_->check(async, "asynchronous operation", where());
}

void NcclComm::abort() noexcept {
  std::lock_guard<std::mutex> lock(asyncMu_);
  abi::ncclComm_t c = comm_.exchange(nullptr, std::memory_order_acq_rel);
  if (!c) return;
  abi::ncclResult_t r = lib_->api().commAbort(c);
  if (r != abi::ncclSuccess) HETCCL_WARN(log::kInit, "ncclCommAbort failed (", static_cast<int>(r), ") [", where(), "]");
}

void NcclComm::destroy() {
  abi::ncclComm_t c;
  {
    std::lock_guard<std::mutex> lock(asyncMu_);
    c = comm_.exchange(nullptr, std::memory_order_acq_rel);
  }
  if (!c) return;
  const NcclApi& api = lib_->api();
  if (api.commFinalize) {
    abi::ncclResult_t r = api.commFinalize(c);
    if (r != abi::ncclSuccess) {
      api.commAbort(c);  // a communicator that cannot finalize is released by abort
      lib_->check(r, "ncclCommFinalize", where());
    }
  }
  lib_->check(api.commDestroy(c), "ncclCommDestroy", where());
}

}  // namespace hetccl::domain::nccl
