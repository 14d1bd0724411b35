#include "exec/pipeline/stream_program.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/types.hpp"
#include "exec/pipeline/gpu_stamp.hpp"

namespace hetccl::stream_exec {
namespace {

using algo::Location;
using algo::Step;
using algo::StepKind;

constexpr int kNone = -1;
const algo::Reduction kBytes{};  // an exchange moves bytes (a group may have no reduction at all)

/// Up to HETCCL_GPU_MAX_STREAM_OPS stream operations queued as one call.
class OpList {
 public:
  OpList& add(uint32_t kind, uint64_t* word, uint64_t value = 0) {
    hetcclGpuStreamOp_t& op = ops_[n_++];
    op = hetcclGpuStreamOp_t{};
    op.kind = kind;
    op.word = word;
    op.value = value;
    return *this;
  }
  hetcclGpuStreamOp_t& last() { return ops_[n_ - 1]; }
  bool empty() const { return n_ == 0; }
  const hetcclGpuStreamOp_t* data() const { return ops_; }
  unsigned size() const { return n_; }

 private:
  hetcclGpuStreamOp_t ops_[HETCCL_GPU_MAX_STREAM_OPS];
  unsigned n_ = 0;
};

uint64_t piecesOf(uint64_t bytes, uint64_t slotBytes) { return (bytes + slotBytes - 1) / slotBytes; }

class Compiler {
 public:
  Compiler(const algo::Schedule& s, StreamResources& res, void* userStream, const GroupInfo& info)
      : s_(s), res_(res), gpu_(*res.gpu), user_(userStream), info_(info) {
    const StreamSet& set = info.captured ? res.capture : res.eager;
    const size_t peers = set.send.size();
    streams_.push_back(set.compute);
    for (size_t p = 0; p < peers; ++p) {
      streams_.push_back(set.send[p]);
      streams_.push_back(set.recv[p]);
      streams_.push_back(set.reduce[p]);
    }
    domainStream_ = static_cast<int>(streams_.size());
    streams_.push_back(set.domain);
    used_.assign(streams_.size(), false);
    waited_.assign(streams_.size() * streams_.size(), kNone);
    sendBytes_.assign(peers, 0);
    recvBytes_.assign(peers, 0);
    sendGroup_.assign(peers, 0);
    recvGroup_.assign(peers, 0);
    sent_.assign(peers, 0);
    received_.assign(peers, 0);
    unreleased_.assign(peers, false);
    landingUses_.assign(peers, 0);
  }

  void run() {
    countBytes();
    res_.events->reset();
    start();
    markRecordedSteps();
    for (size_t i = 0; i < s_.steps.size(); ++i) compileStep(i);
    finish();
  }

 private:
  static int sendStream(int peer) { return 1 + 3 * peer; }
  static int recvStream(int peer) { return 2 + 3 * peer; }
  static int reduceStream(int peer) { return 3 + 3 * peer; }

  /// The stream a step completes on (where later steps find it).
  int streamOf(const Step& st) const {
    switch (st.kind) {
      case StepKind::Send: return sendStream(st.peer);
      case StepKind::Recv: return recvStream(st.peer);
      case StepKind::RecvReduce: return reduceStream(st.peer);
      case StepKind::DomainCollective: return domainStream_;
      default: return 0;
    }
  }

  void call(int rc, const char* what) const {
    if (rc != HETCCL_GPU_OK)
      throw Error(Result::UnhandledCudaError,
                  concat("rank ", res_.rank, ": ", gpu_.name, " ", what, ": ", gpu_.lastError()));
  }

  void waitEvent(void* stream, void* event, const char* what) const {
    if (gpu_.streamWaitEvent(stream, event) != HETCCL_GPU_OK)
      throw Error(Result::UnhandledCudaError,
                  concat("rank ", res_.rank, ": ", gpu_.name, " streamWaitEvent(", what, "): ", gpu_.lastError()));
  }

  void queue(const OpList& ops, void* stream, const char* what) const {
    if (!ops.empty()) call(gpu_.streamOps(stream, ops.data(), ops.size()), what);
  }

  char* address(Location l) const {
    return l.space == Location::Space::Scratch ? res_.scratch + l.addr : reinterpret_cast<char*>(l.addr);
  }

