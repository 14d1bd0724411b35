#include "exec/pipeline/stream_executor.hpp"

#include <algorithm>
#include <chrono>

#include "algo/op_context.hpp"
#include "algo/planner.hpp"
#include "core/config.hpp"
#include "core/deadline.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "exec/pipeline/gpu_stamp.hpp"

namespace hetccl::stream_exec {
namespace {

// Pinned control words the compute stream writes (index into StreamExecutor::control_, 64 bytes apart).
constexpr int kDoneWord = 0;      // host number of the latest eager group done (eager groups only)
constexpr int kStartedWord = 1;   // number of the call whose group started last
constexpr int kFinishedWord = 2;  // number of the call whose group finished last
constexpr int kControlWords = 3;

uint64_t slotBytesFromConfig() {
  const int64_t v = config().integer("HETCCL_GPU_CHUNK_BYTES", 64 << 10, int64_t{1} << 30);
  return (static_cast<uint64_t>(v) + 63) & ~uint64_t{63};
}

constexpr size_t kPlanCacheEntries = 64;  // schedules of distinct recent groups kept for reuse

uint64_t load(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

}  // namespace

StreamExecutor::StreamExecutor(const hetcclGpuPlugin_t& gpu, int device, bootstrap::Bootstrap& boot,
                               algo::Topology topology, FailureSink onFailure, FailureCheck checkFailure,
                               const std::atomic<bool>* abortFlag, domain::DomainComm* domainComm,
                               transport::Links* netLinks)
    : gpu_(gpu),
      device_(device),
      topology_(std::move(topology)),
      tuning_(tuningFromConfig(onSeveralHosts(boot.peers()))),
      onFailure_(std::move(onFailure)),
      checkFailure_(std::move(checkFailure)),
      abortFlag_(abortFlag),
      events_(gpu) {
  const uint64_t slotBytes = tuning_.chunkBytes;  // a piece is a planner chunk
  const auto slots = static_cast<uint32_t>(config().integer("HETCCL_GPU_SLOTS", 2, 1024));
  check(gpu_.setDevice(device_), "setDevice");
  rings_ = GpuRingSet::build(boot, gpu_, slots, slotBytes);
  const int n = topology_.nranks;
  int remotePeers = 0;
  for (int p = 0; p < n; ++p) remotePeers += rings_.remote[p] ? 1 : 0;
  res_.gpu = &gpu_;
  res_.rank = topology_.rank;
  res_.rings = &rings_;
  res_.events = &events_;
  res_.domain = domainComm;
  topology_.domainCollectives = domainComm != nullptr;
  const std::vector<int> domainMembers = topology_.membersOf(topology_.domainOf[topology_.rank]);
  domainSize_ = static_cast<int>(domainMembers.size());
  if (domainComm && (domainComm->size() != domainSize_ ||
                     domainComm->rank() != static_cast<int>(algo::positionOf(domainMembers, topology_.rank))))
    throw InternalError(concat("rank ", topology_.rank, ": the domain communicator (rank ", domainComm->rank(), " of ",
                               domainComm->size(), ") does not match the domain's members"));
  res_.landing.assign(n, {});
  res_.groupsSent.assign(n, 0);
  res_.groupsReceived.assign(n, 0);
  sentBytes_.assign(n, 0);
  receivedBytes_.assign(n, 0);
  createStreams(res_.eager);
  createStreams(res_.capture);
  for (int p = 0; p < n; ++p) {
    if (p == topology_.rank) continue;
    for (int k = 0; k < StreamResources::kLandingBuffers; ++k) {
      auto& land = res_.landing[p];
      check(gpu_.allocDevice(&land.buffer[k], slotBytes), "allocDevice(landing buffer)");
      check(gpu_.eventCreate(&land.landed[k]), "eventCreate(landed)");
      check(gpu_.eventCreate(&land.reduced[k]), "eventCreate(reduced)");
    }
  }
  // Control words: pinned (the monitor reads them), written by the streams through their device address.
  void* control = nullptr;
  check(gpu_.allocPinned(&control, 64 * kControlWords), "allocPinned(control words)");
  control_ = static_cast<uint64_t*>(control);
  for (int w = 0; w < kControlWords; ++w) __atomic_store_n(controlWord(w), 0, __ATOMIC_RELEASE);
  void* controlDev = nullptr;
  check(gpu_.devicePointer(control_, &controlDev), "devicePointer(control words)");
  auto* cdev = static_cast<uint64_t*>(controlDev);
  res_.words.done = cdev + 8 * kDoneWord;
  res_.words.started = cdev + 8 * kStartedWord;
  res_.words.finished = cdev + 8 * kFinishedWord;
  plans_ = std::make_unique<algo::PlanCache>(topology_, tuning_, kPlanCacheEntries);
  if (remotePeers > 0) {
    if (!netLinks)
      throw InternalError(concat("rank ", topology_.rank, ": the stream pipeline has ", remotePeers,
                                 " peers on other hosts but no connections to them"));
    proxy_ = std::make_unique<NetRingProxy>(rings_, *netLinks, boot.peers(), topology_.rank, abortFlag_,
                                            [this](const std::exception& e) { reportFailure(e); });
    proxy_->start();
  }
  ll_ = LlPath::create(gpu_, device_, boot, latencyPathBytesFromConfig());
  thread_ = std::thread([this] { monitor(); });
  HETCCL_INFO(log::kInit, "rank ", topology_.rank, ": device calls use the ", describe(), ", chunk ", slotBytes,
              " bytes, ", slots, " slots per ring", remotePeers ? concat(", ", remotePeers, " peers on other hosts through the ring proxy") : std::string());
}

void StreamExecutor::createStreams(StreamSet& set) {
  const int n = topology_.nranks;
  set.send.assign(n, nullptr);
  set.recv.assign(n, nullptr);
  set.reduce.assign(n, nullptr);
  check(gpu_.streamCreate(&set.compute), "streamCreate(compute)");
  if (res_.domain) check(gpu_.streamCreate(&set.domain), "streamCreate(domain collectives)");
  for (int p = 0; p < n; ++p) {
    if (p == topology_.rank) continue;
    check(gpu_.streamCreate(&set.send[p]), "streamCreate(send)");
    check(gpu_.streamCreate(&set.recv[p]), "streamCreate(receive)");
    check(gpu_.streamCreate(&set.reduce[p]), "streamCreate(reduce)");
  }
}

StreamExecutor::~StreamExecutor() {
  try {
    drain();
  } catch (const std::exception& e) {
    HETCCL_WARN(log::kEngine, "rank ", topology_.rank, ": ", e.what());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (proxy_) proxy_->stop();  // every queued group is done (or released): nothing more crosses hosts
  logTraffic();
  // Released work still runs on the streams: wait (bounded) until they are idle before freeing what they
  // use. A user stream that never reaches its collectives keeps them busy: then everything is leaked.
  // (Graphs captured on this communicator must not be replayed after it is destroyed, as with NCCL.)
  std::vector<void*> streams;
  for (const StreamSet* set : {&res_.eager, &res_.capture}) {
    if (set->compute) streams.push_back(set->compute);
    if (set->domain) streams.push_back(set->domain);
    for (size_t p = 0; p < set->send.size(); ++p)
      if (set->send[p]) streams.insert(streams.end(), {set->send[p], set->recv[p], set->reduce[p]});
  }
  const Deadline deadline = Deadline::fromConfig();
  bool idle = false;
  while (!idle && !deadline.expired()) {
    if (failed_) releaseStreams();
    idle = true;
    for (void* s : streams) idle = idle && gpu_.streamQuery(s) == HETCCL_GPU_OK;
    if (!idle) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (vendorAbort_.joinable()) vendorAbort_.join();  // the domain communicator outlives this executor
  if (!idle) {
    HETCCL_WARN(log::kEngine, "rank ", topology_.rank, ": device streams still busy at teardown; leaking their buffers");
    return;
  }
  for (void* s : streams) gpu_.streamDestroy(s);
  for (auto& land : res_.landing)
    for (int k = 0; k < StreamResources::kLandingBuffers; ++k) {
      if (land.buffer[k]) gpu_.freeDevice(land.buffer[k]);
      if (land.landed[k]) gpu_.eventDestroy(land.landed[k]);
      if (land.reduced[k]) gpu_.eventDestroy(land.reduced[k]);
    }
  if (res_.scratch) gpu_.freeDevice(res_.scratch);
  for (void* p : retiredScratch_) gpu_.freeDevice(p);
  if (control_) gpu_.freePinned(control_);
}

algo::Tuning StreamExecutor::tuningFromConfig(bool severalHosts) {
  algo::Tuning t = algo::Tuning::fromConfig();
  t.chunkBytes = slotBytesFromConfig();
  t.minChunkBytes = static_cast<size_t>(config().integer("HETCCL_GPU_MIN_CHUNK_BYTES", 1, int64_t{1} << 30));
  // A piece costs 5 stream operations and ~25 us of the host's runtime calls: mid sizes in 4 pieces, not 8
  // (1+1 on 2 x H200: 8 MiB 1.11x, 16 MiB 1.04x faster, equal elsewhere:
  // bench/results/auto_vs_forced_h200x2_2026-11-30).
  t.midChunks = 4;
  t.hierMinChunkBytes = std::min(
      t.hierChunkBytes,
      severalHosts ? static_cast<size_t>(config().integer("HETCCL_HIER_NET_MIN_CHUNK_BYTES", 1, int64_t{1} << 40))
                   : t.minChunkBytes);
  t.pairExchangeBytes = static_cast<size_t>(config().integer("HETCCL_GPU_PAIR_EXCHANGE_BYTES", 0, int64_t{1} << 40));
  t.smallAllReduceByDoubling = true;  // measured: algo::Tuning
  t.oneRankDomainsAsOneDomain = false;  // host-engine rules, not measured on the pipeline
  t.treeForManyRanks = false;
  return t;
}

uint64_t StreamExecutor::latencyPathBytesFromConfig() {
  if (config().str("HETCCL_ALGO") != "auto") return 0;  // a forced algorithm is what the user wants measured
  return static_cast<uint64_t>(config().integer("HETCCL_GPU_LL_BYTES", 0, int64_t{1} << 20));
}

const char* StreamExecutor::describe() { return "stream pipeline (copy engines through pinned shared-memory rings)"; }

void StreamExecutor::check(int rc, const char* what) const {
  if (rc != HETCCL_GPU_OK)
    throw Error(Result::UnhandledCudaError,
                concat("rank ", topology_.rank, ": ", gpu_.name, " ", what, ": ", gpu_.lastError()));
}

void StreamExecutor::enqueue(std::span<const algo::CollOp> ops, void* stream) {
  const HostTimer timer(*this);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_) throw InvalidUsage(concat("rank ", topology_.rank, ": the device path failed earlier"));
  }
  int capturing = 0;
  uint64_t captureId = 0;
  check(gpu_.streamCaptureInfo(stream, &capturing, &captureId), "streamCaptureInfo(user stream)");
  if (capturing) {
    // The capture streams stay in a capture until it ends: a second capture at once cannot use them.
    int busy = 0;
    uint64_t busyId = 0;
    check(gpu_.streamCaptureInfo(res_.capture.compute, &busy, &busyId), "streamCaptureInfo(capture streams)");
    if (busy && busyId != captureId)
      throw InvalidUsage(concat("rank ", topology_.rank, ": device calls of one communicator are being captured into "
                                "two CUDA graphs at once; end one capture before calling in the other"));
  }
  if (ll_ && ll_->takes(ops)) {
    enqueueLatencyPath(ops[0], stream, capturing != 0, groupStampWord0(ops));
    return;
  }
  GroupInfo info;
  info.captured = capturing != 0;
  info.stampWord0 = groupStampWord0(ops);
  const std::shared_ptr<const algo::Schedule> planned = plans_->get(ops);
  const algo::Schedule& schedule = *planned;
  ensureScratch(schedule.scratchBytes, info.captured);
  info.eagerSeq = nextSeq_ + 1;
  info.callSeq = ++callSeq_;  // every queued call, eager or captured: identical on every rank
  try {
    enqueueSchedule(schedule, res_, stream, info);
  } catch (const std::exception& e) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!info.captured) nextSeq_ = info.eagerSeq;
    }
    reportFailure(e);
    throw;
  }
  recordQueued(info.captured, info.eagerSeq, false);
  if (info.captured) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (const algo::Step& st : schedule.steps) {
    if (st.kind == algo::StepKind::Send) sentBytes_[st.peer] += st.bytes;
    if (st.kind == algo::StepKind::Recv || st.kind == algo::StepKind::RecvReduce) receivedBytes_[st.peer] += st.bytes;
    if (st.kind == algo::StepKind::DomainCollective) {
      domainBytes_ += domainCollectiveBytes(st, domainSize_);
      ++domainCalls_;
    }
  }
}

