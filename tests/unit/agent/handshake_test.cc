// The connection handshake (src/agent/handshake.hpp) over real loopback sockets: both sides learn what
// the other offered only when both hold the secret and the target is the incarnation expected; another
// secret on either side, a stale incarnation or garbage fail with a reason, and the target maps nothing
// before the initiator proved the secret, nor the initiator create one before the target did. ~0.2 s.
#include <gtest/gtest.h>

#include <future>
#include <string>

#include "agent/handshake.hpp"
#include "core/error.hpp"
#include "net/socket.hpp"
#include "socket_pair.hpp"

namespace hetccl::agent {
namespace {

bootstrap::Secret keyOf(const std::string& s) { return agentKey(std::span(reinterpret_cast<const unsigned char*>(s.data()), s.size())); }

Incarnation inc(unsigned char v) {
  Incarnation i{};
  i.fill(v);
  return i;
}

using Pair = SocketPair;

struct Outcome {
  std::string initiatorError, targetError;
  InitiatorOutcome initiator;
  TargetOutcome target;
  bool targetMapped = false;      ///< the target's openOut was called
  bool initiatorCreated = false;  ///< the initiator's createOut was called
  int ucxAsked = 0;               ///< how often the target's acceptUcx was called
  std::string backOpened;
};

Outcome handshake(const bootstrap::Secret& ikey, const bootstrap::Secret& tkey, const Incarnation& expected, const Incarnation& actual,
                  bool offerCopy = false, bool acceptCopy = false, const std::string& outWindow = "/initiator-window",
                  bool offerUcx = false, bool acceptUcx = false) {
  Pair p;
  Outcome run;
  InitiatorOffer offer;
  offer.name = "decode-1";
  offer.self = inc(1);
  offer.expected = expected;
  offer.wantWindows = true;
  offer.offerPeerCopy = offerCopy;
  offer.offerUcx = offerUcx;
  offer.createOut = [&] {
    run.initiatorCreated = true;
    return outWindow;
  };
  offer.openBack = [&](const std::string& n) {
    run.backOpened = n;
    return true;
  };
  TargetSide side;
  side.self = actual;
  side.acceptPeerCopy = acceptCopy;
  side.acceptUcx = [&] {
    ++run.ucxAsked;
    return acceptUcx;
  };
  side.openOut = [&](const std::string& n) {
    run.targetMapped = true;
    return n == "/initiator-window";
  };
  side.createBack = [] { return std::string("/target-window"); };
  auto t = std::async(std::launch::async, [&] {
    try {
      run.target = targetHandshake(p.target, tkey, side, Deadline::afterMs(3000), "initiator");
    } catch (const Error& e) {
      run.targetError = e.what();
      p.target.close();
    }
  });
  try {
    run.initiator = initiatorHandshake(p.initiator, ikey, offer, Deadline::afterMs(3000), "agent 'prefill'");
  } catch (const Error& e) {
    run.initiatorError = e.what();
    p.initiator.close();
  }
  t.get();
  return run;
}

TEST(AgentHandshake, BothSidesLearnTheOffersWhenTheSecretsMatch) {
  const auto key = keyOf("one deployment's secret");
  const Outcome r = handshake(key, key, inc(7), inc(7));
  ASSERT_EQ(r.initiatorError, "");
  ASSERT_EQ(r.targetError, "");
  EXPECT_EQ(r.target.peerName, "decode-1");
  EXPECT_EQ(r.target.peerIncarnation, inc(1));
  EXPECT_TRUE(r.target.outWindowMapped);
  EXPECT_TRUE(r.target.backWindowMapped);
  EXPECT_TRUE(r.initiator.outWindowMapped);
  EXPECT_TRUE(r.initiator.backWindowMapped);
  EXPECT_EQ(r.backOpened, "/target-window");
}

TEST(AgentHandshake, DeviceCopiesAreAgreedOnlyWhenOfferedAndAcceptedIndependentlyOfTheWindows) {
  const auto key = keyOf("one deployment's secret");
  for (const bool offer : {false, true})
    for (const bool accept : {false, true})
      for (const std::string window : {"/initiator-window", "/unmappable"}) {
        SCOPED_TRACE(testing::Message() << "offer " << offer << ", accept " << accept << ", window " << window);
        const Outcome r = handshake(key, key, inc(7), inc(7), offer, accept, window);
        ASSERT_EQ(r.initiatorError, "");
        ASSERT_EQ(r.targetError, "");
        EXPECT_EQ(r.initiator.peerCopy, offer && accept);
        EXPECT_EQ(r.target.peerCopy, offer && accept);
        EXPECT_EQ(r.initiator.outWindowMapped, window == "/initiator-window");  // the Accept's bits do not mix
        EXPECT_EQ(r.target.outWindowMapped, window == "/initiator-window");
      }
}

TEST(AgentHandshake, UcxIsAgreedOnlyWhenOfferedAndAcceptedAndAskedOnlyWhenOffered) {
  const auto key = keyOf("one deployment's secret");
  for (const bool offer : {false, true})
    for (const bool accept : {false, true})
      for (const bool copy : {false, true}) {
        SCOPED_TRACE(testing::Message() << "offer " << offer << ", accept " << accept << ", device copies " << copy);
        const Outcome r = handshake(key, key, inc(7), inc(7), copy, copy, "/initiator-window", offer, accept);
        ASSERT_EQ(r.initiatorError, "");
        ASSERT_EQ(r.targetError, "");
        EXPECT_EQ(r.initiator.ucx, offer && accept);
        EXPECT_EQ(r.target.ucx, offer && accept);
        EXPECT_EQ(r.ucxAsked, offer ? 1 : 0);
        EXPECT_EQ(r.initiator.peerCopy, copy);  // the Accept's bits do not mix
        EXPECT_TRUE(r.initiator.outWindowMapped);
      }
}

TEST(AgentHandshake, UcxIsNeverAskedForBeforeTheInitiatorProvedTheSecret) {
  const Outcome r = handshake(keyOf("another deployment's secret"), keyOf("one deployment's secret"), inc(7), inc(7), false,
                              false, "/initiator-window", true, true);
  EXPECT_NE(r.targetError, "");
  EXPECT_EQ(r.ucxAsked, 0);
  EXPECT_FALSE(r.initiator.ucx);
}

TEST(AgentHandshake, AnotherSecretAtTheTargetFailsTheInitiator) {
  const Outcome r = handshake(keyOf("one deployment's secret"), keyOf("another deployment's secret"), inc(7), inc(7));
  EXPECT_NE(r.initiatorError.find("failed authentication"), std::string::npos) << r.initiatorError;
  EXPECT_NE(r.targetError, "");
  EXPECT_FALSE(r.targetMapped) << "the target mapped a window before the initiator proved the secret";
  EXPECT_FALSE(r.initiatorCreated) << "the initiator created a window for a target that did not prove the secret";
}

TEST(AgentHandshake, AnotherSecretAtTheInitiatorIsRefusedBeforeAnythingIsMapped) {
  // The initiator checks the target's MAC first, so both fail; the target must never map the window.
  const Outcome r = handshake(keyOf("another deployment's secret"), keyOf("one deployment's secret"), inc(7), inc(7));
  EXPECT_NE(r.initiatorError, "");
  EXPECT_NE(r.targetError, "");
  EXPECT_FALSE(r.targetMapped);
}

TEST(AgentHandshake, AStaleIncarnationIsNamedOnBothSides) {
  const auto key = keyOf("one deployment's secret");
  const Outcome r = handshake(key, key, inc(7), inc(8));
  EXPECT_NE(r.initiatorError.find("stale metadata"), std::string::npos) << r.initiatorError;
  EXPECT_NE(r.targetError.find("stale metadata"), std::string::npos) << r.targetError;
  EXPECT_FALSE(r.targetMapped);
  EXPECT_FALSE(r.initiatorCreated);
}

TEST(AgentHandshake, GarbageIsRefusedWithoutWaitingForTheDeadline) {
  Pair p;
  const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  p.initiator.sendAll(junk, sizeof junk, Deadline::afterMs(1000), "t");
  TargetSide side;
  side.self = inc(7);
  bool mapped = false;
  side.openOut = [&](const std::string&) { return mapped = true; };
  const auto t0 = Clock::now();
  EXPECT_THROW(targetHandshake(p.target, keyOf("one deployment's secret"), side, Deadline::afterMs(20000), "x"), Error);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  EXPECT_FALSE(mapped);
}

}  // namespace
}  // namespace hetccl::agent