  // Bytes of this group on every ring: they go into every piece's stamp, so that ranks whose counts differ
  // anywhere disagree on the first piece already.
  // The group's number on each ring it uses (word1) is counted here too, and the group logged on the ring
  // (its monitors name a mismatch's calls from the log).
  void countBytes() {
    for (const Step& st : s_.steps) {
      if (st.kind == StepKind::Send) sendBytes_[st.peer] += st.bytes;
      if (st.kind == StepKind::Recv || st.kind == StepKind::RecvReduce) recvBytes_[st.peer] += st.bytes;
    }
    for (size_t p = 0; p < sendBytes_.size(); ++p) {
      if (sendBytes_[p]) {
        sendGroup_[p] = ++res_.groupsSent[p];
        res_.rings->out[p]->logGroup(GroupLog::Sent, info_.stampWord0, sendGroup_[p], sendBytes_[p]);
      }
      if (recvBytes_[p]) {
        recvGroup_[p] = ++res_.groupsReceived[p];
        res_.rings->in[p]->logGroup(GroupLog::Expected, info_.stampWord0, recvGroup_[p], recvBytes_[p]);
      }
    }
  }

  // The compute stream waits for the user's stream, tells the monitor, and lets the other streams go.
  void start() {
    void* compute = streams_[0];
    void* started = res_.events->take();
    call(gpu_.eventRecord(started, user_), "eventRecord(group start on the user stream)");
    waitEvent(compute, started, "the user stream reaches the group");  // wait:user-reaches-group
    used_[0] = true;
    OpList ops;
    ops.add(HETCCL_GPU_OP_WRITE, res_.words.started, info_.callSeq);
    queue(ops, compute, "streamOps(group started)");
    go_ = res_.events->take();
    call(gpu_.eventRecord(go_, compute), "eventRecord(group started)");
  }

  // Steps another stream waits for get an event recorded right after them.
  void markRecordedSteps() {
    stepStream_.resize(s_.steps.size());
    event_.assign(s_.steps.size(), nullptr);
    needsEvent_.assign(s_.steps.size(), false);
    for (size_t i = 0; i < s_.steps.size(); ++i) {
      stepStream_[i] = streamOf(s_.steps[i]);
      for (uint32_t d : s_.depsOf(s_.steps[i]))
        if (stepStream_[d] != stepStream_[i]) needsEvent_[d] = true;
    }
  }

  // The first use of a stream in this group waits until the group has started.
  void use(int stream) {
    if (used_[stream]) return;
    used_[stream] = true;
    waitEvent(streams_[stream], go_, "group start");  // wait:group-start
  }

  void waitDeps(size_t i) {
    const int x = stepStream_[i];
    for (uint32_t d : s_.depsOf(s_.steps[i])) {
      const int y = stepStream_[d];
      if (y == x) continue;  // stream order
      int& seen = waited_[static_cast<size_t>(x) * streams_.size() + y];
      if (seen != kNone && seen >= static_cast<int>(d)) continue;  // an event after a later step of y covers it
      waitEvent(streams_[x], event_[d], "step dependency");  // wait:step-dependency
      seen = static_cast<int>(d);
    }
  }

  void compileStep(size_t i) {
    const Step& st = s_.steps[i];
    const int x = stepStream_[i];
    use(x);
    waitDeps(i);
    void* stream = streams_[x];
    switch (st.kind) {
      case StepKind::Send: send(st, stream); break;
      case StepKind::Recv: receive(st, stream, nullptr); break;
      case StepKind::RecvReduce: receive(st, streams_[recvStream(st.peer)], stream); break;
      case StepKind::Copy:
        if (st.bytes && address(st.dst) != address(st.src))
          call(gpu_.memcpyAsync(address(st.dst), address(st.src), st.bytes, stream), "memcpyAsync(copy step)");
        break;
      case StepKind::Reduce: {
        const algo::Reduction& r = s_.reductions[st.reduction];
        call(gpu_.reduce(address(st.dst), address(st.src), st.bytes / dataTypeSize(r.type), static_cast<int>(r.type),
                         static_cast<int>(r.op.kind), stream),
             "reduce");
        break;
      }
      case StepKind::Scale: {
        const algo::Reduction& r = s_.reductions[st.reduction];
        call(gpu_.scale(address(st.dst), address(st.src), st.bytes / dataTypeSize(r.type), static_cast<int>(r.type),
                        r.op.scalar, stream),
             "scale");
        break;
      }
      case StepKind::Divide: {
        const algo::Reduction& r = s_.reductions[st.reduction];
        call(gpu_.divide(address(st.dst), st.bytes / dataTypeSize(r.type), static_cast<int>(r.type), r.divisor, stream),
             "divide");
        break;
      }
      case StepKind::DomainCollective: domainCollective(st, stream); break;
    }
    if (needsEvent_[i]) {
      event_[i] = res_.events->take();
      call(gpu_.eventRecord(event_[i], stream), "eventRecord(step done)");
    }
  }

