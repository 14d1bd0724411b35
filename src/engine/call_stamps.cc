#include "engine/call_stamps.hpp"

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
bool isReducing(CollKind k) { return k == CollKind::AllReduce || k == CollKind::Reduce || k == CollKind::ReduceScatter; }
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
    CallStamp s{static_cast<uint8_t>(CollKind::Send), static_cast<uint8_t>(op.type), transport::kNoOp,
                ++counters[peer], op.count * elem, 0, -1};
    const size_t chunks = algo::chunkCount(op.count, tuning.chunkElems(elem));
    std::vector<CallStamp>& list = (send ? out.send : out.recv)[peer];
    for (size_t c = 0; c < chunks; ++c, ++s.piece) list.push_back(s);
  }
  return out;
}

}  // namespace

std::vector<CallStamp> stampGroup(const algo::Schedule& schedule, std::span<const CollOp> group, int rank,
                                  const algo::Tuning& tuning, CallSequence& seq) {
  int maxPeer = rank;
  for (const CollOp& op : group) maxPeer = std::max(maxPeer, op.peer);
  for (const algo::Step& st : schedule.steps) maxPeer = std::max(maxPeer, st.peer);
  const size_t nranks = static_cast<size_t>(maxPeer) + 1;

  std::optional<CallStamp> coll = collectiveStamp(group, seq.collectives + 1);
  if (coll) ++seq.collectives;
  P2pMessages p2p = p2pStamps(group, rank, tuning, seq, nranks);

  // Messages per connection; the last p2p-many of them are the point-to-point ones.
  std::vector<size_t> total[2] = {std::vector<size_t>(nranks, 0), std::vector<size_t>(nranks, 0)};
  for (const algo::Step& st : schedule.steps)
    if (st.kind == StepKind::Send || st.kind == StepKind::Recv || st.kind == StepKind::RecvReduce)
      ++total[st.kind == StepKind::Send ? 0 : 1][st.peer];
  std::vector<size_t> seen[2] = {std::vector<size_t>(nranks, 0), std::vector<size_t>(nranks, 0)};

  std::vector<CallStamp> stamps(schedule.steps.size());
  for (size_t i = 0; i < schedule.steps.size(); ++i) {
    const algo::Step& st = schedule.steps[i];
    if (st.kind != StepKind::Send && st.kind != StepKind::Recv && st.kind != StepKind::RecvReduce) continue;
    const int dir = st.kind == StepKind::Send ? 0 : 1;
    const auto peer = static_cast<size_t>(st.peer);
    const std::vector<CallStamp>& mine = dir == 0 ? p2p.send[peer] : p2p.recv[peer];
    const size_t index = seen[dir][peer]++;
    const size_t collectiveMessages = total[dir][peer] - std::min(total[dir][peer], mine.size());
    if (total[dir][peer] < mine.size() || (index < collectiveMessages && !coll))
      throw InternalError(concat("engine: rank ", rank, "'s schedule has ", total[dir][peer], " messages ",
                                 dir == 0 ? "to" : "from", " rank ", peer, " but its group needs ", mine.size(),
                                 " point-to-point ones", coll ? "" : " and no collective ones"));
    if (index < collectiveMessages) {
      stamps[i] = *coll;
      stamps[i].piece = static_cast<uint32_t>(index);
    } else {
      stamps[i] = mine[index - collectiveMessages];
    }
  }
  return stamps;
}

}  // namespace hetccl::engine
