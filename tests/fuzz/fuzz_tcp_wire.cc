// Fuzz target: what a tcp peer hands over: the listener's address Handle (through the bootstrap), the
// hello at the start of every socket (from anyone who can reach the port) and the header in front of
// every data piece (from the connected peer).
// Properties: a hello or piece header that decodes is canonical and within its documented ranges (a
// rejection says why); a handle that decodes re-encodes to a handle of the same address.
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"
#include "transport/tcp/tcp_hello.hpp"
#include "transport/tcp/tcp_piece.hpp"

using namespace hetccl;
using namespace hetccl::transport;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= tcp::Hello::kWireBytes) {
    std::string problem;
    if (auto h = tcp::Hello::decode(data, problem)) {
      if (h->socketCount < 1 || h->socketCount > tcp::kMaxSockets || h->socketIndex >= h->socketCount ||
          h->fromRank < 0 || h->toRank < 0)
        std::abort();
      auto wire = h->encode();
      if (std::memcmp(wire.data(), data, wire.size()) != 0) std::abort();
    } else if (problem.empty()) {
      std::abort();  // a rejection must say why
    }
  }
  if (size >= tcp::PieceHeader::kWireBytes) {
    std::string problem;
    if (auto h = tcp::PieceHeader::decode(data, problem)) {
      if (h->pieceBytes > h->messageBytes || (h->flags & ~kPieceHasCrc)) std::abort();
      auto wire = h->encode();
      if (std::memcmp(wire.data(), data, wire.size()) != 0) std::abort();
      // The receiver's comparison with what it expects must word every difference.
      if (pieceMismatch(*h, h->number, h->messageBytes, h->pieceBytes) != "") std::abort();
      if (pieceMismatch(*h, h->number + 1, h->messageBytes, h->pieceBytes).empty()) std::abort();
      if (pieceMismatch(*h, h->number, h->messageBytes + 1, h->pieceBytes).empty()) std::abort();
    } else if (problem.empty()) {
      std::abort();
    }
  }
  Handle handle;
  std::memcpy(handle.bytes.data(), data, std::min(size, handle.bytes.size()));
  try {
    net::SocketAddress a = tcp::decodeAddressHandle(handle);
    net::SocketAddress b = tcp::decodeAddressHandle(tcp::encodeAddressHandle(a));
    if (a.toString() != b.toString()) std::abort();
  } catch (const InvalidArgument&) {
  }
  return 0;
}