void StreamExecutor::enqueueLatencyPath(const algo::CollOp& op, void* stream, bool captured, uint64_t stampWord0) {
  LlPath::HostWords words;
  words.started = res_.words.started;
  words.finished = res_.words.finished;
  words.callNumber = ++callSeq_;
  const uint64_t eagerSeq = nextSeq_ + 1;
  if (!captured) {  // a replay has no host number: only eager calls count as done
    words.done = res_.words.done;
    words.doneValue = eagerSeq;
  }
  try {
    ll_->enqueue(op, stream, stampWord0, words);
  } catch (const std::exception& e) {
    reportFailure(e);
    throw;
  }
  recordQueued(captured, eagerSeq, true);
}

void StreamExecutor::recordQueued(bool captured, uint64_t eagerSeq, bool latencyPath) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (captured) ++capturedGroups_;
    else nextSeq_ = eagerSeq;  // the monitor and drain() wait for this group's done word
    if (latencyPath) ++latencyCalls_;
  }
  cv_.notify_all();
}

StreamExecutor::HostTimer::~HostTimer() {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
  std::lock_guard<std::mutex> lock(owner_.mu_);
  owner_.hostCalls_ += 1;
  owner_.hostNs_ += static_cast<uint64_t>(ns);
  owner_.hostMaxNs_ = std::max(owner_.hostMaxNs_, static_cast<uint64_t>(ns));
}

