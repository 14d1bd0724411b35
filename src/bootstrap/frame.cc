#include "bootstrap/frame.hpp"

#include <cstring>

#include "bootstrap/wire.hpp"
#include "core/error.hpp"

namespace hetccl::bootstrap {

std::vector<unsigned char> encodeFrame(FrameType type, uint32_t tag, const unsigned char* payload, size_t bytes) {
  if (bytes > kMaxFramePayload)
    throw InvalidArgument(concat("bootstrap message of ", bytes, " bytes exceeds the limit of ", kMaxFramePayload));
  std::vector<unsigned char> out(kFrameHeaderBytes + bytes);
  wire::putU32(out.data(), kFrameMagic);
  wire::putU16(out.data() + 4, kFrameVersion);
  wire::putU16(out.data() + 6, static_cast<uint16_t>(type));
  wire::putU32(out.data() + 8, tag);
  wire::putU32(out.data() + 12, static_cast<uint32_t>(bytes));
  if (bytes) std::memcpy(out.data() + kFrameHeaderBytes, payload, bytes);
  return out;
}

std::string checkFrameHeader(const unsigned char* h, uint32_t maxPayload) {
  if (wire::getU32(h) != kFrameMagic) return "bad frame magic";
  if (uint16_t v = wire::getU16(h + 4); v != kFrameVersion)
    return concat("frame version ", v, " (this build speaks ", kFrameVersion, ")");
  uint16_t type = wire::getU16(h + 6);
  if (type < static_cast<uint16_t>(FrameType::Descriptor) || type > static_cast<uint16_t>(FrameType::Notice))
    return concat("unknown frame type ", type);
  if (uint32_t len = wire::getU32(h + 12); len > maxPayload)
    return concat("frame payload of ", len, " bytes exceeds the limit of ", maxPayload);
  return "";
}

std::optional<Frame> FrameReader::readFrom(const net::Socket& s, const std::string& peer) {
  while (true) {
    if (headerHave_ < kFrameHeaderBytes) {
      size_t n = s.recvSome(header_ + headerHave_, kFrameHeaderBytes - headerHave_, peer);
      if (n == 0) return std::nullopt;
      headerHave_ += n;
      if (headerHave_ < kFrameHeaderBytes) continue;
      if (std::string err = checkFrameHeader(header_, maxPayload_); !err.empty())
        throw PeerError(-1, "", concat(peer, " sent an invalid bootstrap frame: ", err));
      frame_.type = static_cast<FrameType>(wire::getU16(header_ + 6));
      frame_.tag = wire::getU32(header_ + 8);
      frame_.payload.assign(wire::getU32(header_ + 12), 0);
      payloadHave_ = 0;
    }
    if (payloadHave_ < frame_.payload.size()) {
      size_t n = s.recvSome(frame_.payload.data() + payloadHave_, frame_.payload.size() - payloadHave_, peer);
      if (n == 0) return std::nullopt;
      payloadHave_ += n;
      if (payloadHave_ < frame_.payload.size()) continue;
    }
    headerHave_ = 0;
    return std::move(frame_);
  }
}

void sendFrame(const net::Socket& s, FrameType type, uint32_t tag, const std::vector<unsigned char>& payload,
               Deadline deadline, const std::string& peer) {
  std::vector<unsigned char> bytes = encodeFrame(type, tag, payload.data(), payload.size());
  s.sendAll(bytes.data(), bytes.size(), deadline, peer);
}

Frame recvFrame(const net::Socket& s, uint32_t maxPayload, Deadline deadline, const std::string& peer) {
  unsigned char header[kFrameHeaderBytes];
  s.recvAll(header, sizeof header, deadline, peer);
  if (std::string err = checkFrameHeader(header, maxPayload); !err.empty())
    throw PeerError(-1, "", concat(peer, " sent an invalid bootstrap frame: ", err));
  Frame f;
  f.type = static_cast<FrameType>(wire::getU16(header + 6));
  f.tag = wire::getU32(header + 8);
  f.payload.resize(wire::getU32(header + 12));
  s.recvAll(f.payload.data(), f.payload.size(), deadline, peer);
  return f;
}

}  // namespace hetccl::bootstrap
