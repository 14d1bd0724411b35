// One measured collective of hetccl-perf: how its buffers are laid out for a size, how its inputs are
// filled, how it is called through the public C API, and how its output is checked. Layouts, sizes and
// bus-bandwidth factors follow nccl-tests (doc/PERFORMANCE.md there).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "hetccl/hetccl.h"
#include "perf_options.hpp"

namespace hetccl::perf {

/// Buffers of one rank for one size, in elements.
struct Layout {
  size_t sendCount = 0;   ///< elements of the send buffer
  size_t recvCount = 0;   ///< elements of the receive buffer
  size_t paramCount = 0;  ///< the count argument of the call (per rank or per block)
  /// In place, as nccl-tests: sendbuff = buffer + sendInPlaceOffset * rank, recvbuff = buffer +
  /// recvInPlaceOffset * rank, within one buffer of max(sendCount, recvCount) elements.
  size_t sendInPlaceOffset = 0;
  size_t recvInPlaceOffset = 0;
};

/// Everything a collective needs to run on one rank.
struct RunContext {
  hetcclComm_t comm = nullptr;
  int rank = 0;
  int nranks = 1;
  int root = 0;
  TypeSpec type{};
  OpKind op = OpKind::Sum;
  hetcclRedOp_t redOp = hetcclSum;  ///< the handle to pass (a PreMulSum op is created per communicator)
  hetcclStream_t stream = nullptr;  ///< passed to every call (a CUDA / HIP stream with device buffers, else null)
};

class Collective {
 public:
  virtual ~Collective() = default;
  /// nccl-tests' name, e.g. "all_reduce".
  virtual const char* name() const = 0;
  /// busbw = algbw * busFactor(nranks).
  virtual double busFactor(int nranks) const = 0;
  virtual bool usesOp() const { return false; }
  virtual bool usesRoot() const { return false; }
  /// False where the API defines no in-place form (alltoall, alltoallv, sendrecv): those columns show N/A.
  virtual bool supportsInPlace() const { return true; }
  /// Buffers for a message of `elements` elements in total (rounded down as nccl-tests does).
  virtual Layout layout(size_t elements, int nranks) const = 0;
  /// Writes this rank's inputs into `send` (sendCount elements). The receive buffer already holds sentinels.
  virtual void fillInput(const RunContext& ctx, void* send, const Layout& layout) const = 0;
  /// Issues the collective on ctx.stream (send may alias recv in place). Returns the library's result; on
  /// device buffers the call returns once queued, so the caller synchronises the stream.
  virtual hetcclResult_t run(const RunContext& ctx, const void* send, void* recv, const Layout& layout) const = 0;
  /// Elements of this rank's output that differ from the expected values (0 where this rank has none).
  virtual size_t countWrong(const RunContext& ctx, const void* recv, const Layout& layout) const = 0;
};

/// The collective of that name; throws std::invalid_argument for an unknown one.
std::unique_ptr<Collective> makeCollective(const std::string& name);

// Factories of the two families (coll_reduce.cc, coll_move.cc).
std::unique_ptr<Collective> makeAllReduce();
std::unique_ptr<Collective> makeReduce();
std::unique_ptr<Collective> makeReduceScatter();
std::unique_ptr<Collective> makeAllGather();
std::unique_ptr<Collective> makeBroadcast();
std::unique_ptr<Collective> makeAlltoall();
std::unique_ptr<Collective> makeAlltoallv();
std::unique_ptr<Collective> makeSendRecv();

}  // namespace hetccl::perf
