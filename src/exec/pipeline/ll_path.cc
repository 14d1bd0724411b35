#include "exec/pipeline/ll_path.hpp"

#include <atomic>
#include <cstring>
#include <new>
#include <utility>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/types.hpp"
#include "exec/pipeline/gpu_stamp.hpp"
#include "exec/pipeline/segment_tag.hpp"

namespace hetccl::stream_exec {
namespace {

using transport::shm::ShmSegment;

constexpr uint64_t kBoardMagic = 0x4c4c'6c63'6374'6568ull;  // "hetcclLL"
constexpr uint32_t kBoardVersion = 1;
constexpr size_t kBoardHeaderBytes = 64;  // then set 0, then set 1
constexpr int kReportWord = 8;            // control_: abort word 0, report words from 8 (own cache line)
constexpr size_t kControlBytes = 8 * (kReportWord + HETCCL_GPU_REPORT_WORDS);

struct alignas(64) BoardHeader {
  std::atomic<uint64_t> magic;  // stored last
  uint32_t version;
  int32_t rank;
  uint64_t setWords;
  uint64_t totalBytes;
};
static_assert(sizeof(BoardHeader) == kBoardHeaderBytes);

uint64_t setWordsFor(uint64_t maxBytes) { return HETCCL_GPU_LL_HEADER_WORDS + 2 * ((maxBytes + 7) / 8); }
size_t boardBytes(uint64_t setWords) { return kBoardHeaderBytes + 2 * 8 * setWords; }
std::string boardName(const SegmentTag& tag, int rank) { return concat("/hetccl-ll-", tag.hex, "-", rank); }

/// What every rank publishes before the boards exist.
struct Offer {
  uint32_t usable;  // this rank can take the path
  uint32_t reserved;
  uint64_t maxBytes;
  SegmentTag tag;
  char busId[32];  // its GPU's PCI bus id ("" when unknown)
};

/// Two ranks whose GPUs have the same bus id, or nullopt.
std::optional<std::pair<int, int>> sharedGpu(const std::vector<Offer>& offers) {
  for (size_t p = 0; p < offers.size(); ++p)
    for (size_t q = p + 1; q < offers.size(); ++q)
      if (offers[p].busId[0] && std::strncmp(offers[p].busId, offers[q].busId, sizeof offers[p].busId) == 0)
        return std::make_pair(static_cast<int>(p), static_cast<int>(q));
  return std::nullopt;
}

std::optional<std::string> localObstacle(const hetcclGpuPlugin_t& gpu, bootstrap::Bootstrap& boot, uint64_t maxBytes) {
  if (maxBytes == 0) return "HETCCL_GPU_LL_BYTES is 0";
  if (!gpu.llAllReduce) return concat("the ", gpu.name, " plugin has no latency-path kernel");
  if (boot.size() < 2 || boot.size() > HETCCL_GPU_LL_MAX_RANKS)
    return concat(boot.size(), " ranks (it takes 2 to ", HETCCL_GPU_LL_MAX_RANKS, ")");
  for (const PeerInfo& p : boot.peers())
    if (p.hostId != boot.peers()[boot.rank()].hostId) return "the ranks are on several hosts";
  return std::nullopt;
}

}  // namespace

std::unique_ptr<LlPath> LlPath::create(const hetcclGpuPlugin_t& gpu, int device, bootstrap::Bootstrap& boot,
                                       uint64_t maxBytes) {
  const int n = boot.size(), self = boot.rank();
  const std::optional<std::string> obstacle = localObstacle(gpu, boot, maxBytes);
  std::vector<Offer> offers(n);
  offers[self] = Offer{obstacle ? 0u : 1u, 0, maxBytes, randomSegmentTag(), {}};
  if (gpu.deviceBusId && gpu.deviceBusId(device, offers[self].busId, sizeof offers[self].busId) != HETCCL_GPU_OK)
    offers[self].busId[0] = '\0';
  offers[self].busId[sizeof offers[self].busId - 1] = '\0';
  boot.allGather(offers.data(), sizeof(Offer));
  for (Offer& o : offers) o.busId[sizeof o.busId - 1] = '\0';  // a peer's string ends inside its field
  for (int p = 0; p < n; ++p) {
    if (!offers[p].usable) {
      HETCCL_INFO(log::kInit, "rank ", self, ": no latency path (rank ", p, ": ",
                  p == self ? obstacle.value_or("?") : std::string("cannot take it"), ")");
      return nullptr;
    }
    if (!validSegmentTag(offers[p].tag) || offers[p].maxBytes != maxBytes)
      throw PeerError(p, boot.peers()[p].hostId, concat("rank ", p, " published a malformed latency-path offer"));
  }
  if (const auto shared = sharedGpu(offers)) {
    HETCCL_INFO(log::kInit, "rank ", self, ": no latency path (ranks ", shared->first, " and ", shared->second,
                " share GPU ", offers[shared->first].busId, ")");
    return nullptr;
  }
  std::unique_ptr<LlPath> path(new LlPath(gpu, self, n, maxBytes));
  const uint64_t setWords = path->setWords_;
  const size_t total = boardBytes(setWords);
  const std::string own = boardName(offers[self].tag, self);
  path->boards_.reserve(n);
  try {
    ShmSegment seg = ShmSegment::create(own, total);
    std::memset(seg.data(), 0, total);
    auto* h = new (seg.data()) BoardHeader{};
    h->version = kBoardVersion;
    h->rank = self;
    h->setWords = setWords;
    h->totalBytes = total;
    h->magic.store(kBoardMagic, std::memory_order_release);
    std::vector<std::optional<ShmSegment>> opened(n);
    opened[self] = std::move(seg);
    boot.barrier();  // every board exists
    for (int p = 0; p < n; ++p) {
      if (p == self) continue;
      const std::string name = boardName(offers[p].tag, p);
      auto bad = [&](const std::string& why) {
        return PeerError(p, boot.peers()[p].hostId, concat("latency-path board of rank ", p, " (", name, ") ", why));
      };
      opened[p] = ShmSegment::tryOpen(name, sizeof(BoardHeader));
      if (!opened[p]) throw bad("does not exist");
      const auto* ph = static_cast<const BoardHeader*>(opened[p]->data());
      if (ph->magic.load(std::memory_order_acquire) != kBoardMagic || ph->version != kBoardVersion || ph->rank != p ||
          ph->setWords != setWords || ph->totalBytes != total || opened[p]->size() != total)
        throw bad("has a bad header or size");
    }
    boot.barrier();  // every rank mapped every board: the names can go
    ShmSegment::unlink(own);
    for (int p = 0; p < n; ++p) path->boards_.push_back(std::move(*opened[p]));
  } catch (...) {
    ShmSegment::unlink(own);
    throw;
  }
  path->registered_.assign(n, false);
  for (int p = 0; p < n; ++p) {
    void* base = path->boards_[p].data();
    path->check(gpu.hostRegister(base, total), "hostRegister(latency-path board)");
    path->registered_[p] = true;
    void* dev = nullptr;
    path->check(gpu.devicePointer(base, &dev), "devicePointer(latency-path board)");
    path->hostBoards_[p] = reinterpret_cast<uint64_t*>(static_cast<char*>(base) + kBoardHeaderBytes);
    path->devBoards_[p] = reinterpret_cast<uint64_t*>(static_cast<char*>(dev) + kBoardHeaderBytes);
  }
  void* seq = nullptr;
  path->check(gpu.allocDevice(&seq, 16), "allocDevice(latency-path sequence number)");
  path->seq_ = static_cast<uint64_t*>(seq);
  path->check(gpu.memsetSync(seq, 0, 16), "memsetSync(latency-path sequence number)");
  void* control = nullptr;
  path->check(gpu.allocPinned(&control, kControlBytes), "allocPinned(latency-path control words)");
  path->control_ = static_cast<uint64_t*>(control);
  std::memset(control, 0, kControlBytes);
  void* devControl = nullptr;
  path->check(gpu.devicePointer(control, &devControl), "devicePointer(latency-path control words)");
  path->devControl_ = static_cast<uint64_t*>(devControl);
  HETCCL_INFO(log::kInit, "rank ", self, ": latency path for all-reduces up to ", maxBytes, " bytes among ", n,
              " ranks (boards of ", total, " bytes)");
  return path;
}

LlPath::LlPath(const hetcclGpuPlugin_t& gpu, int rank, int nranks, uint64_t maxBytes)
    : gpu_(gpu), rank_(rank), nranks_(nranks), maxBytes_(maxBytes), setWords_(setWordsFor(maxBytes)),
      hostBoards_(nranks, nullptr), devBoards_(nranks, nullptr) {}

LlPath::~LlPath() {
  for (size_t p = 0; p < registered_.size(); ++p)
    if (registered_[p] && gpu_.hostUnregister(boards_[p].data()) != HETCCL_GPU_OK)
      HETCCL_WARN(log::kShm, "unregistering latency-path board ", boards_[p].name(), ": ", gpu_.lastError());
  if (seq_) gpu_.freeDevice(seq_);
  if (control_) gpu_.freePinned(control_);
}

void LlPath::check(int rc, const char* what) const {
  if (rc != HETCCL_GPU_OK)
    throw Error(Result::UnhandledCudaError, concat("rank ", rank_, ": ", gpu_.name, " ", what, ": ", gpu_.lastError()));
}

bool LlPath::takes(std::span<const algo::CollOp> ops) const {
  if (ops.size() != 1) return false;
  const algo::CollOp& op = ops[0];
  if (op.kind != algo::CollKind::AllReduce || op.count == 0 || op.op.kind == RedOpKind::PreMulSum) return false;
  return op.count * dataTypeSize(op.type) <= maxBytes_;
}

void LlPath::enqueue(const algo::CollOp& op, void* stream, uint64_t stampWord0, const HostWords& words) {
  hetcclGpuLlAllReduce_t a{};
  for (int r = 0; r < nranks_; ++r) a.boards[r] = devBoards_[r];
  a.setWords = setWords_;
  a.nranks = nranks_;
  a.rank = rank_;
  a.send = op.sendbuff;
  a.recv = op.recvbuff;
  a.count = op.count;
  a.dataType = static_cast<int32_t>(op.type);
  a.op = static_cast<int32_t>(op.op.kind);
  a.stamp[0] = stampWord0;
  a.stamp[2] = op.count * dataTypeSize(op.type);
  a.stamp[3] = kLatencyPathCall;
  a.seq = seq_;
  a.abortWord = devControl_;
  a.report = devControl_ + kReportWord;
  a.startedWord = words.started;
  a.finishedWord = words.finished;
  a.callNumber = words.callNumber;
  a.doneWord = words.done;
  a.doneValue = words.doneValue;
  check(gpu_.llAllReduce(&a, stream), "llAllReduce");
}

void LlPath::abort() { __atomic_store_n(control_, 1, __ATOMIC_RELEASE); }

std::optional<std::string> LlPath::mismatch() const {
  const uint64_t* report = control_ + kReportWord;
  const uint64_t flag = __atomic_load_n(report, __ATOMIC_ACQUIRE);
  if (flag == 0) return std::nullopt;
  uint64_t got[4], want[4];
  for (int w = 0; w < 4; ++w) {
    got[w] = __atomic_load_n(report + 1 + w, __ATOMIC_ACQUIRE);
    want[w] = __atomic_load_n(report + 5 + w, __ATOMIC_ACQUIRE);
  }
  const auto peer = static_cast<int>(flag - 1);
  return concat("device collectives disagree between ranks: rank ", peer, " called ",
                describeStamp(got), ", rank ", rank_, " called ", describeStamp(want),
                " (every rank must make the same calls, in the same order, with the same counts, types, operators "
                "and HETCCL_GPU_* settings)");
}

LlPath::BoardCall LlPath::lastCall(int rank) const {
  BoardCall call;
  const uint64_t* newest = nullptr;
  for (int set = 0; set < 2; ++set) {
    const uint64_t* header = hostBoards_[rank] + set * setWords_;
    const auto seq = static_cast<uint32_t>(__atomic_load_n(header, __ATOMIC_ACQUIRE) >> 32);
    if (seq != 0 && (!newest || static_cast<int32_t>(seq - call.seq) > 0)) {
      call.seq = seq;
      newest = header;
    }
  }
  for (int w = 0; newest && w < 4; ++w)  // header word h carries half h % 2 of stamp word h / 2 (ll_protocol.cuh)
    call.stamp[w] = (__atomic_load_n(newest + 2 * w, __ATOMIC_ACQUIRE) & 0xffffffffu) |
                    (__atomic_load_n(newest + 2 * w + 1, __ATOMIC_ACQUIRE) << 32);
  return call;
}

uint64_t LlPath::progressSignature() const {
  uint64_t s = 0;
  for (int r = 0; r < nranks_; ++r)
    for (int set = 0; set < 2; ++set) s = s * 31 + __atomic_load_n(hostBoards_[r] + set * setWords_, __ATOMIC_ACQUIRE);
  return s;
}

}  // namespace hetccl::stream_exec
