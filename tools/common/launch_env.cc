#include "common/launch_env.hpp"

#include <cstring>
#include <string_view>

#include "bootstrap/unique_id.hpp"
#include "common/env_reader.hpp"
#include "common/slurm_lists.hpp"
#include "core/error.hpp"

namespace hetccl::tools {
namespace {

using bootstrap::UniqueId;

constexpr long long kMaxRanks = 1 << 24;

constexpr std::string_view kHetcclRunHint =
    "hetccl-run sets it; to launch by hand set HETCCL_RANK, HETCCL_NRANKS, HETCCL_LOCAL_RANK, "
    "HETCCL_LOCAL_SIZE and HETCCL_UNIQUE_ID";
constexpr std::string_view kTorchrunHint =
    "torchrun sets it; to launch torchrun-style by hand set all of RANK, WORLD_SIZE, LOCAL_RANK, "
    "LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (and HETCCL_SECRET)";
constexpr std::string_view kOpenMpiHint = "mpirun (Open MPI) sets it";
constexpr std::string_view kSlurmHint = "srun sets it inside a job step";
constexpr std::string_view kCommIdHint =
    "set it to <host of rank 0>:<free port> on every rank, e.g. mpirun -x HETCCL_COMM_ID=node1:29600";
constexpr std::string_view kSecretHint =
    "outside hetccl-run every rank needs the same job secret of at least 32 hex digits: "
    "export HETCCL_SECRET=$(openssl rand -hex 32) before torchrun/srun, and pass it on (mpirun -x HETCCL_SECRET)";

/// The variable names one launcher uses for the four rank numbers (localSize may be computed).
struct RankVarNames {
  std::string_view rank, size, localRank, localSize;
};

/// Checks the relations between the numbers, naming the variables in every message.
void validateRanks(const LaunchEnv& env, const RankVarNames& names) {
  if (env.rank >= env.size)
    throw InvalidArgument(concat(names.rank, "=", env.rank, " is not below ", names.size, "=", env.size,
                                 " (ranks are numbered 0..size-1)"));
  if (env.localSize > env.size)
    throw InvalidArgument(concat(names.localSize, "=", env.localSize, " exceeds ", names.size, "=", env.size));
  if (env.localRank >= env.localSize)
    throw InvalidArgument(concat(names.localRank, "=", env.localRank, " is not below ", names.localSize, "=",
                                 env.localSize));
}

/// Reads size, rank and local rank, and the local size unless the caller computed it already (Slurm).
void readRankNumbers(const EnvReader& vars, const RankVarNames& names, std::string_view hint, LaunchEnv& env) {
  env.size = static_cast<int>(vars.integer(names.size, 1, kMaxRanks, hint));
  env.rank = static_cast<int>(vars.integer(names.rank, 0, kMaxRanks, hint));
  env.localRank = static_cast<int>(vars.integer(names.localRank, 0, kMaxRanks, hint));
  if (env.localSize == 0) env.localSize = static_cast<int>(vars.integer(names.localSize, 1, kMaxRanks, hint));
  validateRanks(env, names);
}

hetcclUniqueId toPublic(const UniqueId& id) {
  static_assert(sizeof(hetcclUniqueId) == bootstrap::kUniqueIdBytes, "public and internal id sizes differ");
  hetcclUniqueId out{};
  auto bytes = id.encode();
  std::memcpy(out.internal, bytes.data(), bytes.size());
  return out;
}

/// "host:port" with IPv6 literals bracketed.
std::string hostPort(const std::string& host, long long port) {
  bool bareIpv6 = host.find(':') != std::string::npos && host.front() != '[';
  return bareIpv6 ? concat("[", host, "]:", port) : concat(host, ":", port);
}

net::SocketAddress parseRoot(std::string_view from, const std::string& text) {
  net::SocketAddress root;
  try {
    root = net::SocketAddress::parse(text);
  } catch (const Error& e) {
    throw InvalidArgument(concat("root address '", text, "' (from ", from, ") is not usable: ", e.what()));
  }
  if (root.port() == 0)
    throw InvalidArgument(concat("root address '", text, "' (from ", from, ") needs a fixed port, not 0"));
  return root;
}

/// The id of launchers that only give an address: HETCCL_SECRET, and rank 0 starts the root.
hetcclUniqueId idFromSecret(const EnvReader& vars, const net::SocketAddress& root) {
  std::string secret = vars.require("HETCCL_SECRET", kSecretHint);
  UniqueId id;
  try {
    id = bootstrap::launcherIdFromSecret(root, secret);
  } catch (const Error& e) {
    throw InvalidArgument(concat("HETCCL_SECRET is not usable: ", e.what(), " (", kSecretHint, ")"));
  }
  id.rank0StartsRoot = true;
  return toPublic(id);
}

net::SocketAddress rootFromCommId(const EnvReader& vars) {
  return parseRoot("HETCCL_COMM_ID", vars.require("HETCCL_COMM_ID", kCommIdHint));
}

LaunchEnv fromHetcclRun(const EnvReader& vars) {
  LaunchEnv env;
  env.source = "hetccl-run";
  readRankNumbers(vars, {"HETCCL_RANK", "HETCCL_NRANKS", "HETCCL_LOCAL_RANK", "HETCCL_LOCAL_SIZE"}, kHetcclRunHint,
                  env);
  std::string hex = vars.require("HETCCL_UNIQUE_ID", kHetcclRunHint);
  try {
    env.id = toPublic(UniqueId::fromHex(hex));
  } catch (const Error& e) {
    throw InvalidArgument(concat("HETCCL_UNIQUE_ID is not a unique id (expected the ", 2 * bootstrap::kUniqueIdBytes,
                                 " hex digits hetccl-run passes): ", e.what()));
  }
  return env;
}

LaunchEnv fromTorchrun(const EnvReader& vars) {
  LaunchEnv env;
  env.source = "torchrun";
  readRankNumbers(vars, {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"}, kTorchrunHint, env);
  std::string addr = vars.require("MASTER_ADDR", kTorchrunHint);
  long long port = vars.integer("MASTER_PORT", 1, 65534, kTorchrunHint);
  env.id = idFromSecret(vars, parseRoot("MASTER_ADDR and MASTER_PORT+1", hostPort(addr, port + 1)));
  return env;
}

LaunchEnv fromOpenMpi(const EnvReader& vars) {
  LaunchEnv env;
  env.source = "openmpi";
  readRankNumbers(vars,
                  {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                   "OMPI_COMM_WORLD_LOCAL_SIZE"},
                  kOpenMpiHint, env);
  env.id = idFromSecret(vars, rootFromCommId(vars));
  return env;
}

/// Tasks on this node: SLURM_STEP_TASKS_PER_NODE (or SLURM_TASKS_PER_NODE) at index SLURM_NODEID.
int slurmLocalSize(const EnvReader& vars, std::string_view* listName) {
  *listName = vars.has("SLURM_STEP_TASKS_PER_NODE") ? "SLURM_STEP_TASKS_PER_NODE" : "SLURM_TASKS_PER_NODE";
  std::string list = vars.require(*listName, kSlurmHint);
  int node = static_cast<int>(vars.integer("SLURM_NODEID", 0, kMaxRanks, kSlurmHint));
  return tasksOnNode(*listName, list, node);
}

net::SocketAddress slurmRoot(const EnvReader& vars) {
  if (vars.has("HETCCL_COMM_ID")) return rootFromCommId(vars);
  std::string_view listName = vars.has("SLURM_STEP_NODELIST") ? "SLURM_STEP_NODELIST" : "SLURM_NODELIST";
  std::string host = firstHostOfNodeList(listName, vars.require(listName, kSlurmHint));
  long long job = vars.integer("SLURM_JOB_ID", 0, (1LL << 62), concat(kSlurmHint, "; or set HETCCL_COMM_ID"));
  return parseRoot(concat("the first host of ", listName, " and SLURM_JOB_ID"), hostPort(host, slurmRootPort(job)));
}

LaunchEnv fromSlurm(const EnvReader& vars) {
  LaunchEnv env;
  env.source = "slurm";
  std::string_view listName;
  env.localSize = slurmLocalSize(vars, &listName);
  readRankNumbers(vars, {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", listName}, kSlurmHint, env);
  env.id = idFromSecret(vars, slurmRoot(vars));
  return env;
}

bool anySet(const EnvReader& vars, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names)
    if (vars.has(n)) return true;
  return false;
}

}  // namespace

int slurmRootPort(long long jobId) { return static_cast<int>(15000 + jobId % 15000); }

LaunchEnv readLaunchEnv() {
  EnvReader vars;
  if (anySet(vars, {"HETCCL_UNIQUE_ID", "HETCCL_RANK", "HETCCL_NRANKS"})) return fromHetcclRun(vars);
  if (anySet(vars, {"RANK", "WORLD_SIZE"})) return fromTorchrun(vars);
  if (anySet(vars, {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"})) return fromOpenMpi(vars);
  if (anySet(vars, {"SLURM_PROCID"})) return fromSlurm(vars);
  throw InvalidArgument(
      "no launcher found: none of HETCCL_RANK (hetccl-run), RANK (torchrun), OMPI_COMM_WORLD_RANK (mpirun) or "
      "SLURM_PROCID (srun) is set; start the program with one of them, e.g. hetccl-run -n 2 PROGRAM");
}

}  // namespace hetccl::tools
