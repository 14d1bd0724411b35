#include "exec/host/call_stamps.hpp"

#include <algorithm>
#include <optional>

#include "algo/op_context.hpp"
#include "core/error.hpp"

namespace hetccl::engine {
namespace {

using algo::CollKind;
using algo::CollOp;
using algo::StepKind;
using transport::CallStamp;

bool isP2p(CollKind k) { return k == CollKind::Send || k == CollKind::Recv; }
bool isReducing(CollKind k) {
  return k == CollKind::AllReduce || k == CollKind::Reduce || k == CollKind::ReduceScatter;
}
bool isRooted(CollKind k) { return k == CollKind::Broadcast || k == CollKind::Reduce; }

/// The stamp every collective message of the group carries (piece 0); nullopt without collectives.
std::optional<CallStamp> collectiveStamp(std::span<const CollOp> group, uint64_t seq) {
  std::optional<CallStamp> stamp;
  for (const CollOp& op : group) {
    if (isP2p(op.kind)) continue;
    const auto kind = static_cast<uint8_t>(op.kind);
    const auto type = static_cast<uint8_t>(op.type);
    const uint8_t red = isReducing(op.kind) ? static_cast<uint8_t>(op.op.kind) : transport::kNoOp;
    const int32_t root = isRooted(op.kind) ? op.root : -1;
    const uint64_t bytes = op.kind == CollKind::AllToAllv ? 0 : op.count * dataTypeSize(op.type);
    if (!stamp) {
      stamp = CallStamp{kind, type, red, seq, bytes, 0, root};
      continue;
    }
    if (stamp->kind != kind) stamp->kind = transport::kCallKindGroup;
    if (stamp->type != type) stamp->type = transport::kNoType;
    if (stamp->op != red) stamp->op = transport::kNoOp;
    if (stamp->root != root) stamp->root = -1;
    stamp->bytes += bytes;
  }
  return stamp;
}

/// Per peer and direction: the stamps of the point-to-point messages, in order.
struct P2pMessages {
  std::vector<std::vector<CallStamp>> send, recv;
};

P2pMessages p2pStamps(std::span<const CollOp> group, int rank, const algo::Tuning& tuning, CallSequence& seq,
                      size_t nranks) {
  P2pMessages out;
  out.send.resize(nranks);
  out.recv.resize(nranks);
  for (const CollOp& op : group) {
    if (!isP2p(op.kind) || op.peer == rank) continue;  // self send/recv is a local copy
    const bool send = op.kind == CollKind::Send;
    std::vector<uint64_t>& counters = send ? seq.sends : seq.recvs;
    const auto peer = static_cast<size_t>(op.peer);
    if (counters.size() <= peer) counters.resize(peer + 1, 0);
    const size_t elem = dataTypeSize(op.type);
    CallStamp s{static_cast<uint8_t>(CollKind::Send),
                static_cast<uint8_t>(op.type),
                transport::kNoOp,
                ++counters[peer],
                op.count * elem,
                0,
                -1};
    const size_t chunks = algo::chunkCount(op.count, tuning.chunkElems(elem));
    std::vector<CallStamp>& list = (send ? out.send : out.recv)[peer];
    for (size_t c = 0; c < chunks; ++c, ++s.piece) list.push_back(s);
  }
  return out;
}

}  // namespace

std::vector<CallStamp> stampGroup(const algo::Schedule& schedule, std::span<const CollOp> group, int rank,
                                  const algo::Tuning& tuning, CallSequence& seq) {
  bool anyP2p = false;
  int maxPeer = rank;
  for (const CollOp& op : group) {
    anyP2p = anyP2p || isP2p(op.kind);
    maxPeer = std::max(maxPeer, op.peer);
  }
  for (const algo::Step& st : schedule.steps) maxPeer = std::max(maxPeer, st.peer);
  const size_t nranks = static_cast<size_t>(maxPeer) + 1;

  std::optional<CallStamp> coll = collectiveStamp(group, seq.collectives + 1);
  if (coll) ++seq.collectives;
  // Per connection (2 * peer + direction): messages seen so far and, with point-to-point operations,
  // how many of its messages are collective ones (the planner puts those first).
  std::vector<size_t> seen(2 * nranks, 0), collectiveMessages;
  P2pMessages p2p;
  if (anyP2p) {
    p2p = p2pStamps(group, rank, tuning, seq, nranks);
    collectiveMessages.assign(2 * nranks, 0);
    for (const algo::Step& st : schedule.steps)
      if (st.kind == StepKind::Send || st.kind == StepKind::Recv || st.kind == StepKind::RecvReduce)
        ++collectiveMessages[2 * st.peer + (st.kind == StepKind::Send ? 0 : 1)];
    for (size_t c = 0; c < collectiveMessages.size(); ++c) {
      const size_t mine = (c % 2 == 0 ? p2p.send : p2p.recv)[c / 2].size();
      if (collectiveMessages[c] < mine || (collectiveMessages[c] > mine && !coll))
        throw InternalError(concat("engine: rank ", rank, "'s schedule has ", collectiveMessages[c], " messages ",
                                   c % 2 == 0 ? "to" : "from", " rank ", c / 2, " but its group needs ", mine,
                                   " point-to-point ones", coll ? "" : " and no collective ones"));
      collectiveMessages[c] -= mine;
    }
  }

  std::vector<CallStamp> stamps(schedule.steps.size());
  for (size_t i = 0; i < schedule.steps.size(); ++i) {
    const algo::Step& st = schedule.steps[i];
    if (st.kind != StepKind::Send && st.kind != StepKind::Recv && st.kind != StepKind::RecvReduce) continue;
    const size_t c = 2 * static_cast<size_t>(st.peer) + (st.kind == StepKind::Send ? 0 : 1);
    const size_t index = seen[c]++;
    if (!anyP2p || index < collectiveMessages[c]) {
      if (!coll) throw InternalError(concat("engine: rank ", rank, "'s schedule has a message for no operation"));
      stamps[i] = *coll;
      stamps[i].piece = static_cast<uint32_t>(index);
    } else {
      stamps[i] = (c % 2 == 0 ? p2p.send : p2p.recv)[c / 2][index - collectiveMessages[c]];
    }
  }
  return stamps;
}

}  // namespace hetccl::engine
