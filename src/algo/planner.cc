#include "algo/planner.hpp"

#include <deque>

#include "algo/collectives.hpp"
#include "algo/op_context.hpp"
#include "algo/selection.hpp"
#include "core/error.hpp"

namespace hetccl::algo {
namespace {

bool isP2p(CollKind k) { return k == CollKind::Send || k == CollKind::Recv; }

bool isReducing(CollKind k) {
  return k == CollKind::AllReduce || k == CollKind::Reduce || k == CollKind::ReduceScatter;
}

void validate(const Topology& topo, const CollOp& op, size_t index) {
  auto fail = [&](const std::string& what) {
    throw InvalidArgument(concat(collKindName(op.kind), " (operation ", index, " of the group) on rank ", topo.rank,
                                 ": ", what));
  };
  if (!isValidDataType(static_cast<int>(op.type))) fail(concat("invalid data type ", static_cast<int>(op.type)));
  if (isReducing(op.kind) &&
      (static_cast<int>(op.op.kind) < 0 || static_cast<int>(op.op.kind) > static_cast<int>(RedOpKind::PreMulSum)))
    fail(concat("invalid reduction operator ", static_cast<int>(op.op.kind)));
  if ((op.kind == CollKind::Broadcast || op.kind == CollKind::Reduce) && (op.root < 0 || op.root >= topo.nranks))
    fail(concat("root ", op.root, " is not a rank of ", topo.nranks));
  if (isP2p(op.kind) && (op.peer < 0 || op.peer >= topo.nranks))
    fail(concat("peer ", op.peer, " is not a rank of ", topo.nranks));
  if (op.kind == CollKind::AllToAllv) {
    const size_t n = static_cast<size_t>(topo.nranks);
    if (op.sendcounts.size() != n || op.sdispls.size() != n || op.recvcounts.size() != n || op.rdispls.size() != n)
      fail(concat("sendcounts/sdispls/recvcounts/rdispls need ", n, " entries each"));
  }
}

/// Send/recv: chunked like the peer's matching call. Self-sends pair with self-receives in call order.
/// With the vendor library inside the domains, those with members of this rank's domain go in one vendor
/// exchange, in call order.
void planP2p(ScheduleBuilder& b, const Topology& topo, const Tuning& tuning, std::span<const CollOp> group) {
  std::deque<const CollOp*> selfSends, selfRecvs;
  const bool vendor = vendorHier(topo, tuning);
  const std::vector<int> domainMembers = topo.membersOf(topo.domainOf[topo.rank]);
  std::vector<DomainTransfer> transfers;
  for (const CollOp& op : group) {
    if (!isP2p(op.kind)) continue;
    const size_t elem = dataTypeSize(op.type), chunk = tuning.chunkElems(elem);
    if (op.peer == topo.rank) {
      (op.kind == CollKind::Send ? selfSends : selfRecvs).push_back(&op);
      continue;
    }
    if (vendor && topo.domainOf[op.peer] == topo.domainOf[topo.rank]) {
      const bool send = op.kind == CollKind::Send;
      transfers.push_back({send, static_cast<int>(positionOf(domainMembers, op.peer)),
                           send ? Location::user(op.sendbuff) : Location::user(op.recvbuff), op.count * elem});
      continue;
    }
    forEachChunk(Range{0, op.count}, chunk, [&](Range c) {
      if (op.kind == CollKind::Send) {
        b.send(op.peer, Location::user(op.sendbuff) + c.begin * elem, c.len * elem);
      } else {
        b.recv(op.peer, Location::user(op.recvbuff) + c.begin * elem, c.len * elem);
      }
    });
  }
  b.domainExchange(transfers);
  if (selfSends.size() != selfRecvs.size())
    throw InvalidArgument(concat("rank ", topo.rank, " has ", selfSends.size(), " sends to itself but ",
                                 selfRecvs.size(), " receives from itself in one group"));
  for (size_t i = 0; i < selfSends.size(); ++i) {
    const CollOp &s = *selfSends[i], &r = *selfRecvs[i];
    const size_t bytes = s.count * dataTypeSize(s.type);
    if (bytes != r.count * dataTypeSize(r.type))
      throw InvalidArgument(concat("rank ", topo.rank, ": send to itself of ", bytes, " bytes meets a receive of ",
                                   r.count * dataTypeSize(r.type), " bytes"));
    b.copy(Location::user(r.recvbuff), Location::user(s.sendbuff), bytes);
  }
}

void planCollective(const OpContext& ctx) {
  switch (ctx.op.kind) {
    case CollKind::AllReduce: return planAllReduce(ctx);
    case CollKind::Broadcast: return planBroadcast(ctx);
    case CollKind::Reduce: return planReduce(ctx);
    case CollKind::AllGather: return planAllGather(ctx);
    case CollKind::ReduceScatter: return planReduceScatter(ctx);
    case CollKind::AllToAll:
    case CollKind::AllToAllv: return planAllToAll(ctx);
    case CollKind::Send:
    case CollKind::Recv: break;
  }
}

}  // namespace

Schedule plan(const Topology& topology, std::span<const CollOp> group, const Tuning& tuning) {
  topology.validate();
  for (size_t i = 0; i < group.size(); ++i) validate(topology, group[i], i);
  ScheduleBuilder builder;
  for (const CollOp& op : group) {
    if (isP2p(op.kind)) continue;
    Reduction red{op.type, op.op, static_cast<uint64_t>(topology.nranks)};
    const uint32_t index = builder.addReduction(red);
    OpContext ctx{builder, topology, tuning, op, dataTypeSize(op.type), index};
    planCollective(ctx);
  }
  planP2p(builder, topology, tuning, group);
  return builder.finish();
}

}  // namespace hetccl::algo
