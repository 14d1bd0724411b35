// agent_peer's scenarios of misuse (see agent_peer.cc): (h) bad arguments, (i) cancel, (j) a deregistered region.
#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hetccl/hetccl.h"
#include "hetccl/hetccl_agent.h"
#include "peer_support.hpp"
#include "scenarios.hpp"

namespace hetccl::agent_peer {

// ============================================================================== (h) bad arguments
//
// Every documented refusal, each checked for its code and a message: creation, metadata, load, forget,
// registration, strided ranges, prepare (unknown peer / region, ranges out of bounds locally and remotely,
// overflowing offsets, 0 bytes, no ranges, more than 4M ranges, a notification of 4097 bytes), post while a post
// runs, post after the local region was deregistered, released handles, GenNotif, GetNotif (a message larger
// than the capacity stays queued). The refused transfers' sources hold a poison pattern aimed at bad-B's
// regions: bad-B checks at the end that only the two good writes arrived.

int badTarget(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R0 = makeLocal(a, kMiB), R1 = makeLocal(a, 64 * kMiB);
  publishMeta(c, c.name + ".meta", a, {&R0, &R1});
  step("load the initiator and notify it");
  const Meta ma = waitMeta(c, c.peer() + ".meta");
  loadPeer(a, ma.blob, c.peer());
  const std::string hello = patString(c.seed + 50, 100);
  ok(hetcclAgentGenNotif(a, c.peer().c_str(), hello.data(), hello.size()), "GenNotif to the initiator");
  step("the good writes");
  expectNotif(a, c, c.peer(), patString(c.seed + 51, HETCCL_AGENT_NOTIF_MAX), "the 4096-byte notification of the first write");
  expectNotif(a, c, c.peer(), "big", "the big write");
  expectNotif(a, c, c.peer(), "end", "the end");
  verifyRegion(R0.p, R0.bytes, {{0, 1000, c.seed + 1, 0, 0}}, 0, "region 0: only the good write");
  verifyRegion(R1.p, R1.bytes, {{0, R1.bytes, c.seed + 2, 0, 0}}, 0, "region 1: the big write");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("only the two good writes arrived");
}

int badInitiator(Ctx& c) {
  const std::string peer = c.peer();
  const hetcclResult_t IA = hetcclInvalidArgument;
  step("options and create");
  refused(hetcclAgentOptionsInit(nullptr), IA, "hetcclAgentOptionsInit(NULL)");
  hetcclAgentOptions_t o;
  ok(hetcclAgentOptionsInit(&o), "hetcclAgentOptionsInit");
  if (o.device != -1) die("hetcclAgentOptionsInit: device %d, expected -1 (host memory only)", o.device);
  o.secret = kSecret.data();
  o.secretBytes = kSecret.size();
  o.listenAddress = "127.0.0.1:0";
  o.timeoutSeconds = c.timeout;
  hetcclAgent_t tmp = nullptr;
  refused(hetcclAgentCreate(nullptr, &o, &tmp), IA, "create: NULL name");
  refused(hetcclAgentCreate("", &o, &tmp), IA, "create: empty name");
  refused(hetcclAgentCreate(std::string(HETCCL_AGENT_NAME_MAX + 1, 'a').c_str(), &o, &tmp), IA, "create: a name of 64 characters");
  refused(hetcclAgentCreate("bad name", &o, &tmp), IA, "create: a name with a space");
  refused(hetcclAgentCreate("bad/name", &o, &tmp), IA, "create: a name with a slash");
  refused(hetcclAgentCreate("bad\xc3\xa9", &o, &tmp), IA, "create: a name with a non-ASCII character");
  refused(hetcclAgentCreate("ok-name", &o, nullptr), IA, "create: NULL agent pointer");
  {
    hetcclAgentOptions_t s = o;
    s.secretBytes = 15;
    refused(hetcclAgentCreate("ok-name", &s, &tmp), IA, "create: a secret of 15 bytes");
    s.secret = nullptr;
    s.secretBytes = 0;
    refused(hetcclAgentCreate("ok-name", &s, &tmp), IA, "create: no secret (HETCCL_SECRET unset)");
    refused(hetcclAgentCreate("ok-name", nullptr, &tmp), IA, "create: NULL options and HETCCL_SECRET unset");
    s = o;
    s.listenAddress = "not-an-address";
    refused(hetcclAgentCreate("ok-name", &s, &tmp), IA, "create: listen address 'not-an-address'");
    s.listenAddress = "127.0.0.1:70000";
    refused(hetcclAgentCreate("ok-name", &s, &tmp), IA, "create: port 70000");
    const std::string busy = "127.0.0.1:" + c.args.str("busy-port");
    s.listenAddress = busy.c_str();
    refused(hetcclAgentCreate("ok-name", &s, &tmp), hetcclSystemError, "create: " + busy + " (held by another socket)");
  }
  {
    const std::string longest = std::string("Az09._:-") + std::string(HETCCL_AGENT_NAME_MAX - 8, 'n');
    ok(hetcclAgentCreate(longest.c_str(), &o, &tmp), "create: a name of 63 characters of every allowed kind");
    ok(hetcclAgentDestroy(tmp), "destroy it");
  }
  refused(hetcclAgentDestroy(nullptr), IA, "hetcclAgentDestroy(NULL)");
  hetcclAgent_t a = nullptr;
  ok(hetcclAgentCreate(c.name.c_str(), &o, &a), "create " + c.name);

  step("register");
  std::vector<uint8_t> scratch(64);
  hetcclAgentMem_t mtmp = nullptr;
  uint32_t idtmp = 0;
  refused(hetcclAgentRegister(nullptr, scratch.data(), 64, &mtmp, &idtmp), IA, "register: NULL agent");
  refused(hetcclAgentRegister(a, nullptr, 64, &mtmp, &idtmp), IA, "register: NULL buffer");
  refused(hetcclAgentRegister(a, scratch.data(), 0, &mtmp, &idtmp), IA, "register: 0 bytes");
  refused(hetcclAgentRegister(a, scratch.data(), 64, nullptr, &idtmp), IA, "register: NULL handle pointer");
  uint64_t s1 = c.seed + 1, s2 = c.seed + 2, sBad = c.seed + 666;
  Local L1 = makeLocal(a, 4096, &s1);       // the good small write
  Local LB = makeLocal(a, 64 * kMiB, &s2);  // the big write
  Local LP = makeLocal(a, kMiB, &sBad);     // poison: the refused transfers' source
  {
    hetcclAgentMem_t nullMem = nullptr;
    ok(hetcclAgentRegister(a, scratch.data(), 64, &nullMem, nullptr), "register: id pointer NULL (allowed)");
    ok(hetcclAgentDeregister(nullMem), "deregister it");
  }
  refused(hetcclAgentMemQuery(nullptr, &idtmp, nullptr, nullptr), IA, "hetcclAgentMemQuery(NULL)");
  refused(hetcclAgentMemQuery(L1.mem, nullptr, nullptr, nullptr), IA, "hetcclAgentMemQuery: NULL id pointer");
  ok(hetcclAgentMemQuery(L1.mem, &idtmp, nullptr, nullptr), "hetcclAgentMemQuery with kind and bytes NULL");
  refused(hetcclAgentDeregister(nullptr), IA, "hetcclAgentDeregister(NULL)");

  step("metadata");
  size_t need = 0;
  ok(hetcclAgentGetMetadata(a, nullptr, &need), "metadata size");
  {
    std::string small(need - 1, '\0');
    size_t cap = need - 1;
    refused(hetcclAgentGetMetadata(a, small.data(), &cap), IA, "metadata: capacity one byte short");
    if (cap != need) die("metadata: capacity too small: *bytes %llu, expected the size needed %llu", ull(cap), ull(need));
    refused(hetcclAgentGetMetadata(nullptr, nullptr, &cap), IA, "metadata: NULL agent");
    refused(hetcclAgentGetMetadata(a, small.data(), nullptr), IA, "metadata: NULL size pointer");
  }
  publishMeta(c, c.name + ".meta", a, {&L1});

  step("load");
  const Meta m = waitMeta(c, peer + ".meta");
  char nm[HETCCL_AGENT_NAME_MAX + 1];
  refused(hetcclAgentLoadRemote(nullptr, m.blob.data(), m.blob.size(), nm), IA, "load: NULL agent");
  refused(hetcclAgentLoadRemote(a, nullptr, m.blob.size(), nm), IA, "load: NULL blob");
  refused(hetcclAgentLoadRemote(a, m.blob.data(), m.blob.size(), nullptr), IA, "load: NULL name buffer");
  loadPeer(a, m.blob, peer);
  refused(hetcclAgentForgetRemote(nullptr, peer.c_str()), IA, "forget: NULL agent");
  refused(hetcclAgentForgetRemote(a, nullptr), IA, "forget: NULL name");
  refused(hetcclAgentForgetRemote(a, "nobody"), IA, "forget: an unknown peer");
  const uint32_t r0 = m.regions.at(0).id, r1 = m.regions.at(1).id;
  const uint64_t r0bytes = m.regions[0].bytes;

  step("strided ranges");
  refused(hetcclAgentStridedRanges(nullptr, 3, LP.id, 0, 8, r0, 0, 8, 8), IA, "strided ranges: NULL array");

  step("prepare");
  hetcclAgentXfer_t x = nullptr;
  auto badPrep = [&](hetcclAgent_t ag, int op, const char* pr, const std::vector<hetcclAgentRange_t>& rr,
                     const void* notif, size_t nb, hetcclAgentXfer_t* out, const std::string& what) {
    refused(hetcclAgentPrepXfer(ag, static_cast<hetcclAgentOp_t>(op), pr, rr.empty() ? nullptr : rr.data(), rr.size(), notif,
                                nb, out),
            IA, "prepare: " + what);
  };
  const std::vector<hetcclAgentRange_t> poison = {range(LP.id, 0, r0, 1000, 4096)};
  const std::string n4097(HETCCL_AGENT_NOTIF_MAX + 1, 'n');
  badPrep(nullptr, hetcclAgentWrite, peer.c_str(), poison, nullptr, 0, &x, "NULL agent");
  badPrep(a, 2, peer.c_str(), poison, nullptr, 0, &x, "op 2");
  badPrep(a, -1, peer.c_str(), poison, nullptr, 0, &x, "op -1");
  badPrep(a, hetcclAgentWrite, nullptr, poison, nullptr, 0, &x, "NULL peer");
  badPrep(a, hetcclAgentWrite, "nobody", poison, nullptr, 0, &x, "unknown peer");
  refused(hetcclAgentPrepXfer(a, hetcclAgentWrite, peer.c_str(), nullptr, 1, nullptr, 0, &x), IA, "prepare: NULL ranges");
  refused(hetcclAgentPrepXfer(a, hetcclAgentWrite, peer.c_str(), poison.data(), 0, nullptr, 0, &x), IA, "prepare: 0 ranges");
  badPrep(a, hetcclAgentWrite, peer.c_str(), poison, nullptr, 0, nullptr, "NULL transfer pointer");
  badPrep(a, hetcclAgentWrite, peer.c_str(), {range(LP.id, 0, r0, 1000, 0)}, nullptr, 0, &x, "a range of 0 bytes");
  badPrep(a, hetcclAgentWrite, peer.c_str(), {poison[0], range(LP.id, 8192, r0, 9000, 0)}, nullptr, 0, &x,
          "a second range of 0 bytes");
  const uint32_t unknownLocal = std::max({L1.id, LB.id, LP.id}) + 1000;
  badPrep(a, hetcclAgentWrite, peer.c_str(), {range(unknownLocal, 0, r0, 1000, 8)}, nullptr, 0, &x, "unknown local region id");
  badPrep(a, hetcclAgentWrite, peer.c_str(), {range(0xFFFFFFFFu, 0, r0, 1000, 8)}, nullptr, 0, &x, "local region id 0xffffffff");
  const uint32_t unknownRemote = std::max(r0, r1) + 1000;
  badPrep(a, hetcclAgentWrite, peer.c_str(), {range(LP.id, 0, unknownRemote, 0, 8)}, nullptr, 0, &x, "unknown remote region id");
  badPrep(a, hetcclAgentRead, peer.c_str(), {range(LP.id, 0, 0xFFFFFFFFu, 0, 8)}, nullptr, 0, &x, "read: remote region id 0xffffffff");
  for (int op : {hetcclAgentWrite, hetcclAgentRead}) {
    const std::string o2 = op == hetcclAgentWrite ? "write: " : "read: ";
    badPrep(a, op, peer.c_str(), {range(LP.id, LP.bytes - 10, r0, 1000, 11)}, nullptr, 0, &x, o2 + "local range one byte past the end");
    badPrep(a, op, peer.c_str(), {range(LP.id, LP.bytes, r0, 1000, 1)}, nullptr, 0, &x, o2 + "local range starting at the end");
    badPrep(a, op, peer.c_str(), {range(LP.id, UINT64_MAX - 5, r0, 1000, 10)}, nullptr, 0, &x, o2 + "local offset + bytes overflowing");
    badPrep(a, op, peer.c_str(), {range(LP.id, 0, r0, 1000, UINT64_MAX)}, nullptr, 0, &x, o2 + "bytes UINT64_MAX");
    badPrep(a, op, peer.c_str(), {range(LP.id, 0, r0, r0bytes - 10, 11)}, nullptr, 0, &x, o2 + "remote range one byte past the end");
    badPrep(a, op, peer.c_str(), {range(LP.id, 0, r0, r0bytes, 1)}, nullptr, 0, &x, o2 + "remote range starting at the end");
    badPrep(a, op, peer.c_str(), {range(LP.id, 0, r0, UINT64_MAX - 5, 10)}, nullptr, 0, &x, o2 + "remote offset + bytes overflowing");
    badPrep(a, op, peer.c_str(), {poison[0], range(LP.id, 8192, r0, r0bytes - 100, 101)}, nullptr, 0, &x,
            o2 + "the second of two ranges remotely out of bounds");
  }
  badPrep(a, hetcclAgentWrite, peer.c_str(), poison, n4097.data(), n4097.size(), &x, "a notification of 4097 bytes");
  badPrep(a, hetcclAgentWrite, peer.c_str(), poison, nullptr, 5, &x, "a NULL notification of 5 bytes");
  {
    std::vector<hetcclAgentRange_t> many(4 * 1024 * 1024 + 1, range(LP.id, 0, r0, 1000, 1));
    badPrep(a, hetcclAgentWrite, peer.c_str(), many, nullptr, 0, &x, "4M + 1 ranges");
  }

  step("null transfer handles");
  refused(hetcclAgentPostXfer(nullptr), IA, "hetcclAgentPostXfer(NULL)");
  refused(hetcclAgentCheckXfer(nullptr), IA, "hetcclAgentCheckXfer(NULL)");
  refused(hetcclAgentWaitXfer(nullptr), IA, "hetcclAgentWaitXfer(NULL)");
  refused(hetcclAgentCancelXfer(nullptr), IA, "hetcclAgentCancelXfer(NULL)");
  refused(hetcclAgentReleaseXfer(nullptr), IA, "hetcclAgentReleaseXfer(NULL)");

  step("never posted");
  const std::string n4096 = patString(c.seed + 51, HETCCL_AGENT_NOTIF_MAX);
  hetcclAgentXfer_t g1 = prep(a, hetcclAgentWrite, peer, {range(L1.id, 0, r0, 0, 1000)}, n4096, "the good write (4096-byte notification)");
  refused(hetcclAgentCheckXfer(g1), hetcclInvalidUsage, "check of a transfer never posted");
  refused(hetcclAgentWaitXfer(g1), hetcclInvalidUsage, "wait of a transfer never posted");
  ok(hetcclAgentCancelXfer(g1), "cancel of a transfer never posted (no effect)");
  refused(hetcclAgentCheckXfer(g1), hetcclInvalidUsage, "check after that cancel");
  runXfer(g1, "the good write");
  checkDataPath(c, "after the good write");
  ok(hetcclAgentCancelXfer(g1), "cancel of a completed transfer (no effect)");
  ok(hetcclAgentCheckXfer(g1), "check after cancelling a completed transfer");

  step("post while in progress");
  hetcclAgentXfer_t big = prep(a, hetcclAgentWrite, peer, {range(LB.id, 0, r1, 0, LB.bytes)}, "big", "the big write");
  ok(hetcclAgentPostXfer(big), "post of the big write");
  refused(hetcclAgentPostXfer(big), hetcclInvalidUsage, "a second post while the big write runs");
  refused(hetcclAgentReleaseXfer(big), hetcclInvalidUsage, "release while the big write runs");
  ok(hetcclAgentWaitXfer(big), "wait for the big write");
  ok(hetcclAgentCheckXfer(big), "check after the wait");
  ok(hetcclAgentReleaseXfer(big), "release the big write");

  step("deregistered local region");
  {
    uint8_t* tp = allocBytes(4096);
    fillPat(tp, sBad, 0, 4096);
    Local LT;
    LT.p = tp;
    LT.bytes = 4096;
    registerAt(a, LT);
    hetcclAgentXfer_t xt = prep(a, hetcclAgentWrite, peer, {range(LT.id, 0, r0, 2000, 100)}, "", "a write from a region deregistered next");
    ok(hetcclAgentDeregister(LT.mem), "deregister the local region");
    refused(hetcclAgentPostXfer(xt), IA, "post after its local region was deregistered");
    refused(hetcclAgentMemQuery(LT.mem, &idtmp, nullptr, nullptr), IA, "query of a deregistered region (released handle)");
    refused(hetcclAgentDeregister(LT.mem), IA, "deregister twice (released handle)");
    ok(hetcclAgentReleaseXfer(xt), "release the transfer");
    refused(hetcclAgentCheckXfer(xt), IA, "check of a released transfer");
    refused(hetcclAgentPostXfer(xt), IA, "post of a released transfer");
    refused(hetcclAgentReleaseXfer(xt), IA, "release twice");
  }

  step("GenNotif");
  refused(hetcclAgentGenNotif(nullptr, peer.c_str(), "x", 1), IA, "GenNotif: NULL agent");
  refused(hetcclAgentGenNotif(a, nullptr, "x", 1), IA, "GenNotif: NULL peer");
  refused(hetcclAgentGenNotif(a, "nobody", "x", 1), IA, "GenNotif: unknown peer");
  refused(hetcclAgentGenNotif(a, peer.c_str(), nullptr, 5), IA, "GenNotif: NULL message of 5 bytes");
  refused(hetcclAgentGenNotif(a, peer.c_str(), n4097.data(), n4097.size()), IA, "GenNotif: 4097 bytes");

  step("GetNotif");
  {
    char pn[HETCCL_AGENT_NAME_MAX + 1];
    char small[10];
    size_t bytes = 0;
    int got = 0;
    refused(hetcclAgentGetNotif(nullptr, pn, small, sizeof small, &bytes, &got), IA, "GetNotif: NULL agent");
    refused(hetcclAgentGetNotif(a, pn, small, sizeof small, &bytes, nullptr), IA, "GetNotif: NULL got pointer");
    refused(hetcclAgentGetNotif(a, pn, small, sizeof small, nullptr, &got), IA, "GetNotif: NULL bytes pointer");
    refused(hetcclAgentGetNotif(a, nullptr, small, sizeof small, &bytes, &got), IA, "GetNotif: NULL peer buffer");
    // bad-B sent 100 bytes: a capacity of 10 refuses it (reporting its size) and keeps it queued.
    const std::string hello = patString(c.seed + 50, 100);
    const double end = mono() + c.wait;
    for (;;) {
      bytes = 0;
      got = 7;
      const hetcclResult_t r = hetcclAgentGetNotif(a, pn, small, sizeof small, &bytes, &got);
      if (r == hetcclSuccess) {
        if (got != 0) die("GetNotif with 10 bytes of capacity took a message of %llu bytes", ull(bytes));
        if (mono() > end) die("no notification from %s within %.0f s", peer.c_str(), c.wait);
        napMicros(200);
        continue;
      }
      refused(r, IA, "GetNotif: a message of 100 bytes, capacity 10");
      if (bytes != hello.size()) die("GetNotif: capacity too small: *bytes %llu, expected the message's size 100", ull(bytes));
      break;
    }
    std::string buf(HETCCL_AGENT_NOTIF_MAX, '\0');
    ok(hetcclAgentGetNotif(a, pn, buf.data(), buf.size(), &bytes, &got), "GetNotif with room");
    if (got != 1 || std::string(pn) != peer || std::string(buf.data(), bytes) != hello)
      die("GetNotif: the message refused before is not the one taken next (got %d, from '%s', %llu bytes)", got, pn, ull(bytes));
    ok(hetcclAgentGetNotif(a, pn, buf.data(), buf.size(), &bytes, &got), "GetNotif on an empty queue");
    if (got != 0) die("GetNotif: a second notification that nobody sent");
  }

  step("end");
  ok(hetcclAgentGenNotif(a, peer.c_str(), "end", 3), "GenNotif end");
  ok(hetcclAgentReleaseXfer(g1), "release");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("every bad argument refused with its documented code and a message");
}

// Creates an agent with options NULL or from hetcclAgentOptionsInit (secret from HETCCL_SECRET), expecting --expect.
int createRole(Ctx& c) {
  const hetcclResult_t want = codeByName(c.args.str("expect"));
  for (int withOptions = 0; withOptions < 2; ++withOptions) {
    hetcclAgentOptions_t o;
    ok(hetcclAgentOptionsInit(&o), "hetcclAgentOptionsInit");
    o.listenAddress = "127.0.0.1:0";
    hetcclAgent_t a = nullptr;
    const char* how = withOptions ? "options from hetcclAgentOptionsInit" : "options NULL";
    const hetcclResult_t r = hetcclAgentCreate(c.name.c_str(), withOptions ? &o : nullptr, &a);
    if (want == hetcclSuccess) {
      ok(r, std::string("create with ") + how);
      ok(hetcclAgentDestroy(a), "destroy");
    } else {
      refused(r, want, std::string("create with ") + how);
    }
  }
  return pass(std::string("create with HETCCL_SECRET=") + (std::getenv("HETCCL_SECRET") ? "<set>" : "<unset>") + ": " +
              codeName(want));
}

// ============================================================================== (i) cancel
//
// cancel-B takes a first write, then stops itself (SIGSTOP; the driver checks it is stopped and says so). With
// the target stopped, init-A posts a 64 MiB write (it stays on the wire) and a small one queued behind it, and
// cancels both: each check then reports hetcclInProgress or hetcclInvalidUsage, ending in hetcclInvalidUsage
// (never success), each cancel returns at once. init-A then poisons both sources (a transfer still reading them
// would carry the poison) and the driver continues the target. The next write works, then (once cancel-B has
// checked its memory) both cancelled transfers are posted again. cancel-B's notifications: x0, x5, x4, x2, end -- never the cancelled ones -- and
// after x5 the big write's area holds only canary or pattern bytes (part of it may have arrived), the queued
// one's area only the canary.

namespace {

const uint64_t kX0 = 0, kX2 = 2 * kMiB, kX5 = 4 * kMiB;
const uint64_t kX2Bytes = 256 * kKiB, kBig = 64 * kMiB;

}  // namespace

int cancelTarget(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R0 = makeLocal(a, 8 * kMiB), R1 = makeLocal(a, kBig);
  publishMeta(c, c.name + ".meta", a, {&R0, &R1});
  const uint64_t s0 = c.seed + 10, s2 = c.seed + 12, s4 = c.seed + 14, s5 = c.seed + 15;
  auto r0spans = [&](bool x2done, bool x5done) {
    std::vector<Span> s = {{kX0, kMiB, s0, kX0, 0}};
    if (x2done) s.push_back({kX2, kX2Bytes, s2, kX2, 0});
    if (x5done) s.push_back({kX5, kMiB, s5, kX5, 0});
    return s;
  };
  step("x0");
  expectNotif(a, c, c.peer(), "x0", "the first write");
  verifyRegion(R0.p, R0.bytes, r0spans(false, false), 0, "after x0");
  verifyRegion(R1.p, R1.bytes, {}, 0, "after x0, the big region");
  step("stop");
  signalFile(c, c.name + ".stopping");
  raise(SIGSTOP);
  note("continued");
  step("x5");
  expectNotif(a, c, c.peer(), "x5", "the write after the cancels (no notification of a cancelled transfer before it)");
  verifyRegion(R0.p, R0.bytes, r0spans(false, true), 0, "after x5 (the queued and cancelled x2 never written)");
  verifyRegion(R1.p, R1.bytes, {{0, kBig, s4, 0, 1}}, 0, "after x5, the area of the cancelled big write (only canary or pattern)");
  signalFile(c, c.name + ".checked");  // the initiator posts the cancelled transfers again only now
  step("x4 again");
  expectNotif(a, c, c.peer(), "x4", "the big write posted again");
  verifyRegion(R1.p, R1.bytes, {{0, kBig, s4, 0, 0}}, 0, "after the big write posted again");
  step("x2 again");
  expectNotif(a, c, c.peer(), "x2", "the small write posted again");
  verifyRegion(R0.p, R0.bytes, r0spans(true, true), 0, "after x2 posted again");
  expectNotif(a, c, c.peer(), "end", "the end");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("no notification nor byte of the queued cancelled write, no poison, the reposts arrived");
}

namespace {

// Polls Check after a cancel: only InProgress then InvalidUsage; returns how many InProgress were seen.
int cancelledCheck(hetcclAgentXfer_t x, double seconds, const std::string& what) {
  const double end = mono() + seconds;
  int inProgress = 0;
  for (;;) {
    const hetcclResult_t r = hetcclAgentCheckXfer(x);
    if (r == hetcclInvalidUsage) break;
    if (r != hetcclInProgress)
      die("%s: check after the cancel reported %s (expected hetcclInProgress, then hetcclInvalidUsage): %s", what.c_str(),
          codeName(r), lastError().c_str());
    ++inProgress;
    if (mono() > end) die("%s: still hetcclInProgress %.0f s after the cancel", what.c_str(), seconds);
    napMicros(100);
  }
  const std::string msg = lastError();
  note("%s: cancelled (hetcclInProgress %d times, then hetcclInvalidUsage: %s)", what.c_str(), inProgress, msg.c_str());
  refused(hetcclAgentWaitXfer(x), hetcclInvalidUsage, what + ": wait after the cancel");
  return inProgress;
}

}  // namespace

int cancelInitiator(Ctx& c) {
  const std::string peer = c.peer();
  step("create");
  hetcclAgent_t a = createAgent(c);
  const uint64_t s0 = c.seed + 10, s2 = c.seed + 12, s4 = c.seed + 14, s5 = c.seed + 15;
  Local L0 = makeLocal(a, 8 * kMiB), L1 = makeLocal(a, kBig, &s4);
  fillPat(L0.p + kX0, s0, kX0, kMiB);
  fillPat(L0.p + kX2, s2, kX2, kX2Bytes);
  fillPat(L0.p + kX5, s5, kX5, kMiB);
  const Meta m = waitMeta(c, peer + ".meta");
  loadPeer(a, m.blob, peer);
  const uint32_t r0 = m.regions.at(0).id, r1 = m.regions.at(1).id;
  step("x0");
  hetcclAgentXfer_t x0 = prep(a, hetcclAgentWrite, peer, {range(L0.id, kX0, r0, kX0, kMiB)}, "x0", "x0");
  runXfer(x0, "the first write");
  checkDataPath(c, "after the first write");
  ok(hetcclAgentCancelXfer(x0), "cancel of a completed transfer (no effect)");
  ok(hetcclAgentCheckXfer(x0), "check after cancelling a completed transfer");
  step("wait until the target is stopped");
  waitFile(c, peer + ".stopped", "the driver's word that the target is stopped");
  step("post the big write and a queued one");
  hetcclAgentXfer_t x4 = prep(a, hetcclAgentWrite, peer, {range(L1.id, 0, r1, 0, kBig)}, "x4", "x4");
  hetcclAgentXfer_t x2 = prep(a, hetcclAgentWrite, peer, {range(L0.id, kX2, r0, kX2, kX2Bytes)}, "x2", "x2");
  ok(hetcclAgentPostXfer(x4), "post of the big write");
  refused(hetcclAgentReleaseXfer(x4), hetcclInvalidUsage, "release of the big write while it runs");
  ok(hetcclAgentPostXfer(x2), "post of the queued write");
  {
    const hetcclResult_t r = hetcclAgentCheckXfer(x2);
    if (r != hetcclInProgress) die("the queued write reports %s before any cancel (its target is stopped): %s", codeName(r), lastError().c_str());
  }
  step("cancel the queued write");
  double t = mono();
  ok(hetcclAgentCancelXfer(x2), "cancel of the queued write");
  double took = mono() - t;
  if (took > 2) die("cancel of the queued write blocked %.1f s", took);
  cancelledCheck(x2, 10, "the queued write");
  {
    const hetcclResult_t r = hetcclAgentCheckXfer(x4);
    if (r != hetcclInProgress) die("the big write reports %s while its target is stopped: %s", codeName(r), lastError().c_str());
  }
  step("cancel the big write on the wire");
  t = mono();
  ok(hetcclAgentCancelXfer(x4), "cancel of the big write");
  took = mono() - t;
  if (took > 2) die("cancel of the big write blocked %.1f s", took);
  cancelledCheck(x4, c.timeout + 5, "the big write");
  step("poison the sources and continue the target");
  std::memset(L1.p, 0x00, kBig);
  std::memset(L0.p + kX2, 0x00, kX2Bytes);
  signalFile(c, c.name + ".cancelled");
  step("the next post");
  hetcclAgentXfer_t x5 = prep(a, hetcclAgentWrite, peer, {range(L0.id, kX5, r0, kX5, kMiB)}, "x5", "x5");
  runXfer(x5, "the write after the cancels");
  waitFile(c, peer + ".checked", "the target's check after x5");
  step("post the cancelled ones again");
  fillPat(L1.p, s4, 0, kBig);
  runXfer(x4, "the big write posted again");
  fillPat(L0.p + kX2, s2, kX2, kX2Bytes);
  runXfer(x2, "the queued write posted again");
  ok(hetcclAgentGenNotif(a, peer.c_str(), "end", 3), "GenNotif end");
  for (auto x : {x0, x2, x4, x5}) ok(hetcclAgentReleaseXfer(x), "release");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("queued and on-the-wire transfers cancelled; the next post and the reposts worked");
}

// ============================================================================== (j) deregistered region
//
// dereg-B takes a write to both regions, deregisters the second and registers the same memory again (a new
// registration at the same address), publishing a new blob. init-A, through the old blob: a write to the old
// region prepared before, one prepared after, a write over the written part, a read -- all fail, and the read's
// local buffer keeps its canary; dereg-B checks its memory holds the first write only. After loading the new
// blob, the transfer prepared against the old registration must still fail (never aliased), and a write to the
// new registration arrives.

int deregTarget(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R0 = makeLocal(a, kMiB), R1 = makeLocal(a, kMiB);
  publishMeta(c, c.name + ".meta.1", a, {&R0, &R1});
  const uint64_t s0 = c.seed + 20, s1 = c.seed + 21;
  step("j0");
  expectNotif(a, c, c.peer(), "j0", "the first write");
  verifyRegion(R0.p, R0.bytes, {{0, 64 * kKiB, s0, 0, 0}}, 0, "region 0 after j0");
  verifyRegion(R1.p, R1.bytes, {{0, 64 * kKiB, s0, 0, 0}}, 0, "region 1 after j0");
  step("deregister");
  expectNotif(a, c, c.peer(), "dereg", "the request to deregister");
  const uint32_t oldId = R1.id;
  ok(hetcclAgentDeregister(R1.mem), "hetcclAgentDeregister");
  registerAt(a, R1);  // the same memory, registered again
  note("region 1: id %u, registered again at the same address: id %u", oldId, R1.id);
  publishMeta(c, c.name + ".meta.2", a, {&R0, &R1});
  step("wait for the stale attempts");
  waitFile(c, c.peer() + ".stale_done", "the initiator's attempts on the deregistered region");
  verifyRegion(R1.p, R1.bytes, {{0, 64 * kKiB, s0, 0, 0}}, 0, "the deregistered region's memory after the stale attempts");
  verifyRegion(R0.p, R0.bytes, {{0, 64 * kKiB, s0, 0, 0}}, 0, "region 0 after the stale attempts");
  Notif n;
  if (tryNotif(a, &n)) die("a notification of a failed transfer arrived: %s", hexPrefix(n.msg).c_str());
  signalFile(c, c.name + ".clean");
  step("j1");
  expectNotif(a, c, c.peer(), "j1", "the write to the new registration");
  verifyRegion(R1.p, R1.bytes, {{0, 64 * kKiB, s0, 0, 0}, {128 * kKiB, 64 * kKiB, s1, 128 * kKiB, 0}}, 0,
               "the memory registered again after j1 (and the old transfer posted again never written)");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("nothing reached the deregistered region; the new registration works");
}

int deregInitiator(Ctx& c) {
  const std::string peer = c.peer();
  step("create");
  hetcclAgent_t a = createAgent(c);
  const uint64_t s0 = c.seed + 20, s1 = c.seed + 21, sStale = c.seed + 22;
  Local L0 = makeLocal(a, 64 * kKiB, &s0), LS = makeLocal(a, 128 * kKiB, &sStale), L1 = makeLocal(a, 192 * kKiB, &s1);
  Local LR = makeLocal(a, 64 * kKiB);  // read destination: keeps the canary
  const Meta m1 = waitMeta(c, peer + ".meta.1");
  loadPeer(a, m1.blob, peer);
  const uint32_t r0 = m1.regions.at(0).id, r1 = m1.regions.at(1).id;
  step("j0");
  hetcclAgentXfer_t x0 = prep(a, hetcclAgentWrite, peer, {range(L0.id, 0, r0, 0, 64 * kKiB), range(L0.id, 0, r1, 0, 64 * kKiB)},
                              "j0", "j0");
  runXfer(x0, "the first write");
  checkDataPath(c, "after the first write");
  step("prepare on the region about to go");
  hetcclAgentXfer_t xw = prep(a, hetcclAgentWrite, peer, {range(LS.id, 64 * kKiB, r1, 64 * kKiB, 64 * kKiB)}, "stale-w",
                              "a write to region 1 prepared before its deregistration");
  hetcclAgentXfer_t xr = prep(a, hetcclAgentRead, peer, {range(LR.id, 0, r1, 0, 64 * kKiB)}, "stale-r", "a read of region 1");
  ok(hetcclAgentGenNotif(a, peer.c_str(), "dereg", 5), "GenNotif dereg");
  const Meta m2 = waitMeta(c, peer + ".meta.2");
  step("transfers to the deregistered region");
  auto mustFail = [&](hetcclAgentXfer_t x, const std::string& what) {
    std::string msg;
    const hetcclResult_t r = postToEnd(x, c.timeout + 5, what, &msg);
    if (r == hetcclSuccess) die("%s succeeded: the deregistered region was reached", what.c_str());
    mustName(msg, peer, what);
    if (msg.find("stale") == std::string::npos) die("%s: %s, but the message does not say 'stale': %s", what.c_str(), codeName(r), msg.c_str());
    note("failed as expected: %s: %s: %s", what.c_str(), codeName(r), msg.c_str());
  };
  mustFail(xw, "a write prepared before the deregistration");
  hetcclAgentXfer_t xw2 = prep(a, hetcclAgentWrite, peer, {range(LS.id, 0, r1, 0, 64 * kKiB)}, "stale-w2",
                               "a write over the written part, prepared after");
  mustFail(xw2, "a write over the written part, prepared after the deregistration");
  mustFail(xr, "a read of the deregistered region");
  verifyRegion(LR.p, LR.bytes, {}, 0, "the failed read's destination");
  signalFile(c, c.name + ".stale_done");
  waitFile(c, peer + ".clean", "the target's check");
  step("the new blob");
  loadPeer(a, m2.blob, peer);
  const uint32_t r1new = m2.regions.at(1).id;
  note("region 1: id %u before, %u after registering again", r1, r1new);
  if (r1new != r1) {
    hetcclAgentXfer_t x = nullptr;
    const auto rr = std::vector<hetcclAgentRange_t>{range(LS.id, 0, r1, 0, 8)};
    refused(hetcclAgentPrepXfer(a, hetcclAgentWrite, peer.c_str(), rr.data(), 1, nullptr, 0, &x), hetcclInvalidArgument,
            "a transfer to the old region id after loading the blob without it");
  }
  mustFail(xw, "the write prepared against the old registration, posted again after loading the new blob");
  step("j1");
  hetcclAgentXfer_t x1 = prep(a, hetcclAgentWrite, peer, {range(L1.id, 128 * kKiB, r1new, 128 * kKiB, 64 * kKiB)}, "j1", "j1");
  runXfer(x1, "the write to the new registration");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("transfers to the deregistered region failed; the new registration works");
}

}  // namespace hetccl::agent_peer
