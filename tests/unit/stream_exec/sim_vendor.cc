#include "sim_vendor.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#include "bootstrap/bootstrap.hpp"
#include "core/deadline.hpp"
#include "core/error.hpp"
#include "device/base/fp8_format.hpp"
#include "device/host/half.hpp"
#include "device/host/reduce.hpp"
#include "domain/nccl/id_exchange.hpp"
#include "sim_gpu.hpp"

namespace hetccl::test::sim {

const char* vendorCallName(VendorCall c) noexcept {
  switch (c) {
    case VendorCall::AllReduce: return "allReduce";
    case VendorCall::ReduceScatter: return "reduceScatter";
    case VendorCall::AllGather: return "allGather";
    case VendorCall::Broadcast: return "broadcast";
    case VendorCall::Reduce: return "reduce";
    case VendorCall::Send: return "send";
    case VendorCall::Recv: return "recv";
  }
  return "unknown";
}

uint64_t VendorCounters::totalCalls() const {
  uint64_t n = 0;
  for (uint64_t c : calls) n += c;
  return n;
}

uint64_t VendorCounters::totalBytes() const {
  uint64_t n = 0;
  for (uint64_t b : bytes) n += b;
  return n;
}

/// One member's call, as made.
struct SimDomainComm::Issued {
  VendorCall kind = VendorCall::AllReduce;
  size_t count = 0;  // recvCount (reduceScatter), sendCount (allGather), count (the others)
  DataType type = DataType::Float32;
  ReduceOp op;
  int root = -1;  // broadcast / reduce: the root; send / recv: the peer
  const void* send = nullptr;
  void* recv = nullptr;
  int member = 0;  // the caller's domain rank
};

namespace {

using Call = SimDomainComm::Issued;

bool reduces(VendorCall k) {
  return k == VendorCall::AllReduce || k == VendorCall::ReduceScatter || k == VendorCall::Reduce;
}
bool rooted(VendorCall k) { return k == VendorCall::Broadcast || k == VendorCall::Reduce; }

std::string describe(const Call& c) {
  std::string s = concat(vendorCallName(c.kind), "(count ", c.count, ", ", dataTypeName(c.type));
  if (reduces(c.kind)) s += concat(", ", redOpName(c.op.kind));
  if (rooted(c.kind)) s += concat(", root ", c.root);
  if (c.kind == VendorCall::Send) s += concat(", to ", c.root);
  if (c.kind == VendorCall::Recv) s += concat(", from ", c.root);
  return s + ")";
}

/// Whether two members' calls can be the same collective (PreMulSum scalars may differ per member).
bool sameCollective(const Call& a, const Call& b) {
  return a.kind == b.kind && a.count == b.count && a.type == b.type && (!reduces(a.kind) || a.op.kind == b.op.kind) &&
         (!rooted(a.kind) || a.root == b.root);
}

/// One call as every participant sees it: for a collective one slot per domain rank, for a transfer slot 0
/// the sender and slot 1 the receiver.
struct Meeting {
  std::string what;  // "collective #3", "transfer #2 from domain rank 0 to 1"
  std::vector<std::optional<Call>> calls;
  std::vector<char> arrived, finished;
  bool computed = false;
  std::vector<void*> outputAt;  // per slot: where its output goes (null: none)
  std::vector<std::vector<unsigned char>> output;

  explicit Meeting(size_t slots)
      : calls(slots), arrived(slots, 0), finished(slots, 0), outputAt(slots, nullptr), output(slots) {}
  bool allArrived() const { return std::all_of(arrived.begin(), arrived.end(), [](char a) { return a != 0; }); }
  bool allFinished() const { return std::all_of(finished.begin(), finished.end(), [](char f) { return f != 0; }); }
};

using TransferKey = std::tuple<int, int, uint64_t>;  // sender, receiver, number on that pair

/// A member's place in one meeting.
struct Ticket {
  bool collective = true;
  uint64_t seq = 0;   // collective: its number
  TransferKey key{};  // transfer
  int slot = 0;
};

}  // namespace

struct CommState {
  enum class Failure { None, Mismatch, Abort };

