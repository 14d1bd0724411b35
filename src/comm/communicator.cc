// Communicator lifecycle: creation (device binding, bootstrap, topology), the set-up exchanges, finalize,
// abort and destruction. The other concepts of the class live in communicator_*.cc (see the header).
#include "comm/communicator.hpp"
#include "bootstrap/root_cause.hpp"
#include "exec/host/host_executor.hpp"

#include <map>

#include "comm/config_agreement.hpp"
#include "exec/base/device_executor.hpp"
#include "comm/tuning_file.hpp"
#include "transport/links/link_set.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "device/loader.hpp"
#include "exec/host/idle_spin.hpp"

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

// The rank's GPU (device/loader.hpp: chooseGpu), bound to the device current on the calling thread, as
// NCCL binds a communicator.
const hetcclGpuPlugin_t* selectDevice(DeviceKind& kind, int& device) {
  const device::GpuChoice choice = device::chooseGpu();
  HETCCL_INFO(log::kInit, "device: ", deviceKindName(choice.kind), ": ", choice.reason);
  if (!choice.plugin) return nullptr;
  if (choice.plugin->getDevice(&device) != HETCCL_GPU_OK)
    throw Error(Result::UnhandledCudaError,
                concat("cannot read the current ", choice.plugin->name, " device: ", choice.plugin->lastError()));
  kind = choice.kind;
  return choice.plugin;
}

// exec/host/idle_spin.hpp: how long this rank's host executor polls before it sleeps, from the ranks that
// share its host and the transports it reaches its peers through.
std::chrono::microseconds idleSpinFor(const transport::LinkSet& links, const std::vector<PeerInfo>& peers, int self) {
  int ranksOnHost = 0;
  std::vector<std::string_view> transports;
  for (int p = 0; p < static_cast<int>(peers.size()); ++p) {
    ranksOnHost += peers[p].hostId == peers[self].hostId;
    transports.push_back(links.transportTo(p));
  }
  const int cores = engine::usableCores();
  const std::string forced = config().str("HETCCL_IDLE_SPIN");
  const auto spin = forced == "short" ? engine::kShortIdleSpin
                    : forced == "long" ? engine::kLongIdleSpin
                                       : engine::chooseIdleSpin(ranksOnHost, cores, transports);
  HETCCL_INFO(log::kInit, "rank ", self, ": host executor polls ", spin.count(), " us before sleeping (", ranksOnHost,
              " ranks on this host, ", cores, " cores)");
  return spin;
}

}  // namespace

Communicator::Communicator(std::shared_ptr<bootstrap::Bootstrap> boot, const CommOptions& options,
                           const hetcclGpuPlugin_t* gpu)
    : boot_(std::move(boot)), topology_(makeTopology(*boot_)), gpu_(gpu) {
  try {  // every exchange of the set-up: a rank that failed is named and the others are told (as HostExecutor does)
    setUp(options);
  } catch (const PeerError& e) {
    PeerError cause = bootstrap::rootCause(*boot_, e, &aborted_);
    boot_->reportFailure(cause);
    throw cause;
  }
  HETCCL_INFO(log::kInit, "rank ", rank(), " of ", size(), " ready: domain ", peers()[rank()].domain, " (",
              numDomains(), " domains), host ", peers()[rank()].hostId);
}

void Communicator::setUp(const CommOptions& options) {
  transport_ = options.transport.empty() ? config().str("HETCCL_TRANSPORT") : options.transport;
  TuningFileBands fileBands = tuningFileBandsFor(topology_, boot_->peers(), transport_);
  const DerivedValue tuningRows{"HETCCL_TUNING_FILE (rows for this layout)", fileBands.bandsText, fileBands.fileError};
  checkConfigAgrees(*boot_, config(), {&tuningRows, 1});  // before anything depends on them: every rank fails alike
  links_ = std::make_unique<transport::LinkSet>(*boot_, transport_, &aborted_, Deadline::fromConfig());
  exec_.timeoutMs = config().timeoutMs();
  exec_.abortFlag = &aborted_;
  exec_.scratch = &scratch_;
  exec_.calls = &calls_;
  exec_.peers = boot_->peers();
  exec_.idleSpin = idleSpinFor(*links_, exec_.peers, rank());
  exec_.checkFailure = [b = boot_.get()] {
    if (auto f = b->failure()) throw *f;
  };
  tuning_ = algo::Tuning::fromConfig();
  tuning_.allReduceBands = std::move(fileBands.bands);
  if (!tuning_.allReduceBands.empty())
    HETCCL_INFO(log::kInit, "rank ", rank(), ": host all-reduces under auto from HETCCL_TUNING_FILE: ", fileBands.bandsText);
  checkCalls_ = config().boolean("HETCCL_CHECK_CALLS");
  hostExec_ = std::make_unique<engine::HostExecutor>(topology_, tuning_, *boot_, *links_, exec_, checkCalls_,
                                                     &asyncError_, [this](const Error& e) { fail(e); });
  setUpDeviceExecution();
}

