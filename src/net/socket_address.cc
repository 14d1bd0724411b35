// SocketAddress: parsing ("1.2.3.4:80", "[::1]:80", "host:80"), printing, port and loopback queries.
#include <arpa/inet.h>
#include <netdb.h>

#include <cstring>

#include "core/error.hpp"
#include "net/socket.hpp"

namespace hetccl::net {
namespace {

uint16_t parsePort(const std::string& text, const std::string& whole) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos)
    throw InvalidArgument(concat("address '", whole, "': port '", text, "' is not a number in [0, 65535]"));
  unsigned long v = std::stoul(text);
  if (v > 65535) throw InvalidArgument(concat("address '", whole, "': port ", v, " is above 65535"));
  return static_cast<uint16_t>(v);
}

}  // namespace

SocketAddress SocketAddress::parse(const std::string& text) {
  std::string host, port;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      throw InvalidArgument(concat("address '", text, "' is not of the form [ipv6]:port"));
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0)
      throw InvalidArgument(concat("address '", text, "' is not of the form host:port"));
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string::npos)
      throw InvalidArgument(concat("address '", text, "': write IPv6 addresses as [addr]:port"));
  }
  uint16_t portNumber = parsePort(port, text);

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || !found)
    throw InvalidArgument(concat("address '", text, "': cannot resolve '", host, "': ", gai_strerror(rc)));
  // Prefer IPv4 when a name resolves to both (matches chooseLocalAddress).
  const addrinfo* pick = found;
  for (const addrinfo* a = found; a; a = a->ai_next)
    if (a->ai_family == AF_INET) {
      pick = a;
      break;
    }
  SocketAddress out;
  std::memcpy(&out.storage, pick->ai_addr, pick->ai_addrlen);
  out.length = pick->ai_addrlen;
  freeaddrinfo(found);
  out.setPort(portNumber);
  return out;
}

std::string SocketAddress::toString() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (storage.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&storage);
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
    return concat(buf, ":", port());
  }
  if (storage.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&storage);
    inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
    return concat("[", buf, "]:", port());
  }
  return "<no address>";
}

uint16_t SocketAddress::port() const {
  if (storage.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  if (storage.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  return 0;
}

void SocketAddress::setPort(uint16_t port) {
  if (storage.ss_family == AF_INET)
    reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(port);
  else if (storage.ss_family == AF_INET6)
    reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(port);
  else
    throw InvalidArgument("setPort on an empty socket address");
}

bool SocketAddress::isLoopback() const {
  if (storage.ss_family == AF_INET) {
    uint32_t a = ntohl(reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr.s_addr);
    return (a >> 24) == 127;
  }
  if (storage.ss_family == AF_INET6)
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr);
  return false;
}

}  // namespace hetccl::net
