#include "stream_exec/stream_program.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/types.hpp"

namespace hetccl::stream_exec {
namespace {

using algo::Location;
using algo::Step;
using algo::StepKind;

constexpr int kNone = -1;

class Compiler {
 public:
  Compiler(const algo::Schedule& s, StreamResources& res, void* userStream)
      : s_(s), res_(res), gpu_(*res.gpu), user_(userStream) {
    const size_t peers = res.send.size();
    streams_.push_back(res.compute);
    for (size_t p = 0; p < peers; ++p) {
      streams_.push_back(res.send[p]);
      streams_.push_back(res.recv[p]);
      streams_.push_back(res.reduce[p]);
    }
    used_.assign(streams_.size(), false);
    waited_.assign(streams_.size() * streams_.size(), kNone);
  }

  void run(uint64_t* doneFlag, uint64_t seq) {
    res_.events->reset();
    start_ = res_.events->take();
    call(gpu_.eventRecord(start_, user_), "eventRecord(group start on the user stream)");
    markRecordedSteps();
    for (size_t i = 0; i < s_.steps.size(); ++i) compileStep(i);
    finish(doneFlag, seq);
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
      default: return 0;
    }
  }

  void call(int rc, const char* what) const {
    if (rc != HETCCL_GPU_OK)
      throw Error(Result::UnhandledCudaError, concat("rank ", res_.rank, ": ", gpu_.name, " ", what, ": ", gpu_.lastError()));
  }

