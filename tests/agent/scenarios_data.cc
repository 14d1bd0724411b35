// agent_peer's data scenarios (see agent_peer.cc): (a) writes with notifications, (b) a read of many ranges,
// (c) notifications never before their data.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "hetccl/hetccl_agent.h"
#include "peer_support.hpp"
#include "scenarios.hpp"

namespace hetccl::agent_peer {

// ============================================================================== (a) write + notification
//
// Three writes posted back to back (the second and third queue behind the first), ranges over two
// registrations on each side: one of 20 MiB + 1 byte (more than the 16 MiB of the default window, unaligned),
// 350 ranges of two sizes, and the first and last bytes of the remote regions. Notifications: 4096 bytes (the
// most), two bytes, one NUL byte, then a GenNotif of 0 bytes. On each the target checks every byte of both
// regions: writes done exact, later ones canary or pattern, the rest canary.

namespace {

struct PlanRange {
  int li;
  uint64_t lo;
  int ri;
  uint64_t ro, n;
};
struct Phase {
  std::vector<PlanRange> ranges;
  std::string notif;
};

const std::vector<uint64_t> kWriteRemote = {24 * kMiB + 4093, kMiB + 7};

uint64_t phaseSeed(uint64_t seed, int phase, int ri) {
  return seed * 1000003u + static_cast<uint64_t>(phase) * 7919u + static_cast<uint64_t>(ri);
}

std::vector<Phase> writePlan(uint64_t seed) {
  std::vector<Phase> ph(3);
  ph[0].ranges.push_back({0, 5, 0, 3, 20 * kMiB + 1});
  ph[0].notif = patString(seed + 17, HETCCL_AGENT_NOTIF_MAX);
  for (uint64_t i = 0; i < 300; ++i) ph[1].ranges.push_back({1, i * 1000, 1, 11 + i * 3001, 1000});
  for (uint64_t i = 0; i < 50; ++i) ph[1].ranges.push_back({0, 20 * kMiB + 64 + i * 4104, 0, 21 * kMiB + i * 8192, 4097});
  ph[1].notif = "a1";
  ph[2].ranges.push_back({1, 300064, 1, kWriteRemote[1] - 13, 13});
  ph[2].ranges.push_back({0, 20 * kMiB + 64 + 50 * 4104 + 64, 0, 0, 3});
  ph[2].notif = std::string(1, '\0');
  return ph;
}

std::vector<Span> remoteSpans(const std::vector<Phase>& plan, int ri, uint64_t seed) {
  std::vector<Span> s;
  for (size_t p = 0; p < plan.size(); ++p)
    for (const PlanRange& r : plan[p].ranges)
      if (r.ri == ri) s.push_back({r.ro, r.n, phaseSeed(seed, static_cast<int>(p), ri), r.ro, static_cast<int>(p)});
  return s;
}

std::vector<Span> localSpans(const std::vector<Phase>& plan, int li, uint64_t seed) {
  std::vector<Span> s;
  for (size_t p = 0; p < plan.size(); ++p)
    for (const PlanRange& r : plan[p].ranges)
      if (r.li == li) s.push_back({r.lo, r.n, phaseSeed(seed, static_cast<int>(p), r.ri), r.ro, 0});
  return s;
}

uint64_t localSize(const std::vector<Phase>& plan, int li) {
  uint64_t end = 0;
  for (const Phase& p : plan)
    for (const PlanRange& r : p.ranges)
      if (r.li == li) end = std::max(end, r.lo + r.n);
  return end + 64;
}

std::vector<hetcclAgentRange_t> planRanges(const Phase& ph, const std::vector<Local>& L, const Meta& m) {
  std::vector<hetcclAgentRange_t> out;
  for (const PlanRange& r : ph.ranges) out.push_back(range(L[r.li].id, r.lo, m.regions[r.ri].id, r.ro, r.n));
  return out;
}

}  // namespace

int writeTarget(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  std::vector<Local> R = {makeLocal(a, kWriteRemote[0]), makeLocal(a, kWriteRemote[1])};
  publishMeta(c, c.name + ".meta", a, {&R[0], &R[1]});
  const auto plan = writePlan(c.seed);
  for (int p = 0; p < 3; ++p) {
    step("notification of a write");
    expectNotif(a, c, c.peer(), plan[p].notif, "the notification of write " + std::to_string(p));
    step("verify");
    for (int ri = 0; ri < 2; ++ri)
      verifyRegion(R[ri].p, R[ri].bytes, remoteSpans(plan, ri, c.seed), p,
                   "after the notification of write " + std::to_string(p) + ", region " + std::to_string(ri));
    if (p == 0) checkDataPath(c, "after the first write");
  }
  step("the GenNotif of 0 bytes");
  expectNotif(a, c, c.peer(), "", "the GenNotif of 0 bytes after the writes");
  for (int ri = 0; ri < 2; ++ri)
    verifyRegion(R[ri].p, R[ri].bytes, remoteSpans(plan, ri, c.seed), 2, "at the end, region " + std::to_string(ri));
  Notif extra;
  if (tryNotif(a, &extra)) die("an unexpected notification from %s (%s)", extra.peer.c_str(), hexPrefix(extra.msg).c_str());
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("every byte of both regions right after each of 3 writes and the GenNotif");
}

int writeInitiator(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  const auto plan = writePlan(c.seed);
  std::vector<Local> L = {makeLocal(a, localSize(plan, 0)), makeLocal(a, localSize(plan, 1))};
  for (size_t p = 0; p < plan.size(); ++p)
    for (const PlanRange& r : plan[p].ranges) fillPat(L[r.li].p + r.lo, phaseSeed(c.seed, static_cast<int>(p), r.ri), r.ro, r.n);
  step("load the target");
  const Meta m = waitMeta(c, c.peer() + ".meta");
  if (m.regions.size() != 2) die("the target lists %zu regions, expected 2", m.regions.size());
  loadPeer(a, m.blob, c.peer());
  step("prepare");
  std::vector<hetcclAgentXfer_t> xs;
  for (size_t p = 0; p < plan.size(); ++p)
    xs.push_back(prep(a, hetcclAgentWrite, c.peer(), planRanges(plan[p], L, m), plan[p].notif, "write " + std::to_string(p)));
  step("post the writes back to back");
  for (size_t p = 0; p < xs.size(); ++p) ok(hetcclAgentPostXfer(xs[p]), "hetcclAgentPostXfer: write " + std::to_string(p));
  step("wait for the writes");
  for (size_t p = 0; p < xs.size(); ++p) {
    ok(hetcclAgentWaitXfer(xs[p]), "hetcclAgentWaitXfer: write " + std::to_string(p));
    ok(hetcclAgentCheckXfer(xs[p]), "hetcclAgentCheckXfer after the wait: write " + std::to_string(p));
  }
  checkDataPath(c, "after the writes");
  step("GenNotif of 0 bytes");
  const char empty[1] = {0};
  ok(hetcclAgentGenNotif(a, c.peer().c_str(), empty, 0), "hetcclAgentGenNotif of 0 bytes");
  // The local sources were only read.
  for (int li = 0; li < 2; ++li) verifyRegion(L[li].p, L[li].bytes, localSpans(plan, li, c.seed), 0, "the local sources");
  step("release");
  for (auto x : xs) ok(hetcclAgentReleaseXfer(x), "hetcclAgentReleaseXfer");
  for (auto& l : L) ok(hetcclAgentDeregister(l.mem), "hetcclAgentDeregister");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("3 writes (20 MiB + 353 ranges) and 4 notifications");
}

// ============================================================================== (b) read of many ranges
//
// 22,557 ranges made by hetcclAgentStridedRanges (checked field by field), from both remote registrations into
// both local ones, sizes 8 B .. 9 MiB, with a notification to the target after the read. The reader checks
// every byte of its two regions (ranges: the target's pattern at the remote offset; elsewhere the canary),
// clears them and posts the same transfer again. The target checks its regions were not changed.

namespace {

struct StridedRun {
  int li, ri;
  uint64_t lo, ls, ro, rs, n, count;
};
const std::vector<uint64_t> kReadRemote = {16 * kMiB + 5, 3 * kMiB + 1};
uint64_t readSeed(uint64_t seed, int ri) { return seed * 1000003u + 500u + static_cast<uint64_t>(ri); }

std::vector<StridedRun> readRuns() {
  return {
      {0, 0, 0, 512, 7, 1024, 512, 2000},
      {1, 1, 0, 65540, 0, 70001, 65539, 40},
      {0, 1, 1024064, 128, 5, 4099, 100, 500},
      {1, 0, 2621664, 300 * kKiB + 8, 8 * kMiB, 512 * kKiB, 300 * kKiB, 16},
      {1, 0, 7537056, 0, 16 * kMiB + 5 - 9 * kMiB, 0, 9 * kMiB, 1},
      {0, 0, 1088128, 8, 1, 37, 8, 20000},
  };
}

std::string readNotif(uint64_t seed) { return "b-read-" + patString(seed + 3, 100); }

}  // namespace

int readTarget(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  uint64_t s0 = readSeed(c.seed, 0), s1 = readSeed(c.seed, 1);
  std::vector<Local> R = {makeLocal(a, kReadRemote[0], &s0), makeLocal(a, kReadRemote[1], &s1)};
  publishMeta(c, c.name + ".meta", a, {&R[0], &R[1]});
  for (int iter = 0; iter < 2; ++iter) {
    step("the notification after a read");
    expectNotif(a, c, c.peer(), readNotif(c.seed), "the notification after read " + std::to_string(iter));
    for (int ri = 0; ri < 2; ++ri)
      verifyRegion(R[ri].p, R[ri].bytes, {{0, R[ri].bytes, readSeed(c.seed, ri), 0, 0}}, 0,
                   "region " + std::to_string(ri) + " (only read) after read " + std::to_string(iter));
  }
  step("end");
  expectNotif(a, c, c.peer(), "end", "the final GenNotif");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("both reads notified, the read regions unchanged");
}

int readInitiator(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  const auto runs = readRuns();
  uint64_t localEnd[2] = {0, 0};
  for (const auto& r : runs) localEnd[r.li] = std::max(localEnd[r.li], r.lo + (r.count - 1) * r.ls + r.n);
  std::vector<Local> L = {makeLocal(a, localEnd[0] + 64), makeLocal(a, localEnd[1] + 64)};
  step("load the target");
  const Meta m = waitMeta(c, c.peer() + ".meta");
  if (m.regions.size() != 2) die("the target lists %zu regions, expected 2", m.regions.size());
  for (int ri = 0; ri < 2; ++ri)
    if (m.regions[ri].bytes != kReadRemote[ri]) die("remote region %d: %llu bytes listed", ri, ull(m.regions[ri].bytes));
  loadPeer(a, m.blob, c.peer());
  step("strided ranges");
  std::vector<hetcclAgentRange_t> ranges;
  std::vector<Span> spans[2];
  for (const auto& r : runs) {
    std::vector<hetcclAgentRange_t> part(r.count);
    const uint32_t lid = L[r.li].id, rid = m.regions[r.ri].id;
    ok(hetcclAgentStridedRanges(part.data(), part.size(), lid, r.lo, r.ls, rid, r.ro, r.rs, r.n), "hetcclAgentStridedRanges");
    for (uint64_t i = 0; i < r.count; ++i) {
      const hetcclAgentRange_t& g = part[i];
      if (g.localRegion != lid || g.remoteRegion != rid || g.localOffset != r.lo + i * r.ls ||
          g.remoteOffset != r.ro + i * r.rs || g.bytes != r.n)
        die("hetcclAgentStridedRanges: range %llu is {%u, %u, %llu, %llu, %llu}, expected {%u, %u, %llu, %llu, %llu}",
            ull(i), g.localRegion, g.remoteRegion, ull(g.localOffset), ull(g.remoteOffset), ull(g.bytes), lid, rid,
            ull(r.lo + i * r.ls), ull(r.ro + i * r.rs), ull(r.n));
      spans[r.li].push_back({r.lo + i * r.ls, r.n, readSeed(c.seed, r.ri), r.ro + i * r.rs, 0});
    }
    ranges.insert(ranges.end(), part.begin(), part.end());
  }
  note("one read of %zu ranges", ranges.size());
  hetcclAgentXfer_t x = prep(a, hetcclAgentRead, c.peer(), ranges, readNotif(c.seed), "the read");
  for (int iter = 0; iter < 2; ++iter) {
    step("read");
    if (iter > 0)
      for (auto& l : L) std::memset(l.p, kCanary, l.bytes);
    runXfer(x, "read " + std::to_string(iter));
    if (iter == 0) checkDataPath(c, "after the first read");
    step("verify the read data");
    for (int li = 0; li < 2; ++li)
      verifyRegion(L[li].p, L[li].bytes, spans[li], 0, "local region " + std::to_string(li) + " after read " + std::to_string(iter));
  }
  step("end");
  ok(hetcclAgentGenNotif(a, c.peer().c_str(), "end", 3), "hetcclAgentGenNotif");
  step("destroy (transfer and registrations not released first)");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("2 reads of " + std::to_string(ranges.size()) + " ranges, every byte right");
}

// ============================================================================== (c) notifications never before data
//
// --count (>= 10000) small writes, 64 in flight, each to its own 64-byte slot: 8 bytes of its sequence number,
// then pattern, 8..64 bytes in all; every 97th also carries a second range of 256 KiB to its own area of a
// second region (a longer copy, a wider window for a notification that overtakes its data). Every 500th write
// carries no notification and is followed by a GenNotif instead. On every notification the target checks
// that it is the next in sequence and that the data of that write (both ranges) is in place, byte for byte.

namespace {

constexpr uint64_t kOrderSlot = 64;
constexpr uint64_t kOrderBig = 256 * kKiB;
uint64_t orderBytes(uint64_t i) { return 8 + (i * 7) % 57; }
bool orderHasBig(uint64_t i) { return i % 97 == 13; }
uint64_t orderBigOffset(uint64_t i) { return (i / 97) * kOrderBig; }
uint64_t orderBigRegion(uint64_t count) { return (count / 97 + 1) * kOrderBig; }

void fillOrderSlot(uint8_t* slot, uint64_t i, uint64_t seed) {
  std::memcpy(slot, &i, 8);
  fillPat(slot + 8, seed, i * kOrderSlot + 8, orderBytes(i) - 8);
}

void checkOrderSlot(const uint8_t* slot, uint64_t i, uint64_t seed, const std::string& what) {
  uint64_t got;
  std::memcpy(&got, slot, 8);
  if (got != i) {
    uint64_t canary = kCanaryWord;
    die("%s: slot %llu holds sequence number %llu (%s), not %llu: the data of the write was not in place", what.c_str(),
        ull(i), ull(got), got == canary ? "never written" : "garbage", ull(i));
  }
  checkBytes(slot + 8, orderBytes(i) - 8, Want::Pattern, seed, i * kOrderSlot + 8, i * kOrderSlot + 8, what);
  checkBytes(slot + orderBytes(i), kOrderSlot - orderBytes(i), Want::Canary, 0, 0, i * kOrderSlot + orderBytes(i), what);
}

}  // namespace

int orderTarget(Ctx& c) {
  const uint64_t count = static_cast<uint64_t>(c.args.integer("count", 10000));
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R = makeLocal(a, count * kOrderSlot + 4096), RB = makeLocal(a, orderBigRegion(count));
  publishMeta(c, c.name + ".meta", a, {&R, &RB});
  uint64_t gens = 0;
  for (uint64_t k = 0; k < count; ++k) {
    step("take a notification");
    const Notif n = takeNotif(a, c.wait, "notification " + std::to_string(k));
    if (n.peer != c.peer()) die("notification %llu from '%s'", ull(k), n.peer.c_str());
    if (n.msg.size() != 9 || (n.msg[0] != 'c' && n.msg[0] != 'g'))
      die("notification %llu: unexpected message %s", ull(k), hexPrefix(n.msg).c_str());
    uint64_t seq;
    std::memcpy(&seq, n.msg.data() + 1, 8);
    if (seq != k)
      die("notification %llu names write %llu: notifications out of order (or one lost)", ull(k), ull(seq));
    const bool gen = n.msg[0] == 'g';
    if (gen != (k % 500 == 499)) die("notification %llu: %s, expected the other kind", ull(k), gen ? "a GenNotif" : "attached");
    gens += gen;
    const std::string what = std::string(gen ? "GenNotif" : "notification") + " of write " + std::to_string(seq);
    checkOrderSlot(R.p + seq * kOrderSlot, seq, c.seed, what);
    if (orderHasBig(seq))
      checkBytes(RB.p + orderBigOffset(seq), kOrderBig, Want::Pattern, c.seed + 1, orderBigOffset(seq), orderBigOffset(seq),
                 what + " (its 256 KiB range)");
  }
  step("verify everything");
  for (uint64_t i = 0; i < count; ++i) checkOrderSlot(R.p + i * kOrderSlot, i, c.seed, "at the end");
  checkBytes(R.p + count * kOrderSlot, 4096, Want::Canary, 0, 0, count * kOrderSlot, "the tail after the last slot");
  std::vector<Span> big;
  for (uint64_t i = 0; i < count; ++i)
    if (orderHasBig(i)) big.push_back({orderBigOffset(i), kOrderBig, c.seed + 1, orderBigOffset(i), 0});
  verifyRegion(RB.p, RB.bytes, big, 0, "the second region at the end");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass(std::to_string(count) + " notifications (" + std::to_string(gens) +
              " GenNotif) each found its write's data in place, in order");
}

int orderInitiator(Ctx& c) {
  const uint64_t count = static_cast<uint64_t>(c.args.integer("count", 10000));
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local L = makeLocal(a, count * kOrderSlot + 4096);
  for (uint64_t i = 0; i < count; ++i) fillOrderSlot(L.p + i * kOrderSlot, i, c.seed);
  const uint64_t bigSeed = c.seed + 1;
  Local LB = makeLocal(a, orderBigRegion(count), &bigSeed);
  const Meta m = waitMeta(c, c.peer() + ".meta");
  loadPeer(a, m.blob, c.peer());
  const uint32_t rid = m.regions.at(0).id, ridBig = m.regions.at(1).id;
  constexpr size_t kDepth = 64;
  std::vector<hetcclAgentXfer_t> ring(kDepth, nullptr);
  const double t0 = mono();
  for (uint64_t i = 0; i < count; ++i) {
    hetcclAgentXfer_t& slot = ring[i % kDepth];
    if (slot) {
      step("wait for a write");
      ok(hetcclAgentWaitXfer(slot), "hetcclAgentWaitXfer");
      ok(hetcclAgentReleaseXfer(slot), "hetcclAgentReleaseXfer");
    }
    const bool gen = i % 500 == 499;
    step("post a write");
    std::vector<hetcclAgentRange_t> rr = {range(L.id, i * kOrderSlot, rid, i * kOrderSlot, orderBytes(i))};
    if (orderHasBig(i)) rr.push_back(range(LB.id, orderBigOffset(i), ridBig, orderBigOffset(i), kOrderBig));
    slot = prep(a, hetcclAgentWrite, c.peer(), rr, gen ? "" : u64msg('c', i), "write " + std::to_string(i));
    ok(hetcclAgentPostXfer(slot), "hetcclAgentPostXfer of write " + std::to_string(i));
    if (gen) {
      step("GenNotif");
      const std::string msg = u64msg('g', i);
      ok(hetcclAgentGenNotif(a, c.peer().c_str(), msg.data(), msg.size()), "hetcclAgentGenNotif after write " + std::to_string(i));
    }
  }
  step("drain");
  for (auto& x : ring)
    if (x) {
      ok(hetcclAgentWaitXfer(x), "hetcclAgentWaitXfer");
      ok(hetcclAgentReleaseXfer(x), "hetcclAgentReleaseXfer");
    }
  const double secs = mono() - t0;
  checkDataPath(c, "after the writes");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  char buf[128];
  std::snprintf(buf, sizeof buf, "%llu writes in %.2f s", ull(count), secs);
  return pass(buf);
}

}  // namespace hetccl::agent_peer
