#include "exec/base/call_check.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace hetccl {
namespace {

// Fixed-size description of a group: the first kMaxOps collectives plus their total number.
constexpr int kMaxOps = 4;
struct OpSig {
  int32_t kind, type, op, root;
  uint64_t count;
};
struct GroupSig {
  int32_t numCollectives;
  int32_t pad;
  OpSig ops[kMaxOps];
};

std::string describe(const GroupSig& g) {
  if (g.numCollectives == 0) return "no collective";
  std::string s;
  for (int i = 0; i < g.numCollectives && i < kMaxOps; ++i) {
    const OpSig& o = g.ops[i];
    if (i) s += ", ";
    s += concat(algo::collKindName(static_cast<algo::CollKind>(o.kind)), " of ", o.count, " ",
                dataTypeName(static_cast<DataType>(o.type)));
    if (o.op >= 0) s += concat(" ", redOpName(static_cast<RedOpKind>(o.op)));
    if (o.root >= 0) s += concat(" root ", o.root);
  }
  if (g.numCollectives > kMaxOps) s += concat(" and ", g.numCollectives - kMaxOps, " more");
  return s;
}

GroupSig signature(std::span<const algo::CollOp> ops) {
  GroupSig g;
  std::memset(&g, 0, sizeof g);
  for (const auto& op : ops) {
    using algo::CollKind;
    if (op.kind == CollKind::Send || op.kind == CollKind::Recv) continue;
    if (g.numCollectives < kMaxOps) {
      const bool reduces = op.kind == CollKind::AllReduce || op.kind == CollKind::Reduce || op.kind == CollKind::ReduceScatter;
      const bool rooted = op.kind == CollKind::Broadcast || op.kind == CollKind::Reduce;
      g.ops[g.numCollectives] = {static_cast<int32_t>(op.kind), static_cast<int32_t>(op.type),
                                 reduces ? static_cast<int32_t>(op.op.kind) : -1, rooted ? op.root : -1,
                                 op.kind == CollKind::AllToAllv ? 0 : op.count};
    }
    ++g.numCollectives;
  }
  return g;
}

}  // namespace

bool hasCollective(std::span<const algo::CollOp> ops) {
  for (const auto& op : ops)
    if (op.kind != algo::CollKind::Send && op.kind != algo::CollKind::Recv) return true;
  return false;
}

void checkCallsAgree(bootstrap::Bootstrap& boot, std::span<const algo::CollOp> ops) {
  std::vector<GroupSig> all(boot.size());
  all[boot.rank()] = signature(ops);
  boot.allGather(all.data(), sizeof(GroupSig));
  for (int r = 1; r < boot.size(); ++r)
    if (std::memcmp(&all[r], &all[0], sizeof(GroupSig)) != 0)
      throw InvalidUsage(concat("ranks disagree on the call: rank 0 called ", describe(all[0]), ", rank ", r,
                                " called ", describe(all[r]), " (HETCCL_CHECK_CALLS)"));
}

}  // namespace hetccl
