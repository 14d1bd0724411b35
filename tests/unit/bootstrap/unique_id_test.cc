// UniqueId: layout round trip, hex form, and rejection of every corrupted field.
#include <gtest/gtest.h>

#include <cstring>

#include "bootstrap/unique_id.hpp"
#include "core/error.hpp"

namespace hetccl::bootstrap {
namespace {

UniqueId sampleId(const char* addr) {
  UniqueId id = makeLauncherId(net::SocketAddress::parse(addr));
  return id;
}

TEST(UniqueId, RoundTripsIpv4AndIpv6ThroughBytesAndHex) {
  for (const char* addr : {"10.1.2.3:29500", "[fe80::1:2]:7"}) {
    UniqueId id = sampleId(addr);
    auto bytes = id.encode();
    UniqueId back = UniqueId::decode(bytes.data(), bytes.size());
    EXPECT_EQ(back.root.toString(), addr);
    EXPECT_EQ(back.secret, id.secret);
    EXPECT_TRUE(back.rank0StartsRoot);
    UniqueId fromHex = UniqueId::fromHex(id.toHex());
    EXPECT_EQ(fromHex.encode(), bytes);
    EXPECT_EQ(id.toHex().size(), 256u);
  }
}

TEST(UniqueId, LayoutMatchesTheDocumentedOffsets) {
  UniqueId id = sampleId("1.2.3.4:258");
  auto b = id.encode();
  EXPECT_EQ(std::memcmp(b.data(), "HCID", 4), 0);
  EXPECT_EQ(b[4], 1);  // layout version, little-endian
  EXPECT_EQ(b[5], 0);
  EXPECT_EQ(b[6], 1);  // flags: rank 0 starts the root
  EXPECT_EQ(b[8], 4);
  EXPECT_EQ(b[10], 2);  // port 258 = 0x0102, little-endian
  EXPECT_EQ(b[11], 1);
  EXPECT_EQ(b[12], 1);
  EXPECT_EQ(b[15], 4);
  EXPECT_EQ(std::memcmp(b.data() + 28, id.secret.data(), 32), 0);
}

struct Corruption {
  const char* name;
  size_t offset;
  unsigned char value;
  const char* expectedWord;
};

TEST(UniqueId, RejectsEveryCorruptedField) {
  const Corruption cases[] = {
      {"magic", 0, 'X', "magic"},          {"version", 4, 2, "version"},
      {"unknown flag", 6, 0x02, "flags"},  {"family", 8, 5, "family"},
      {"reserved byte 9", 9, 1, "reserved"}, {"ipv4 padding", 20, 1, "padding"},
      {"reserved tail", 60, 1, "reserved"}, {"reserved end", 127, 1, "reserved"},
  };
  UniqueId id = sampleId("10.0.0.1:1234");
  for (const auto& c : cases) {
    auto b = id.encode();
    b[c.offset] = c.value;
    try {
      UniqueId::decode(b.data(), b.size());
      ADD_FAILURE() << c.name << " was accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(c.expectedWord), std::string::npos) << c.name << ": " << e.what();
    }
  }
  auto b = id.encode();
  b[10] = b[11] = 0;
  EXPECT_THROW(UniqueId::decode(b.data(), b.size()), InvalidArgument) << "port 0";
  b = id.encode();
  std::memset(b.data() + 28, 0, 32);
  EXPECT_THROW(UniqueId::decode(b.data(), b.size()), InvalidArgument) << "zero secret";
  EXPECT_THROW(UniqueId::decode(b.data(), 127), InvalidArgument);
  EXPECT_THROW(UniqueId::decode(nullptr, 128), InvalidArgument);
  std::string hex = id.toHex();
  EXPECT_THROW(UniqueId::fromHex(hex.substr(2)), InvalidArgument);
  hex[5] = 'g';
  EXPECT_THROW(UniqueId::fromHex(hex), InvalidArgument);
}

TEST(UniqueId, CreateStartsARootWithAFreshSecret) {
  UniqueId a = createUniqueId();
  UniqueId b = createUniqueId();
  EXPECT_NE(a.secret, b.secret);
  EXPECT_FALSE(a.rank0StartsRoot);
  EXPECT_NE(a.root.port(), 0);
  net::Socket s = net::Socket::connect(a.root, Deadline::afterMs(5000));  // the root is listening
  EXPECT_TRUE(s.valid());
}

TEST(UniqueId, LauncherIdsNeedAFixedPortAndEnoughSecret) {
  EXPECT_THROW(makeLauncherId(net::SocketAddress::parse("127.0.0.1:0")), InvalidArgument);
  auto root = net::SocketAddress::parse("127.0.0.1:29500");
  EXPECT_NE(makeLauncherId(root).secret, makeLauncherId(root).secret);
  EXPECT_THROW(launcherIdFromSecret(root, "0123456789abcdef"), InvalidArgument);
  EXPECT_THROW(launcherIdFromSecret(root, std::string(32, 'z')), InvalidArgument);
  std::string secret = "00112233445566778899aabbccddeeff";
  UniqueId x = launcherIdFromSecret(root, secret);
  EXPECT_EQ(x.secret, launcherIdFromSecret(root, "00112233445566778899AABBCCDDEEFF").secret);
  EXPECT_NE(x.secret, launcherIdFromSecret(root, "00112233445566778899aabbccddeef0").secret);
  EXPECT_TRUE(x.rank0StartsRoot);
  EXPECT_EQ(x.root.toString(), "127.0.0.1:29500");
}

}  // namespace
}  // namespace hetccl::bootstrap
