// A simulated vendor collective library (NCCL / RCCL) for threads as ranks on the simulated GPU
// (sim_gpu.hpp), behind the domain::VendorCcl / DomainComm interfaces, so that the stream executor's
// domain collectives (algo::StepKind::DomainCollective) run for real without a GPU: data actually moves.
//
// Semantics are NCCL's: allReduce, reduceScatter (in place: recv == send + rank * recvCount), allGather
// (in place: send == recv + rank * sendCount), broadcast (send read on the root only), reduce (only the
// root's recv written), send / recv (the k-th send from A to B meets B's k-th receive from A), group calls
// (every call of a group is launched at the outermost groupEnd, so a group's sends and receives never
// wait for each other). Operators over every DataType with the library's host kernels
// (device/host/reduce.hpp), contributions reduced in domain rank order: Sum, Prod, Max, Min; PreMulSum
// (each member's input times its own scalar, then summed); Avg exactly as NCCL's hostToDevRedOp: integers
// summed then divided by the domain size (truncating), floating types PreMulSum by 1/size rounded to the
// type (float(1.0/size) for float16, bfloat16 and fp8, then rounded again).
//
// Timing is a GPU's: a call is queued on its stream and takes effect only when the device executes it.
// A member's stream first *arrives* at the call (every earlier operation of that stream done), then waits
// until every participant arrived (the device never blocks: sim_gpu.hpp's enqueueHostOp); the first member
// to go on reads every member's input and computes every output, and each member's output is written when
// its own stream goes on. Calls of a communicator are matched by their number in call order (send / recv
// by their number per ordered pair); members whose calls differ (kind, count, type, operator, root) make
// the later caller's call throw InvalidUsage naming both calls, and the communicator is broken: its
// queued calls finish without writing anything, later calls and checkAsyncError() throw the same error.
// No graph capture: a call on a capturing stream throws.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "domain/base/vendor_ccl.hpp"

namespace hetccl::test::sim {

/// Every call a domain communicator takes (counters, messages).
enum class VendorCall : uint8_t { AllReduce, ReduceScatter, AllGather, Broadcast, Reduce, Send, Recv };
inline constexpr int kVendorCalls = 7;
const char* vendorCallName(VendorCall c) noexcept;  // "allReduce", ...

/// While on, a communicator of one member writes the last element of an Avg or PreMulSum reduction wrong
/// (bits flipped), as NCCL 2.28.9's single-rank path does for odd counts of 8-byte types
/// (bench/results/gpu_h100_2026-11-24_rccl/single_rank_nccl.txt). Process-wide; off by default.
void emulateSingleRankScalingDefect(bool on) noexcept;

/// What one member queued so far. bytes: the data the call handles on this member, its larger buffer
/// (allGather: size() * sendCount elements; reduceScatter: size() * recvCount; the others: count), as the
/// stream executor counts StreamExecutor::Traffic::domainCollectiveBytes.
struct VendorCounters {
  std::array<uint64_t, kVendorCalls> calls{}, bytes{};
  uint64_t completed = 0;  ///< of those calls, the ones the device finished (or released after a failure)

  uint64_t of(VendorCall c) const { return calls[static_cast<int>(c)]; }
  uint64_t bytesOf(VendorCall c) const { return bytes[static_cast<int>(c)]; }
  uint64_t totalCalls() const;
  uint64_t totalBytes() const;
};

struct CommState;  // shared by the members of one communicator (sim_vendor.cc)

/// One member of a simulated vendor communicator.
class SimDomainComm : public domain::DomainComm {
 public:
  SimDomainComm(std::shared_ptr<CommState> state, int rank, int size);
  /// destroy() unless abort() or destroy() ran (errors ignored, as a destructor must).
  ~SimDomainComm() override;

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }

  void allReduce(const void* send, void* recv, size_t count, DataType type, const ReduceOp& op,
                 domain::Stream stream) override;
  void reduceScatter(const void* send, void* recv, size_t recvCount, DataType type, const ReduceOp& op,
                     domain::Stream stream) override;
  void allGather(const void* send, void* recv, size_t sendCount, DataType type, domain::Stream stream) override;
  void broadcast(const void* send, void* recv, size_t count, DataType type, int root, domain::Stream stream) override;
  void reduce(const void* send, void* recv, size_t count, DataType type, const ReduceOp& op, int root,
              domain::Stream stream) override;
  void send(const void* buf, size_t count, DataType type, int peer, domain::Stream stream) override;
  void recv(void* buf, size_t count, DataType type, int peer, domain::Stream stream) override;
  /// The library's per-thread groups (SimVendorCcl::groupStart / groupEnd).
  void groupStart() override;
  void groupEnd() override;

  /// Throws the communicator's failure (a mismatch between members: InvalidUsage; a member's abort:
  /// PeerError) if any.
  void checkAsyncError() override;
  /// Releases every queued call of every member (they finish without writing); the others' later calls
  /// and checkAsyncError() throw PeerError naming this domain rank.
  void abort() noexcept override;
  /// Waits (HETCCL_TIMEOUT) until the device finished this member's queued calls, then throws the
  /// communicator's failure if any. Idempotent.
  void destroy() override;

  /// This member's counters (a copy).
  VendorCounters counters() const;
  /// The communicator's number in this process (distinct for every createComm).
  uint64_t id() const noexcept;

  struct Issued;  // one call as made (sim_vendor.cc)

 private:
  void issue(Issued call, domain::Stream stream);
  void requireUsable() const;

  std::shared_ptr<CommState> state_;
  const int rank_, size_;
  uint64_t nextCollective_ = 0;                 // collectives called so far (their matching number)
  std::vector<uint64_t> sentTo_, receivedFrom_;  // sends / receives called so far, per peer
  std::atomic<bool> finished_{false};            // abort() or destroy() ran (abort: from any thread)
};

/// The process's simulated vendor library. createComm is collective over the members: members[0] makes a
/// fresh id (a process-wide number) and sends it through the bootstrap as the NCCL adaptor does
/// (domain/nccl/id_exchange.hpp); members find each other in a process-wide registry under that id, so
/// two communicators created one after the other on the same members are distinct. It does not wait for
/// the other members (calls wait on the device instead). Thread-safe; group state is per thread, as NCCL's.
class SimVendorCcl : public domain::VendorCcl {
 public:
  std::string describe() const override;
  /// 22800: it behaves as NCCL 2.28 (fp8, PreMulSum).
  int version() const noexcept override { return 22800; }
  /// Throws InvalidArgument for bad members (as the NCCL adaptor) and InvalidUsage for a vendorConfig.
  std::unique_ptr<domain::DomainComm> createComm(bootstrap::Bootstrap& bootstrap, const std::vector<int>& members,
                                                 const void* vendorConfig = nullptr) override;
  void groupStart() override;
  /// Launches the calls of the outermost group; InvalidUsage without a matching groupStart.
  void groupEnd() override;
};

}  // namespace hetccl::test::sim
