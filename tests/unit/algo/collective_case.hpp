// One collective test case run end to end: N threads as ranks over the mem transport, the real planner
// and engine, inputs of small integers (exact in every type and any summation order), and an exact
// reference computed here. Checks every rank's output bytes and that nothing past the output was written.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "algo/coll_op.hpp"
#include "algo/tuning.hpp"
#include "unit/engine/harness.hpp"

namespace hetccl::test {

/// A pseudo-collective for the matrix: a ring of Send + Recv in one group.
inline constexpr auto kSendRecvRing = static_cast<algo::CollKind>(100);

struct CollCase {
  Layout layout;
  algo::CollKind kind = algo::CollKind::AllReduce;
  size_t count = 0;
  DataType type = DataType::Float32;
  RedOpKind op = RedOpKind::Sum;
  bool inPlace = false;
  algo::AlgoChoice algo = algo::AlgoChoice::Auto;
  size_t chunkBytes = 4096;
  int root = 0;
  size_t eagerBytes = 0;  ///< mem transport: messages up to this size are buffered
  int round = 0;          ///< selects the inputs: every round's differ from the previous round's

  std::string describe() const;
};

/// Runs the case; returns "" when every rank's output is exact, else a description of the first mismatch
/// (or of the exception a rank threw).
std::string runCollCase(const CollCase& c);

/// Runs one rank's group (called on one thread per rank, all at once); throws on failure.
using GroupRunner = std::function<void(int rank, std::span<const algo::CollOp> group)>;
/// The same case and checks with another executor in place of the mem transport + host engine.
std::string runCollCaseWith(const CollCase& c, const GroupRunner& runGroup);

struct RankBuffers;

/// A case whose buffers stay put while its inputs change from round to round, for executors that keep
/// buffer addresses between runs (a captured CUDA graph replays the same addresses).
class CollCaseRounds {
 public:
  explicit CollCaseRounds(const CollCase& c);
  ~CollCaseRounds();
  CollCaseRounds(const CollCaseRounds&) = delete;
  CollCaseRounds& operator=(const CollCaseRounds&) = delete;

  const CollCase& collCase() const { return c_; }
  /// Rank r's group (the same buffers every round).
  std::span<const algo::CollOp> group(int rank) const;
  /// Writes round `round`'s inputs and garbage into the outputs (nothing may run on the buffers then).
  void refill(int round);
  /// "" when every rank's output is the current round's exact result, else the first difference.
  std::string check() const;

 private:
  CollCase c_;
  std::vector<std::unique_ptr<RankBuffers>> bufs_;
};

}  // namespace hetccl::test
