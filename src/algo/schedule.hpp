// A Schedule: what one rank does for one group of operations, as a list of steps with explicit
// dependencies. Pure data: no I/O, no pointers owned. The engine (src/exec/host) executes it.
//
// Semantics: executing the steps one by one in list order is correct; the dependencies say which
// earlier steps each step really waits for, so the engine may run independent steps concurrently.
// Every connection (one per peer and direction) is a FIFO byte stream: sends to a peer and receives
// from a peer are posted in list order, and both ranks' schedules list matching messages in the same
// order with the same sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/types.hpp"

namespace hetccl::algo {

/// Where a step's bytes are: a caller's buffer (absolute address) or the schedule's scratch area
/// (byte offset; the engine allocates Schedule::scratchBytes).
struct Location {
  enum class Space : uint8_t { User, Scratch };
  Space space = Space::User;
  uint64_t addr = 0;  ///< User: the address; Scratch: offset from the scratch base

  static Location user(const void* p) { return {Space::User, reinterpret_cast<uint64_t>(p)}; }
  static Location scratch(uint64_t offset) { return {Space::Scratch, offset}; }
  /// The location `bytes` further on.
  Location operator+(uint64_t bytes) const { return {space, addr + bytes}; }
  bool operator==(const Location&) const = default;
};

enum class StepKind : uint8_t {
  Send,        ///< send `bytes` from src to `peer`
  Recv,        ///< receive `bytes` from `peer` into dst
  RecvReduce,  ///< receive from `peer` and accumulate: dst = dst (op) incoming; dst holds the local value
  Copy,        ///< dst = src (`bytes`)
  Reduce,      ///< dst = dst (op) src, element-wise
  Scale,       ///< dst = src * this rank's PreMulSum scalar (dst may equal src)
  Divide,      ///< dst = dst / divisor (Avg, once after the full sum)
  /// A collective among the ranks of this rank's domain, run by the domain's vendor library (NCCL/RCCL)
  /// on device buffers; only planned when Topology::domainCollectives (see DomainColl).
  DomainCollective,
};
const char* stepKindName(StepKind k) noexcept;

/// The vendor collective of a DomainCollective step. `bytes` is the count the vendor call takes, in
/// bytes of the step's reduction type: the whole buffer (AllReduce, Broadcast, Reduce), the block each
/// domain rank receives (ReduceScatter: src holds domain-size blocks) or sends (AllGather: dst receives
/// domain-size blocks, in domain rank order). Broadcast / Reduce: `peer` is the root's *domain* rank.
/// Every member of the domain lists the same DomainCollective steps in the same order.
/// Exchange: sends and receives between domain members launched together (one vendor group), listed in
/// Schedule::transfers[transferBegin, transferEnd); `bytes` is their total.
enum class DomainColl : uint8_t { AllReduce, ReduceScatter, AllGather, Broadcast, Reduce, Exchange };

/// One send or receive of a DomainColl::Exchange step.
struct DomainTransfer {
  bool send = true;  ///< from `at` to `peer`, else from `peer` into `at`
  int peer = 0;      ///< domain rank
  Location at;
  uint64_t bytes = 0;
};
const char* domainCollName(DomainColl c) noexcept;

/// Element type, operator and Avg divisor a reducing step uses (indexes Schedule::reductions).
struct Reduction {
  DataType type = DataType::Uint8;
  ReduceOp op;
  uint64_t divisor = 1;  ///< number of contributions summed (Avg)
};

struct Step {
  StepKind kind = StepKind::Copy;
  int peer = -1;  ///< Send / Recv / RecvReduce; DomainCollective: the root's domain rank
  DomainColl domainColl = DomainColl::AllReduce;  ///< DomainCollective
  Location dst;   ///< Recv, RecvReduce, Copy, Reduce, Scale, Divide, DomainCollective
  Location src;   ///< Send, Copy, Reduce, Scale, DomainCollective
  uint64_t bytes = 0;
  uint32_t reduction = 0;  ///< index into Schedule::reductions (reducing steps; DomainCollective: its type)
  uint32_t depBegin = 0, depEnd = 0;  ///< range in Schedule::deps
  uint32_t transferBegin = 0, transferEnd = 0;  ///< DomainColl::Exchange: range in Schedule::transfers
};

struct Schedule {
  std::vector<Step> steps;
  std::vector<uint32_t> deps;  ///< indices of earlier steps; step i waits for deps[depBegin, depEnd)
  std::vector<Reduction> reductions;
  std::vector<DomainTransfer> transfers;  ///< of DomainColl::Exchange steps
  uint64_t scratchBytes = 0;

  std::span<const uint32_t> depsOf(const Step& s) const {
    return {deps.data() + s.depBegin, deps.data() + s.depEnd};
  }
  std::span<const DomainTransfer> transfersOf(const Step& s) const {
    return {transfers.data() + s.transferBegin, transfers.data() + s.transferEnd};
  }
};

}  // namespace hetccl::algo
