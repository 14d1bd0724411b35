// Wire vectors of the bootstrap: unique id, rank descriptor, frames (incl. the Notice payload), the
// HMAC handshake. Each: the real encoder's bytes against the committed vector, the committed vector
// through the real decoder (fields checked), and negative vectors through the real decoder.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <poll.h>

#include <cstring>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/crypto.hpp"
#include "bootstrap/descriptor.hpp"
#include "bootstrap/frame.hpp"
#include "bootstrap/handshake.hpp"
#include "bootstrap/mesh.hpp"
#include "bootstrap/unique_id.hpp"
#include "core/error.hpp"
#include "scripted_random.hpp"
#include "wire_vectors.hpp"

namespace hetccl::test::wire {
namespace {

using namespace hetccl::bootstrap;

Bytes asBytes(const unsigned char* p, size_t n) { return Bytes(p, p + n); }
template <typename C>
Bytes asBytes(const C& c) {
  return Bytes(c.begin(), c.end());
}
Bytes text(const std::string& s) { return Bytes(s.begin(), s.end()); }
Bytes concatBytes(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
Bytes pattern(size_t n, unsigned start, unsigned step) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(start + step * i);
  return b;
}

// ---------------------------------------------------------------- unique id

const std::vector<Field> kUniqueIdFields = {
    {0, 4, "u32 magic 'HCID'"},       {4, 2, "u16 layout version (1)"},
    {6, 2, "u16 flags (bit 0: rank 0 starts the root)"}, {8, 1, "u8 address family (4 or 6)"},
    {9, 1, "u8 reserved (0)"},        {10, 2, "u16 root port"},
    {12, 16, "root address (IPv4 in the first 4 bytes, rest 0)"},
    {28, 32, "secret (32 bytes)"},    {60, 68, "reserved (0)"}};

UniqueId fixedId(const std::string& root, bool rank0StartsRoot) {
  UniqueId id;
  id.root = net::SocketAddress::parse(root);
  Bytes s = pattern(kSecretBytes, 0xa1, 7);
  std::memcpy(id.secret.data(), s.data(), s.size());
  id.rank0StartsRoot = rank0StartsRoot;
  return id;
}

void checkUniqueId(const std::string& name, const UniqueId& id, const std::string& input) {
  SCOPED_TRACE(name);
  Bytes committed = checkVector({name, "unique id (src/bootstrap/unique_id.hpp), layout version 1",
                                 {"input: " + input}, kUniqueIdFields, asBytes(id.encode())});
  if (committed.empty()) return;
  UniqueId back = UniqueId::decode(committed.data(), committed.size());
  EXPECT_EQ(back.root.toString(), id.root.toString());
  EXPECT_EQ(back.secret, id.secret);
  EXPECT_EQ(back.rank0StartsRoot, id.rank0StartsRoot);
  EXPECT_EQ(UniqueId::fromHex(toHex(committed.data(), committed.size(), "")).root.toString(), id.root.toString());
}

TEST(WireVectors, UniqueId) {
  checkUniqueId("unique_id.ipv4", fixedId("10.1.2.3:29500", true),
                "root 10.1.2.3:29500, secret a1 a8 af ... (start 0xa1, step 7), rank 0 starts the root");
  checkUniqueId("unique_id.ipv6", fixedId("[fd00::1234]:29501", false),
                "root [fd00::1234]:29501, secret a1 a8 af ... (start 0xa1, step 7), root already running");
  // The secret every rank derives from HETCCL_SECRET (torchrun, Open MPI, Slurm): HMAC-SHA256 keyed with
  // zeros over "hetccl launcher secret v1" | the lower-cased text. Ranks of both builds must agree.
  checkUniqueId("unique_id.launcher_secret",
                launcherIdFromSecret(net::SocketAddress::parse("10.0.0.1:29501"), "0123456789abcdef0123456789ABCDEF"),
                "launcherIdFromSecret(10.0.0.1:29501, HETCCL_SECRET=0123456789abcdef0123456789ABCDEF): the secret "
                "is HMAC-SHA256(key 0^32, \"hetccl launcher secret v1\" | lower-cased HETCCL_SECRET)");
}

TEST(WireVectors, UniqueIdNegative) {
  runNegativeCases("unique_id", [](const Bytes& b) -> std::string {
    try {
      UniqueId::decode(b.data(), b.size());
      return "";
    } catch (const InvalidArgument& e) {
      return e.what();
    }
  });
}

// ---------------------------------------------------------------- rank descriptor

const std::vector<Field> kDescriptorFields = {
    {0, 4, "u32 protocol version (bootstrap::kProtocolVersion)"},
    {4, 4, "i32 rank"},
    {8, 4, "i32 nranks"},
    {12, 1, "u8 device kind (0 host, 1 cuda, 2 hip)"},
    {13, 1, "u8 host id length"},
    {14, 1, "u8 domain length"},
    {15, 1, "u8 mesh address family (4 or 6)"},
    {16, 4, "i32 device index (-1: host rank)"},
    {20, 4, "i32 pid"},
    {24, 2, "u16 mesh port"},
    {26, 2, "u16 reserved (0)"},
    {28, 16, "mesh address (IPv4 in the first 4 bytes)"},
    {44, 64, "host id (zero padded)"},
    {108, 32, "domain (zero padded)"}};

RankDescriptor fixedDescriptor(bool hip) {
  RankDescriptor d;
  d.info.protocolVersion = kProtocolVersion;
  d.info.rank = hip ? 1 : 0;
  d.nranks = 2;
  d.info.deviceKind = hip ? DeviceKind::Hip : DeviceKind::Cuda;
  d.info.deviceIndex = hip ? 0 : 1;
  d.info.pid = hip ? 4242 : 1234567;
  d.info.hostId = hip ? "amd-host.example" : "nvidia-host-1";
  d.info.domain = hip ? "hip" : "cuda+nccl";
  d.meshAddress = net::SocketAddress::parse(hip ? "192.168.1.7:40001" : "[fd00::7]:40002");
  return d;
}

Bytes checkDescriptor(const std::string& name, const RankDescriptor& d, const std::string& input) {
  SCOPED_TRACE(name);
  Bytes committed = checkVector({name, "rank descriptor (src/bootstrap/descriptor.hpp), protocol version " +
                                           std::to_string(kProtocolVersion),
                                 {"input: " + input}, kDescriptorFields, encodeDescriptor(d)});
  if (committed.empty()) return committed;
  DescriptorPrefix prefix = readDescriptorPrefix(committed.data(), committed.size());
  EXPECT_EQ(prefix.protocolVersion, kProtocolVersion);
  EXPECT_EQ(prefix.rank, d.info.rank);
  EXPECT_EQ(prefix.nranks, d.nranks);
  RankDescriptor back = decodeDescriptor(committed.data(), committed.size());
  EXPECT_EQ(back.info.rank, d.info.rank);
  EXPECT_EQ(back.nranks, d.nranks);
  EXPECT_EQ(back.info.deviceKind, d.info.deviceKind);
  EXPECT_EQ(back.info.deviceIndex, d.info.deviceIndex);
  EXPECT_EQ(back.info.pid, d.info.pid);
  EXPECT_EQ(back.info.hostId, d.info.hostId);
  EXPECT_EQ(back.info.domain, d.info.domain);
  EXPECT_EQ(back.info.protocolVersion, d.info.protocolVersion);
  EXPECT_EQ(back.meshAddress.toString(), d.meshAddress.toString());
  return committed;
}

TEST(WireVectors, RankDescriptor) {
  checkDescriptor("descriptor.hip_ipv4", fixedDescriptor(true),
                  "rank 1 of 2, hip device 0, pid 4242, host 'amd-host.example', domain 'hip', mesh 192.168.1.7:40001");
  checkDescriptor("descriptor.cuda_ipv6", fixedDescriptor(false),
                  "rank 0 of 2, cuda device 1, pid 1234567, host 'nvidia-host-1', domain 'cuda+nccl', mesh "
                  "[fd00::7]:40002");
}

TEST(WireVectors, RankDescriptorNegative) {
  runNegativeCases("descriptor", [](const Bytes& b) -> std::string {
    try {
      decodeDescriptor(b.data(), b.size());
      return "";
    } catch (const InvalidArgument& e) {
      return e.what();
    }
  });
  runNegativeCases("descriptor_prefix", [](const Bytes& b) -> std::string {
    try {
      readDescriptorPrefix(b.data(), b.size());
      return "";
    } catch (const InvalidArgument& e) {
      return e.what();
    }
  });
}

// ---------------------------------------------------------------- frames

const std::vector<Field> kFrameHeaderFields = {{0, 4, "u32 magic 'HCBF'"},
                                               {4, 2, "u16 frame version (1)"},
                                               {6, 2, "u16 type (1 Descriptor .. 8 Notice)"},
                                               {8, 4, "u32 tag"},
                                               {12, 4, "u32 payload length"}};

/// A connected pair of local stream sockets.
std::pair<net::Socket, net::Socket> socketPair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throw std::runtime_error("socketpair failed");
  return {net::Socket(fds[0]), net::Socket(fds[1])};
}

/// The real receiver (recvFrame) on `bytes` followed by EOF: the frame, or the error text.
std::pair<std::optional<Frame>, std::string> receiveFrame(const Bytes& bytes) {
  auto [tx, rx] = socketPair();
  tx.sendAll(bytes.data(), bytes.size(), Deadline::afterMs(5000), "test");
  ::shutdown(tx.fd(), SHUT_WR);
  try {
    return {recvFrame(rx, kMaxFramePayload, Deadline::afterMs(5000), "peer"), ""};
  } catch (const Error& e) {
    return {std::nullopt, e.what()};
  }
}

/// The same bytes through the incremental reader of the mesh (FrameReader).
std::optional<Frame> readFrameIncrementally(const Bytes& bytes) {
  auto [tx, rx] = socketPair();
  rx.setNonBlocking(true);
  FrameReader reader;
  for (size_t i = 0; i < bytes.size(); ++i) {  // one byte at a time: every partial state
    tx.sendAll(&bytes[i], 1, Deadline::afterMs(5000), "test");
    if (auto f = reader.readFrom(rx, "peer")) return i + 1 == bytes.size() ? f : std::nullopt;
  }
  return std::nullopt;
}

void checkFrame(const std::string& name, FrameType type, uint32_t tag, const Bytes& payload,
                std::vector<Field> payloadFields, std::vector<std::string> notes, const Bytes& encoded) {
  SCOPED_TRACE(name);
  std::vector<Field> fields = kFrameHeaderFields;
  for (Field f : payloadFields) {
    f.offset += kFrameHeaderBytes;
    fields.push_back(f);
  }
  Bytes committed = checkVector({name, "bootstrap frame (src/bootstrap/frame.hpp), frame version 1", notes, fields, encoded});
  if (committed.empty()) return;
  std::string why = checkFrameHeader(committed.data(), kMaxFramePayload);
  EXPECT_EQ(why, "");
  auto [frame, error] = receiveFrame(committed);
  ASSERT_TRUE(frame) << error;
  EXPECT_EQ(frame->type, type);
  EXPECT_EQ(frame->tag, tag);
  EXPECT_EQ(frame->payload, payload);
  auto incremental = readFrameIncrementally(committed);
  ASSERT_TRUE(incremental);
  EXPECT_EQ(incremental->payload, payload);
}

TEST(WireVectors, Frames) {
  checkFrame("frame.heartbeat", FrameType::Heartbeat, 0, {}, {}, {"input: Heartbeat, tag 0, empty payload"},
             encodeFrame(FrameType::Heartbeat, 0, nullptr, 0));
  const std::string message = "rank 5 did not join before the deadline";
  checkFrame("frame.error", FrameType::Error, kErrorRankMissing | 5, text(message),
             {{0, message.size(), "error text (UTF-8)"}},
             {"input: Error, tag kErrorRankMissing (1<<31) | rank 5, payload '" + message + "'"},
             encodeFrame(FrameType::Error, kErrorRankMissing | 5, text(message).data(), message.size()));
  // Notice: the mesh's own encoder (encodeNotice), payload u32 comm | u32 0 | i32 blamed rank | reason.
  const std::string reason = "connection closed";
  Bytes notice = encodeNotice(3, reason, 7);
  checkFrame("frame.notice", FrameType::Notice, 0, asBytes(notice.data() + kFrameHeaderBytes, notice.size() - kFrameHeaderBytes),
             {{0, 4, "u32 communicator id"}, {4, 4, "u32 zero"}, {8, 4, "i32 blamed rank"}, {12, reason.size(), "reason (UTF-8)"}},
             {"input: encodeNotice(blamed 3, '" + reason + "', comm 7) (src/bootstrap/mesh.hpp)"}, notice);
  // Data: the payload's sub-header (u32 comm | u32 0) is written by Mesh's private send path; composed here
  // as frame.hpp documents it (only the frame envelope is the real encoder's).
  Bytes data = concatBytes({Bytes{7, 0, 0, 0, 0, 0, 0, 0}, text("abc")});
  checkFrame("frame.data", FrameType::Data, 0, data,
             {{0, 4, "u32 communicator id"}, {4, 4, "u32 zero"}, {8, 3, "bytes"}},
             {"input: Data, tag 0, payload comm 7 | 0 | 'abc' (sub-header composed by the test as frame.hpp documents it)"},
             encodeFrame(FrameType::Data, 0, data.data(), data.size()));
  // Table (root -> rank): every rank's descriptor in rank order (the root's concatenation is private; the
  // descriptors are the real encoder's).
  Bytes table = concatBytes({encodeDescriptor(fixedDescriptor(false)), encodeDescriptor(fixedDescriptor(true))});
  std::vector<Field> tableFields;
  for (const Field& f : kDescriptorFields) tableFields.push_back({f.offset, f.size, "rank 0 " + f.name});
  for (const Field& f : kDescriptorFields) tableFields.push_back({f.offset + kDescriptorBytes, f.size, "rank 1 " + f.name});
  checkFrame("frame.table", FrameType::Table, 0, table, tableFields,
             {"input: Table, tag 0, payload = descriptor.cuda_ipv6 | descriptor.hip_ipv4 (the root's answer for 2 ranks)"},
             encodeFrame(FrameType::Table, 0, table.data(), table.size()));
}

TEST(WireVectors, FramesNegative) {
  runNegativeCases("frame", [](const Bytes& b) { return receiveFrame(b).second; });
}

// ---------------------------------------------------------------- handshake

const Secret kHandshakeSecret = [] {
  Secret s{};
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<unsigned char>(0x5a ^ (i * 3));
  return s;
}();
const Bytes kNonceC = pattern(32, 0x10, 1), kNonceS = pattern(32, 0x80, 1);
constexpr int kClientRank = 3, kServerRank = 1;
constexpr size_t kShOffset = kClientHelloBytes, kProofOffset = kClientHelloBytes + kServerHelloBytes;

const std::vector<Field> kHandshakeFields = {
    {0, 4, "ClientHello u32 magic 'HCHS'"},
    {4, 2, "ClientHello u16 version (1)"},
    {6, 2, "ClientHello u16 purpose (1 root, 2 mesh)"},
    {8, 4, "ClientHello i32 client rank"},
    {12, 32, "ClientHello nonceC"},
    {44, 4, "ServerHello u32 magic 'HCHS'"},
    {48, 2, "ServerHello u16 version (1)"},
    {50, 2, "ServerHello u16 purpose"},
    {52, 4, "ServerHello i32 server rank"},
    {56, 32, "ServerHello nonceS"},
    {88, 32, "ServerHello macS = HMAC(secret, 'hetccl bootstrap v1 server proof' | CH | SH[0..44))"},
    {120, 32, "ClientProof macC = HMAC(secret, 'hetccl bootstrap v1 client proof' | CH | SH[0..44))"}};

/// Runs a ServerHandshake on its own thread until it is done or failed; destroying it closes the socket.
struct ServerThread {
  ServerHandshake::Status status = ServerHandshake::Status::InProgress;
  std::string reason;
  std::thread thread;
  explicit ServerThread(net::Socket s) {
    s.setNonBlocking(true);
    thread = std::thread([this, sock = std::move(s)]() mutable {
      ServerHandshake server(std::move(sock), kHandshakeSecret, Purpose::Mesh, kServerRank,
                             [](int r) { return r == kClientRank; }, Deadline::afterMs(5000));
      while ((status = server.progress()) == ServerHandshake::Status::InProgress && !server.expired()) {
        pollfd p{server.fd(), server.pollEvents(), 0};
        ::poll(&p, 1, 20);
      }
      reason = server.reason();
    });
  }
  void join() { thread.join(); }
};

/// Runs the real client on its own thread (it owns its socket: a failure closes it).
struct ClientThread {
  std::string error;
  std::thread thread;
  explicit ClientThread(net::Socket s) {
    thread = std::thread([this, sock = std::move(s)] {
      try {
        authenticateAsClient(sock, kHandshakeSecret, Purpose::Mesh, kClientRank, kServerRank, Deadline::afterMs(5000),
                             "server");
      } catch (const std::exception& e) {
        error = e.what();
      }
    });
  }
  void join() { thread.join(); }
};

/// Sends bytes [from, to) of `b` (clipped to its size); shuts the socket's write side when `b` ends there.
void sendPart(const net::Socket& s, const Bytes& b, size_t from, size_t to) {
  to = std::min(to, b.size());
  if (from < to) s.sendAll(b.data() + from, to - from, Deadline::afterMs(5000), "relay");
  if (b.size() <= to) ::shutdown(s.fd(), SHUT_WR);
}

/// Reads `n` bytes, or fewer when the other end closes / fails.
Bytes recvUpTo(const net::Socket& s, size_t n) {
  Bytes out(n);
  try {
    s.recvAll(out.data(), n, Deadline::afterMs(5000), "relay");
  } catch (const Error&) {
    out.clear();
  }
  return out;
}

/// The real client against the real server, nonces scripted, every byte relayed and recorded.
Bytes recordHandshake(std::string& failure) {
  auto [clientEnd, relayA] = socketPair();
  auto [serverEnd, relayB] = socketPair();
  scriptRandom(concatBytes({kNonceC, kNonceS}));  // the client draws first, the server once the hello arrives
  ClientThread client(std::move(clientEnd));
  ServerThread server(std::move(serverEnd));
  Bytes ch = recvUpTo(relayA, kClientHelloBytes);
  relayB.sendAll(ch.data(), ch.size(), Deadline::afterMs(5000), "relay");
  Bytes sh = recvUpTo(relayB, kServerHelloBytes);
  relayA.sendAll(sh.data(), sh.size(), Deadline::afterMs(5000), "relay");
  Bytes proof = recvUpTo(relayA, kProofBytes);
  relayB.sendAll(proof.data(), proof.size(), Deadline::afterMs(5000), "relay");
  client.join();
  server.join();
  clearScriptedRandom();
  failure = client.error + (server.status == ServerHandshake::Status::Done ? "" : " server: " + server.reason);
  return concatBytes({ch, sh, proof});
}

/// The real server given the transcript's ClientHello and ClientProof (its nonce scripted to the
/// transcript's): "" when it accepts and its ServerHello equals the transcript's, else why not.
std::string serverDecode(const Bytes& t) {
  auto [serverEnd, peer] = socketPair();
  scriptRandom(t.size() >= kShOffset + 44 ? Bytes(t.begin() + kShOffset + 12, t.begin() + kShOffset + 44) : kNonceS);
  ServerThread server(std::move(serverEnd));
  sendPart(peer, t, 0, kClientHelloBytes);
  Bytes sh = recvUpTo(peer, kServerHelloBytes);
  std::string mismatch;
  if (!sh.empty() && t.size() >= kProofOffset && !std::equal(sh.begin(), sh.end(), t.begin() + kShOffset))
    mismatch = "the server's hello differs from the vector's: " + toHex(sh.data(), sh.size());
  if (!sh.empty()) sendPart(peer, t, kProofOffset, kProofOffset + kProofBytes);
  server.join();
  clearScriptedRandom();
  if (server.status != ServerHandshake::Status::Done) return server.reason.empty() ? "server failed" : server.reason;
  return mismatch;
}

/// The real client given the transcript's ServerHello (its nonce scripted to the transcript's): "" when it
/// accepts and its hello and proof equal the transcript's, else why not.
std::string clientDecode(const Bytes& t) {
  auto [clientEnd, peer] = socketPair();
  scriptRandom(Bytes(t.begin() + 12, t.begin() + 44));
  ClientThread client(std::move(clientEnd));
  Bytes ch = recvUpTo(peer, kClientHelloBytes);
  sendPart(peer, t, kShOffset, kShOffset + kServerHelloBytes);
  Bytes proof = recvUpTo(peer, kProofBytes);
  client.join();
  clearScriptedRandom();
  if (!client.error.empty()) return client.error;
  if (!std::equal(ch.begin(), ch.end(), t.begin())) return "the client's hello differs from the vector's";
  if (t.size() < kProofOffset + kProofBytes || proof.size() != kProofBytes ||
      !std::equal(proof.begin(), proof.end(), t.begin() + kProofOffset))
    return "the client's proof differs from the vector's";
  return "";
}

TEST(WireVectors, Handshake) {
  std::string failure;
  Bytes transcript = recordHandshake(failure);
  ASSERT_EQ(failure, "") << "the real client and server did not complete the handshake";
  ASSERT_EQ(transcript.size(), kClientHelloBytes + kServerHelloBytes + kProofBytes);
  Bytes committed = checkVector(
      {"handshake.mesh", "bootstrap handshake (src/bootstrap/handshake.hpp), version 1: ClientHello | ServerHello | ClientProof",
       {"input: purpose Mesh, client rank 3, server rank 1, secret 5a 59 5c ... (byte i = 0x5a ^ 3i),",
        "nonceC 10 11 12 ... 2f, nonceS 80 81 ... 9f (scripted RAND_bytes), relayed between the real client",
        "(authenticateAsClient) and the real server (ServerHandshake)"},
       kHandshakeFields, transcript});
  if (committed.empty()) return;
  EXPECT_EQ(serverDecode(committed), "") << "the real server must accept the committed ClientHello and ClientProof";
  EXPECT_EQ(clientDecode(committed), "") << "the real client must accept the committed ServerHello";
  // The proofs, recomputed from the documented labels: the vector is self-describing.
  auto mac = [&](const std::string& label) {
    return hmacSha256(kHandshakeSecret, {std::span(reinterpret_cast<const unsigned char*>(label.data()), label.size()),
                                         std::span(committed.data(), kClientHelloBytes),
                                         std::span(committed.data() + kShOffset, 44)});
  };
  Mac macS = mac("hetccl bootstrap v1 server proof"), macC = mac("hetccl bootstrap v1 client proof");
  EXPECT_TRUE(std::equal(macS.begin(), macS.end(), committed.begin() + kShOffset + 44));
  EXPECT_TRUE(std::equal(macC.begin(), macC.end(), committed.begin() + kProofOffset));
}

TEST(WireVectors, HandshakeNegative) {
  runNegativeCases("handshake_server", serverDecode);
  runNegativeCases("handshake_client", clientDecode);
}

}  // namespace
}  // namespace hetccl::test::wire