  uint64_t id = 0;
  int size = 0;
  std::vector<int> members;  // bootstrap ranks, in domain order

  std::mutex mu;
  std::map<uint64_t, Meeting> collectives;
  std::map<TransferKey, Meeting> transfers;
  std::vector<VendorCounters> counters;  // per member
  Failure failure = Failure::None;
  std::string failureText;
  int abortedBy = -1;

  Meeting& meeting(const Ticket& t) {
    if (t.collective) return collectives.at(t.seq);
    return transfers.at(t.key);
  }
  std::string where(int member) const { return concat("sim vendor communicator #", id, " domain rank ", member); }

  /// The failure as the exception a call or checkAsyncError() throws (caller holds mu).
  [[noreturn]] void throwFailure() const {
    if (failure == Failure::Abort) throw PeerError(members.at(abortedBy), "", failureText);
    throw InvalidUsage(failureText);
  }
  void fail(Failure f, std::string text) {  // the first failure stays (caller holds mu)
    if (failure != Failure::None) return;
    failure = f;
    failureText = std::move(text);
  }

  /// Registers `c` of member `m` in the meeting of `t`, creating it; a call that does not match the ones
  /// already there breaks the communicator and throws (caller holds mu).
  void join(const Ticket& t, const Call& c, size_t slots, const std::string& what) {
    Meeting& mt = t.collective ? collectives.try_emplace(t.seq, slots).first->second
                               : transfers.try_emplace(t.key, slots).first->second;
    mt.what = what;
    for (const std::optional<Call>& other : mt.calls) {
      if (!other) continue;
      const bool same = t.collective ? sameCollective(*other, c) : other->count == c.count && other->type == c.type;
      if (!same) {
        fail(Failure::Mismatch, concat("sim vendor communicator #", id, ": ", what, " differs between members: domain rank ",
                                       other->member, " called ", describe(*other), ", domain rank ", c.member,
                                       " called ", describe(c)));
        throwFailure();
      }
    }
    mt.calls[t.slot] = c;
  }
};

namespace {

std::atomic<bool> gSingleRankScalingDefect{false};

size_t elementBytes(const Call& c) { return dataTypeSize(c.type); }

/// NCCL's Avg scalar for floating types (hostToDevRedOp): 1/size rounded to the type, via float except
/// for float32 / float64.
void avgScalar(DataType type, int size, unsigned char* out) {
  const double inverse = 1.0 / size;
  const float f = static_cast<float>(inverse);
  switch (type) {
    case DataType::Float16: {
      const uint16_t h = device::floatToHalf(f);
      std::memcpy(out, &h, 2);
      break;
    }
    case DataType::Bfloat16: {
      const uint16_t b = device::floatToBfloat16(f);
      std::memcpy(out, &b, 2);
      break;
    }
    case DataType::Float32: std::memcpy(out, &f, 4); break;
    case DataType::Float64: std::memcpy(out, &inverse, 8); break;
    case DataType::Float8e4m3: out[0] = fp8::fromFloatBits(std::bit_cast<uint32_t>(f), fp8::kE4M3); break;
    case DataType::Float8e5m2: out[0] = fp8::fromFloatBits(std::bit_cast<uint32_t>(f), fp8::kE5M2); break;
    default: break;
  }
}

/// The reduction over every member (domain rank order) of `n` elements at element `offset` of each
/// member's send buffer, with NCCL's operator semantics.
std::vector<unsigned char> reduceInputs(const Meeting& m, size_t offset, size_t n) {
  const Call& first = *m.calls[0];
  const DataType type = first.type;
  const size_t es = elementBytes(first), bytes = n * es;
  const int size = static_cast<int>(m.calls.size());
  const RedOpKind kind = first.op.kind;
  const bool avg = kind == RedOpKind::Avg, avgScaled = avg && isFloatingType(type);
  const bool sums = kind == RedOpKind::Avg || kind == RedOpKind::PreMulSum;
  const device::ReduceFn accumulate = device::hostReduceFn(type, sums ? RedOpKind::Sum : kind);
  unsigned char avgFactor[8] = {};
  if (avgScaled) avgScalar(type, size, avgFactor);

  std::vector<unsigned char> acc(bytes), part(bytes);
  for (int r = 0; r < size; ++r) {
    const Call& c = *m.calls[r];
    unsigned char* into = r == 0 ? acc.data() : part.data();
    const auto* src = static_cast<const unsigned char*>(c.send) + offset * es;
    if (kind == RedOpKind::PreMulSum)
      device::hostScale(into, src, n, type, c.op.scalar);
    else if (avgScaled)
      device::hostScale(into, src, n, type, avgFactor);
    else
      std::memcpy(into, src, bytes);
    if (r > 0) accumulate(acc.data(), part.data(), n);
  }
  if (avg && !avgScaled) device::hostDivide(acc.data(), n, type, static_cast<uint64_t>(size));
  if (sums && size == 1 && bytes > 0 && gSingleRankScalingDefect.load()) acc[bytes - 1] ^= 0x5A;
  return acc;
}

/// Reads every participant's input and computes every output (the device thread, all arrived).
void compute(Meeting& m, bool collective) {
  m.computed = true;
  if (!collective) {  // slot 0 sent, slot 1 receives
    const Call& s = *m.calls[0];
    const size_t bytes = s.count * elementBytes(s);
    const auto* src = static_cast<const unsigned char*>(s.send);
    m.output[1].assign(src, src + bytes);
    m.outputAt[1] = m.calls[1]->recv;
    return;
  }
  const Call& first = *m.calls[0];
  const size_t size = m.calls.size(), n = first.count, blockBytes = n * elementBytes(first);
  switch (first.kind) {
    case VendorCall::AllReduce: {
      std::vector<unsigned char> r = reduceInputs(m, 0, n);
      for (size_t i = 0; i < size; ++i) m.output[i] = r;
      break;
    }
    case VendorCall::ReduceScatter: {
      std::vector<unsigned char> r = reduceInputs(m, 0, n * size);
      for (size_t i = 0; i < size; ++i)
        m.output[i].assign(r.begin() + static_cast<ptrdiff_t>(i * blockBytes),
                           r.begin() + static_cast<ptrdiff_t>((i + 1) * blockBytes));
      break;
    }
    case VendorCall::AllGather: {
      std::vector<unsigned char> all(blockBytes * size);
      for (size_t i = 0; i < size; ++i)
        if (blockBytes) std::memcpy(all.data() + i * blockBytes, m.calls[i]->send, blockBytes);
      for (size_t i = 0; i < size; ++i) m.output[i] = all;
      break;
    }
    case VendorCall::Broadcast: {
      const auto* src = static_cast<const unsigned char*>(m.calls[first.root]->send);
      for (size_t i = 0; i < size; ++i) m.output[i].assign(src, src + blockBytes);
      break;
    }
    case VendorCall::Reduce:
      m.output[first.root] = reduceInputs(m, 0, n);
      break;
    default:
      break;
  }
  for (size_t i = 0; i < size; ++i)
    if (first.kind != VendorCall::Reduce || static_cast<int>(i) == first.root) m.outputAt[i] = m.calls[i]->recv;
}

/// Calls queued between groupStart and the outermost groupEnd on this thread, per member.
struct PendingTask {
  std::shared_ptr<CommState> state;
  int member = 0;
  domain::Stream stream = nullptr;
  std::vector<Ticket> tickets;
};
struct GroupState {
  int depth = 0;
  std::vector<PendingTask> tasks;
};
thread_local GroupState tGroup;

/// Queues a member's task on its stream: an arrival, then the wait for every participant and the outputs.
void launch(PendingTask task) {
  if (task.tickets.empty()) return;
  auto state = task.state;
  const int member = task.member;
  auto tickets = std::make_shared<const std::vector<Ticket>>(std::move(task.tickets));
  enqueueHostOp(
      task.stream, nullptr,
      [state, tickets] {
        std::lock_guard<std::mutex> lock(state->mu);
        if (state->failure != CommState::Failure::None) return;
        for (const Ticket& t : *tickets) state->meeting(t).arrived[t.slot] = 1;
      },
      [state, member] { return concat(state->where(member), ": arriving"); });
  enqueueHostOp(
      task.stream,
      [state, tickets] {
        std::lock_guard<std::mutex> lock(state->mu);
        if (state->failure != CommState::Failure::None) return true;
        for (const Ticket& t : *tickets)
          if (!state->meeting(t).allArrived()) return false;
        return true;
      },
      [state, tickets, member] {
        std::lock_guard<std::mutex> lock(state->mu);
        state->counters[member].completed += tickets->size();
        if (state->failure != CommState::Failure::None) return;  // released: nothing written
        for (const Ticket& t : *tickets) {
          Meeting& m = state->meeting(t);
          if (!m.computed) compute(m, t.collective);
          if (m.outputAt[t.slot] && !m.output[t.slot].empty())
            std::memcpy(m.outputAt[t.slot], m.output[t.slot].data(), m.output[t.slot].size());
          m.output[t.slot].clear();
          m.finished[t.slot] = 1;
          if (m.allFinished()) {
            if (t.collective) state->collectives.erase(t.seq);
            else state->transfers.erase(t.key);
          }
        }
      },
      [state, tickets, member] {
        std::lock_guard<std::mutex> lock(state->mu);
        std::string s = concat(state->where(member), ": waiting for");
        for (const Ticket& t : *tickets) {
          const Meeting& m = state->meeting(t);
          s += concat(" [", m.what, ", not arrived:");
          for (size_t i = 0; i < m.arrived.size(); ++i)
            if (!m.arrived[i]) s += concat(" slot ", i);
          s += "]";
        }
        return s;
      });
}

/// The process-wide registry where the members of a communicator find its state.
struct Registry {
  std::mutex mu;
  struct Entry {
    std::shared_ptr<CommState> state;
    int joined = 0;
  };
  std::map<uint64_t, Entry> open;  // communicators some member has not joined yet
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: communicators may outlive static destructors
  return *r;
}
std::atomic<uint64_t> gNextCommId{1};

}  // namespace

SimDomainComm::SimDomainComm(std::shared_ptr<CommState> state, int rank, int size)
    : state_(std::move(state)), rank_(rank), size_(size), sentTo_(size, 0), receivedFrom_(size, 0) {}

SimDomainComm::~SimDomainComm() {
  if (finished_) return;
  try {
    destroy();
  } catch (const std::exception&) {  // a destructor cannot throw; the failure was visible to checkAsyncError
  }
}

uint64_t SimDomainComm::id() const noexcept { return state_->id; }

VendorCounters SimDomainComm::counters() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->counters[rank_];
}