StreamExecutor::Traffic StreamExecutor::traffic() const {
  std::lock_guard<std::mutex> lock(mu_);
  Traffic t;
  t.ringSent = sentBytes_;
  t.ringReceived = receivedBytes_;
  t.domainCollectiveBytes = domainBytes_;
  t.domainCollectives = domainCalls_;
  t.latencyPathCalls = latencyCalls_;
  if (proxy_) {
    NetRingProxy::WireBytes w = proxy_->wireBytes();
    t.netSent = std::move(w.sent);
    t.netReceived = std::move(w.received);
  } else {
    t.netSent.assign(sentBytes_.size(), 0);
    t.netReceived.assign(sentBytes_.size(), 0);
  }
  return t;
}

// One INFO line per rank with the bytes it moved to and from each peer (bench/gpu reads it to show whether
// every rank's link is busy).
void StreamExecutor::logTraffic() const {
  std::string perPeer;
  uint64_t sent = 0, received = 0;
  for (size_t p = 0; p < sentBytes_.size(); ++p) {
    if (static_cast<int>(p) == topology_.rank) continue;
    sent += sentBytes_[p];
    received += receivedBytes_[p];
    perPeer += concat(" ", p, ":", sentBytes_[p], "/", receivedBytes_[p]);
  }
  HETCCL_INFO(log::kEngine, "rank ", topology_.rank, ": device traffic sent ", sent, " received ", received,
              " bytes in ", nextSeq_, " eager groups (per peer sent/received:", perPeer, "); ", domainCalls_,
              " domain collectives (", domainBytes_, " bytes); ", capturedGroups_, " groups captured into graphs; ",
              latencyCalls_, " calls by the latency path; the host spent ", hostNs_ / 1000, " us queueing ", hostCalls_,
              " calls (mean ", hostCalls_ ? hostNs_ / hostCalls_ / 1000.0 : 0.0, " us, max ", hostMaxNs_ / 1000.0, " us)");
}

