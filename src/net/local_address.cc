// chooseLocalAddress: which interface this process binds (HETCCL_SOCKET_IFNAME / NCCL_SOCKET_IFNAME).
//
// Filter syntax (NCCL's): comma-separated interface name prefixes, "eth,ib" selects interfaces whose
// names start with eth or ib; a leading '^' turns the whole list into exclusions ("^docker,lo"); an
// entry starting with '=' must match the name exactly ("=eth0"). Among the interfaces that pass, the
// first up one with an IPv4 address wins, else the first with an IPv6 address.
#include <ifaddrs.h>
#include <net/if.h>

#include <cstring>
#include <sstream>
#include <vector>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "net/socket.hpp"

namespace hetccl::net {
namespace {

struct InterfaceFilter {
  bool exclude = false;
  std::vector<std::string> patterns;  // "=name" exact, else prefix

  static InterfaceFilter parse(const std::string& text) {
    InterfaceFilter f;
    std::string list = text;
    if (!list.empty() && list[0] == '^') {
      f.exclude = true;
      list = list.substr(1);
    }
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ','))
      if (!item.empty()) f.patterns.push_back(item);
    return f;
  }

  bool listed(const std::string& name) const {
    for (const auto& p : patterns) {
      if (p[0] == '=' ? name == p.substr(1) : name.rfind(p, 0) == 0) return true;
    }
    return false;
  }
  bool accepts(const std::string& name) const { return exclude ? !listed(name) : listed(name); }
};

struct Candidate {
  std::string name;
  SocketAddress address;
};

/// Up interfaces with an IPv4/IPv6 address, in the kernel's order.
std::vector<Candidate> upInterfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) throw SystemError::fromErrno("getifaddrs", errno);
  std::vector<Candidate> out;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || !(i->ifa_flags & IFF_UP)) continue;
    int family = i->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    Candidate c;
    c.name = i->ifa_name;
    size_t len = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    std::memcpy(&c.address.storage, i->ifa_addr, len);
    c.address.length = static_cast<socklen_t>(len);
    if (family == AF_INET6) {
      auto* a6 = reinterpret_cast<sockaddr_in6*>(&c.address.storage);
      if (IN6_IS_ADDR_LINKLOCAL(&a6->sin6_addr)) continue;  // needs a scope id; not worth it here
    }
    c.address.setPort(0);
    out.push_back(c);
  }
  freeifaddrs(list);
  return out;
}

const Candidate* pickPreferringIpv4(const std::vector<const Candidate*>& ok) {
  for (const Candidate* c : ok)
    if (c->address.storage.ss_family == AF_INET) return c;
  return ok.empty() ? nullptr : ok.front();
}

SocketAddress loopbackV4() { return SocketAddress::parse("127.0.0.1:0"); }

}  // namespace

SocketAddress chooseLocalAddress() {
  std::vector<Candidate> all = upInterfaces();
  const Config& cfg = config();
  if (cfg.isSet("HETCCL_SOCKET_IFNAME") && !cfg.str("HETCCL_SOCKET_IFNAME").empty()) {
    std::string text = cfg.str("HETCCL_SOCKET_IFNAME");
    InterfaceFilter filter = InterfaceFilter::parse(text);
    std::vector<const Candidate*> ok;
    for (const auto& c : all)
      if (filter.accepts(c.name) && !(filter.exclude && c.address.isLoopback())) ok.push_back(&c);
    if (const Candidate* c = pickPreferringIpv4(ok)) {
      HETCCL_INFO(log::kNet, "using interface ", c->name, " (", c->address.toString(), ") from HETCCL_SOCKET_IFNAME=", text);
      return c->address;
    }
    if (filter.exclude) {
      HETCCL_INFO(log::kNet, "HETCCL_SOCKET_IFNAME=", text, " leaves only loopback; using 127.0.0.1");
      return loopbackV4();
    }
    throw InvalidArgument(concat("HETCCL_SOCKET_IFNAME=", text, " matches no interface that is up with an IP address"));
  }
  for (const auto& c : all) {
    if (c.address.storage.ss_family == AF_INET && !c.address.isLoopback()) {
      HETCCL_INFO(log::kNet, "using interface ", c.name, " (", c.address.toString(), ")");
      return c.address;
    }
  }
  HETCCL_INFO(log::kNet, "no non-loopback IPv4 interface is up; using 127.0.0.1");
  return loopbackV4();
}

}  // namespace hetccl::net