void SimDomainComm::requireUsable() const {
  if (finished_) throw InvalidUsage(concat(state_->where(rank_), ": used after abort() or destroy()"));
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->failure != CommState::Failure::None) state_->throwFailure();
}

void SimDomainComm::issue(Issued c, domain::Stream stream) {
  requireUsable();
  c.member = rank_;
  const std::string what = concat(state_->where(rank_), " ", describe(c));
  // Arguments, as NCCL checks them: nothing changes when one is wrong.
  if (!isValidDataType(static_cast<int>(c.type))) throw InvalidArgument(concat(what, ": invalid data type"));
  if (reduces(c.kind) && (static_cast<int>(c.op.kind) < 0 || c.op.kind > RedOpKind::PreMulSum ||
                          !device::hostReduceFn(c.type, c.op.kind)))
    throw InvalidArgument(concat(what, ": invalid reduction operator"));
  if ((rooted(c.kind) || c.kind == VendorCall::Send || c.kind == VendorCall::Recv) && (c.root < 0 || c.root >= size_))
    throw InvalidArgument(concat(what, ": no domain rank ", c.root, " among ", size_));
  const size_t es = dataTypeSize(c.type);
  const bool blocks = c.kind == VendorCall::ReduceScatter || c.kind == VendorCall::AllGather;
  if (c.count > SIZE_MAX / es / static_cast<size_t>(size_)) throw InvalidArgument(concat(what, ": count overflows"));
  const uint64_t bytes = c.count * es * (blocks ? static_cast<size_t>(size_) : 1);
  if (c.count) {
    const bool reads = c.kind != VendorCall::Recv && (c.kind != VendorCall::Broadcast || c.root == rank_);
    const bool writes = c.kind != VendorCall::Send && (c.kind != VendorCall::Reduce || c.root == rank_);
    if ((reads && !c.send) || (writes && !c.recv)) throw InvalidArgument(concat(what, ": null buffer"));
  }
  int capturing = 0;
  uint64_t captureId = 0;
  plugin().streamCaptureInfo(stream, &capturing, &captureId);
  if (capturing) throw InvalidUsage(concat(what, ": the simulated vendor cannot be captured into a graph"));
  GroupState& group = tGroup;
  PendingTask* task = nullptr;
  for (PendingTask& t : group.tasks)
    if (t.state == state_ && t.member == rank_) task = &t;
  if (task && task->stream != stream)
    throw InvalidUsage(concat(what, ": the calls of one communicator in a group must use one stream here"));

  const bool collective = c.kind != VendorCall::Send && c.kind != VendorCall::Recv;
  if (collective && c.count == 0) {  // NCCL discards empty collectives: no number, nothing to meet
    std::lock_guard<std::mutex> lock(state_->mu);
    VendorCounters& n = state_->counters[rank_];
    ++n.calls[static_cast<int>(c.kind)];
    ++n.completed;
    return;
  }
  Ticket t;
  t.collective = collective;
  std::string meetingName;
  if (collective) {
    t.seq = ++nextCollective_;
    t.slot = rank_;
    meetingName = concat("collective #", t.seq);
  } else if (c.kind == VendorCall::Send) {
    t.key = {rank_, c.root, ++sentTo_[c.root]};
    t.slot = 0;
    meetingName = concat("transfer #", std::get<2>(t.key), " from domain rank ", rank_, " to ", c.root);
  } else {
    t.key = {c.root, rank_, ++receivedFrom_[c.root]};
    t.slot = 1;
    meetingName = concat("transfer #", std::get<2>(t.key), " from domain rank ", c.root, " to ", rank_);
  }
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->join(t, c, collective ? static_cast<size_t>(size_) : 2, meetingName);
    VendorCounters& n = state_->counters[rank_];
    ++n.calls[static_cast<int>(c.kind)];
    n.bytes[static_cast<int>(c.kind)] += bytes;
  }
  if (group.depth > 0) {
    if (!task) task = &group.tasks.emplace_back(PendingTask{state_, rank_, stream, {}});
    task->tickets.push_back(t);
    return;
  }
  launch(PendingTask{state_, rank_, stream, {t}});
}