  /// The vendor call on the domain stream (its errors are the vendor's, thrown as they are).
  void domainCollective(const Step& st, void* stream) const {
    if (!res_.domain || !stream)
      throw InternalError(concat("rank ", res_.rank, ": a domain collective was planned without a domain communicator"));
    domain::DomainComm& c = *res_.domain;
    const algo::Reduction& r = st.domainColl == algo::DomainColl::Exchange ? kBytes : s_.reductions[st.reduction];
    const size_t count = st.bytes / dataTypeSize(r.type);
    switch (st.domainColl) {
      case algo::DomainColl::AllReduce: return c.allReduce(address(st.src), address(st.dst), count, r.type, r.op, stream);
      case algo::DomainColl::ReduceScatter:
        return c.reduceScatter(address(st.src), address(st.dst), count, r.type, r.op, stream);
      case algo::DomainColl::AllGather: return c.allGather(address(st.src), address(st.dst), count, r.type, stream);
      case algo::DomainColl::Broadcast:
        return c.broadcast(address(st.src), address(st.dst), count, r.type, st.peer, stream);
      case algo::DomainColl::Reduce:
        return c.reduce(address(st.src), address(st.dst), count, r.type, r.op, st.peer, stream);
      case algo::DomainColl::Exchange: {
        std::vector<domain::Transfer> transfers;
        for (const algo::DomainTransfer& t : s_.transfersOf(st))
          transfers.push_back({t.send, t.peer, address(t.at), t.bytes, DataType::Uint8});
        return c.exchange(transfers, stream);
      }
    }
  }

  /// The stamp of the group's k-th piece on a ring that carries `bytes` in this group.
  void stamp(uint64_t out[4], uint64_t group, uint64_t bytes, uint64_t k) const {
    out[0] = info_.stampWord0;
    out[1] = group;
    out[2] = bytes;
    out[3] = k;
  }

  /// The stamp words and the token (gpu_stamp.hpp) of the k-th piece this group sends to `peer`, or
  /// receives from it.
  uint64_t sentToken(int peer, uint64_t k, uint64_t words[4]) const {
    stamp(words, sendGroup_[peer], sendBytes_[peer], k);
    return pieceToken(words, static_cast<uint32_t>(k % res_.rings->out[peer]->slots()));
  }
  uint64_t expectedToken(int peer, uint64_t k) const {
    uint64_t words[4];
    stamp(words, recvGroup_[peer], recvBytes_[peer], k);
    return pieceToken(words, static_cast<uint32_t>(k % res_.rings->in[peer]->slots()));
  }

  /// "wait until the slot of the k-th piece to `peer` is empty".
  void addSlotEmpty(OpList& ops, int peer, uint64_t k) const {
    ops.add(HETCCL_GPU_OP_WAIT_EQ, res_.rings->out[peer]->devSlotHeader(k), kSlotEmpty);
  }