  char* address(Location l) const {
    return l.space == Location::Space::Scratch ? res_.scratch + l.addr : reinterpret_cast<char*>(l.addr);
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

  // The first use of a stream in this group waits for the user's stream to reach the group.
  void use(int stream) {
    if (used_[stream]) return;
    used_[stream] = true;
    call(gpu_.streamWaitEvent(streams_[stream], start_), "streamWaitEvent(group start)");  // wait:group-start
  }

  void waitDeps(size_t i) {
    const int x = stepStream_[i];
    for (uint32_t d : s_.depsOf(s_.steps[i])) {
      const int y = stepStream_[d];
      if (y == x) continue;  // stream order
      int& seen = waited_[static_cast<size_t>(x) * streams_.size() + y];
      if (seen != kNone && seen >= static_cast<int>(d)) continue;  // an event after a later step of y covers it
      call(gpu_.streamWaitEvent(streams_[x], event_[d]), "streamWaitEvent(step dependency)");  // wait:step-dependency
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
      case StepKind::Recv: receive(st, stream); break;
      case StepKind::RecvReduce: receiveReduce(st, stream); break;
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
    }
    if (needsEvent_[i]) {
      event_[i] = res_.events->take();
      call(gpu_.eventRecord(event_[i], stream), "eventRecord(step done)");
    }
  }

  void send(const Step& st, void* stream) {
    GpuRing& ring = *res_.rings->out[st.peer];
    const char* src = address(st.src);
    for (uint64_t off = 0; off < st.bytes; off += ring.slotBytes()) {
      const uint64_t len = std::min<uint64_t>(ring.slotBytes(), st.bytes - off);
      const uint64_t piece = ring.pieces++;
      if (piece >= ring.slots())
        call(gpu_.streamWaitFlag(stream, ring.consumed(), piece + 1 - ring.slots(), 0),  // wait:ring-slot-free
             "streamWaitFlag(ring slot free)");
      call(gpu_.memcpyAsync(ring.slot(piece), src + off, len, stream), "memcpyAsync(device to ring)");
      call(gpu_.streamWriteFlag(stream, ring.published(), piece + 1, 0), "streamWriteFlag(piece published)");
    }
  }

  void receive(const Step& st, void* stream) {
    GpuRing& ring = *res_.rings->in[st.peer];
    char* dst = address(st.dst);
    for (uint64_t off = 0; off < st.bytes; off += ring.slotBytes()) {
      const uint64_t len = std::min<uint64_t>(ring.slotBytes(), st.bytes - off);
      const uint64_t piece = ring.pieces++;
      call(gpu_.streamWaitFlag(stream, ring.published(), piece + 1, 0),  // wait:recv-published
           "streamWaitFlag(piece published)");
      call(gpu_.memcpyAsync(dst + off, ring.slot(piece), len, stream), "memcpyAsync(ring to device)");
      call(gpu_.streamWriteFlag(stream, ring.consumed(), piece + 1, 0), "streamWriteFlag(slot released)");
    }
  }

  // `reduceStream` already waits for the step's dependencies; the copies run ahead on the receive stream.
  void receiveReduce(const Step& st, void* reduceStream) {
    GpuRing& ring = *res_.rings->in[st.peer];
    StreamResources::Landing& land = res_.landing[st.peer];
    const int recv = recvStream(st.peer);
    use(recv);
    void* recvStream = streams_[recv];
    char* dst = address(st.dst);
    const algo::Reduction& r = s_.reductions[st.reduction];
    for (uint64_t off = 0; off < st.bytes; off += ring.slotBytes()) {
      const uint64_t len = std::min<uint64_t>(ring.slotBytes(), st.bytes - off);
      const uint64_t piece = ring.pieces++;
      const int k = static_cast<int>(land.uses % StreamResources::kLandingBuffers);
      if (land.uses++ >= StreamResources::kLandingBuffers)  // the reduction of its previous piece is done
        call(gpu_.streamWaitEvent(recvStream, land.reduced[k]),  // wait:landing-free
             "streamWaitEvent(landing buffer free)");
      call(gpu_.streamWaitFlag(recvStream, ring.published(), piece + 1, 0),  // wait:recv-reduce-published
           "streamWaitFlag(piece published)");
      call(gpu_.memcpyAsync(land.buffer[k], ring.slot(piece), len, recvStream), "memcpyAsync(ring to landing buffer)");
      call(gpu_.streamWriteFlag(recvStream, ring.consumed(), piece + 1, 0), "streamWriteFlag(slot released)");
      call(gpu_.eventRecord(land.landed[k], recvStream), "eventRecord(piece landed)");
      call(gpu_.streamWaitEvent(reduceStream, land.landed[k]), "streamWaitEvent(piece landed)");  // wait:piece-landed
      call(gpu_.reduce(dst + off, land.buffer[k], len / dataTypeSize(r.type), static_cast<int>(r.type),
                       static_cast<int>(r.op.kind), reduceStream),
           "reduce(received piece)");
      call(gpu_.eventRecord(land.reduced[k], reduceStream), "eventRecord(landing buffer free)");
    }
  }

  // The compute stream joins every other stream used, signals the host, and the user's stream waits.
  void finish(uint64_t* doneFlag, uint64_t seq) {
    use(0);
    for (size_t x = 1; x < streams_.size(); ++x) {
      if (!used_[x]) continue;
      void* ev = res_.events->take();
      call(gpu_.eventRecord(ev, streams_[x]), "eventRecord(stream done)");
      call(gpu_.streamWaitEvent(streams_[0], ev), "streamWaitEvent(join)");  // wait:join
    }
    call(gpu_.streamWriteFlag(streams_[0], doneFlag, seq, 0), "streamWriteFlag(group done)");
    void* done = res_.events->take();
    call(gpu_.eventRecord(done, streams_[0]), "eventRecord(group done)");
    call(gpu_.streamWaitEvent(user_, done),  // wait:user-waits-group
         "streamWaitEvent(user stream waits for the group)");
  }

  const algo::Schedule& s_;
  StreamResources& res_;
  const hetcclGpuPlugin_v1_t& gpu_;
  void* user_;
  void* start_ = nullptr;
  std::vector<void*> streams_;
  std::vector<bool> used_;
  std::vector<int> waited_;  // [x * n + y]: latest step of stream y that stream x already waits for
  std::vector<int> stepStream_;
  std::vector<void*> event_;
  std::vector<bool> needsEvent_;
};

}  // namespace

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

void enqueueSchedule(const algo::Schedule& schedule, StreamResources& res, void* userStream, uint64_t* doneFlag,
                     uint64_t seq) {
  Compiler(schedule, res, userStream).run(doneFlag, seq);
}

}  // namespace hetccl::stream_exec