void SimDomainComm::allReduce(const void* send, void* recv, size_t count, DataType type, const ReduceOp& op,
                              domain::Stream stream) {
  issue({VendorCall::AllReduce, count, type, op, -1, send, recv}, stream);
}
void SimDomainComm::reduceScatter(const void* send, void* recv, size_t recvCount, DataType type, const ReduceOp& op,
                                  domain::Stream stream) {
  issue({VendorCall::ReduceScatter, recvCount, type, op, -1, send, recv}, stream);
}
void SimDomainComm::allGather(const void* send, void* recv, size_t sendCount, DataType type, domain::Stream stream) {
  issue({VendorCall::AllGather, sendCount, type, {}, -1, send, recv}, stream);
}
void SimDomainComm::broadcast(const void* send, void* recv, size_t count, DataType type, int root,
                              domain::Stream stream) {
  issue({VendorCall::Broadcast, count, type, {}, root, send, recv}, stream);
}
void SimDomainComm::reduce(const void* send, void* recv, size_t count, DataType type, const ReduceOp& op, int root,
                           domain::Stream stream) {
  issue({VendorCall::Reduce, count, type, op, root, send, recv}, stream);
}
void SimDomainComm::send(const void* buf, size_t count, DataType type, int peer, domain::Stream stream) {
  issue({VendorCall::Send, count, type, {}, peer, buf, nullptr}, stream);
}
void SimDomainComm::recv(void* buf, size_t count, DataType type, int peer, domain::Stream stream) {
  issue({VendorCall::Recv, count, type, {}, peer, nullptr, buf}, stream);
}