void StreamExecutor::drain() {
  const auto limit = std::chrono::milliseconds(config().timeoutMs()) + std::chrono::seconds(5);
  std::unique_lock<std::mutex> lock(mu_);
  // The monitor turns a stall into a failure after HETCCL_TIMEOUT; this bound is only a safety net.
  if (!cv_.wait_for(lock, limit, [&] { return doneSeq_ == nextSeq_ || failed_; }))
    throw TimeoutError(-1, "", concat("rank ", topology_.rank, ": ", nextSeq_ - doneSeq_,
                                      " queued device collective(s) not finished within HETCCL_TIMEOUT"));
}

void StreamExecutor::ensureScratch(size_t bytes, bool captured) {
  if (bytes <= scratchBytes_) {
    scratchCaptured_ = scratchCaptured_ || (captured && bytes > 0);
    return;
  }
  drain();  // no eager group uses the old scratch any more
  if (res_.scratch && scratchCaptured_) retiredScratch_.push_back(res_.scratch);  // graphs may still replay
  else if (res_.scratch) gpu_.freeDevice(res_.scratch);
  res_.scratch = nullptr;
  scratchBytes_ = 0;
  void* p = nullptr;
  const size_t want = bytes + bytes / 4;
  check(gpu_.allocDevice(&p, want), "allocDevice(scratch)");
  res_.scratch = static_cast<char*>(p);
  scratchBytes_ = want;
  scratchCaptured_ = captured;
}

