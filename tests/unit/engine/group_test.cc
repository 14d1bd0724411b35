// Group fusion: one schedule for a mix of collectives and send/recv completes without deadlock and gives
// every operation its own exact result; and results are bitwise identical on every rank even when
// floating-point rounding depends on the summation order.
#include <gtest/gtest.h>

#include <cstring>

#include "exec/host/run_group.hpp"
#include "unit/algo/collective_case.hpp"
#include "unit/engine/harness.hpp"

namespace hetccl::test {
namespace {

using algo::AlgoChoice;
using algo::CollKind;
using algo::CollOp;

CollOp makeOp(CollKind kind, const void* send, void* recv, size_t count, int peerOrRoot = 0) {
  CollOp op;
  op.kind = kind;
  op.sendbuff = send;
  op.recvbuff = recv;
  op.count = count;
  op.type = DataType::Int32;
  op.peer = op.root = peerOrRoot;
  return op;
}

TEST(Group, MixedCollectivesAndSendRecvInOneGroup) {
  const std::vector<int> domains{0, 1, 2, 0, 2};  // 2+1+2, interleaved numbering
  const int n = static_cast<int>(domains.size());
  const size_t count = 3001, gatherCount = 77;
  for (size_t chunk : {size_t{256}, size_t{1} << 20}) {
    struct Bufs {
      std::vector<int32_t> ringIn, ringOut, skipIn, skipOut, reduce, gatherIn, gatherOut, bcast;
    };
    std::vector<Bufs> b(n);
    MemWorld world(n);
    auto errors = runRanks(n, [&](int r) {
      Bufs& x = b[r];
      x.ringIn.assign(count, 1000 * r);
      x.ringOut.assign(count, -1);
      x.skipIn.assign(5, 7 * r);
      x.skipOut.assign(5, -1);
      x.reduce.resize(count);
      for (size_t i = 0; i < count; ++i) x.reduce[i] = r + static_cast<int32_t>(i % 5);
      x.gatherIn.assign(gatherCount, r);
      x.gatherOut.assign(gatherCount * n, -1);
      x.bcast.assign(count, r == 3 ? 42 : 0);
      // Deliberately interleaved: p2p ops first in the call, collectives after; every rank the same order.
      std::vector<CollOp> group{
          makeOp(CollKind::Send, x.ringIn.data(), nullptr, count, (r + 1) % n),
          makeOp(CollKind::AllReduce, x.reduce.data(), x.reduce.data(), count),
          makeOp(CollKind::Recv, nullptr, x.ringOut.data(), count, (r + n - 1) % n),
          makeOp(CollKind::AllGather, x.gatherIn.data(), x.gatherOut.data(), gatherCount),
          makeOp(CollKind::Broadcast, x.bcast.data(), x.bcast.data(), count, 3),
          makeOp(CollKind::Send, x.skipIn.data(), nullptr, 5, (r + 2) % n),
          makeOp(CollKind::Recv, nullptr, x.skipOut.data(), 5, (r + n - 2) % n),
      };
      auto links = world.linksFor(r);
      algo::Tuning tuning;
      tuning.chunkBytes = chunk;
      engine::ExecContext ctx;
      ctx.timeoutMs = 10'000;
      engine::runGroup(algo::Topology{r, n, domains}, group, *links, ctx, tuning);
    });
    rethrowFirst(errors);
    const int32_t rankSum = n * (n - 1) / 2;
    for (int r = 0; r < n; ++r) {
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(b[r].ringOut[i], 1000 * ((r + n - 1) % n)) << r;
        ASSERT_EQ(b[r].reduce[i], rankSum + n * static_cast<int32_t>(i % 5)) << r << " " << i;
        ASSERT_EQ(b[r].bcast[i], 42);
      }
      for (size_t i = 0; i < 5; ++i) ASSERT_EQ(b[r].skipOut[i], 7 * ((r + n - 2) % n));
      for (size_t i = 0; i < gatherCount * n; ++i) ASSERT_EQ(b[r].gatherOut[i], static_cast<int32_t>(i / gatherCount));
    }
  }
}

/// Deterministic non-integer floats, so rounding depends on the order of the reduction.
float noise(int rank, size_t i) {
  uint32_t x = static_cast<uint32_t>(rank * 2654435761u) ^ static_cast<uint32_t>(i * 40503u + 12345u);
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return static_cast<float>(x % 100000) / 977.0f - 40.0f;
}

TEST(Group, AllReduceIsBitwiseIdenticalOnEveryRank) {
  for (const Layout& layout : standardLayouts()) {
    const int n = static_cast<int>(layout.domainOf.size());
    for (AlgoChoice algo : {AlgoChoice::Ring, AlgoChoice::Tree, AlgoChoice::RecursiveDoubling, AlgoChoice::Hier}) {
      for (RedOpKind op : {RedOpKind::Sum, RedOpKind::Avg, RedOpKind::PreMulSum, RedOpKind::Prod}) {
        for (DataType type : {DataType::Float32, DataType::Bfloat16}) {
          const size_t count = 1537, es = dataTypeSize(type);
          std::vector<std::vector<unsigned char>> data(n, std::vector<unsigned char>(count * es));
          MemWorld world(n);
          auto errors = runRanks(n, [&](int r) {
            for (size_t i = 0; i < count; ++i) {
              const float v = op == RedOpKind::Prod ? 1.0f + noise(r, i) / 400.0f : noise(r, i);
              if (type == DataType::Float32) {
                std::memcpy(&data[r][i * 4], &v, 4);
              } else {
                const uint16_t h = device::floatToBfloat16(v);
                std::memcpy(&data[r][i * 2], &h, 2);
              }
            }
            CollOp c = makeOp(CollKind::AllReduce, data[r].data(), data[r].data(), count);
            c.type = type;
            c.op.kind = op;
            const float scalar = 0.3f + static_cast<float>(r);
            if (type == DataType::Float32) {
              std::memcpy(c.op.scalar, &scalar, 4);
            } else {
              const uint16_t h = device::floatToBfloat16(scalar);
              std::memcpy(c.op.scalar, &h, 2);
            }
            auto links = world.linksFor(r);
            algo::Tuning tuning;
            tuning.algo = algo;
            tuning.chunkBytes = 512;
            engine::ExecContext ctx;
            ctx.timeoutMs = 10'000;
            engine::runGroup(algo::Topology{r, n, layout.domainOf}, {&c, 1}, *links, ctx, tuning);
          });
          rethrowFirst(errors);
          for (int r = 1; r < n; ++r)
            ASSERT_EQ(data[r], data[0]) << "layout " << layout.name << " algo " << algoChoiceName(algo) << " op "
                                        << redOpName(op) << " " << dataTypeName(type) << ": rank " << r
                                        << " differs from rank 0";
        }
      }
    }
  }
}

}  // namespace
}  // namespace hetccl::test
