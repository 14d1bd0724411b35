// agent_peer's scenarios of peers coming and going (see agent_peer.cc): (d) join / leave, (e) forged blobs,
// (f) stale: the target restarts, (g) killed or silent peer.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "hetccl/hetccl.h"
#include "hetccl/hetccl_agent.h"
#include "peer_support.hpp"
#include "scenarios.hpp"

namespace hetccl::agent_peer {

// ============================================================================== (d) join / leave
//
// init-A writes rounds (a 64 KiB slot each, notification "r<round>") to stay-B and leave-C; leave-C destroys
// its agent after 5 rounds and keeps its memory; join-D starts only then. In rounds 5..9 init-A writes to all
// three at once: stay-B's and join-D's succeed, leave-C's fail with hetcclRemoteError naming it, and leave-C's
// memory holds rounds 0..4 only.

namespace {

constexpr uint64_t kRoundSlot = 64 * kKiB;
constexpr int kMaxRounds = 64;
uint64_t roundBytes(int r) { return kRoundSlot - static_cast<uint64_t>(r % 7) * 3; }
uint64_t roundSeed(uint64_t seed, const std::string& target) { return seed * 31u + fnv1a(target); }
std::string roundMsg(int r) { return "r" + std::to_string(r); }

std::vector<Span> roundSpans(int rounds, uint64_t seed, const std::string& target) {
  std::vector<Span> s;
  for (int r = 0; r < rounds; ++r) s.push_back({r * kRoundSlot, roundBytes(r), roundSeed(seed, target), r * kRoundSlot, r});
  return s;
}

}  // namespace

int roundsTarget(Ctx& c) {
  const int rounds = static_cast<int>(c.args.integer("rounds", 10));
  const int leaveAfter = static_cast<int>(c.args.integer("leave-after", -1));
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R = makeLocal(a, kMaxRounds * kRoundSlot + 4096);
  publishMeta(c, c.name + ".meta", a, {&R});
  for (int k = 0;; ++k) {
    step("take a notification");
    const Notif n = takeNotif(a, c.wait, "round " + std::to_string(k));
    if (n.peer != c.peer()) die("a notification from '%s'", n.peer.c_str());
    if (n.msg == "end") {
      if (k != rounds) die("'end' after %d rounds, expected %d", k, rounds);
      verifyRegion(R.p, R.bytes, roundSpans(rounds, c.seed, c.name), rounds, "at the end");
      break;
    }
    if (n.msg != roundMsg(k)) die("notification '%s', expected '%s'", hexPrefix(n.msg).c_str(), roundMsg(k).c_str());
    verifyRegion(R.p, R.bytes, roundSpans(kMaxRounds, c.seed, c.name), k, "after round " + std::to_string(k));
    if (k + 1 == leaveAfter) {
      step("leave");
      ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
      note("left after round %d (agent destroyed, memory kept)", k);
      signalFile(c, c.name + ".left");
      step("wait for the initiator to finish");
      waitFile(c, c.peer() + ".done", "the initiator's end");
      verifyRegion(R.p, R.bytes, roundSpans(leaveAfter, c.seed, c.name), leaveAfter,
                   "after leaving: only the rounds before");
      return pass("left after " + std::to_string(leaveAfter) + " rounds; nothing written after");
    }
  }
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass(std::to_string(rounds) + " rounds, each verified");
}

namespace {

struct RoundPeer {
  std::string name;
  Local src;
  Meta meta;
};

RoundPeer roundPeer(Ctx& c, hetcclAgent_t a, const std::string& name) {
  RoundPeer p;
  p.name = name;
  const uint64_t s = roundSeed(c.seed, name);
  p.src.bytes = kMaxRounds * kRoundSlot;
  p.src.p = allocBytes(p.src.bytes);
  fillPat(p.src.p, s, 0, p.src.bytes);
  registerAt(a, p.src);
  p.meta = waitMeta(c, name + ".meta");
  loadPeer(a, p.meta.blob, name);
  return p;
}

hetcclAgentXfer_t roundXfer(hetcclAgent_t a, const RoundPeer& p, int r) {
  return prep(a, hetcclAgentWrite, p.name, {range(p.src.id, r * kRoundSlot, p.meta.regions.at(0).id, r * kRoundSlot, roundBytes(r))},
              roundMsg(r), "round " + std::to_string(r) + " to " + p.name);
}

}  // namespace

int joinInitiator(Ctx& c) {
  const std::string stay = c.args.str("stay"), leave = c.args.str("leave"), join = c.args.str("join");
  step("create");
  hetcclAgent_t a = createAgent(c);
  RoundPeer B = roundPeer(c, a, stay), C = roundPeer(c, a, leave);
  for (int r = 0; r < 5; ++r) {
    step("rounds before the leave");
    hetcclAgentXfer_t xb = roundXfer(a, B, r), xc = roundXfer(a, C, r);
    ok(hetcclAgentPostXfer(xb), "post to " + stay);
    ok(hetcclAgentPostXfer(xc), "post to " + leave);
    ok(hetcclAgentWaitXfer(xb), "round to " + stay);
    ok(hetcclAgentWaitXfer(xc), "round to " + leave);
    ok(hetcclAgentReleaseXfer(xb), "release");
    ok(hetcclAgentReleaseXfer(xc), "release");
  }
  checkDataPath(c, "after the first rounds");
  signalFile(c, c.name + ".phase1");
  step("load the joiner");
  RoundPeer D = roundPeer(c, a, join);
  step("wait for the leaver");
  waitFile(c, leave + ".left", "the leaver's destroy");
  for (int r = 5; r < 10; ++r) {
    step("rounds after the leave");
    hetcclAgentXfer_t xb = roundXfer(a, B, r), xc = roundXfer(a, C, r), xd = roundXfer(a, D, r - 5);
    ok(hetcclAgentPostXfer(xb), "post to " + stay);
    ok(hetcclAgentPostXfer(xd), "post to " + join);
    expectRemoteFailure(xc, c.timeout + 5, leave, "round " + std::to_string(r) + " to the agent that left");
    ok(hetcclAgentWaitXfer(xb), "round " + std::to_string(r) + " to " + stay);
    ok(hetcclAgentWaitXfer(xd), "round " + std::to_string(r - 5) + " to " + join);
    for (auto x : {xb, xc, xd}) ok(hetcclAgentReleaseXfer(x), "release");
  }
  step("GenNotif to the agent that left");
  {
    const hetcclResult_t r = hetcclAgentGenNotif(a, leave.c_str(), "x", 1);
    const std::string msg = lastError();
    if (r != hetcclRemoteError) die("GenNotif to the agent that left: %s, expected hetcclRemoteError: %s", codeName(r), msg.c_str());
    mustName(msg, leave, "GenNotif to the agent that left");
  }
  step("forget");
  ok(hetcclAgentForgetRemote(a, leave.c_str()), "hetcclAgentForgetRemote of the agent that left");
  refused(hetcclAgentForgetRemote(a, leave.c_str()), hetcclInvalidArgument, "forgetting it twice");
  {
    const auto rr = std::vector<hetcclAgentRange_t>{range(C.src.id, 0, C.meta.regions[0].id, 0, 8)};
    hetcclAgentXfer_t x = nullptr;
    refused(hetcclAgentPrepXfer(a, hetcclAgentWrite, leave.c_str(), rr.data(), 1, nullptr, 0, &x), hetcclInvalidArgument,
            "a transfer to the forgotten agent");
  }
  step("end");
  ok(hetcclAgentGenNotif(a, stay.c_str(), "end", 3), "GenNotif end to " + stay);
  ok(hetcclAgentGenNotif(a, join.c_str(), "end", 3), "GenNotif end to " + join);
  signalFile(c, c.name + ".done");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("10 rounds to the stayer, 5 to the joiner, the leaver's 5 later ones failed naming it");
}

// ============================================================================== (e) forged blobs
//
// auth-B publishes a blob, registers a second region and publishes a newer one; other-X has another secret.
// init-A (the same secret as auth-B) must refuse with
// hetcclInvalidArgument and a message: auth-B's blob with any one of ~20 bytes flipped, truncated, garbage, empty,
// other-X's blob, its own blob -- before and after loading the genuine one --, and the older blob of auth-B
// after the newer. Nothing changes: auth-B is unknown until the genuine load, and writes to both of auth-B's
// regions (the second only in the newer blob) then arrive.

int forgedTarget(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R0 = makeLocal(a, kMiB);
  publishMeta(c, c.name + ".meta", a, {&R0});
  Local R1 = makeLocal(a, 256 * kKiB);
  publishMeta(c, c.name + ".meta2", a, {&R0, &R1});
  step("first write");
  expectNotif(a, c, c.peer(), "e1", "the write to the first region");
  verifyRegion(R0.p, R0.bytes, {{0, 4096, c.seed + 1, 0, 0}}, 0, "region 0 after e1");
  verifyRegion(R1.p, R1.bytes, {{100, 4096, c.seed + 2, 100, 1}}, 0, "region 1 after e1 (e2 may be on its way)");
  step("second write");
  expectNotif(a, c, c.peer(), "e2", "the write to the second region");
  verifyRegion(R0.p, R0.bytes, {{0, 4096, c.seed + 1, 0, 0}}, 0, "region 0 after e2");
  verifyRegion(R1.p, R1.bytes, {{100, 4096, c.seed + 2, 100, 0}}, 0, "region 1 after e2");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("only the writes through the genuine blobs arrived");
}

int publisherRole(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R0 = makeLocal(a, 64 * kKiB);
  publishMeta(c, c.name + ".meta", a, {&R0});
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("published");
}

namespace {

void expectRefusedLoad(hetcclAgent_t a, const std::string& blob, const std::string& what) {
  char name[HETCCL_AGENT_NAME_MAX + 1] = {0};
  refused(hetcclAgentLoadRemote(a, blob.data(), blob.size(), name), hetcclInvalidArgument, what);
}

}  // namespace

int forgedInitiator(Ctx& c) {
  const std::string other = c.args.str("other");
  step("create");
  hetcclAgent_t a = createAgent(c);
  uint64_t s1 = c.seed + 1, s2 = c.seed + 2;
  Local L1 = makeLocal(a, 4096, &s1);
  Local L2 = makeLocal(a, 4096 + 100, &s2);
  const Meta m1 = waitMeta(c, c.peer() + ".meta");
  const Meta m2 = waitMeta(c, c.peer() + ".meta2");
  const Meta mx = waitMeta(c, other + ".meta");
  const std::string& blob = m1.blob;
  const size_t n = blob.size();
  note("blob of %zu bytes", n);
  std::set<size_t> positions = {0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, n / 4, n / 3, n / 2, 2 * n / 3, 3 * n / 4,
                                n - 64, n - 33, n - 32, n - 17, n - 16, n - 2, n - 1};
  auto forgeries = [&](const char* when) {
    for (size_t pos : positions) {
      if (pos >= n) continue;
      std::string f = blob;
      f[pos] = static_cast<char>(f[pos] ^ 0xFF);
      expectRefusedLoad(a, f, std::string(when) + ": byte " + std::to_string(pos) + " of " + std::to_string(n) + " flipped");
    }
  };
  step("forged blobs");
  forgeries("before the genuine load");
  step("other secret");
  expectRefusedLoad(a, mx.blob, "a blob made with another secret");
  step("truncated");
  for (size_t len : {n - 1, n - 16, n - 32, n / 2, size_t{16}, size_t{1}})
    if (len < n) expectRefusedLoad(a, blob.substr(0, len), "the blob truncated to " + std::to_string(len) + " bytes");
  {
    char name[HETCCL_AGENT_NAME_MAX + 1] = {0};
    refused(hetcclAgentLoadRemote(a, blob.data(), 0, name), hetcclInvalidArgument, "a blob of 0 bytes");
  }
  step("garbage");
  expectRefusedLoad(a, patString(c.seed + 99, n), "random bytes of a blob's size");
  step("own blob");
  expectRefusedLoad(a, exportBlob(a), "this agent's own blob");
  step("nothing changed");
  {
    const auto rr = std::vector<hetcclAgentRange_t>{range(L1.id, 0, m1.regions[0].id, 0, 4096)};
    hetcclAgentXfer_t x = nullptr;
    refused(hetcclAgentPrepXfer(a, hetcclAgentWrite, c.peer().c_str(), rr.data(), 1, nullptr, 0, &x), hetcclInvalidArgument,
            "a transfer to the peer whose blobs were all refused");
    refused(hetcclAgentForgetRemote(a, c.peer().c_str()), hetcclInvalidArgument, "forgetting the peer never loaded");
  }
  step("genuine load");
  loadPeer(a, m1.blob, c.peer());
  step("forged blobs after the load");
  forgeries("after the genuine load");
  expectRefusedLoad(a, mx.blob, "after the genuine load: a blob made with another secret");
  step("newer blob, then the older");
  loadPeer(a, m2.blob, c.peer());
  expectRefusedLoad(a, m1.blob, "the older blob of the same incarnation after the newer");
  step("writes");
  if (m2.regions.size() != 2) die("the newer blob's file lists %zu regions", m2.regions.size());
  hetcclAgentXfer_t x1 = prep(a, hetcclAgentWrite, c.peer(), {range(L1.id, 0, m2.regions[0].id, 0, 4096)}, "e1", "e1");
  runXfer(x1, "the write to the first region");
  checkDataPath(c, "after the first write");
  hetcclAgentXfer_t x2 = prep(a, hetcclAgentWrite, c.peer(), {range(L2.id, 100, m2.regions[1].id, 100, 4096)}, "e2", "e2");
  runXfer(x2, "the write to the region only the newer blob lists");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("every forged, foreign, truncated, own and older blob refused; the genuine ones work");
}

// ============================================================================== (f) stale: the target restarts
//
// restart-B (incarnation 1) takes a write, then destroys its agent and exits; the driver starts incarnation 2
// under the same name on the same address. init-A, still holding the first blob: a new transfer, a second post
// of it and a GenNotif must fail naming restart-B, and incarnation 2 checks its region is untouched; after
// loading the new blob a write arrives. Incarnation 2 then stops too and incarnation 3 comes up: init-A loads
// its blob at once (the connection to incarnation 2 is dead by then) and its first write must arrive.

namespace {

int staleThird(Ctx& c, hetcclAgent_t a, Local& R);

}  // namespace

int staleTarget(Ctx& c) {
  const int incarnation = static_cast<int>(c.args.integer("incarnation", 1));
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R = makeLocal(a, kMiB);
  publishMeta(c, c.name + ".meta." + std::to_string(incarnation), a, {&R});
  if (incarnation == 1) {
    step("first write");
    expectNotif(a, c, c.peer(), "f1", "the write to incarnation 1");
    verifyRegion(R.p, R.bytes, {{0, 64 * kKiB, c.seed + 1, 0, 0}}, 0, "incarnation 1 after its write");
    step("destroy");
    ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
    return pass("incarnation 1 got its write and stopped");
  }
  if (incarnation == 3) return staleThird(c, a, R);
  step("wait for the stale attempts");
  waitFile(c, c.peer() + ".stale_tried", "the initiator's attempts with the old blob");
  verifyRegion(R.p, R.bytes, {}, 0, "incarnation 2 after the attempts through the stale blob (nothing written)");
  Notif n;
  if (tryNotif(a, &n)) die("incarnation 2 got a notification through the stale blob: %s", hexPrefix(n.msg).c_str());
  signalFile(c, c.name + ".clean");
  step("write through the new blob");
  expectNotif(a, c, c.peer(), "f2", "the write to incarnation 2");
  verifyRegion(R.p, R.bytes, {{0, 64 * kKiB, c.seed + 2, 0, 0}}, 0, "incarnation 2 after its write");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("nothing arrived through the stale blob; the write through the new one did");
}

namespace {

// Incarnation 3: the initiator loads its blob as soon as it appears, with no failed transfer in between.
int staleThird(Ctx& c, hetcclAgent_t a, Local& R) {
  step("write through the newest blob");
  expectNotif(a, c, c.peer(), "f3", "the write to incarnation 3");
  verifyRegion(R.p, R.bytes, {{0, 64 * kKiB, c.seed + 4, 0, 0}}, 0, "incarnation 3 after its write");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("the write through the blob loaded right after the restart arrived");
}

}  // namespace

int staleInitiator(Ctx& c) {
  const std::string peer = c.peer();
  step("create");
  hetcclAgent_t a = createAgent(c);
  uint64_t s1 = c.seed + 1, s2 = c.seed + 2, sStale = c.seed + 3;
  Local L1 = makeLocal(a, 64 * kKiB, &s1), L2 = makeLocal(a, 64 * kKiB, &s2), LS = makeLocal(a, 64 * kKiB, &sStale);
  step("incarnation 1");
  const Meta m1 = waitMeta(c, peer + ".meta.1");
  loadPeer(a, m1.blob, peer);
  hetcclAgentXfer_t x1 = prep(a, hetcclAgentWrite, peer, {range(L1.id, 0, m1.regions[0].id, 0, 64 * kKiB)}, "f1", "f1");
  runXfer(x1, "the write to incarnation 1");
  checkDataPath(c, "after the write to incarnation 1");
  step("wait for incarnation 2");
  const Meta m2 = waitMeta(c, peer + ".meta.2");
  step("transfers through the stale blob");
  hetcclAgentXfer_t xs =
      prep(a, hetcclAgentWrite, peer, {range(LS.id, 0, m1.regions[0].id, 0, 64 * kKiB)}, "stale", "a write through the old blob");
  for (int attempt = 1; attempt <= 2; ++attempt) {
    std::string msg;
    const std::string what = "post " + std::to_string(attempt) + " of a write through the old blob";
    const hetcclResult_t r = postToEnd(xs, c.timeout + 5, what, &msg);
    if (r == hetcclSuccess) die("%s succeeded: the restarted agent accepted a transfer meant for its old incarnation", what.c_str());
    mustName(msg, peer, what);
    // The second post connects afresh (the first may meet the dead connection to incarnation 1): the agent
    // answering there is incarnation 2, which the blob does not describe -- "stale" (the header's word).
    if (attempt == 2 && msg.find("stale") == std::string::npos)
      die("%s: %s, but the message does not say 'stale': %s", what.c_str(), codeName(r), msg.c_str());
    note("failed as expected: %s: %s: %s", what.c_str(), codeName(r), msg.c_str());
  }
  {
    const hetcclResult_t r = hetcclAgentGenNotif(a, peer.c_str(), "stale-notif", 11);
    const std::string msg = lastError();
    if (r == hetcclSuccess) die("GenNotif through the old blob succeeded");
    mustName(msg, peer, "GenNotif through the old blob");
    note("failed as expected: GenNotif through the old blob: %s: %s", codeName(r), msg.c_str());
  }
  signalFile(c, c.name + ".stale_tried");
  waitFile(c, peer + ".clean", "incarnation 2's check");
  step("the new blob");
  loadPeer(a, m2.blob, peer);
  hetcclAgentXfer_t x2 = prep(a, hetcclAgentWrite, peer, {range(L2.id, 0, m2.regions[0].id, 0, 64 * kKiB)}, "f2", "f2");
  runXfer(x2, "the write to incarnation 2");
  step("incarnation 3, loaded as soon as it is up");
  uint64_t s3 = c.seed + 4;
  Local L3 = makeLocal(a, 64 * kKiB, &s3);
  const Meta m3 = waitMeta(c, peer + ".meta.3");
  loadPeer(a, m3.blob, peer);
  hetcclAgentXfer_t x3 = prep(a, hetcclAgentWrite, peer, {range(L3.id, 0, m3.regions[0].id, 0, 64 * kKiB)}, "f3", "f3");
  runXfer(x3, "the first write to incarnation 3, right after loading its blob");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("the stale blob failed naming the peer; the new one works");
}

// ============================================================================== (g) killed or silent peer
//
// init-A streams 1 MiB writes to victim-B and 4 KiB writes to live-C (each with a notification). After 10
// writes to victim-B it signals; the driver SIGKILLs (--mode kill) or SIGSTOPs (--mode stop) victim-B. The
// write to it then in flight, and the next posts, must fail with hetcclRemoteError naming victim-B: after a
// kill within the timeout of the kill, after a stop within the timeout of the post (+3 s of slack); meanwhile
// writes to live-C go on (up to 20 while victim-B's is pending, 10 more after its failure) and live-C checks
// each slot and, at the end, all.

namespace {

constexpr uint64_t kStreamSlot = 4 * kKiB;
constexpr int kStreamSlots = 4096;
std::string streamMsg(uint32_t r) {
  std::string s = "s";
  s.append(reinterpret_cast<const char*>(&r), 4);
  return s;
}

}  // namespace

int sinkTarget(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R = makeLocal(a, 4 * kMiB);
  publishMeta(c, c.name + ".meta", a, {&R});
  step("take notifications until killed");
  const double end = mono() + c.wait;
  Notif n;
  while (mono() < end) {
    if (!tryNotif(a, &n)) napMicros(200);
  }
  die("still alive after %.0f s: the driver should have killed this process", c.wait);
}

int streamTarget(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R = makeLocal(a, kStreamSlots * kStreamSlot + 4096);
  publishMeta(c, c.name + ".meta", a, {&R});
  const uint64_t s = c.seed + 7;
  for (uint32_t k = 0;; ++k) {
    step("take a notification");
    const Notif n = takeNotif(a, c.wait, "write " + std::to_string(k));
    if (n.peer != c.peer()) die("a notification from '%s'", n.peer.c_str());
    if (n.msg.size() == 7 && n.msg.compare(0, 3, "end") == 0) {
      uint32_t total;
      std::memcpy(&total, n.msg.data() + 3, 4);
      if (total != k) die("'end' says %u writes, %u arrived", total, k);
      std::vector<Span> spans;
      for (uint32_t r = 0; r < total; ++r) spans.push_back({r * kStreamSlot, kStreamSlot, s, r * kStreamSlot, 0});
      verifyRegion(R.p, R.bytes, spans, 0, "at the end");
      break;
    }
    if (n.msg != streamMsg(k)) die("notification %s, expected write %u", hexPrefix(n.msg).c_str(), k);
    checkBytes(R.p + k * kStreamSlot, kStreamSlot, Want::Pattern, s, k * kStreamSlot, k * kStreamSlot,
               "write " + std::to_string(k));
  }
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("every write arrived while the other target died");
}

int streamInitiator(Ctx& c) {
  const std::string victim = c.args.str("victim"), live = c.args.str("live"), mode = c.args.str("mode");
  if (mode != "kill" && mode != "stop") die("--mode kill|stop");
  step("create");
  hetcclAgent_t a = createAgent(c);
  uint64_t sv = c.seed + 5, sl = c.seed + 7;
  Local LV = makeLocal(a, 4 * kMiB, &sv);
  Local LL = makeLocal(a, kStreamSlots * kStreamSlot, &sl);
  const Meta mv = waitMeta(c, victim + ".meta"), ml = waitMeta(c, live + ".meta");
  loadPeer(a, mv.blob, victim);
  loadPeer(a, ml.blob, live);
  auto victimXfer = [&](int r) {
    return prep(a, hetcclAgentWrite, victim, {range(LV.id, (r % 4) * kMiB, mv.regions[0].id, (r % 4) * kMiB, kMiB)},
                u64msg('v', static_cast<uint64_t>(r)), "write to " + victim);
  };
  hetcclAgentXfer_t xv = nullptr;
  bool vActive = false, vFailed = false, signalled = false;
  double vPost = 0, vFailWall = 0, vFailAfterPost = 0;
  int vDone = 0, whilePending = 0, maxWhilePending = 0;
  uint32_t liveRounds = 0, liveAtFailure = 0;
  std::string vMsg;
  step("stream");
  for (;;) {
    if (!vFailed && !vActive) {
      if (xv) ok(hetcclAgentReleaseXfer(xv), "release");
      xv = victimXfer(vDone);
      ok(hetcclAgentPostXfer(xv), "post to " + victim);
      vActive = true;
      vPost = mono();
      whilePending = 0;
    }
    if (!vActive || whilePending < 20) {
      if (liveRounds >= kStreamSlots) die("%s's failure not seen after %d writes to %s", victim.c_str(), kStreamSlots, live.c_str());
      hetcclAgentXfer_t xl = prep(a, hetcclAgentWrite, live,
                                  {range(LL.id, liveRounds * kStreamSlot, ml.regions[0].id, liveRounds * kStreamSlot, kStreamSlot)},
                                  streamMsg(liveRounds), "write to " + live);
      runXfer(xl, "write " + std::to_string(liveRounds) + " to " + live);
      ok(hetcclAgentReleaseXfer(xl), "release");
      ++liveRounds;
      if (vActive) maxWhilePending = std::max(maxWhilePending, ++whilePending);
    } else {
      napMicros(1000);  // polling the victim's write
    }
    if (vActive) {
      const hetcclResult_t r = hetcclAgentCheckXfer(xv);
      if (r == hetcclSuccess) {
        vActive = false;
        ++vDone;
      } else if (r != hetcclInProgress) {
        vMsg = lastError();
        vFailWall = wallClock();
        vFailAfterPost = mono() - vPost;
        if (r != hetcclRemoteError) die("the write to %s ended with %s, expected hetcclRemoteError: %s", victim.c_str(), codeName(r), vMsg.c_str());
        if (!signalled) die("the write to %s failed before it was killed or stopped: %s", victim.c_str(), vMsg.c_str());
        mustName(vMsg, victim, "the failed write to " + victim);
        vActive = false;
        vFailed = true;
        liveAtFailure = liveRounds;
        note("the write to %s in flight failed: %s", victim.c_str(), vMsg.c_str());
      } else if (mono() - vPost > c.timeout + 3) {
        die("the write to %s still in progress %.1f s after its post (timeout %.1f s)", victim.c_str(), mono() - vPost, c.timeout);
      }
    }
    if (!signalled && vDone >= 10) {
      signalFile(c, c.name + ".streaming");
      signalled = true;
    }
    if (vFailed && liveRounds >= liveAtFailure + 10) break;
  }
  step("timing");
  if (mode == "kill") {
    const std::string killed = waitFile(c, victim + ".killed", "the driver's kill time");
    const double delay = vFailWall - std::strtod(killed.c_str(), nullptr);
    note("the failure was seen %.3f s after the kill (%.1f s after that write's post)", delay, vFailAfterPost);
    if (delay > c.timeout + 2) die("the failure was seen %.1f s after the kill, beyond the timeout of %.1f s", delay, c.timeout);
  } else {
    note("the failure was seen %.2f s after that write's post (timeout %.1f s); %d writes to %s completed while it was pending",
         vFailAfterPost, c.timeout, maxWhilePending, live.c_str());
    if (vFailAfterPost > c.timeout + 3) die("the failure came %.1f s after the post, timeout %.1f s", vFailAfterPost, c.timeout);
    if (maxWhilePending < 5) die("only %d writes to %s completed while the write to the silent peer was pending", maxWhilePending, live.c_str());
  }
  checkDataPath(c, "with a connection to the live target");
  step("later posts to the victim");
  const int later = mode == "kill" ? 3 : 1;
  for (int i = 0; i < later; ++i) {
    const double t = mono();
    hetcclAgentXfer_t x = victimXfer(i);
    expectRemoteFailure(x, c.timeout + 5, victim, "a later post to " + victim);
    note("  (after %.2f s)", mono() - t);
    ok(hetcclAgentReleaseXfer(x), "release");
  }
  step("end");
  std::string end = "end";
  end.append(reinterpret_cast<const char*>(&liveRounds), 4);
  ok(hetcclAgentGenNotif(a, live.c_str(), end.data(), end.size()), "GenNotif end to " + live);
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass(std::to_string(vDone) + " writes to the victim, then failures naming it; " + std::to_string(liveRounds) +
              " writes to the live target");
}

}  // namespace hetccl::agent_peer