// Every wait of this rank's streams is for a slot of a ring: holding the awaited token on the rings it
// receives on, empty on the rings it sends on. Setting them so releases the streams (the outputs are then
// undefined); a peer may still flip one back, and a receiving stream then waits for its next piece, so the
// monitor repeats this while anything is queued or on the device.
void StreamExecutor::releaseStreams() {
  if (ll_) ll_->abort();  // its kernels poll the abort word
  for (size_t p = 0; p < rings_.in.size(); ++p) {
    if (!rings_.in[p]) continue;
    GpuRing& in = *rings_.in[p];
    const uint64_t want = load(in.expect());
    if (uint64_t* awaited = in.tokenHeader(want)) __atomic_store_n(awaited, want, __ATOMIC_RELEASE);
    for (uint32_t s = 0; s < rings_.out[p]->slots(); ++s)
      __atomic_store_n(rings_.out[p]->slotHeader(s), kSlotEmpty, __ATOMIC_RELEASE);
  }
}

void StreamExecutor::reportFailure(const std::exception& e) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_) return;
    failed_ = true;
  }
  HETCCL_WARN(log::kEngine, "rank ", topology_.rank, ": device collective failed: ", e.what());
  if (proxy_) proxy_->halt();  // before the release: the proxy must not flip a released slot back
  releaseStreams();
  // A vendor call waiting for a domain peer is released only by aborting the vendor communicator (its
  // kernels poll the abort flag). Not on this thread: ncclCommAbort synchronises with the device, which
  // stays busy until the monitor has released the ring waits, again and again (a deadlock when the
  // monitor itself waited: seen on an H100 with ranks whose counts differ).
  if (res_.domain && !vendorAbort_.joinable())
    vendorAbort_ = std::thread([d = res_.domain] { d->abort(); });
  onFailure_(e);
  cv_.notify_all();
}

// The stamp behind a token on `ring`: from the group log of the end that queued it, else (a piece received
// from another host) from the slot's stamp words, which that ring's proxy writes, when they give the token.
void StreamExecutor::stampOf(const GpuRing& ring, GroupLog log, uint64_t token, uint64_t words[4]) {
  if (ring.findGroup(log, token, words)) return;
  if (const uint64_t* header = log == GroupLog::Sent ? ring.tokenHeader(token) : nullptr) {
    for (int w = 0; w < 4; ++w) words[w] = load(header + 1 + w);
    if (pieceToken(words, tokenSlot(token)) == token) return;
  }
  unloggedStamp(token, words);
}