std::unique_ptr<Communicator> Communicator::create(const bootstrap::UniqueId& id, int nranks, int rank,
                                                   const CommOptions& options) {
  if (nranks < 1) throw InvalidArgument(concat("nranks is ", nranks, "; it must be at least 1"));
  if (rank < 0 || rank >= nranks) throw InvalidArgument(concat("rank ", rank, " is outside [0, ", nranks, ")"));
  config().checkValues();  // a bad value fails here, on every rank that has it, before any connection
  Config::warnUnknownVariablesOnce();
  DeviceKind kind = DeviceKind::Host;
  int device = -1;
  const hetcclGpuPlugin_t* gpu = selectDevice(kind, device);
  PeerInfo self = bootstrap::detectSelf(rank, kind, device);
  std::shared_ptr<bootstrap::Bootstrap> boot = bootstrap::connect(id, rank, nranks, self, Deadline::fromConfig());
  auto comm = std::unique_ptr<Communicator>(new Communicator(std::move(boot), options, gpu));
  static constexpr char kLabel[] = "hetccl service key v1";
  comm->serviceKey_ = bootstrap::hmacSha256(id.secret, {std::span(reinterpret_cast<const unsigned char*>(kLabel), sizeof kLabel - 1)});
  return comm;
}

Communicator::~Communicator() {
  if (auto rma = this->rma()) rma->stop("the communicator was destroyed");  // before what it uses goes
  // A failed communicator's peers may be gone: its vendor communicators are aborted, not finalized with
  // them (an aborted one was aborted by abort() already).
  if (executor_ && asyncError() != Result::Success && !aborted_.load()) executor_->abort();
  if (links_ && (aborted_.load() || asyncError() != Result::Success)) links_->closeAbruptly();
}

std::string_view Communicator::transportTo(int peer) const { return links_->transportTo(peer); }

void Communicator::finalize() {
  if (finalized_) return;
  if (auto rma = this->rma()) rma->stop(concat("rank ", rank(), " finalized its communicator"));
  try {
    if (executor_) executor_->drain();  // queued device work finishes first (or is released on failure)
  } catch (const Error& e) {
    finalized_ = true;
    fail(e);
    throw;
  }
  finalized_ = true;
  if (aborted_.load() || asyncError() != Result::Success) return;
  try {
    boot_->barrier();  // nobody tears down links while a peer may still read from them
  } catch (const PeerError& e) {  // as the host executor does: tell the others which rank failed before leaving
    PeerError cause = bootstrap::rootCause(*boot_, e, &aborted_);
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

void Communicator::abort() {
  aborted_.store(true);
  if (auto rma = this->rma()) rma->abort();
  if (executor_) executor_->abort();  // vendor communicators; the executors' own waits watch aborted_
  boot_->abort();
}

void Communicator::attachRma(std::shared_ptr<CommExtension> rma) {
  std::lock_guard<std::mutex> lock(mu_);
  if (rma_) throw InvalidUsage("RMA is already initialised on this communicator (hetcclRmaInit is called once)");
  rma_ = std::move(rma);
}

std::shared_ptr<CommExtension> Communicator::rma() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rma_;
}

std::string Communicator::rmaPathTo(int peer) const {
  auto rma = this->rma();
  return rma ? rma->pathTo(peer) : std::string();
}

}  // namespace hetccl
