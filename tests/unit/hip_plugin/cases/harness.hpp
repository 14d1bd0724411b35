// Shared by the HIP plugin tests: the plugin (dlopen of libhetccl-hip.so), the fake runtime's control
// functions, child processes with their own environment, and small buffers.
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "device/base/gpu_plugin.h"
#include "fake_hip.h"

namespace hip_test {

/// The plugin of this process, loaded and initialised on first use (the fake runtime is the default:
/// main() sets HETCCL_HIP_RUNTIME_LIB before any test). Aborts the test binary when it does not load.
const hetcclGpuPlugin_t& plugin();
/// The plugin struct without init() (for init tests in child processes).
const hetcclGpuPlugin_t* loadPluginStruct(std::string* error);
/// Lines the plugin logged (thread-safe copy).
std::vector<std::string> logLines();

/// The fake runtime's control interface (the library the plugin opened).
struct Fake {
  void (*stats)(fakehipStats_t*);
  void (*failCall)(const char*, int, int);
  uint64_t (*callCount)(const char*);
  int (*setCapturing)(void*, int, unsigned long long, int);
  uint64_t (*pendingOps)(void*);
  const char* (*lastBadAccess)();
  int (*knowsKernel)(const char*);
  fakehipStats_t snapshot() const {
    fakehipStats_t s{};
    stats(&s);
    return s;
  }
};
/// Looks the functions up in the library at `path` (already loaded by the plugin, or loaded now).
const Fake& fake(const char* path = nullptr);

/// A child process running this binary with `--scenario name`, its environment = this one's plus `env`
/// (an empty value unsets the variable). Returns its exit status and stdout ("key=value" lines parsed).
struct ChildResult {
  int status = -1;
  std::string out;
  std::string err;
  std::map<std::string, std::string> values;
  std::string get(const std::string& key) const {
    auto it = values.find(key);
    return it == values.end() ? "<missing " + key + ">" : it->second;
  }
  long num(const std::string& key) const { return std::atol(get(key).c_str()); }
};
ChildResult runScenario(const std::string& name, const std::vector<std::pair<std::string, std::string>>& env);

/// A fresh empty folder under $TMPDIR (removed by the caller with removeTree).
std::string makeTempDir(const char* tag);
void removeTree(const std::string& path);
std::vector<std::string> listFiles(const std::string& dir);

/// Polls `ready` up to `ms` milliseconds.
bool eventually(int ms, const std::function<bool()>& ready);

/// Scenario entry point (cases/scenarios.cc): returns the process exit code.
int scenarioMain(const std::string& name);
/// The `fake_ipc_peer` scenario (fake_ipc_test.cc): the fake runtime alone, no plugin.
int fakeIpcPeer();

}  // namespace hip_test