  // Per piece: wait until its slot is empty, copy it in, write its token (after the data). On a ring to
  // another host the stamp words and the length go first: that ring's proxy sends them with the piece. The
  // wait for the next piece's slot goes in the same call as the token (one runtime call per piece fewer).
  void send(const Step& st, void* stream) {
    const GpuRing& ring = *res_.rings->out[st.peer];
    const bool proxied = res_.rings->remote[st.peer];
    const uint64_t pieces = piecesOf(st.bytes, ring.slotBytes());
    const char* src = address(st.src);
    for (uint64_t j = 0; j < pieces; ++j) {
      const uint64_t k = sent_[st.peer]++;
      const uint64_t off = j * ring.slotBytes();
      if (j == 0) {
        OpList wait;
        addSlotEmpty(wait, st.peer, k);  // wait:slot-empty
        queue(wait, stream, "streamOps(wait for an empty ring slot)");
      }
      const uint64_t len = std::min<uint64_t>(ring.slotBytes(), st.bytes - off);
      call(gpu_.memcpyAsync(ring.slot(k), src + off, len, stream), "memcpyAsync(device to ring)");
      uint64_t* header = ring.devSlotHeader(k);
      OpList ops;
      uint64_t words[4];
      const uint64_t token = sentToken(st.peer, k, words);
      if (proxied) {
        for (int w = 0; w < 4; ++w) ops.add(HETCCL_GPU_OP_WRITE, header + 1 + w, words[w]);
        ops.add(HETCCL_GPU_OP_WRITE, header + kSlotBytesWord, len);  // what the proxy sends (net_ring_proxy.hpp)
      }
      ops.add(HETCCL_GPU_OP_WRITE, header, token);  // after the data
      if (j + 1 < pieces) addSlotEmpty(ops, st.peer, k + 1);  // wait:next-slot-empty
      queue(ops, stream, "streamOps(publish a piece, wait for the next empty slot)");
    }
  }

  /// "mark the slot of the last piece copied out from `peer` empty", if not done yet.
  void addRelease(OpList& ops, int peer) {
    if (!unreleased_[peer]) return;
    unreleased_[peer] = false;
    ops.add(HETCCL_GPU_OP_WRITE, res_.rings->in[peer]->devSlotHeader(received_[peer] - 1), kSlotEmpty);
  }

  /// "the stream now waits for the k-th piece from `peer`" (the ring's expect word, for the monitor). Written
  /// before the previous piece's slot is released, so that the expect word never names a slot the sender
  /// may already refill with the next piece.
  void addExpect(OpList& ops, int peer, uint64_t k) const {
    ops.add(HETCCL_GPU_OP_WRITE, res_.rings->in[peer]->devExpect(), expectedToken(peer, k));
  }

  /// "wait until the slot of the k-th piece from `peer` holds that piece": its token, which a piece of any
  /// other call does not carry. A different token stalls the stream, and the monitor reports it
  /// (StreamExecutor::findStampMismatch).
  void addSlotFull(OpList& ops, int peer, uint64_t k) const {
    ops.add(HETCCL_GPU_OP_WAIT_EQ, res_.rings->in[peer]->devSlotHeader(k), expectedToken(peer, k));
  }

  // Recv (reduceStream null): pieces straight into dst. RecvReduce: pieces into landing buffers on
  // `ringStream` (the receive stream), reduced into dst on `reduceStream` (which already waits for the
  // step's dependencies). Per piece one call publishes the token expected, releases the previous piece's
  // slot and waits for the piece. (Reducing on the receive stream itself, without the events, was measured
  // 1.2-1.3x slower from 128 MiB and no faster below: bench/results/plugin_call_costs_h200x2_2026-11-30.)
  void receive(const Step& st, void* ringStream, void* reduceStream) {
    const GpuRing& ring = *res_.rings->in[st.peer];
    if (reduceStream) use(recvStream(st.peer));
    StreamResources::Landing& land = res_.landing[st.peer];
    char* dst = address(st.dst);
    const uint64_t pieces = piecesOf(st.bytes, ring.slotBytes());
    for (uint64_t j = 0; j < pieces; ++j) {
      const uint64_t k = received_[st.peer];
      const uint64_t off = j * ring.slotBytes(), len = std::min<uint64_t>(ring.slotBytes(), st.bytes - off);
      OpList ops;
      addExpect(ops, st.peer, k);
      addRelease(ops, st.peer);
      addSlotFull(ops, st.peer, k);  // wait:slot-full
      queue(ops, ringStream, "streamOps(publish the expected token, release a ring slot, wait for the piece)");
      if (!reduceStream) {
        call(gpu_.memcpyAsync(dst + off, ring.slot(k), len, ringStream), "memcpyAsync(ring to device)");
      } else {
        const algo::Reduction& r = s_.reductions[st.reduction];  // a Recv step has none
        const uint64_t use = landingUses_[st.peer]++;
        const int b = static_cast<int>(use % StreamResources::kLandingBuffers);
        const bool reused = use >= StreamResources::kLandingBuffers;  // its previous piece's reduction must be done
        if (reused) waitEvent(ringStream, land.reduced[b], "landing buffer free");  // wait:landing-free
        call(gpu_.memcpyAsync(land.buffer[b], ring.slot(k), len, ringStream), "memcpyAsync(ring to landing buffer)");
        call(gpu_.eventRecord(land.landed[b], ringStream), "eventRecord(piece landed)");
        waitEvent(reduceStream, land.landed[b], "piece landed");  // wait:piece-landed
        call(gpu_.reduce(dst + off, land.buffer[b], len / dataTypeSize(r.type), static_cast<int>(r.type),
                         static_cast<int>(r.op.kind), reduceStream),
             "reduce(received piece)");
        call(gpu_.eventRecord(land.reduced[b], reduceStream), "eventRecord(landing buffer free)");
      }
      received_[st.peer] = k + 1;
      unreleased_[st.peer] = true;
    }
    OpList ops;
    ops.add(HETCCL_GPU_OP_WRITE, ring.devExpect(), 0);  // first: the monitor must not compare it with a refilled slot
    addRelease(ops, st.peer);
    queue(ops, ringStream, "streamOps(clear the expected token, release a ring slot)");
  }

