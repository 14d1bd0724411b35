// hetccl-info: every configuration variable with its value, default and meaning; this process's
// detected identity; and, with --comm under a launcher (hetccl-run -n N -- hetccl-info --comm), the
// whole job's layout as rank 0 sees it: host, domain, device and the transport to every peer, how
// device-buffer calls run (the path selector's choice and its reason), and the algorithm the planner
// takes per collective and size, for host-buffer and device-buffer calls.
// --torch PATH: whether hetccl's drop-in libnccl.so.2 can serve that PyTorch (torch_check.hpp).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "algo/selection.hpp"
#include "bootstrap/bootstrap.hpp"
#include "bootstrap/unique_id.hpp"
#include "comm/communicator.hpp"
#include "comm/path_selector.hpp"
#include "common/launch_env.hpp"
#include "core/config.hpp"
#include "device/loader.hpp"
#include "hetccl-info/torch_check.hpp"
#include "net/rdma_devices.hpp"
#include "net/socket.hpp"
#include "rma/rma_service.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace {

void printConfig() {
  const hetccl::Config& c = hetccl::config();
  std::printf("# hetccl %d.%d.%d configuration (HETCCL_* first, then the NCCL_* alias, else the default)\n",
              HETCCL_MAJOR, HETCCL_MINOR, HETCCL_PATCH);
  std::printf("%-24s %-14s %-10s %s\n", "variable", "value", "default", "meaning");
  for (const auto& v : hetccl::Config::variables()) {
    std::string value = c.str(v.name);
    if (v.name == "HETCCL_SECRET" || v.name == "HETCCL_UNIQUE_ID") value = c.isSet(v.name) ? "(set, hidden)" : "";
    std::string shown = c.isSet(v.name) ? value : "-";
    std::string dflt = v.defaultValue.empty() ? "-" : std::string(v.defaultValue);
    std::string help(v.help);
    if (!v.ncclAlias.empty()) help += " [alias " + std::string(v.ncclAlias) + "]";
    std::printf("%-24.*s %-14s %-10s %s\n", static_cast<int>(v.name.size()), v.name.data(), shown.c_str(),
                dflt.c_str(), help.c_str());
  }
}

void printSelf() {
  hetccl::device::GpuChoice choice;
  std::string choiceError;
  try {
    choice = hetccl::device::chooseGpu();
  } catch (const std::exception& e) {
    choiceError = e.what();
  }
  hetccl::PeerInfo self = hetccl::bootstrap::detectSelf(0, choice.kind, -1);
  std::printf("\n# this process\n");
  std::printf("host id       %s\n", self.hostId.c_str());
  std::printf("domain        %s%s\n", self.domain.c_str(),
              hetccl::config().isSet("HETCCL_DOMAIN") ? " (HETCCL_DOMAIN)" : " (the device's vendor; HETCCL_DOMAIN unset)");
  std::printf("device        %s: %s\n", hetccl::deviceKindName(self.deviceKind),
              choiceError.empty() ? choice.reason.c_str() : ("error: " + choiceError).c_str());
  std::printf("bootstrap/tcp %s\n", hetccl::net::chooseLocalAddress().toString().c_str());
  std::printf("transports    shm (same host id), ucx or tcp (different host ids); HETCCL_TRANSPORT=%s, HETCCL_UCX=%s\n",
              hetccl::config().str("HETCCL_TRANSPORT").c_str(), hetccl::config().str("HETCCL_UCX").c_str());
  std::printf("ucx           %s\n", hetccl::transport::ucxDescription().c_str());
  {
    const std::vector<std::string> rdma = hetccl::net::rdmaDevices();
    std::string names;
    for (const std::string& d : rdma) names += (names.empty() ? "" : ", ") + d;
    std::printf("rdma devices  %s (%s)%s\n", rdma.empty() ? "none" : names.c_str(),
                hetccl::config().str("HETCCL_RDMA_SYSFS").c_str(),
                rdma.empty() ? "; HETCCL_UCX=auto keeps tcp between hosts" : "");
  }
  for (hetccl::DeviceKind kind : {hetccl::DeviceKind::Cuda, hetccl::DeviceKind::Hip}) {
    const auto* gpu = hetccl::device::loadGpuPlugin(kind);
    std::string state = gpu ? std::string("loaded") : "unavailable: " + hetccl::device::gpuPluginUnavailableReason(kind);
    int runtimeVersion = 0, driverVersion = 0, count = 0;
    if (gpu && gpu->versions(&runtimeVersion, &driverVersion) == HETCCL_GPU_OK && gpu->deviceCount(&count) == HETCCL_GPU_OK)
      state += hetccl::concat(" (runtime ", runtimeVersion, ", driver ", driverVersion, ", ", count, count == 1 ? " device)" : " devices)");
    std::printf("%-4s plugin   %s\n", hetccl::deviceKindName(kind), state.c_str());
  }
}

// "1 KiB", "64 MiB", ...
std::string sizeName(size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) bytes /= 1024, ++u;
  return std::to_string(bytes) + " " + units[u];
}

