#include "comm/communicator.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <thread>

#include "comm/call_check.hpp"
#include "comm/config_agreement.hpp"
#include "comm/device_path.hpp"
#include "comm/links.hpp"
#include "comm/vendor_route.hpp"
#include "domain/nccl/nccl_vendor.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "device/base/fp8_format.hpp"
#include "device/loader.hpp"
#include "engine/run_group.hpp"
#include "stream_exec/stream_executor.hpp"

namespace hetccl {
namespace {

// Dense domain indices in order of first appearance by rank, so every rank derives the same numbering.
algo::Topology makeTopology(const bootstrap::Bootstrap& boot) {
  algo::Topology t;
  t.rank = boot.rank();
  t.nranks = boot.size();
  std::map<std::string, int> index;
  for (const PeerInfo& p : boot.peers()) {
    auto [it, inserted] = index.emplace(p.domain, static_cast<int>(index.size()));
    t.domainOf.push_back(it->second);
  }
  t.validate();
  return t;
}

// HETCCL_DEVICE: host, cuda, or auto (cuda when the CUDA plugin loads and sees a device). A GPU rank is
// bound to the device current on the calling thread, as NCCL binds a communicator.
const hetcclGpuPlugin_t* selectDevice(DeviceKind& kind, int& device) {
  const std::string want = config().str("HETCCL_DEVICE");
  if (want != "auto" && want != "host" && want != "cuda")
    throw InvalidArgument(concat("HETCCL_DEVICE='", want, "' is not one of auto, host, cuda"));
  if (want == "host") return nullptr;
  const hetcclGpuPlugin_t* gpu = device::loadCudaPlugin();
  if (!gpu) {
    if (want == "cuda")
      throw InvalidUsage(concat("HETCCL_DEVICE=cuda but the CUDA plugin is unavailable: ",
                                device::cudaPluginUnavailableReason()));
    return nullptr;
  }
  if (gpu->getDevice(&device) != HETCCL_GPU_OK)
    throw Error(Result::UnhandledCudaError, concat("cannot read the current CUDA device: ", gpu->lastError()));
  kind = DeviceKind::Cuda;
  return gpu;
}

}  // namespace

Communicator::Communicator(std::shared_ptr<bootstrap::Bootstrap> boot, const CommOptions& options,
                           const hetcclGpuPlugin_t* gpu)
    : boot_(std::move(boot)), topology_(makeTopology(*boot_)), gpu_(gpu) {
  try {  // every exchange of the set-up: a rank that failed is named, and the others are told (as in runHost)
    setUp(options);
  } catch (const PeerError& e) {
    PeerError cause = rootCause(e);
    boot_->reportFailure(cause);
    throw cause;
  }
  HETCCL_INFO(log::kInit, "rank ", rank(), " of ", size(), " ready: domain ", peers()[rank()].domain, " (",
              numDomains(), " domains), host ", peers()[rank()].hostId);
}

void Communicator::setUp(const CommOptions& options) {
  checkConfigAgrees(*boot_, config());  // before anything depends on them: every rank fails alike
  std::string forced = options.transport.empty() ? config().str("HETCCL_TRANSPORT") : options.transport;
  links_ = std::make_unique<LinkSet>(*boot_, forced, &aborted_, Deadline::fromConfig());
  exec_.timeoutMs = config().timeoutMs();
  exec_.abortFlag = &aborted_;
  exec_.scratch = &scratch_;
  exec_.calls = &calls_;
  exec_.peers = boot_->peers();
  exec_.checkFailure = [b = boot_.get()] {
    if (auto f = b->failure()) throw *f;
  };
  tuning_ = algo::Tuning::fromConfig();
  checkCalls_ = config().boolean("HETCCL_CHECK_CALLS");
  setUpVendorDomain();
  // Device calls that are not delegated get their path now, because its pinned allocations may
  // synchronise the device, which must not happen inside a later call.
  if (!vendorComm_) createDevicePath();
}

std::unique_ptr<Communicator> Communicator::create(const bootstrap::UniqueId& id, int nranks, int rank,
                                                   const CommOptions& options) {
  if (nranks < 1) throw InvalidArgument(concat("nranks is ", nranks, "; it must be at least 1"));
  if (rank < 0 || rank >= nranks) throw InvalidArgument(concat("rank ", rank, " is outside [0, ", nranks, ")"));
  config().checkSizes();  // an absurd size fails here, on every rank that has it, before any connection
  DeviceKind kind = DeviceKind::Host;
  int device = -1;
  const hetcclGpuPlugin_t* gpu = selectDevice(kind, device);
  PeerInfo self = bootstrap::detectSelf(rank, kind, device);
  std::shared_ptr<bootstrap::Bootstrap> boot = bootstrap::connect(id, rank, nranks, self, Deadline::fromConfig());
  return std::unique_ptr<Communicator>(new Communicator(std::move(boot), options, gpu));
}

Communicator::~Communicator() = default;

std::string_view Communicator::transportTo(int peer) const { return links_->transportTo(peer); }

void Communicator::checkUsable() const {
  if (finalized_) throw InvalidUsage("communicator was finalized; only hetcclCommDestroy may follow");
  if (aborted_.load()) throw AbortedError("communicator was aborted");
  if (asyncError() != Result::Success) {
    std::lock_guard<std::mutex> lock(mu_);
    throw Error(asyncError(), concat("communicator failed earlier: ", errorMessage_));
  }
}

void Communicator::fail(const Error& e) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (errorMessage_.empty()) errorMessage_ = e.what();
  }
  int expected = 0;
  asyncError_.compare_exchange_strong(expected, static_cast<int>(e.code()));
  HETCCL_WARN(log::kColl, "rank ", rank(), ": ", e.what());
}