  // The compute stream joins every other stream used, tells the monitor (and, for an eager group, the
  // host's group number), and the user's stream waits.
  void finish() {
    void* compute = streams_[0];
    for (size_t x = 1; x < streams_.size(); ++x) {
      if (!used_[x]) continue;
      void* ev = res_.events->take();
      call(gpu_.eventRecord(ev, streams_[x]), "eventRecord(stream done)");
      waitEvent(compute, ev, "join");  // wait:join-streams
    }
    OpList ops;
    ops.add(HETCCL_GPU_OP_WRITE, res_.words.finished, info_.callSeq);
    if (!info_.captured) ops.add(HETCCL_GPU_OP_WRITE, res_.words.done, info_.eagerSeq);
    queue(ops, compute, "streamOps(group finished)");
    void* done = res_.events->take();
    call(gpu_.eventRecord(done, compute), "eventRecord(group done)");
    waitEvent(user_, done, "the user stream waits for the group");  // wait:user-waits-group
  }

  const algo::Schedule& s_;
  StreamResources& res_;
  const hetcclGpuPlugin_t& gpu_;
  void* user_;
  const GroupInfo& info_;
  void* go_ = nullptr;
  std::vector<void*> streams_;  // compute, then send / receive / reduce per peer, then the domain stream
  int domainStream_ = 0;
  std::vector<bool> used_;
  std::vector<int> waited_;  // [x * n + y]: latest step of stream y that stream x already waits for
  std::vector<int> stepStream_;
  std::vector<void*> event_;
  std::vector<bool> needsEvent_;
  // Per peer, this group's: bytes on each ring, pieces queued so far, landing buffer uses, and whether the
  // slot of the last piece copied out is still to be released.
  std::vector<uint64_t> sendBytes_, recvBytes_, sent_, received_, landingUses_;
  std::vector<uint64_t> sendGroup_, recvGroup_;  // this group's number on each ring it uses (word1)
  std::vector<bool> unreleased_;
};

}  // namespace

uint64_t domainCollectiveBytes(const algo::Step& step, int domainSize) {
  // An exchange's bytes are its transfers' total, counted once (on the sending side as on the receiving).
  const bool blocks = step.domainColl == algo::DomainColl::ReduceScatter || step.domainColl == algo::DomainColl::AllGather;
  return blocks ? step.bytes * static_cast<uint64_t>(domainSize) : step.bytes;
}

EventPool::~EventPool() {
  for (void* e : events_) gpu_.eventDestroy(e);
}

void* EventPool::take() {
  if (next_ == events_.size()) {
    void* e = nullptr;
    if (gpu_.eventCreate(&e) != HETCCL_GPU_OK)
      throw Error(Result::UnhandledCudaError, concat(gpu_.name, " eventCreate: ", gpu_.lastError()));
    events_.push_back(e);
  }
  return events_[next_++];
}

void enqueueSchedule(const algo::Schedule& schedule, StreamResources& res, void* userStream, const GroupInfo& info) {
  Compiler(schedule, res, userStream, info).run();
}

}  // namespace hetccl::stream_exec
