// The collectives that move data without reducing: all_gather, broadcast, alltoall, alltoallv, sendrecv.
#include <vector>

#include "collective.hpp"
#include "data_pattern.hpp"

namespace hetccl::perf {
namespace {

hetcclDataType_t dtype(const RunContext& ctx) { return ctx.type.type; }

void fillMovementInput(const RunContext& ctx, void* send, size_t count) {
  fillElements(ctx.type, send, count, [&](size_t i) { return movementInput(ctx.rank, i); });
}

class AllGather final : public Collective {
 public:
  const char* name() const override { return "all_gather"; }
  double busFactor(int n) const override { return static_cast<double>(n - 1) / n; }
  Layout layout(size_t elements, int n) const override {
    const size_t perRank = elements / static_cast<size_t>(n);
    return {perRank, perRank * n, perRank, perRank, 0};
  }
  void fillInput(const RunContext& ctx, void* send, const Layout& l) const override {
    fillMovementInput(ctx, send, l.sendCount);
  }
  hetcclResult_t run(const RunContext& ctx, const void* send, void* recv, const Layout& l) const override {
    return hetcclAllGather(send, recv, l.paramCount, dtype(ctx), ctx.comm, ctx.stream);
  }
  size_t countWrong(const RunContext& ctx, const void* recv, const Layout& l) const override {
    const size_t block = l.paramCount;
    return countMismatches(ctx.type, recv, l.recvCount,
                           [&](size_t i) { return movementInput(static_cast<int>(i / block), i % block); });
  }
};

class Broadcast final : public Collective {
 public:
  const char* name() const override { return "broadcast"; }
  double busFactor(int) const override { return 1; }
  bool usesRoot() const override { return true; }
  Layout layout(size_t elements, int) const override { return {elements, elements, elements, 0, 0}; }
  void fillInput(const RunContext& ctx, void* send, const Layout& l) const override {
    fillMovementInput(ctx, send, l.sendCount);
  }
  hetcclResult_t run(const RunContext& ctx, const void* send, void* recv, const Layout& l) const override {
    return hetcclBroadcast(send, recv, l.paramCount, dtype(ctx), ctx.root, ctx.comm, ctx.stream);
  }
  size_t countWrong(const RunContext& ctx, const void* recv, const Layout& l) const override {
    return countMismatches(ctx.type, recv, l.recvCount, [&](size_t i) { return movementInput(ctx.root, i); });
  }
};

class Alltoall final : public Collective {
 public:
  const char* name() const override { return "alltoall"; }
  double busFactor(int n) const override { return static_cast<double>(n - 1) / n; }
  bool supportsInPlace() const override { return false; }
  Layout layout(size_t elements, int n) const override {
    const size_t block = elements / static_cast<size_t>(n);
    return {block * n, block * n, block, 0, 0};
  }
  void fillInput(const RunContext& ctx, void* send, const Layout& l) const override {
    fillMovementInput(ctx, send, l.sendCount);
  }
  hetcclResult_t run(const RunContext& ctx, const void* send, void* recv, const Layout& l) const override {
    return hetcclAlltoAll(send, recv, l.paramCount, dtype(ctx), ctx.comm, ctx.stream);
  }
  size_t countWrong(const RunContext& ctx, const void* recv, const Layout& l) const override {
    const size_t block = l.paramCount, mine = static_cast<size_t>(ctx.rank) * block;
    // Block p of the output is block `rank` of rank p's input.
    return countMismatches(ctx.type, recv, l.recvCount,
                           [&](size_t i) { return movementInput(static_cast<int>(i / block), mine + i % block); });
  }
};

/// alltoallv: blocks of `block` elements as alltoall, of which sender s sends variableCount(s, d) to d;
/// the rest of each receive block must keep its sentinel.
class Alltoallv final : public Collective {
 public:
  static size_t variableCount(int src, int dst, size_t block) {
    switch ((src + dst) % 3) {
      case 0: return block;
      case 1: return block / 2;
      default: return block / 4;
    }
  }
  const char* name() const override { return "alltoallv"; }
  double busFactor(int n) const override { return static_cast<double>(n - 1) / n; }
  bool supportsInPlace() const override { return false; }
  Layout layout(size_t elements, int n) const override {
    const size_t block = elements / static_cast<size_t>(n);
    return {block * n, block * n, block, 0, 0};
  }
  void fillInput(const RunContext& ctx, void* send, const Layout& l) const override {
    fillMovementInput(ctx, send, l.sendCount);
  }
  hetcclResult_t run(const RunContext& ctx, const void* send, void* recv, const Layout& l) const override {
    std::vector<size_t> sendCounts(ctx.nranks), recvCounts(ctx.nranks), displs(ctx.nranks);
    for (int p = 0; p < ctx.nranks; ++p) {
      sendCounts[p] = variableCount(ctx.rank, p, l.paramCount);
      recvCounts[p] = variableCount(p, ctx.rank, l.paramCount);
      displs[p] = static_cast<size_t>(p) * l.paramCount;
    }
    return hetcclAlltoAllv(send, sendCounts.data(), displs.data(), recv, recvCounts.data(), displs.data(), dtype(ctx),
                           ctx.comm, ctx.stream);
  }
  size_t countWrong(const RunContext& ctx, const void* recv, const Layout& l) const override {
    const size_t block = l.paramCount, mine = static_cast<size_t>(ctx.rank) * block;
    return countMismatches(ctx.type, recv, l.recvCount, [&](size_t i) {
      const int src = static_cast<int>(i / block);
      const size_t offset = i % block;
      return offset < variableCount(src, ctx.rank, block) ? movementInput(src, mine + offset) : kSentinel;
    });
  }
};

/// Each rank sends to rank+1 and receives from rank-1 (a ring shift) in one group.
class SendRecv final : public Collective {
 public:
  const char* name() const override { return "sendrecv"; }
  double busFactor(int) const override { return 1; }
  bool supportsInPlace() const override { return false; }
  Layout layout(size_t elements, int) const override { return {elements, elements, elements, 0, 0}; }
  void fillInput(const RunContext& ctx, void* send, const Layout& l) const override {
    fillMovementInput(ctx, send, l.sendCount);
  }
  hetcclResult_t run(const RunContext& ctx, const void* send, void* recv, const Layout& l) const override {
    const int next = (ctx.rank + 1) % ctx.nranks, prev = (ctx.rank + ctx.nranks - 1) % ctx.nranks;
    hetcclResult_t r = hetcclGroupStart();
    if (r != hetcclSuccess) return r;
    const hetcclResult_t s = hetcclSend(send, l.paramCount, dtype(ctx), next, ctx.comm, ctx.stream);
    const hetcclResult_t v = hetcclRecv(recv, l.paramCount, dtype(ctx), prev, ctx.comm, ctx.stream);
    r = hetcclGroupEnd();  // always closes the group, even after a failed enqueue
    return s != hetcclSuccess ? s : v != hetcclSuccess ? v : r;
  }
  size_t countWrong(const RunContext& ctx, const void* recv, const Layout& l) const override {
    const int prev = (ctx.rank + ctx.nranks - 1) % ctx.nranks;
    return countMismatches(ctx.type, recv, l.recvCount, [&](size_t i) { return movementInput(prev, i); });
  }
};

}  // namespace

std::unique_ptr<Collective> makeAllGather() { return std::make_unique<AllGather>(); }
std::unique_ptr<Collective> makeBroadcast() { return std::make_unique<Broadcast>(); }
std::unique_ptr<Collective> makeAlltoall() { return std::make_unique<Alltoall>(); }
std::unique_ptr<Collective> makeAlltoallv() { return std::make_unique<Alltoallv>(); }
std::unique_ptr<Collective> makeSendRecv() { return std::make_unique<SendRecv>(); }

}  // namespace hetccl::perf
