// chooseLocalAddress: which interface this process binds (HETCCL_SOCKET_IFNAME / NCCL_SOCKET_IFNAME).
//
// Filter syntax (NCCL's): comma-separated interface name prefixes, "eth,ib" selects interfaces whose
// names start with eth or ib; a leading '^' turns the whole list into exclusions ("^docker,lo"); a
// leading '=' after it (or at the start) makes every entry an exact name ("=eth0,ib0", "^=lo,docker0"),
// and an entry of its own starting with '=' is exact too ("eth,=ib0"). Every entry of the list obeys the
// same rule: an excluded interface is never used, loopback included (no silent fallback to 127.0.0.1
// when the list excludes it). Among the interfaces that pass, non-loopback ones come first; the first
// with an IPv4 address wins, else the first with an IPv6 address.
#include <ifaddrs.h>
#include <net/if.h>

#include <algorithm>
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
  bool exact = false;                 // '=' after the optional '^': every entry is an exact name
  std::vector<std::string> patterns;  // "=name" exact, else prefix (exact for all when `exact`)

  static InterfaceFilter parse(const std::string& text) {
    InterfaceFilter f;
    std::string list = text;
    if (!list.empty() && list[0] == '^') {
      f.exclude = true;
      list = list.substr(1);
    }
    if (!list.empty() && list[0] == '=') {
      f.exact = true;
      list = list.substr(1);
    }
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ',')) {
      while (!item.empty() && item.front() == ' ') item.erase(item.begin());
      while (!item.empty() && item.back() == ' ') item.pop_back();
      if (f.exact && !item.empty() && item[0] != '=') item = "=" + item;
      if (!item.empty() && item != "=") f.patterns.push_back(item);
    }
    if (f.patterns.empty()) throw InvalidArgument(concat("HETCCL_SOCKET_IFNAME=", text, " names no interface"));
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

/// Up interfaces with an IPv4/IPv6 address, in the kernel's order.
std::vector<InterfaceAddress> upInterfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) throw SystemError::fromErrno("getifaddrs", errno);
  std::vector<InterfaceAddress> out;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || !(i->ifa_flags & IFF_UP)) continue;
    int family = i->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    InterfaceAddress c;
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

const InterfaceAddress* pickPreferringIpv4(const std::vector<const InterfaceAddress*>& ok) {
  for (const InterfaceAddress* c : ok)
    if (c->address.storage.ss_family == AF_INET) return c;
  return ok.empty() ? nullptr : ok.front();
}

SocketAddress loopbackV4() { return SocketAddress::parse("127.0.0.1:0"); }

}  // namespace

SocketAddress chooseLocalAddressFrom(const std::vector<InterfaceAddress>& all, const std::string& filterText) {
  if (!filterText.empty()) {
    InterfaceFilter filter = InterfaceFilter::parse(filterText);
    std::vector<const InterfaceAddress*> ok, loopback;
    for (const auto& c : all)
      if (filter.accepts(c.name)) (c.address.isLoopback() ? loopback : ok).push_back(&c);
    const InterfaceAddress* c = pickPreferringIpv4(ok);
    if (!c) c = pickPreferringIpv4(loopback);  // only a loopback interface passes the filter
    if (c) {
      HETCCL_INFO(log::kNet, "using interface ", c->name, " (", c->address.toString(), ") from HETCCL_SOCKET_IFNAME=",
                  filterText);
      return c->address;
    }
    std::string names;
    for (const auto& i : all)
      if (names.find(concat(" ", i.name, ",")) == std::string::npos) names += concat(" ", i.name, ",");
    if (!names.empty()) names.pop_back();
    throw InvalidArgument(concat("HETCCL_SOCKET_IFNAME=", filterText, filter.exclude ? " excludes every" : " matches no",
                                 " interface that is up with an IP address (up:", names.empty() ? " none" : names,
                                 "); syntax: prefixes, '=' for exact names, a leading '^' excludes the list"));
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

std::vector<std::string> interfacesAllowedBy(const std::vector<InterfaceAddress>& all, const std::string& filterText) {
  InterfaceFilter filter = InterfaceFilter::parse(filterText);
  std::vector<std::string> names;
  for (const auto& c : all)
    if (filter.accepts(c.name) && std::find(names.begin(), names.end(), c.name) == names.end()) names.push_back(c.name);
  return names;
}

bool interfaceAllowed(const std::string& name, const std::string& filterText) {
  return InterfaceFilter::parse(filterText).accepts(name);
}

std::vector<std::string> allowedInterfaces() {
  const Config& cfg = config();
  if (!cfg.isSet("HETCCL_SOCKET_IFNAME")) return {};
  return interfacesAllowedBy(upInterfaces(), cfg.str("HETCCL_SOCKET_IFNAME"));
}

SocketAddress chooseLocalAddress() {
  const Config& cfg = config();
  std::string filter = cfg.isSet("HETCCL_SOCKET_IFNAME") ? cfg.str("HETCCL_SOCKET_IFNAME") : "";
  return chooseLocalAddressFrom(upInterfaces(), filter);
}

}  // namespace hetccl::net