void SimDomainComm::checkAsyncError() {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->failure != CommState::Failure::None) state_->throwFailure();
}

void SimDomainComm::abort() noexcept {
  if (finished_.exchange(true)) return;
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->failure == CommState::Failure::None) state_->abortedBy = rank_;
  state_->fail(CommState::Failure::Abort, concat(state_->where(rank_), " aborted the communicator"));
}

void SimDomainComm::destroy() {
  if (finished_.exchange(true)) return;
  const Deadline deadline = Deadline::fromConfig();
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      const VendorCounters& n = state_->counters[rank_];
      if (n.completed == n.totalCalls()) {
        if (state_->failure != CommState::Failure::None) state_->throwFailure();
        return;
      }
      if (deadline.expired())
        throw TimeoutError(-1, "", concat(state_->where(rank_), ": ", n.totalCalls() - n.completed,
                                          " calls still queued on the device after HETCCL_TIMEOUT"));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

std::string SimVendorCcl::describe() const { return "sim vendor (NCCL semantics, threads as ranks on the simulated GPU)"; }

std::unique_ptr<domain::DomainComm> SimVendorCcl::createComm(bootstrap::Bootstrap& bootstrap,
                                                             const std::vector<int>& members, const void* vendorConfig) {
  const int index = domain::nccl::memberIndex(bootstrap, members);
  if (vendorConfig) throw InvalidUsage("sim vendor: createComm takes no vendor config");
  const domain::nccl::abi::ncclUniqueId id = domain::nccl::shareUniqueId(bootstrap, members, [] {
    domain::nccl::abi::ncclUniqueId fresh{};
    const uint64_t n = gNextCommId.fetch_add(1);
    std::memcpy(fresh.internal, &n, sizeof n);
    return fresh;
  });
  uint64_t number = 0;
  std::memcpy(&number, id.internal, sizeof number);
  const int size = static_cast<int>(members.size());
  std::shared_ptr<CommState> state;
  {
    Registry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mu);
    Registry::Entry& e = reg.open[number];
    if (!e.state) {
      e.state = std::make_shared<CommState>();
      e.state->id = number;
      e.state->size = size;
      e.state->members = members;
      e.state->counters.resize(members.size());
    } else if (e.state->members != members) {
      throw InvalidArgument(concat("sim vendor communicator #", number, ": rank ", bootstrap.rank(),
                                   " was created with other members than the first member to join"));
    }
    state = e.state;
    if (++e.joined == size) reg.open.erase(number);
  }
  return std::make_unique<SimDomainComm>(std::move(state), index, size);
}

namespace {

// The calling thread's group (as NCCL's group state is per thread).
void startGroup() { ++tGroup.depth; }

void endGroup() {
  GroupState& group = tGroup;
  if (group.depth == 0) throw InvalidUsage("sim vendor: groupEnd without groupStart");
  if (--group.depth > 0) return;
  std::vector<PendingTask> tasks = std::move(group.tasks);
  group.tasks.clear();
  for (PendingTask& t : tasks) launch(std::move(t));
}

}  // namespace

void SimVendorCcl::groupStart() { startGroup(); }

void SimVendorCcl::groupEnd() { endGroup(); }

void SimDomainComm::groupStart() { startGroup(); }

void SimDomainComm::groupEnd() { endGroup(); }

void emulateSingleRankScalingDefect(bool on) noexcept { gSingleRankScalingDefect.store(on); }

}  // namespace hetccl::test::sim
