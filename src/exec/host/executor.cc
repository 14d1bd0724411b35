#include "exec/host/executor.hpp"

#include <chrono>
#include <memory>
#include <thread>

#include "core/error.hpp"
#include "core/log.hpp"

namespace hetccl::engine {
namespace {

using algo::Location;
using algo::Schedule;
using algo::Step;
using algo::StepKind;

bool isConnStep(StepKind k) { return k == StepKind::Send || k == StepKind::Recv || k == StepKind::RecvReduce; }

/// Steps of one connection (one peer, one direction) in schedule order, and how many were posted.
struct ConnQueue {
  int peer = -1;
  bool isSend = false;
  transport::SendConn* send = nullptr;
  transport::RecvConn* recv = nullptr;
  std::vector<uint32_t> steps;
  size_t posted = 0;
  size_t open = 0;  // requests posted (or being posted) and not yet seen complete
};

struct InFlight {
  uint32_t step;
  ConnQueue* conn;
  transport::Request request;
};

/// The transport calls this for every received piece of a recv-and-reduce.
struct ReducerCtx {
  device::ReduceFn fn = nullptr;
};
void reduceTrampoline(void* dst, const void* incoming, size_t count, const void* ctx) {
  static_cast<const ReducerCtx*>(ctx)->fn(dst, incoming, count);
}

class Executor {
 public:
  Executor(const Schedule& s, transport::Links& links, const ExecContext& ctx, std::span<const transport::CallStamp> stamps)
      : s_(s), ctx_(ctx), local_(ctx.local ? *ctx.local : hostLocalOps()), stamps_(stamps) {
    if (!stamps_.empty() && stamps_.size() != s.steps.size())
      throw InternalError(concat("engine: ", stamps_.size(), " call stamps for ", s.steps.size(), " steps"));
    prepareReductions();
    prepareGraph();
    prepareConnections(links);
    if (s.scratchBytes > 0) scratchBase_ = (ctx.scratch ? *ctx.scratch : ownScratch_).get(s.scratchBytes);
  }

  /// Runs the schedule to completion. If it throws, every connection with requests still open has
  /// been abandoned first, so no transport touches scratch, reducers_ or user buffers afterwards.
  void run();

 private:
  void runSteps();
  void abandonOpenRequests() noexcept;
  void prepareReductions();
  void prepareGraph();
  void prepareConnections(transport::Links& links);
  void* resolve(Location l) const {
    return l.space == Location::Space::User ? reinterpret_cast<void*>(l.addr)
                                            : static_cast<char*>(scratchBase_) + l.addr;
  }
  void runLocal(uint32_t index);
  void complete(uint32_t index);
  bool postReady();
  bool testInFlight();
  void checkStuck(Clock::time_point lastProgress, bool progressed);
  std::string peerName(int peer) const;

  const Schedule& s_;
  const ExecContext& ctx_;
  const LocalOps& local_;
  std::span<const transport::CallStamp> stamps_;  // per step; empty: default stamps
  ScratchArena ownScratch_;  // used when the context brings no arena
  void* scratchBase_ = nullptr;
  std::vector<ReducerCtx> reducerCtx_;
  std::vector<transport::Reducer> reducers_;  // per reduction; outlive every request
  std::vector<uint32_t> waitingOn_;           // unfinished dependencies per step
  std::vector<uint32_t> dependentsBegin_, dependents_;  // reverse edges (CSR)
  std::vector<uint32_t> readyLocal_;
  std::vector<ConnQueue> conns_;
  std::vector<InFlight> inFlight_;  // in posting order: the front is the oldest
  size_t done_ = 0;
};

void Executor::prepareReductions() {
  reducerCtx_.resize(s_.reductions.size());
  reducers_.resize(s_.reductions.size());
  for (size_t i = 0; i < s_.reductions.size(); ++i) {
    const algo::Reduction& r = s_.reductions[i];
    reducerCtx_[i].fn = local_.reduceFn(r.type, r.op.kind);
    if (!reducerCtx_[i].fn)
      throw InvalidArgument(concat("no reduction kernel for ", dataTypeName(r.type), " ", redOpName(r.op.kind)));
    reducers_[i] = transport::Reducer{reduceTrampoline, &reducerCtx_[i], dataTypeSize(r.type)};
  }
}

void Executor::prepareGraph() {
  const size_t n = s_.steps.size();
  waitingOn_.assign(n, 0);
  dependentsBegin_.assign(n + 1, 0);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t d : s_.depsOf(s_.steps[i])) {
      if (d >= i) throw InternalError(concat("schedule step ", i, " depends on later step ", d));
      ++dependentsBegin_[d + 1];
    }
    waitingOn_[i] = static_cast<uint32_t>(s_.steps[i].depEnd - s_.steps[i].depBegin);
  }
  for (size_t i = 0; i < n; ++i) dependentsBegin_[i + 1] += dependentsBegin_[i];
  dependents_.resize(dependentsBegin_[n]);
  std::vector<uint32_t> fill(dependentsBegin_.begin(), dependentsBegin_.end() - 1);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t d : s_.depsOf(s_.steps[i])) dependents_[fill[d]++] = i;
  for (uint32_t i = 0; i < n; ++i)
    if (waitingOn_[i] == 0 && !isConnStep(s_.steps[i].kind)) readyLocal_.push_back(i);
}

