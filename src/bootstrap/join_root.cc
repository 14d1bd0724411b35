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

/// Waits for the root's answer on an authenticated connection that carried our descriptor.
Frame awaitAnswer(const JoinContext& ctx, const net::Socket& s, const std::string& root) {
  uint32_t maxPayload = static_cast<uint32_t>(
      std::min<uint64_t>(kMaxFramePayload, std::max<uint64_t>(kMaxErrorBytes, uint64_t(ctx.nranks) * kDescriptorBytes)));
  FrameReader reader(maxPayload);
  while (true) {
    if (!ctx.waitReadable(s.fd(), concat("waiting for every rank to join at ", root)))
      throw TimeoutError(-1, "", concat("rank ", ctx.rank, ": not every rank joined at ", root,
                                        " before the deadline (HETCCL_TIMEOUT or the init deadline)"));
    if (auto f = reader.readFrom(s, root)) return std::move(*f);
  }
}

}  // namespace

std::vector<RankDescriptor> joinRoot(const JoinContext& ctx, const RankDescriptor& self) {
  const std::string root = concat("rendezvous root at ", ctx.id.root.toString());
  std::vector<unsigned char> descriptor = encodeDescriptor(self);
  std::string lastRejection;
  while (true) {
    net::Socket s = ctx.connect(ctx.id.root, root);
    bool sent = false;
    try {
      authenticateAsClient(s, ctx.id.secret, Purpose::Root, ctx.rank, -1, ctx.deadline, root);
      sendFrame(s, FrameType::Descriptor, 0, descriptor, ctx.deadline, root);
      sent = true;
      Frame answer = awaitAnswer(ctx, s, root);
      if (answer.type == FrameType::Error) {
        if (answer.payload.size() > kMaxErrorBytes) throw PeerError(-1, "", concat(root, " sent an oversized error"));
        throw InvalidUsage(std::string(answer.payload.begin(), answer.payload.end()));
      }
      if (answer.type != FrameType::Table)
        throw PeerError(-1, "", concat(root, " answered with frame type ", int(answer.type)));
      return decodeTable(ctx, answer, root);
    } catch (const TimeoutError&) {
      throw;
    } catch (const PeerError& e) {
      if (sent) throw PeerError(-1, "", concat("rank ", ctx.rank, ": ", e.what(), " (the root closed the connection before answering)"));
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
}

}  // namespace hetccl::bootstrap
