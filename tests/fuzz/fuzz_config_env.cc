// Fuzz target: configuration and launch values read from the environment: the registry's integer,
// boolean and timeout parsers, the interface filter (HETCCL_SOCKET_IFNAME), log level and subsystem
// mask, the algorithm name, the launcher secret, the hetccl-run launch variables and Slurm's list
// formats. The first byte picks the variable; the rest (up to a NUL) is its value.
// Property: every value is either accepted or rejected with InvalidArgument naming the variable; an
// accepted value obeys its bounds.
#include <cstdlib>
#include <string>

#include "algo/tuning.hpp"
#include "bootstrap/unique_id.hpp"
#include "common/env_reader.hpp"
#include "common/launch_env.hpp"
#include "common/slurm_lists.hpp"
#include "core/config.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "fuzz_support.hpp"
#include "net/socket.hpp"

using namespace hetccl;

namespace {

/// Runs `f`; an InvalidArgument must name `var` (when given). Anything else escaping is a finding.
template <typename F>
void expectCleanRejection(const char* var, F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    if (var && std::string(e.what()).find(var) == std::string::npos) std::abort();
  }
}

void integerVar(const char* var, int64_t lo, int64_t hi) {
  expectCleanRejection(var, [&] {
    int64_t v = Config::fromEnvironment().integer(var, lo, hi);
    if (v < lo || v > hi) std::abort();
  });
}

void launchVars(const std::string& value) {
  // HETCCL_RANK / NRANKS / LOCAL_RANK / LOCAL_SIZE / UNIQUE_ID from '|'-separated fields.
  static const char* kNames[] = {"HETCCL_RANK", "HETCCL_NRANKS", "HETCCL_LOCAL_RANK", "HETCCL_LOCAL_SIZE",
                                 "HETCCL_UNIQUE_ID"};
  size_t start = 0;
  for (const char* name : kNames) {
    size_t bar = value.find('|', start);
    std::string field = value.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    ::setenv(name, field.c_str(), 1);
    start = bar == std::string::npos ? value.size() : bar + 1;
  }
  expectCleanRejection(nullptr, [] {
    tools::LaunchEnv env = tools::readLaunchEnv();
    if (env.rank < 0 || env.rank >= env.size || env.localRank >= env.localSize || env.localSize > env.size)
      std::abort();
  });
  for (const char* name : kNames) ::unsetenv(name);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const uint8_t which = in.byte();
  std::string value = in.rest();
  value = value.substr(0, value.find('\0'));  // environment values end at the first NUL
  switch (which % 12) {
    case 0:
      ::setenv("HETCCL_CHUNK_BYTES", value.c_str(), 1);
      integerVar("HETCCL_CHUNK_BYTES", 1, int64_t{1} << 40);
      reloadConfig();
      expectCleanRejection("HETCCL_CHUNK_BYTES", [] { (void)algo::Tuning::fromConfig(); });
      ::unsetenv("HETCCL_CHUNK_BYTES");
      break;
    case 1:
      ::setenv("HETCCL_TCP_SOCKETS", value.c_str(), 1);
      integerVar("HETCCL_TCP_SOCKETS", 1, 16);
      ::unsetenv("HETCCL_TCP_SOCKETS");
      break;
    case 2:
      ::setenv("HETCCL_TIMEOUT", value.c_str(), 1);
      expectCleanRejection("HETCCL_TIMEOUT", [] {
        int64_t ms = Config::fromEnvironment().timeoutMs();
        if (ms < 0) std::abort();
      });
      ::unsetenv("HETCCL_TIMEOUT");
      break;
    case 3:
      ::setenv("HETCCL_CHECK_CALLS", value.c_str(), 1);
      expectCleanRejection("HETCCL_CHECK_CALLS", [] { (void)Config::fromEnvironment().boolean("HETCCL_CHECK_CALLS"); });
      ::unsetenv("HETCCL_CHECK_CALLS");
      break;
    case 4:
      ::setenv("HETCCL_SOCKET_IFNAME", value.c_str(), 1);
      reloadConfig();
      expectCleanRejection("HETCCL_SOCKET_IFNAME", [] { (void)net::chooseLocalAddress().toString(); });
      ::unsetenv("HETCCL_SOCKET_IFNAME");
      reloadConfig();
      break;
    case 5:
      ::setenv((which & 16) ? "HETCCL_DEBUG_SUBSYS" : "HETCCL_DEBUG", value.c_str(), 1);
      reloadConfig();
      log::reload();  // noexcept: unknown names fall back to defaults
      ::unsetenv("HETCCL_DEBUG_SUBSYS");
      ::unsetenv("HETCCL_DEBUG");
      reloadConfig();
      log::reload();
      break;
    case 6:
      expectCleanRejection("HETCCL_ALGO", [&] { (void)algo::parseAlgoChoice(value); });
      break;
    case 7:
      expectCleanRejection("HETCCL_SECRET", [&] {
        auto id = bootstrap::launcherIdFromSecret(net::SocketAddress::parse("127.0.0.1:29500"), value);
        if (!id.rank0StartsRoot) std::abort();
      });
      break;
    case 8:
      launchVars(value);
      break;
    case 9:
      expectCleanRejection("SLURM_NODELIST", [&] {
        if (tools::firstHostOfNodeList("SLURM_NODELIST", value).empty()) std::abort();
      });
      break;
    case 10:
      expectCleanRejection("SLURM_TASKS_PER_NODE", [&] {
        if (tools::tasksOnNode("SLURM_TASKS_PER_NODE", value, which >> 4) < 0) std::abort();
      });
      break;
    case 11:
      expectCleanRejection("SLURM_NODEID", [&] { (void)tools::parseDecimal("SLURM_NODEID", value, -5, 1000); });
      break;
  }
  return 0;
}