void Executor::prepareConnections(transport::Links& links) {
  std::vector<int> sendIndex, recvIndex;  // peer -> index in conns_, -1 when none yet
  for (uint32_t i = 0; i < s_.steps.size(); ++i) {
    const Step& st = s_.steps[i];
    if (!isConnStep(st.kind)) continue;
    const bool isSend = st.kind == StepKind::Send;
    std::vector<int>& index = isSend ? sendIndex : recvIndex;
    if (index.size() <= static_cast<size_t>(st.peer)) index.resize(st.peer + 1, -1);
    if (index[st.peer] < 0) {
      index[st.peer] = static_cast<int>(conns_.size());
      ConnQueue q;
      q.peer = st.peer;
      q.isSend = isSend;
      if (isSend) q.send = &links.sendTo(st.peer);
      else q.recv = &links.recvFrom(st.peer);
      conns_.push_back(std::move(q));
    }
    conns_[index[st.peer]].steps.push_back(i);
  }
}

void Executor::runLocal(uint32_t index) {
  const Step& st = s_.steps[index];
  const algo::Reduction* red = s_.reductions.empty() ? nullptr : &s_.reductions[st.reduction];
  switch (st.kind) {
    case StepKind::Copy: local_.copy(resolve(st.dst), resolve(st.src), st.bytes); break;
    case StepKind::Reduce:
      reducerCtx_[st.reduction].fn(resolve(st.dst), resolve(st.src), st.bytes / dataTypeSize(red->type));
      break;
    case StepKind::Scale:
      local_.scale(resolve(st.dst), resolve(st.src), st.bytes / dataTypeSize(red->type), red->type, red->op.scalar);
      break;
    case StepKind::Divide:
      local_.divide(resolve(st.dst), st.bytes / dataTypeSize(red->type), red->type, red->divisor);
      break;
    default: throw InternalError(concat("engine: step ", index, " (", algo::stepKindName(st.kind), ") is not local"));
  }
  complete(index);
}

void Executor::complete(uint32_t index) {
  ++done_;
  for (uint32_t k = dependentsBegin_[index]; k < dependentsBegin_[index + 1]; ++k) {
    const uint32_t d = dependents_[k];
    if (--waitingOn_[d] == 0 && !isConnStep(s_.steps[d].kind)) readyLocal_.push_back(d);
  }
}

bool Executor::postReady() {
  bool any = false;
  for (ConnQueue& q : conns_) {
    while (q.posted < q.steps.size() && waitingOn_[q.steps[q.posted]] == 0) {
      const uint32_t index = q.steps[q.posted++];
      const Step& st = s_.steps[index];
      transport::Request r;
      const transport::CallStamp stamp = stamps_.empty() ? transport::CallStamp{} : stamps_[index];
      ++q.open;  // before posting: a post that throws half-way still gets abandoned
      if (q.isSend) r = q.send->isend(resolve(st.src), st.bytes, stamp);
      else if (st.kind == StepKind::Recv) r = q.recv->irecv(resolve(st.dst), st.bytes, nullptr, stamp);
      else r = q.recv->irecv(resolve(st.dst), st.bytes, &reducers_[st.reduction], stamp);
      inFlight_.push_back(InFlight{index, &q, r});
      any = true;
    }
  }
  return any;
}