PeerError Communicator::rootCause(const PeerError& seen) const {
  // When a rank dies, the survivor that notices first gives up and closes its own connections, so
  // other survivors may first see *that* survivor go away. The bootstrap mesh notices every closed
  // peer; the first one it saw is the real cause. Give its reader thread a moment to catch up.
  const auto until = Clock::now() + std::chrono::milliseconds(300);
  // Ranks of a split's other group count too: members may fail because one of them died.
  std::optional<PeerError> first = boot_->firstFailureInJob();
  while (!first && !aborted_.load() && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    first = boot_->firstFailureInJob();
  }
  if (!first || first->peer() == seen.peer()) return seen;
  return PeerError(first->peer(), first->host(), concat(first->what(), " (seen here as: ", seen.what(), ")"));
}

std::string Communicator::asyncErrorMessage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return errorMessage_;
}

void Communicator::run(std::span<const algo::CollOp> ops, void* stream) {
  checkUsable();
  if (!isDeviceGroup(ops)) return runHost(ops);
  if (vendorComm_) {
    try {
      return runOnVendor(*vendor_, *vendorComm_, ops, stream);
    } catch (const Error& e) {
      fail(e);
      throw;
    }
  }
  if (streamExec_) {
    if (checkCalls_ && hasCollective(ops)) checkCallsAgree(*boot_, ops);  // before anything is queued: the communicator stays usable
    try {
      return streamExec_->enqueue(ops, stream);
    } catch (const InvalidArgument&) {
      throw;  // rejected by the planner: nothing queued
    } catch (const Error& e) {
      fail(e);
      throw;
    }
  }
  devicePath_->enqueue(std::vector<algo::CollOp>(ops.begin(), ops.end()), stream);
}

void Communicator::setUpVendorDomain() {
  if (!gpu_ || numDomains() != 1) return;
  for (const PeerInfo& p : peers())
    if (p.deviceKind != DeviceKind::Cuda) return;
  if (config().str("HETCCL_VENDOR_CCL") == "off") {
    HETCCL_INFO(log::kInit, "rank ", rank(), ": HETCCL_VENDOR_CCL=off: device calls staged through host memory");
    return;
  }
  // Every rank must take the same decision: a rank that cannot load the library tells the others.
  int32_t loaded = 1;
  std::string why;
  try {
    vendor_ = &domain::nccl::processNccl();
  } catch (const Error& e) {
    loaded = 0;
    why = e.what();
  }
  std::vector<int32_t> all(size());
  all[rank()] = loaded;
  boot_->allGather(all.data(), sizeof(int32_t));
  for (int32_t v : all)
    if (!v) {
      vendor_ = nullptr;
      HETCCL_INFO(log::kInit, "rank ", rank(), ": no vendor CCL on every rank (", why.empty() ? "another rank" : why,
                  "): device calls staged through host memory");
      return;
    }
  std::vector<int> members(size());
  for (int r = 0; r < size(); ++r) members[r] = r;
  vendorComm_ = vendor_->createComm(*boot_, members);
  devicePathName_ = concat(vendor_->describe(), " (single domain: every device call delegated)");
  HETCCL_INFO(log::kInit, "rank ", rank(), ": device calls go to ", devicePathName_);
}