// The planner's choice for every collective and size on `topology` with `tuning` (rank 0's view).
void printAlgorithmTable(const char* title, const hetccl::algo::Topology& topology, const hetccl::algo::Tuning& tuning) {
  using hetccl::algo::CollKind;
  constexpr CollKind kKinds[] = {CollKind::AllReduce, CollKind::Broadcast,     CollKind::Reduce,
                                 CollKind::AllGather, CollKind::ReduceScatter, CollKind::AllToAll};
  constexpr size_t kSizes[] = {size_t{1} << 10, size_t{64} << 10, size_t{1} << 20, size_t{64} << 20, size_t{1} << 30};
  std::printf("\n# %s; the algorithm per collective and size as rank 0 plans it (chunk %zu bytes)\n", title, tuning.chunkBytes);
  std::printf("%-14s %-8s %s\n", "collective", "bytes", "algorithm");
  for (CollKind kind : kKinds)
    for (size_t bytes : kSizes) {
      std::string line;
      try {
        line = hetccl::algo::describeChoice(topology, kind, bytes, tuning);
      } catch (const std::exception& e) {
        line = std::string("(cannot plan: ") + e.what() + ")";
      }
      std::printf("%-14s %-8s %s\n", hetccl::algo::collKindName(kind), sizeName(bytes).c_str(), line.c_str());
    }
}

// How device-buffer calls run, and the planner's tables for host and device buffers.
void printExecution(const hetccl::Communicator& comm) {
  const hetccl::PathChoice& choice = comm.devicePathChoice();
  std::printf("device-buffer calls: %s\n", comm.devicePathName().c_str());
  std::printf("  path:   %s\n", hetccl::execPathName(choice.path));
  std::printf("  reason: %s\n", choice.reason.c_str());
  const hetccl::PlannerSettings device =
      hetccl::plannerSettingsFor(choice.path, comm.topology(), comm.hostTuning(),
                                 hetccl::onSeveralHosts(comm.peers()));
  switch (choice.path) {
    case hetccl::ExecPath::HostOnly:
      printAlgorithmTable("every call: host buffers, host engine", comm.topology(), comm.hostTuning());
      break;
    case hetccl::ExecPath::Staged:
      printAlgorithmTable("host-buffer calls and staged device-buffer calls: host engine", comm.topology(),
                          comm.hostTuning());
      break;
    case hetccl::ExecPath::VendorDelegation:
      printAlgorithmTable("host-buffer calls: host engine", comm.topology(), comm.hostTuning());
      std::printf("\n# device-buffer calls are delegated whole to the vendor library, which chooses its own algorithms\n");
      break;
    case hetccl::ExecPath::Pipeline:
    case hetccl::ExecPath::PipelineWithDomainVendor:
      printAlgorithmTable("host-buffer calls: host engine", comm.topology(), comm.hostTuning());
      printAlgorithmTable(choice.path == hetccl::ExecPath::Pipeline
                              ? "device-buffer calls: stream pipeline"
                              : "device-buffer calls: stream pipeline, vendor collectives inside domains",
                          device.topology, device.tuning);
      break;
  }
}

int printJob() {
  auto env = hetccl::tools::readLaunchEnv();
  auto id = hetccl::bootstrap::UniqueId::decode(reinterpret_cast<const unsigned char*>(env.id.internal),
                                                sizeof env.id.internal);
  auto comm = hetccl::Communicator::create(id, env.size, env.rank, {});
  if (env.rank == 0) {
    std::printf("\n# job: %d ranks, %d domains (launcher: %s)\n", comm->size(), comm->numDomains(), env.source.c_str());
    std::printf("%-5s %-24s %-12s %-6s %-8s %-22s %s\n", "rank", "host", "domain", "device", "pid", "rank 0 reaches it by",
                "RMA (hetccl_rma.h) from rank 0");
    for (const auto& p : comm->peers()) {
      const bool gpuRank = comm->peers()[comm->rank()].deviceKind != hetccl::DeviceKind::Host;
      const hetccl::PeerInfo& self = comm->peers()[comm->rank()];
      const std::string ipc = p.rank != comm->rank() && hetccl::rma::peerCopyWanted(self, p)
                                  ? "device registrations by IPC where the runtime allows, else "
                                  : "";
      const std::string rma = p.rank == comm->rank()                  ? "-"
                              : hetccl::rma::windowWanted(self, p) ? ipc + "window (pinned shared memory, one host)"
                                                                   : ipc + hetccl::rma::describePath(comm->transportTo(p.rank), gpuRank);
      std::printf("%-5d %-24s %-12s %-6s %-8d %-22.*s %s\n", p.rank, p.hostId.c_str(), p.domain.c_str(),
                  hetccl::deviceKindName(p.deviceKind), p.pid, static_cast<int>(comm->transportTo(p.rank).size()),
                  comm->transportTo(p.rank).data(), rma.c_str());
    }
    std::printf("\n");
    printExecution(*comm);
  }
  comm->finalize();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--torch") == 0)  // can the drop-in serve this PyTorch?
    return hetccl::info::torchCheck(std::vector<std::string>(argv + 2, argv + argc));
  try {
    bool job = argc > 1 && std::strcmp(argv[1], "--comm") == 0;
    if (argc > 1 && !job) {
      std::fprintf(stderr, "usage: hetccl-info [--comm]   (--comm: run under a launcher, prints the job layout, how "
                           "device calls run and the algorithm per collective and size)\n"
                           "       hetccl-info --torch PATH [--dropin LIB]   "
                           "(can hetccl's libnccl.so.2 serve this PyTorch?)\n");
      return 2;
    }
    if (!job || hetccl::tools::readLaunchEnv().rank == 0) {
      printConfig();
      printSelf();
    }
    return job ? printJob() : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hetccl-info: %s\n", e.what());
    return 1;
  }
}