bool Executor::testInFlight() {
  bool any = false;
  size_t keep = 0;
  for (size_t i = 0; i < inFlight_.size(); ++i) {
    InFlight& f = inFlight_[i];
    const bool finished = f.conn->isSend ? f.conn->send->test(f.request) : f.conn->recv->test(f.request);
    if (finished) {
      --f.conn->open;
      complete(f.step);
      any = true;
    } else {
      inFlight_[keep++] = f;
    }
  }
  inFlight_.resize(keep);
  return any;
}

std::string Executor::peerName(int peer) const {
  if (peer >= 0 && static_cast<size_t>(peer) < ctx_.peers.size() && !ctx_.peers[peer].hostId.empty())
    return concat("rank ", peer, " (host ", ctx_.peers[peer].hostId, ")");
  return concat("rank ", peer);
}

void Executor::checkStuck(Clock::time_point lastProgress, bool progressed) {
  if (ctx_.abortFlag && ctx_.abortFlag->load(std::memory_order_relaxed))
    throw AbortedError(concat("communicator aborted with ", s_.steps.size() - done_, " schedule steps unfinished"));
  if (ctx_.checkFailure) ctx_.checkFailure();
  if (!progressed && inFlight_.empty() && readyLocal_.empty())
    throw InternalError(concat("engine: schedule stuck with ", s_.steps.size() - done_,
                               " steps left and nothing in flight (planner bug)"));
  const auto idleMs = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - lastProgress).count();
  if (idleMs < ctx_.timeoutMs || inFlight_.empty()) return;
  const InFlight& oldest = inFlight_.front();
  const Step& st = s_.steps[oldest.step];
  const int peer = oldest.conn->peer;
  throw TimeoutError(peer, peer < (int)ctx_.peers.size() ? ctx_.peers[peer].hostId : std::string(),
                     concat("timed out after ", ctx_.timeoutMs, " ms without progress waiting for ", peerName(peer),
                            " to ", oldest.conn->isSend ? "take a send" : "deliver a receive", " of ", st.bytes,
                            " bytes (schedule step ", oldest.step, " of ", s_.steps.size(), ")"));
}

void Executor::run() {
  try {
    runSteps();
  } catch (...) {
    abandonOpenRequests();
    throw;
  }
}

void Executor::abandonOpenRequests() noexcept {
  for (ConnQueue& q : conns_) {
    if (q.open == 0) continue;
    if (q.isSend) q.send->abandon();
    else q.recv->abandon();
  }
}

void Executor::runSteps() {
  auto lastProgress = Clock::now();
  auto lastCheck = lastProgress;
  unsigned idleRounds = 0;
  while (done_ < s_.steps.size()) {
    bool progressed = false;
    while (!readyLocal_.empty()) {
      const uint32_t index = readyLocal_.back();
      readyLocal_.pop_back();
      runLocal(index);
      progressed = true;
    }
    progressed |= postReady();
    progressed |= testInFlight();
    const auto now = Clock::now();
    if (progressed) {
      lastProgress = now;
      idleRounds = 0;
    } else if (++idleRounds > 64 && now - lastProgress > ctx_.idleSpin) {  // exec/host/idle_spin.hpp
      std::this_thread::sleep_for(std::chrono::microseconds(20));  // back off; not synchronisation
    } else {
      std::this_thread::yield();
    }
    if (now - lastCheck >= std::chrono::milliseconds(1) || (!progressed && idleRounds % 16 == 0)) {
      lastCheck = now;
      checkStuck(lastProgress, progressed);
    }
  }
}

}  // namespace

void execute(const algo::Schedule& schedule, transport::Links& links, const ExecContext& ctx,
             std::span<const transport::CallStamp> stamps) {
  if (schedule.steps.empty()) return;
  Executor(schedule, links, ctx, stamps).run();
}

}  // namespace hetccl::engine