void Communicator::createDevicePath() {
  bool anyGpu = false;
  for (const PeerInfo& p : peers()) anyGpu = anyGpu || p.deviceKind == DeviceKind::Cuda;
  if (!anyGpu) return;
  const std::string mode = config().str("HETCCL_GPU_EXEC");
  if (mode != "auto" && mode != "staged")
    throw InvalidArgument(concat("HETCCL_GPU_EXEC='", mode, "' is not one of auto, staged"));
  // The stream pipeline needs every rank to run it (its rings speak only to rings): a GPU rank, on this
  // host, willing. Every rank takes the same decision from the same table.
  int32_t willing = gpu_ && mode == "auto" && size() > 1 ? 1 : 0;
  std::vector<int32_t> all(size());
  all[rank()] = willing;
  boot_->allGather(all.data(), sizeof(int32_t));
  bool pipeline = true;
  for (int r = 0; r < size(); ++r)
    pipeline = pipeline && all[r] && peers()[r].hostId == peers()[rank()].hostId;
  if (!gpu_) return;  // a CPU rank: its calls never have device buffers
  auto onFailure = [this](const std::exception& e) {
    if (auto* err = dynamic_cast<const Error*>(&e)) return fail(*err);
    fail(InternalError(e.what()));
  };
  if (pipeline) {
    streamExec_ = std::make_unique<stream_exec::StreamExecutor>(
        *gpu_, peers()[rank()].deviceIndex, *boot_, topology_, onFailure,
        [b = boot_.get()] {
          if (auto f = b->failure()) throw *f;
        },
        &aborted_);
    devicePathName_ = stream_exec::StreamExecutor::describe();
    return;
  }
  devicePath_ = std::make_unique<DevicePath>(
      *gpu_, peers()[rank()].deviceIndex, rank(), size(),
      [this](std::span<const algo::CollOp> staged) { runHost(staged); }, onFailure, &aborted_);
}

bool Communicator::isDeviceGroup(std::span<const algo::CollOp> ops) const {
  if (!gpu_) return false;
  int device = 0, host = 0;
  auto classify = [&](const void* p) {
    if (!p) return;
    int memType = HETCCL_GPU_MEM_HOST, dev = -1;
    if (gpu_->pointerQuery(p, &memType, &dev) != HETCCL_GPU_OK) memType = HETCCL_GPU_MEM_HOST;
    (memType == HETCCL_GPU_MEM_DEVICE || memType == HETCCL_GPU_MEM_MANAGED ? device : host)++;
  };
  for (const auto& op : ops) {
    classify(op.sendbuff);
    classify(op.recvbuff);
  }
  if (device && host)
    throw InvalidArgument(concat("rank ", rank(), ": a group mixes device and host buffers (", device, " device, ",
                                 host, " host); use one kind per group"));
  return device > 0;
}

void Communicator::runHost(std::span<const algo::CollOp> ops) {
  checkUsable();
  // Point-to-point alone is checked per pair by the call stamps; an all-rank exchange would need every rank.
  if (checkCalls_ && hasCollective(ops)) checkCallsAgree(*boot_, ops);  // before anything moves
  // Bad input (the planner's InvalidArgument) is thrown here, before anything moves: the communicator stays usable.
  const engine::PreparedGroup prepared = engine::prepareGroup(topology_, ops, exec_, tuning_);
  try {
    engine::runPrepared(prepared, *links_, exec_);
  } catch (const PeerError& e) {
    PeerError cause = rootCause(e);
    fail(cause);
    boot_->reportFailure(cause);  // ranks that see this one leave next name the cause, not this rank
    throw cause;
  } catch (const Error& e) {
    fail(e);
    throw;
  } catch (const std::exception& e) {
    InternalError wrapped(concat("rank ", rank(), ": ", e.what()));
    fail(wrapped);
    throw wrapped;
  }
}

std::unique_ptr<Communicator> Communicator::split(int color, int key, const CommOptions& options) {
  checkUsable();
  struct Entry {
    int32_t color, key;
  };
  std::vector<Entry> table(size());
  table[rank()] = {color < 0 ? -1 : color, key};
  try {
    boot_->allGather(table.data(), sizeof(Entry));
  } catch (const PeerError& e) {  // as in runHost: tell the others which rank failed before leaving
    PeerError cause = rootCause(e);
    boot_->reportFailure(cause);
    throw cause;
  }
  const uint32_t tag = ++splitCount_;  // every rank splits in the same order
  if (color < 0) return nullptr;
  std::vector<int> members;
  for (int r = 0; r < size(); ++r)
    if (table[r].color == color) members.push_back(r);
  std::stable_sort(members.begin(), members.end(),
                   [&](int a, int b) { return table[a].key < table[b].key; });
  std::shared_ptr<bootstrap::Bootstrap> child = boot_->split(members, tag);
  auto comm = std::unique_ptr<Communicator>(new Communicator(std::move(child), options, gpu_));
  comm->parentBoot_ = boot_;  // the child bootstrap shares the parent's sockets
  return comm;
}

