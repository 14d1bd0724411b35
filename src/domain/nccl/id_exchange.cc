#include "domain/nccl/id_exchange.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <set>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "core/error.hpp"

namespace hetccl::domain::nccl {
namespace {

constexpr size_t kIdOffset = 8;
constexpr size_t kTextOffset = kIdOffset + abi::kUniqueIdBytes;
constexpr size_t kMaxText = kIdMessageBytes - kTextOffset;

using Message = std::array<unsigned char, kIdMessageBytes>;

void putU32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
uint32_t getU32(const unsigned char* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

Message encodeFailure(const std::string& text) {
  Message m{};
  size_t n = std::min(text.size(), kMaxText);
  putU32(m.data(), 1);
  putU32(m.data() + 4, static_cast<uint32_t>(n));
  std::memcpy(m.data() + kTextOffset, text.data(), n);
  return m;
}

}  // namespace

int memberIndex(const bootstrap::Bootstrap& bootstrap, const std::vector<int>& members) {
  if (members.empty()) throw InvalidArgument("domain communicator with no members");
  std::set<int> seen;
  int index = -1;
  for (size_t i = 0; i < members.size(); ++i) {
    int r = members[i];
    if (r < 0 || r >= bootstrap.size())
      throw InvalidArgument(concat("domain member ", r, " is not a rank of the ", bootstrap.size(), "-rank bootstrap"));
    if (!seen.insert(r).second) throw InvalidArgument(concat("domain member ", r, " is listed twice"));
    if (r == bootstrap.rank()) index = static_cast<int>(i);
  }
  if (index < 0) throw InvalidArgument(concat("rank ", bootstrap.rank(), " is not a member of the domain it creates"));
  return index;
}

abi::ncclUniqueId shareUniqueId(bootstrap::Bootstrap& bootstrap, const std::vector<int>& members,
                                const std::function<abi::ncclUniqueId()>& create) {
  const int creator = members.at(0);
  if (bootstrap.rank() == creator) {
    abi::ncclUniqueId id{};
    Message m{};
    try {
      id = create();
      std::memcpy(m.data() + kIdOffset, id.internal, abi::kUniqueIdBytes);
    } catch (const std::exception& e) {
      m = encodeFailure(e.what());
      for (size_t i = 1; i < members.size(); ++i) bootstrap.send(members[i], kVendorIdTag, m.data(), m.size());
      throw;
    }
    for (size_t i = 1; i < members.size(); ++i) bootstrap.send(members[i], kVendorIdTag, m.data(), m.size());
    return id;
  }

  Message m{};
  bootstrap.recv(creator, kVendorIdTag, m.data(), m.size());
  const std::string host = bootstrap.peers().at(creator).hostId;
  const uint32_t status = getU32(m.data());
  if (status == 1) {
    size_t n = std::min<size_t>(getU32(m.data() + 4), kMaxText);
    throw PeerError(creator, host,
                    concat("rank ", creator, " (host ", host, ") could not create the domain's vendor id: ",
                           std::string(reinterpret_cast<const char*>(m.data() + kTextOffset), n)));
  }
  if (status != 0)
    throw PeerError(creator, host, concat("rank ", creator, " (host ", host, ") sent a malformed vendor id message"));
  abi::ncclUniqueId id{};
  std::memcpy(id.internal, m.data() + kIdOffset, abi::kUniqueIdBytes);
  return id;
}

}  // namespace hetccl::domain::nccl
