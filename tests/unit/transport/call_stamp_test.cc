// The call stamp's wire format, validation and the texts a mismatch produces.
#include "transport/base/call_stamp.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace hetccl::transport {
namespace {

CallStamp allReduce12() {
  CallStamp s;
  s.kind = 0;  // AllReduce
  s.type = 7;  // float32
  s.op = 0;    // sum
  s.seq = 12;
  s.bytes = 4096;
  s.piece = 0;
  return s;
}

TEST(CallStamp, WireLayoutIsFourLittleEndianWords) {
  CallStamp s = allReduce12();
  s.piece = 3;
  unsigned char b[kCallStampBytes];
  encodeCallStamp(s, b);
  // word0: magic "HCS1" in the low 32 bits, then kind, type, op, flags.
  const unsigned char word0[8] = {0x31, 0x53, 0x43, 0x48, 0, 7, 0, 0};
  EXPECT_EQ(0, std::memcmp(b, word0, 8));
  EXPECT_EQ(b[8], 12);
  EXPECT_EQ(b[16], 0x00);
  EXPECT_EQ(b[17], 0x10);  // 4096 = 0x1000
  EXPECT_EQ(b[24], 3);
  for (int i : {9, 10, 15, 18, 23, 25, 31}) EXPECT_EQ(b[i], 0) << i;
  CallStampWords w = callStampWords(s);
  EXPECT_EQ(w[0], 0x0000'0700'4843'5331ull);
  EXPECT_EQ(w[1], 12u);
  EXPECT_EQ(w[2], 4096u);
  EXPECT_EQ(w[3], 3u);
}

TEST(CallStamp, RoundTripsEveryField) {
  CallStamp s;
  s.kind = 8;
  s.type = kNoType;
  s.op = kNoOp;
  s.seq = 0xfedcba9876543210ull;
  s.bytes = (1ull << 40) + 5;
  s.piece = 77;
  s.root = 5;
  unsigned char b[kCallStampBytes];
  encodeCallStamp(s, b);
  std::optional<CallStamp> d = decodeCallStamp(b);
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, s);
}

TEST(CallStamp, RejectsBadMagicAndReservedBits) {
  unsigned char b[kCallStampBytes] = {};
  std::string why;
  EXPECT_FALSE(decodeCallStamp(b, &why));  // all zero: what stale or unwritten memory looks like
  EXPECT_NE(why.find("bad call stamp magic 0x0"), std::string::npos) << why;

  encodeCallStamp(allReduce12(), b);
  b[7] = 0x01;  // a flag bit
  why.clear();
  EXPECT_FALSE(decodeCallStamp(b, &why));
  EXPECT_NE(why.find("reserved flag bits"), std::string::npos) << why;

  encodeCallStamp(allReduce12(), b);
  b[0] ^= 0x40;
  EXPECT_FALSE(decodeCallStamp(b));

  CallStampWords w = callStampWords(allReduce12());
  w[3] |= 0xffffffffull << 32;  // root + 1 beyond any rank
  why.clear();
  EXPECT_FALSE(decodeCallStampWords(w, &why));
  EXPECT_NE(why.find("not a rank"), std::string::npos) << why;
}

TEST(CallStamp, MatchesComparesEveryField) {
  const CallStamp base = allReduce12();
  EXPECT_TRUE(matches(base, base));
  CallStamp s = base;
  s.kind = 2;
  EXPECT_FALSE(matches(s, base));
  s = base, s.type = 2;
  EXPECT_FALSE(matches(s, base));
  s = base, s.op = 2;
  EXPECT_FALSE(matches(s, base));
  s = base, s.seq = 11;
  EXPECT_FALSE(matches(s, base));
  s = base, s.bytes = 4100;
  EXPECT_FALSE(matches(s, base));
  s = base, s.piece = 1;
  EXPECT_FALSE(matches(s, base));
  s = base, s.root = 0;
  EXPECT_FALSE(matches(s, base));
}

TEST(CallStamp, DescribesCalls) {
  EXPECT_EQ(describeCall(allReduce12()), "AllReduce #12 (4096 B, float32, sum)");
  CallStamp send;
  send.kind = 7;
  send.type = 2;
  send.seq = 3;
  send.bytes = 8;
  send.piece = 2;
  EXPECT_EQ(describeCall(send), "Send #3 (8 B, int32, piece 2)");
  CallStamp group;
  group.seq = 9;
  group.bytes = 0;
  EXPECT_EQ(describeCall(group), "group #9 (0 B)");
  CallStamp bcast;
  bcast.kind = 1;
  bcast.type = 8;
  bcast.seq = 4;
  bcast.bytes = 8;
  bcast.root = 2;
  EXPECT_EQ(describeCall(bcast), "Broadcast #4 (8 B, float64, root 2)");
  EXPECT_EQ(callStampWords(bcast)[3], 3ull << 32);
  CallStamp odd;
  odd.kind = 77;
  odd.type = 99;
  odd.op = 42;
  EXPECT_EQ(describeCall(odd), "kind 77 #0 (0 B, type 99, op 42)");
}

TEST(CallStamp, MismatchMessageNamesBothCalls) {
  CallStamp expected = allReduce12();
  expected.kind = 2;  // Reduce
  EXPECT_EQ(callMismatchMessage(3, allReduce12(), expected),
            "rank 3 sent AllReduce #12 (4096 B, float32, sum), this rank expected Reduce #12 (4096 B, float32, sum)");
}

}  // namespace
}  // namespace hetccl::transport
