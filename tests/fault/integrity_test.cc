// HETCCL_CHECKSUM and message checks of the shm and tcp transports: CRC32C against published vectors, a
// corrupted piece is detected and named (sender, receiver), ranks that disagree about checksums fail
// clearly, and tcp reports a send/receive size mismatch without HETCCL_CHECK_CALLS. Pieces are corrupted
// on purpose with the transports' test hook (transport::testing::corruptNextPieces).
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "core/config.hpp"
#include "core/error.hpp"
#include "transport/base/crc32c.hpp"
#include "transport/base/integrity.hpp"
#include "transport_harness.hpp"

namespace hetccl::transport::testing {
namespace {

/// Sets HETCCL_CHECKSUM for the connections made while it lives.
class ChecksumSetting {
 public:
  explicit ChecksumSetting(const char* value) {
    ::setenv("HETCCL_CHECKSUM", value, 1);
    reloadConfig();
  }
  ~ChecksumSetting() {
    ::unsetenv("HETCCL_CHECKSUM");
    reloadConfig();
    corruptNextPieces(0);
  }
};

/// Sends `data` and receives it into a buffer of `recvBytes`; returns the receiver's error ("" if none).
std::string sendAndReceive(Link& link, const std::vector<unsigned char>& data, size_t recvBytes,
                           std::vector<unsigned char>* out = nullptr, const Reducer* reducer = nullptr) {
  std::vector<unsigned char> got(recvBytes, 0);
  std::string error;
  std::thread receiver([&] {
    try {
      Request r = link.recv->irecv(got.data(), got.size(), reducer);
      Deadline d = Deadline::afterMs(20000);
      while (!link.recv->test(r))
        if (d.expired()) throw std::runtime_error("receive did not complete");
    } catch (const PeerError& e) {
      error = e.what();
      EXPECT_EQ(e.peer(), 0) << "the error names the sender, rank 0";
    } catch (const std::exception& e) {
      error = std::string("unexpected: ") + e.what();
    }
  });
  try {
    Request s = link.send->isend(data.data(), data.size());
    Deadline d = Deadline::afterMs(20000);
    while (!link.send->test(s) && !d.expired()) std::this_thread::yield();
  } catch (const Error&) {  // the receiver gave up first: its error is the one that matters
  }
  receiver.join();
  // As the engine does after a failure: no transport thread may touch `got` or `data` once we return.
  link.recv->abandon();
  link.send->abandon();
  if (out) *out = got;
  return error;
}

TEST(Crc32c, PublishedVectorsAndBothImplementationsAgree) {
  const std::string digits = "123456789";
  EXPECT_EQ(crc32c(0, digits.data(), digits.size()), 0xE3069283u);
  std::vector<unsigned char> zeros(32, 0), ones(32, 0xff), up(32);
  for (int i = 0; i < 32; ++i) up[i] = static_cast<unsigned char>(i);
  EXPECT_EQ(crc32c(0, zeros.data(), 32), 0x8A9136AAu);  // RFC 3720 B.4
  EXPECT_EQ(crc32c(0, ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(crc32c(0, up.data(), 32), 0x46DD794Eu);
  std::mt19937 rng(7);
  std::vector<unsigned char> buf(70000);
  for (auto& b : buf) b = static_cast<unsigned char>(rng());
  for (size_t len : {0ul, 1ul, 7ul, 8ul, 9ul, 63ul, 4096ul, 65537ul})
    for (size_t off : {0ul, 1ul, 3ul}) {
      uint32_t whole = crc32c(0, buf.data() + off, len);
      EXPECT_EQ(whole, crc32cPortable(0, buf.data() + off, len)) << len << "@" << off;
      EXPECT_EQ(whole, crc32c(crc32c(0, buf.data() + off, len / 3), buf.data() + off + len / 3, len - len / 3));
    }
}

class Integrity : public ::testing::TestWithParam<std::string> {};

TEST_P(Integrity, CleanTransfersPassWithChecksums) {
  ChecksumSetting on("1");
  auto t = makeTransport(GetParam());
  Link link = connectPair(*t, 0, 1);
  for (size_t bytes : {0ul, 1ul, 4097ul, 3000001ul}) {
    auto data = patternBuffer(bytes, bytes);
    EXPECT_TRUE(transfer(link, data) == data) << bytes << " bytes";
  }
}

TEST_P(Integrity, ACorruptedPieceIsDetectedAndNamed) {
  ChecksumSetting on("1");
  auto t = makeTransport(GetParam());
  Link link = connectPair(*t, 0, 1);
  corruptNextPieces(1);
  std::string error = sendAndReceive(link, patternBuffer(3, 1 << 20), 1 << 20);
  EXPECT_NE(error.find("checksum mismatch"), std::string::npos) << error;
  EXPECT_NE(error.find("rank 0"), std::string::npos) << error;
  EXPECT_NE(error.find("host 'testhost'"), std::string::npos) << error;
  EXPECT_NE(error.find("rank 1"), std::string::npos) << error;
}

TEST_P(Integrity, ACorruptedPieceOfAReducingReceiveIsDetected) {
  ChecksumSetting on("1");
  auto t = makeTransport(GetParam());
  Link link = connectPair(*t, 0, 1);
  Reducer add{[](void* dst, const void* in, size_t n, const void*) {
                auto* d = static_cast<int32_t*>(dst);
                auto* s = static_cast<const int32_t*>(in);
                for (size_t i = 0; i < n; ++i) d[i] += s[i];
              },
              nullptr, sizeof(int32_t)};
  corruptNextPieces(1);
  std::string error = sendAndReceive(link, patternBuffer(5, 400000), 400000, nullptr, &add);
  EXPECT_NE(error.find("checksum mismatch"), std::string::npos) << error;
}

TEST_P(Integrity, WithoutChecksumsTheSameCorruptionGoesUnnoticed) {
  ChecksumSetting off("0");
  auto t = makeTransport(GetParam());
  Link link = connectPair(*t, 0, 1);
  corruptNextPieces(1);
  auto data = patternBuffer(9, 1 << 20);
  std::vector<unsigned char> got;
  EXPECT_EQ(sendAndReceive(link, data, data.size(), &got), "");
  EXPECT_NE(got, data) << "the hook corrupted nothing: the detection tests above prove nothing";
}

TEST_P(Integrity, ARankWithoutChecksumsFailsARankThatWantsThem) {
  auto t = makeTransport(GetParam());
  PeerInfo sender = localRank(0), receiver = localRank(1);
  uint64_t token = freshToken();
  Link link;
  {
    ChecksumSetting off("0");
    link.listener = t->listen(receiver);
    link.send = t->connect(link.listener->handle(), ConnectInfo{sender, receiver, token, nullptr}, Deadline::afterMs(10000));
  }
  ChecksumSetting on("1");
  link.recv = t->accept(*link.listener, ConnectInfo{receiver, sender, token, nullptr}, Deadline::afterMs(10000));
  std::string error = sendAndReceive(link, patternBuffer(1, 1000), 1000);
  EXPECT_NE(error.find("HETCCL_CHECKSUM=1 here"), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(Transports, Integrity, ::testing::Values("shm", "tcp"));

TEST(TcpMessageCheck, SizeMismatchIsAnErrorWithoutCheckCalls) {
  auto t = makeTransport("tcp");
  for (auto [sent, posted] : {std::pair<size_t, size_t>{1000, 2000}, {300000, 200000}, {0, 8}, {8, 0}}) {
    Link link = connectPair(*t, 0, 1);
    std::string error = sendAndReceive(link, patternBuffer(2, sent), posted);
    EXPECT_NE(error.find("sent a message of " + std::to_string(sent) + " bytes"), std::string::npos)
        << sent << " vs " << posted << ": " << error;
    EXPECT_NE(error.find("posted a receive of " + std::to_string(posted) + " bytes"), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace hetccl::transport::testing