// A receiving stream waits for a token (the ring's expect word) that its slot does not hold, while the slot is
// full: a piece of another call. Seen on two polls in a row (one poll could catch the expect word being
// rewritten), it is recorded in the ring's report.
void StreamExecutor::findStampMismatch() {
  suspect_.resize(rings_.in.size());
  for (size_t p = 0; p < rings_.in.size(); ++p) {
    std::array<uint64_t, 2>& seen = suspect_[p];
    const GpuRing* ring = rings_.in[p].get();
    std::array<uint64_t, 2> now{};  // the token expected, the token found (0: no mismatch)
    if (ring) {
      const uint64_t want = load(ring->expect());
      if (const uint64_t* header = ring->tokenHeader(want)) {
        const uint64_t found = load(header);
        if (found != kSlotEmpty && found != want) now = {want, found};
      }
    }
    if (now[0] == 0 || now != seen) {
      seen = now;
      continue;
    }
    uint64_t words[8];  // the stamp found, the stamp expected
    stampOf(*ring, GroupLog::Sent, now[1], words);
    stampOf(*ring, GroupLog::Expected, now[0], words + 4);
    ring->recordMismatch(words);
  }
}

bool StreamExecutor::recordPathDisagreement() const {
  if (!ll_) return false;
  const int self = topology_.rank;
  const LlPath::BoardCall mine = ll_->lastCall(self);
  // A receiver waits for a piece its sender has not put in: the ring's expect word is set and names an
  // empty slot.
  auto awaited = [](const GpuRing& ring) {
    const uint64_t* header = ring.tokenHeader(load(ring.expect()));
    return header && load(header) == kSlotEmpty;
  };
  for (size_t p = 0; p < rings_.in.size(); ++p) {
    const GpuRing* in = rings_.in[p].get();
    const GpuRing* out = rings_.out[p].get();
    if (!in || !out || static_cast<int>(p) == self) continue;
    const LlPath::BoardCall theirs = ll_->lastCall(static_cast<int>(p));
    const auto ahead = static_cast<int32_t>(theirs.seq - mine.seq);
    uint64_t words[8];  // the ring's report: what the sender sent (or called), what the receiver expects
    if (ahead > 0 && awaited(*in)) {
      // The peer is on the latency path with a call this rank did not make there, while this rank's group
      // waits for the peer's piece: on the ring peer -> this rank, the peer "sent" its latency-path call.
      for (int w = 0; w < 4; ++w) words[w] = theirs.stamp[w];
      stampOf(*in, GroupLog::Expected, load(in->expect()), words + 4);
      in->recordMismatch(words);
      return true;
    }
    if (ahead < 0 && awaited(*out)) {
      // This rank waits on the latency path for a call the peer has not made there, while the peer's group
      // waits for this rank's piece: on the ring this rank -> peer, this rank "sent" its latency-path call.
      for (int w = 0; w < 4; ++w) words[w] = mine.stamp[w];
      stampOf(*out, GroupLog::Expected, load(out->expect()), words + 4);
      out->recordMismatch(words);
      return true;
    }
  }
  return false;
}

