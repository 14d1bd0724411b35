// Rank side of the rendezvous: authenticate to the root, send our descriptor, read the answer.
#include <algorithm>
#include <thread>

#include "bootstrap/frame.hpp"
#include "bootstrap/handshake.hpp"
#include "bootstrap/join.hpp"
#include "core/log.hpp"

namespace hetccl::bootstrap {
namespace {

constexpr uint32_t kMaxErrorBytes = 4096;
constexpr int kRootAnswerGraceMs = 500;

std::vector<RankDescriptor> decodeTable(const JoinContext& ctx, const Frame& f, const std::string& root) {
  if (f.payload.size() != static_cast<size_t>(ctx.nranks) * kDescriptorBytes)
    throw PeerError(-1, "", concat(root, " sent a table of ", f.payload.size(), " bytes for ", ctx.nranks, " ranks"));
  std::vector<RankDescriptor> table;
  for (int r = 0; r < ctx.nranks; ++r) {
    RankDescriptor d = decodeDescriptor(f.payload.data() + r * kDescriptorBytes, kDescriptorBytes);
    if (d.info.rank != r || d.nranks != ctx.nranks || d.info.protocolVersion != kProtocolVersion)
      throw PeerError(-1, "", concat(root, " sent an inconsistent table entry ", r));
    table.push_back(std::move(d));
  }
  return table;
}

/// Waits for the root's answer on an authenticated connection that carried our descriptor. At the
/// deadline the root names the ranks that never joined; its message may be a moment late (the root and
/// rank 0 share the deadline), so the wait goes on for up to kRootAnswerGraceMs for it.
Frame awaitAnswer(const JoinContext& ctx, const net::Socket& s, const std::string& root) {
  uint32_t maxPayload = static_cast<uint32_t>(
      std::min<uint64_t>(kMaxFramePayload, std::max<uint64_t>(kMaxErrorBytes, uint64_t(ctx.nranks) * kDescriptorBytes)));
  FrameReader reader(maxPayload);
  while (ctx.waitReadable(s.fd(), concat("waiting for every rank to join at ", root)))
    if (auto f = reader.readFrom(s, root)) return std::move(*f);
  JoinContext grace = ctx;
  grace.deadline = Deadline::afterMs(kRootAnswerGraceMs);
  while (grace.waitReadable(s.fd(), concat("waiting for every rank to join at ", root)))
    if (auto f = reader.readFrom(s, root)) return std::move(*f);
  throw TimeoutError(-1, "", concat("rank ", ctx.rank, ": not every rank joined at ", root,
                                    " before the deadline (HETCCL_TIMEOUT or the init deadline)"));
}

/// "rank 0's rendezvous root at 1.2.3.4:5" when rank 0 runs it (launcher ids), so that a dead or missing
/// rank 0 is named as such; "the rendezvous root at ..." otherwise (it runs where the id was made).
std::string rootName(const UniqueId& id) {
  return concat(id.rank0StartsRoot ? "rank 0's rendezvous root at " : "the rendezvous root at ", id.root.toString());
}

}  // namespace

std::vector<RankDescriptor> joinRoot(const JoinContext& ctx, const RankDescriptor& self) {
  const std::string root = rootName(ctx.id);
  std::vector<unsigned char> descriptor = encodeDescriptor(self);
  std::string lastRejection;
  const int rootRank = ctx.id.rank0StartsRoot ? 0 : -1;  // the rank whose process runs the root, if known
  Frame answer;
  while (true) {
    net::Socket s;
    try {
      s = ctx.connect(ctx.id.root, root);
    } catch (const TimeoutError& e) {  // nothing listens there: under a launcher, rank 0 has not started
      throw TimeoutError(rootRank, "", e.what());
    }
    bool sent = false;
    try {
      authenticateAsClient(s, ctx.id.secret, Purpose::Root, ctx.rank, -1, ctx.deadline, root);
      sendFrame(s, FrameType::Descriptor, 0, descriptor, ctx.deadline, root);
      sent = true;
      answer = awaitAnswer(ctx, s, root);
      break;
    } catch (const TimeoutError&) {
      throw;
    } catch (const PeerError& e) {
      if (sent)
        throw PeerError(rootRank, "", concat("rank ", ctx.rank, ": ", e.what(), " (the root closed the connection before answering)"));
      // Closed during the handshake: the root dropped us (wrong secret, or too many pending clients). Retry
      // until the deadline; a wrong secret ends in a timeout that says so.
      lastRejection = e.what();
      HETCCL_INFO(log::kBootstrap, "rank ", ctx.rank, ": ", root, " closed the handshake; retrying");
      if (ctx.deadline.expired())
        throw TimeoutError(-1, "", concat("rank ", ctx.rank, ": ", root, " kept closing the authentication handshake (",
                                          lastRejection, "); does every rank use the same unique id?"));
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(50, ctx.deadline.remainingMs())));
    }
  }
  if (answer.type == FrameType::Error) {
    if (answer.payload.size() > kMaxErrorBytes) throw PeerError(rootRank, "", concat(root, " sent an oversized error"));
    std::string message(answer.payload.begin(), answer.payload.end());
    const int culprit = static_cast<int>(answer.tag & kErrorRankMask);
    const uint32_t why = answer.tag & ~kErrorRankMask;
    if (why == kErrorRankMissing && culprit < ctx.nranks) throw TimeoutError(culprit, "", message);
    if (why == kErrorRankFailed && culprit < ctx.nranks) throw PeerError(culprit, "", message);
    throw InvalidUsage(message);
  }
  if (answer.type != FrameType::Table) throw PeerError(rootRank, "", concat(root, " answered with frame type ", int(answer.type)));
  return decodeTable(ctx, answer, root);
}

}  // namespace hetccl::bootstrap
