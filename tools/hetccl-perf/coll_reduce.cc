// The reducing collectives: all_reduce, reduce, reduce_scatter.
#include "collective.hpp"
#include "data_pattern.hpp"

namespace hetccl::perf {
namespace {

hetcclDataType_t dtype(const RunContext& ctx) { return ctx.type.type; }
bool narrow(const RunContext& ctx) { return needsNarrowInputs(ctx.type.type); }

void fillReductionInput(const RunContext& ctx, void* send, size_t count) {
  fillElements(ctx.type, send, count, [&](size_t i) { return reductionInput(ctx.op, ctx.rank, ctx.nranks, i, narrow(ctx)); });
}

class AllReduce final : public Collective {
 public:
  const char* name() const override { return "all_reduce"; }
  double busFactor(int n) const override { return 2.0 * (n - 1) / n; }
  bool usesOp() const override { return true; }
  Layout layout(size_t elements, int) const override { return {elements, elements, elements, 0, 0}; }
  void fillInput(const RunContext& ctx, void* send, const Layout& l) const override {
    fillReductionInput(ctx, send, l.sendCount);
  }
  hetcclResult_t run(const RunContext& ctx, const void* send, void* recv, const Layout& l) const override {
    return hetcclAllReduce(send, recv, l.paramCount, dtype(ctx), ctx.redOp, ctx.comm, ctx.stream);
  }
  size_t countWrong(const RunContext& ctx, const void* recv, const Layout& l) const override {
    return countMismatches(ctx.type, recv, l.recvCount, [&](size_t i) { return reductionResult(ctx.op, ctx.nranks, i, narrow(ctx)); });
  }
};

class Reduce final : public Collective {
 public:
  const char* name() const override { return "reduce"; }
  double busFactor(int) const override { return 1; }
  bool usesOp() const override { return true; }
  bool usesRoot() const override { return true; }
  Layout layout(size_t elements, int) const override { return {elements, elements, elements, 0, 0}; }
  void fillInput(const RunContext& ctx, void* send, const Layout& l) const override {
    fillReductionInput(ctx, send, l.sendCount);
  }
  hetcclResult_t run(const RunContext& ctx, const void* send, void* recv, const Layout& l) const override {
    return hetcclReduce(send, recv, l.paramCount, dtype(ctx), ctx.redOp, ctx.root, ctx.comm, ctx.stream);
  }
  size_t countWrong(const RunContext& ctx, const void* recv, const Layout& l) const override {
    if (ctx.rank != ctx.root) return 0;
    return countMismatches(ctx.type, recv, l.recvCount, [&](size_t i) { return reductionResult(ctx.op, ctx.nranks, i, narrow(ctx)); });
  }
};

class ReduceScatter final : public Collective {
 public:
  const char* name() const override { return "reduce_scatter"; }
  double busFactor(int n) const override { return static_cast<double>(n - 1) / n; }
  bool usesOp() const override { return true; }
  Layout layout(size_t elements, int n) const override {
    const size_t perRank = elements / static_cast<size_t>(n);
    return {perRank * n, perRank, perRank, 0, perRank};
  }
  void fillInput(const RunContext& ctx, void* send, const Layout& l) const override {
    fillReductionInput(ctx, send, l.sendCount);
  }
  hetcclResult_t run(const RunContext& ctx, const void* send, void* recv, const Layout& l) const override {
    return hetcclReduceScatter(send, recv, l.paramCount, dtype(ctx), ctx.redOp, ctx.comm, ctx.stream);
  }
  size_t countWrong(const RunContext& ctx, const void* recv, const Layout& l) const override {
    const size_t first = static_cast<size_t>(ctx.rank) * l.recvCount;
    return countMismatches(ctx.type, recv, l.recvCount,
                           [&](size_t i) { return reductionResult(ctx.op, ctx.nranks, first + i, narrow(ctx)); });
  }
};

}  // namespace

std::unique_ptr<Collective> makeAllReduce() { return std::make_unique<AllReduce>(); }
std::unique_ptr<Collective> makeReduce() { return std::make_unique<Reduce>(); }
std::unique_ptr<Collective> makeReduceScatter() { return std::make_unique<ReduceScatter>(); }

}  // namespace hetccl::perf
