// The agent metadata blob (src/agent/metadata.hpp): what decodes is exactly what was encoded, and every
// truncation, every altered byte, another secret or a short secret is refused with a reason. ~0.1 s.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent/metadata.hpp"
#include "core/error.hpp"

namespace hetccl::agent {
namespace {

std::vector<unsigned char> bytesOf(const std::string& s) { return {s.begin(), s.end()}; }

Metadata sample() {
  Metadata m;
  m.name = "prefill-0";
  for (size_t i = 0; i < m.incarnation.size(); ++i) m.incarnation[i] = static_cast<unsigned char>(i * 13 + 1);
  m.sequence = 7;
  m.address = "10.1.2.3:45678";
  m.hostId = "node17:abcdef12";
  m.pid = 4242;
  m.regions = {{0, 1, rma::MemKind::Host, 4096}, {3, 9, rma::MemKind::Cuda, uint64_t{1} << 40}, {5, 2, rma::MemKind::Hip, 1}};
  return m;
}

std::string refusal(std::span<const unsigned char> blob, const bootstrap::Secret& key) {
  try {
    decodeMetadata(blob, key);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(AgentMetadata, RoundTripsEveryField) {
  const bootstrap::Secret key = agentKey(bytesOf("a deployment secret of some length"));
  const Metadata m = sample();
  const Metadata d = decodeMetadata(encodeMetadata(m, key), key);
  EXPECT_EQ(d.name, m.name);
  EXPECT_EQ(d.incarnation, m.incarnation);
  EXPECT_EQ(d.sequence, m.sequence);
  EXPECT_EQ(d.address, m.address);
  EXPECT_EQ(d.hostId, m.hostId);
  EXPECT_EQ(d.pid, m.pid);
  ASSERT_EQ(d.regions.size(), m.regions.size());
  for (size_t i = 0; i < m.regions.size(); ++i) {
    EXPECT_EQ(d.regions[i].id, m.regions[i].id);
    EXPECT_EQ(d.regions[i].generation, m.regions[i].generation);
    EXPECT_EQ(d.regions[i].kind, m.regions[i].kind);
    EXPECT_EQ(d.regions[i].bytes, m.regions[i].bytes);
  }
}

TEST(AgentMetadata, EveryTruncationIsRefused) {
  const bootstrap::Secret key = agentKey(bytesOf("a deployment secret of some length"));
  const std::vector<unsigned char> blob = encodeMetadata(sample(), key);
  for (size_t n = 0; n < blob.size(); ++n)
    EXPECT_NE(refusal(std::span(blob).first(n), key), "") << "a blob cut to " << n << " bytes was accepted";
}

TEST(AgentMetadata, EveryAlteredByteIsRefused) {
  const bootstrap::Secret key = agentKey(bytesOf("a deployment secret of some length"));
  const std::vector<unsigned char> blob = encodeMetadata(sample(), key);
  for (size_t i = 0; i < blob.size(); ++i) {
    std::vector<unsigned char> b = blob;
    b[i] ^= 0x20;
    EXPECT_NE(refusal(b, key), "") << "byte " << i << " altered was accepted";
  }
  std::vector<unsigned char> longer = blob;
  longer.push_back(0);
  EXPECT_NE(refusal(longer, key), "");
}

TEST(AgentMetadata, AnotherSecretFailsAuthentication) {
  const std::vector<unsigned char> blob = encodeMetadata(sample(), agentKey(bytesOf("the first deployment's secret")));
  const std::string why = refusal(blob, agentKey(bytesOf("the other deployment's secret")));
  EXPECT_NE(why.find("authentication"), std::string::npos) << why;
}

TEST(AgentMetadata, WrongMagicAndVersionSaySo) {
  const bootstrap::Secret key = agentKey(bytesOf("a deployment secret of some length"));
  std::vector<unsigned char> blob = encodeMetadata(sample(), key);
  std::vector<unsigned char> magic = blob;
  magic[0] ^= 1;
  EXPECT_NE(refusal(magic, key).find("magic"), std::string::npos);
  std::vector<unsigned char> version = blob;
  version[4] = 9;
  EXPECT_NE(refusal(version, key).find("version 9"), std::string::npos);
}

TEST(AgentMetadata, ShortSecretsAndBadNamesAreRefused) {
  EXPECT_THROW(agentKey(bytesOf("fifteen bytes!!")), InvalidArgument);
  EXPECT_NO_THROW(agentKey(bytesOf("sixteen bytes!!!")));
  EXPECT_NE(agentKey(bytesOf("sixteen bytes!!!")), agentKey(bytesOf("sixteen bytes!!?")));
  EXPECT_TRUE(validName("decode-3.rank_0:a"));
  EXPECT_FALSE(validName(""));
  EXPECT_FALSE(validName("has space"));
  EXPECT_FALSE(validName(std::string(64, 'a')));
  EXPECT_TRUE(validName(std::string(63, 'a')));
}

}  // namespace
}  // namespace hetccl::agent