void StreamExecutor::checkHealth(bool busy) {
  if (busy) {  // while idle, a peer's exit or an abort is the communicator's business, not a device failure
    checkFailure_();
    if (abortFlag_ && abortFlag_->load()) throw AbortedError("communicator was aborted");
  }
  if (ll_)
    if (std::optional<std::string> why = ll_->mismatch()) throw InvalidUsage(*why);
  // A receiver (this rank or the peer) found a piece whose call stamp is not the one it expected. Checked
  // while idle too: a rank that only sent learns it here.
  for (size_t p = 0; p < rings_.in.size(); ++p)
    for (const GpuRing* ring : {rings_.in[p].get(), rings_.out[p].get()}) {
      if (!ring || load(ring->report()) == 0) continue;
      uint64_t got[4], want[4];
      for (int w = 0; w < 4; ++w) {
        got[w] = load(ring->report() + 1 + w);
        want[w] = load(ring->report() + 5 + w);
      }
      const bool incoming = ring == rings_.in[p].get();
      const int peer = static_cast<int>(p);
      const int from = incoming ? peer : topology_.rank, to = incoming ? topology_.rank : peer;
      // got[3] == kLatencyPathCall: rank `from` took the latency path for the call (recordPathDisagreement).
      const std::string where =
          got[3] == kLatencyPathCall
              ? concat("rank ", from, " called ", describeStamp(got), ", rank ", to, " expected ", describeStamp(want),
                       " from it on the stream pipeline's GPU ring (all-reduces of at most HETCCL_GPU_LL_BYTES = ",
                       ll_ ? ll_->maxBytes() : 0, " bytes take the latency path)")
              : concat("on the GPU ring from rank ", from, " to rank ", to, ", rank ", from, " sent ", describeStamp(got),
                       ", rank ", to, " expected ", describeStamp(want));
      throw InvalidUsage(concat("device collectives disagree between ranks: ", where,
                                " (every rank must make the same calls, in the same order, with the same counts, "
                                "types, operators and HETCCL_GPU_* settings)"));
    }
}

// Polls the pinned words the streams write: every 100 us while a group is queued or on the device, every
// 5 ms otherwise (stamp reports only, and graph replays, which the host does not see start). After a
// failure it keeps releasing the streams while anything runs (a peer may flip a slot back).
void StreamExecutor::monitor() {
  const auto timeout = std::chrono::milliseconds(config().timeoutMs());
  auto lastProgress = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (stopping_ && (doneSeq_ == nextSeq_ || failed_)) return;
    const bool eagerPending = doneSeq_ != nextSeq_, failed = failed_;
    lock.unlock();
    // Progress: the state or stamp of any slot of this rank's rings, or the group words, changed.
    const uint64_t started = load(controlWord(kStartedWord)), finished = load(controlWord(kFinishedWord));
    uint64_t signature = started * 3 + finished * 7 + (ll_ ? ll_->progressSignature() : 0);
    for (size_t p = 0; p < rings_.in.size(); ++p)
      for (const GpuRing* ring : {rings_.in[p].get(), rings_.out[p].get()})
        if (ring)
          for (uint32_t s = 0; s < ring->slots(); ++s)
            signature = signature * 31 + load(ring->slotHeader(s)) * 5 + load(ring->slotHeader(s) + 4);
    const bool busy = eagerPending || started != finished;
    if (signature != progressSignature_ || !busy) {
      progressSignature_ = signature;
      lastProgress = Clock::now();
    }
    if (failed) {
      if (busy) releaseStreams();
    } else {
      try {
        if (busy) findStampMismatch();
        checkHealth(busy);
        if (busy && Clock::now() - lastProgress > timeout) {
          if (recordPathDisagreement()) checkHealth(busy);  // reports it, on the peer's side too
          throw TimeoutError(-1, "", concat("rank ", topology_.rank, ": a device collective made no progress within ",
                                            "HETCCL_TIMEOUT (a peer stopped, or a user stream never reached it)"));
        }
      } catch (const std::exception& e) {
        reportFailure(e);
      }
    }
    lock.lock();
    if (busy) {
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(failed ? 1000 : 100));
      lock.lock();
    } else {
      cv_.wait_for(lock, std::chrono::milliseconds(5), [&] { return stopping_ || doneSeq_ != nextSeq_; });
    }
    const uint64_t seen = load(controlWord(kDoneWord));
    if (seen != doneSeq_ && static_cast<int64_t>(seen - doneSeq_) > 0) {
      doneSeq_ = seen;
      lastProgress = Clock::now();
      cv_.notify_all();
    }
  }
}

}  // namespace hetccl::stream_exec
