// DomainComm over one communicator of a dlopened NCCL/RCCL: every call is translated (types, ops,
// PreMulSum scalars) and forwarded to the library's function of the same meaning, then checked.
#pragma once

#include <atomic>
#include <mutex>
#include <memory>
#include <string>

#include "domain/base/vendor_ccl.hpp"
#include "domain/nccl/nccl_library.hpp"

namespace hetccl::domain::nccl {

/// NCCL's datatype for a hetccl DataType (explicit table); throws InvalidArgument outside the enum.
abi::ncclDataType_t toNcclType(DataType type);
/// NCCL's built-in operator for Sum..Avg; throws InvalidArgument for PreMulSum (it needs a comm) and
/// for values outside the enum.
abi::ncclRedOp_t toNcclBuiltinOp(RedOpKind kind);

class NcclComm final : public DomainComm {
 public:
  /// Takes ownership of `comm` (a communicator of `lib`), this rank being `rank` of `size`.
  NcclComm(std::shared_ptr<const NcclLibrary> lib, abi::ncclComm_t comm, int rank, int size);
  ~NcclComm() override;
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  void allReduce(const void* send, void* recv, size_t count, DataType type, const ReduceOp& op,
                 Stream stream) override;
  void reduceScatter(const void* send, void* recv, size_t recvCount, DataType type, const ReduceOp& op,
                     Stream stream) override;
  void allGather(const void* send, void* recv, size_t sendCount, DataType type, Stream stream) override;
  void broadcast(const void* send, void* recv, size_t count, DataType type, int root, Stream stream) override;
  void reduce(const void* send, void* recv, size_t count, DataType type, const ReduceOp& op, int root,
              Stream stream) override;
  void send(const void* buf, size_t count, DataType type, int peer, Stream stream) override;
  void recv(void* buf, size_t count, DataType type, int peer, Stream stream) override;
  void groupStart() override;
  void groupEnd() override;
  void checkAsyncError() override;
  void abort() noexcept override;
  void destroy() override;

  /// The vendor communicator handle (nullptr after abort/destroy), for diagnostics and tests.
  abi::ncclComm_t native() const noexcept { return comm_.load(std::memory_order_acquire); }

 private:
  class ScopedOp;  // a built-in op, or a PreMulSum op created for one call and destroyed after it

  /// The live vendor communicator; throws InvalidUsage after abort() / destroy().
  abi::ncclComm_t live(const char* call) const;
  /// "NCCL domain rank r of n" for messages (built once: every vendor call passes it to check()).
  const std::string& where() const noexcept { return where_; }

  std::shared_ptr<const NcclLibrary> lib_;
  std::atomic<abi::ncclComm_t> comm_;
  std::mutex asyncMu_;  // checkAsyncError (watchdog thread) against abort: never ask a freed vendor comm
  int rank_;
  int size_;
  std::string where_;
};

}  // namespace hetccl::domain::nccl
