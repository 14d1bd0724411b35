// Call stamps through the engine over the in-memory transport: a message of another call is an error
// naming both calls; correct programs (point-to-point grouped differently on each side, groups of
// collectives and sends) pass; stampGroup's numbering.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algo/planner.hpp"
#include "core/error.hpp"
#include "exec/host/call_stamps.hpp"
#include "exec/host/run_group.hpp"
#include "unit/engine/harness.hpp"

namespace hetccl::test {
namespace {

using algo::CollKind;
using algo::CollOp;

algo::Tuning smallChunks() {
  algo::Tuning t;
  t.algo = algo::AlgoChoice::Ring;
  t.chunkBytes = 64;
  return t;
}

CollOp op(CollKind kind, void* buf, size_t count, DataType type = DataType::Float32, int peerOrRoot = 0) {
  CollOp o;
  o.kind = kind;
  o.sendbuff = o.recvbuff = buf;
  o.count = count;
  o.type = type;
  o.peer = peerOrRoot;
  o.root = peerOrRoot;
  return o;
}

/// Each rank runs its list of groups in order over one communicator-like context (shared counters).
std::vector<std::exception_ptr> runPrograms(int n,
                                            const std::function<std::vector<std::vector<CollOp>>(int)>& program) {
  MemWorld world(n, /*eagerBytes=*/1024);  // buffered like shm and tcp: a stray send completes
  return runRanks(n, [&](int r) {
    auto links = world.linksFor(r);
    engine::CallSequence calls;
    engine::ExecContext ctx;
    ctx.timeoutMs = 5'000;
    ctx.calls = &calls;
    ctx.checkFailure = [&] {
      for (int p = 0; p < n; ++p)
        if (world.fabric().isDead(p)) throw PeerError(p, "", "peer failed");
    };
    try {
      for (const auto& group : program(r))
        engine::runGroup(algo::Topology::singleDomain(r, n), group, *links, ctx, smallChunks());
    } catch (...) {
      world.fabric().kill(r);  // as a failed communicator stops talking
      throw;
    }
  });
}

std::string messageOf(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  }
  return "";
}

TEST(EngineCallStamps, DifferentCollectivesFailNamingBoth) {
  std::vector<std::vector<float>> bufs(2, std::vector<float>(64, 1.0f));
  auto errors = runPrograms(2, [&](int r) {
    CollOp o = op(r == 0 ? CollKind::AllReduce : CollKind::Reduce, bufs[r].data(), 64);
    return std::vector<std::vector<CollOp>>{{o}};
  });
  bool named = false;
  for (const auto& e : errors) {
    if (!e) continue;  // the rank that only sent may finish: buffered sends complete (it fails on its next call)
    const std::string m = messageOf(e);
    named = named || (m.find("AllReduce #1 (256 B, float32, sum)") != std::string::npos &&
                      m.find("Reduce #1 (256 B, float32, sum, root 0)") != std::string::npos);
  }
  EXPECT_TRUE(named) << messageOf(errors[0]) << " / " << messageOf(errors[1]);
}

TEST(EngineCallStamps, UnreceivedSendIsNotTheNextCallsData) {
  std::vector<float> a(1, 1000.0f), b(1, 1.0f), c(1, 1.0f);
  auto errors = runPrograms(2, [&](int r) {
    std::vector<std::vector<CollOp>> groups;
    if (r == 0) groups.push_back({op(CollKind::Send, a.data(), 1, DataType::Float32, 1)});
    groups.push_back({op(CollKind::AllReduce, r == 0 ? b.data() : c.data(), 1)});
    return groups;
  });
  ASSERT_TRUE(errors[1]) << "rank 1 used the stray send as AllReduce data: " << c[0];
  EXPECT_NE(messageOf(errors[1]).find("rank 0 sent Send #1 (4 B, float32), this rank expected AllReduce #1"),
            std::string::npos)
      << messageOf(errors[1]);
}

TEST(EngineCallStamps, PointToPointMayBeGroupedDifferentlyOnEachSide) {
  std::vector<int32_t> src(40), dst(40, -1);
  for (int i = 0; i < 40; ++i) src[i] = i;
  std::vector<float> x(2, 1.0f);
  auto errors = runPrograms(2, [&](int r) {
    std::vector<std::vector<CollOp>> groups;
    if (r == 0) {  // three sends (the second in several chunks) and an AllReduce in one group
      groups.push_back({op(CollKind::Send, src.data(), 4, DataType::Int32, 1),
                        op(CollKind::Send, src.data() + 4, 32, DataType::Int32, 1),
                        op(CollKind::Send, src.data() + 36, 4, DataType::Int32, 1), op(CollKind::AllReduce, &x[0], 1)});
    } else {  // the AllReduce with the first receive, then the others alone
      groups.push_back({op(CollKind::AllReduce, &x[1], 1), op(CollKind::Recv, dst.data(), 4, DataType::Int32, 0)});
      groups.push_back({op(CollKind::Recv, dst.data() + 4, 32, DataType::Int32, 0)});
      groups.push_back({op(CollKind::Recv, dst.data() + 36, 4, DataType::Int32, 0)});
    }
    return groups;
  });
  rethrowFirst(errors);
  EXPECT_EQ(dst, src);
  EXPECT_EQ(x[0], 2.0f);
  EXPECT_EQ(x[1], 2.0f);
}

TEST(EngineCallStamps, StampGroupNumbersCallsAndPieces) {
  const algo::Tuning t = smallChunks();  // 16 float32 per chunk
  std::vector<float> buf(64);
  engine::CallSequence seq;
  // Rank 0 of 2: a send of 40 floats (3 chunks) to rank 1, twice.
  for (uint64_t call = 1; call <= 2; ++call) {
    std::vector<CollOp> group{op(CollKind::Send, buf.data(), 40, DataType::Float32, 1)};
    algo::Schedule s = algo::plan(algo::Topology::singleDomain(0, 2), group, t);
    auto stamps = engine::stampGroup(s, group, 0, t, seq);
    std::vector<uint32_t> pieces;
    for (size_t i = 0; i < s.steps.size(); ++i) {
      if (s.steps[i].kind != algo::StepKind::Send) continue;
      EXPECT_EQ(stamps[i].seq, call);
      EXPECT_EQ(stamps[i].bytes, 160u);
      EXPECT_EQ(stamps[i].kind, static_cast<uint8_t>(CollKind::Send));
      pieces.push_back(stamps[i].piece);
    }
    EXPECT_EQ(pieces, (std::vector<uint32_t>{0, 1, 2}));
  }
  EXPECT_EQ(seq.collectives, 0u);
  ASSERT_EQ(seq.sends.size(), 2u);
  EXPECT_EQ(seq.sends[1], 2u);
  // A collective counts once per group, whatever its messages.
  std::vector<CollOp> group{op(CollKind::AllReduce, buf.data(), 64)};
  algo::Schedule s = algo::plan(algo::Topology::singleDomain(0, 2), group, t);
  auto stamps = engine::stampGroup(s, group, 0, t, seq);
  EXPECT_EQ(seq.collectives, 1u);
  for (size_t i = 0; i < s.steps.size(); ++i) {
    if (s.steps[i].kind == algo::StepKind::Send) {
      EXPECT_EQ(stamps[i].seq, 1u);
    }
  }
}

}  // namespace
}  // namespace hetccl::test