int Communicator::createPreMulSum(DataType type, const void* scalar) {
  if (!scalar) throw InvalidArgument("PreMulSum scalar pointer is null");
  if (!isValidDataType(static_cast<int>(type))) throw InvalidArgument(concat("invalid data type ", static_cast<int>(type)));
  std::lock_guard<std::mutex> lock(mu_);
  UserOp u;
  u.live = true;
  u.type = type;
  u.op.kind = RedOpKind::PreMulSum;
  std::memcpy(u.op.scalar, scalar, dataTypeSize(type));
  for (size_t i = 0; i < userOps_.size(); ++i)
    if (!userOps_[i].live) {
      userOps_[i] = u;
      return kNumBuiltinOps + static_cast<int>(i);
    }
  userOps_.push_back(u);
  return kNumBuiltinOps + static_cast<int>(userOps_.size() - 1);
}

void Communicator::destroyOp(int handle) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t i = static_cast<size_t>(handle - kNumBuiltinOps);
  if (handle < kNumBuiltinOps || i >= userOps_.size() || !userOps_[i].live)
    throw InvalidArgument(concat("reduction operator ", handle, " was not created on this communicator"));
  userOps_[i].live = false;
}

ReduceOp Communicator::resolveOp(int handle, DataType type) const {
  ReduceOp op;
  if (handle >= 0 && handle < kNumBuiltinOps) {
    op.kind = static_cast<RedOpKind>(handle);
    if (op.kind == RedOpKind::Avg && isFp8Type(type)) {
      // As NCCL 2.28 (hostToDevRedOp): fp8 Avg is PreMulSum by 1/nranks rounded to the fp8 type.
      op.kind = RedOpKind::PreMulSum;
      const float inverse = static_cast<float>(1.0 / size());
      op.scalar[0] = fp8::fromFloatBits(std::bit_cast<uint32_t>(inverse),
                                        type == DataType::Float8e4m3 ? fp8::kE4M3 : fp8::kE5M2);
    }
    return op;
  }
  std::lock_guard<std::mutex> lock(mu_);
  size_t i = static_cast<size_t>(handle - kNumBuiltinOps);
  if (handle < kNumBuiltinOps || i >= userOps_.size() || !userOps_[i].live)
    throw InvalidArgument(concat("invalid reduction operator ", handle));
  if (userOps_[i].type != type)
    throw InvalidArgument(concat("reduction operator ", handle, " was created for ", dataTypeName(userOps_[i].type),
                                 ", not ", dataTypeName(type)));
  return userOps_[i].op;
}

void Communicator::finalize() {
  if (finalized_) return;
  try {
    // Queued device work finishes first (or is released on failure).
    if (devicePath_) devicePath_->drain();
    if (streamExec_) streamExec_->drain();
  } catch (const Error& e) {
    finalized_ = true;
    fail(e);
    throw;
  }
  finalized_ = true;
  if (aborted_.load() || asyncError() != Result::Success) return;
  try {
    boot_->barrier();  // nobody tears down links while a peer may still read from them
  } catch (const PeerError& e) {  // as in runHost: tell the others which rank failed before leaving
    PeerError cause = rootCause(e);
    fail(cause);
    boot_->reportFailure(cause);
    throw cause;
  } catch (const Error& e) {
    fail(e);
    throw;
  }
  // Every rank reached the barrier: this rank closing its connections from now on is a normal leave,
  // which the peers must not report as a death (they may still be waiting in this same barrier).
  boot_->leave();
}

Result Communicator::pollAsyncError() {
  if (vendorComm_ && asyncError() == Result::Success && !aborted_.load()) {
    std::optional<Error> e = vendorAsyncError(*vendorComm_, peers()[rank()].domain);
    if (e && !aborted_.load()) fail(*e);  // after abort() the vendor communicator is gone: not its error
  }
  return asyncError();
}

void Communicator::abort() {
  aborted_.store(true);
  if (vendorComm_) vendorComm_->abort();
  boot_->abort();
}

}  // namespace hetccl
