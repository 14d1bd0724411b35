#include "harness.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <thread>

extern char** environ;

namespace hip_test {
namespace {

std::mutex gLogMutex;
std::vector<std::string>* gLog = new std::vector<std::string>;

void logger(int level, const char* file, int line, const char* message) {
  std::lock_guard<std::mutex> lock(gLogMutex);
  gLog->push_back(std::to_string(level) + " " + message);
  if (std::getenv("HIP_TEST_VERBOSE")) std::fprintf(stderr, "[plugin %d] %s\n", level, message);
}

std::string gTempRoot;

}  // namespace

const hetcclGpuPlugin_t* loadPluginStruct(std::string* error) {
  void* handle = dlopen(HIP_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    *error = dlerror();
    return nullptr;
  }
  auto* p = static_cast<const hetcclGpuPlugin_t*>(dlsym(handle, HETCCL_GPU_PLUGIN_SYMBOL));
  if (!p) *error = "no " HETCCL_GPU_PLUGIN_SYMBOL " in " HIP_PLUGIN_PATH;
  return p;
}

const hetcclGpuPlugin_t& plugin() {
  static const hetcclGpuPlugin_t* p = [] {
    std::string error;
    const hetcclGpuPlugin_t* loaded = loadPluginStruct(&error);
    if (!loaded) {
      std::fprintf(stderr, "cannot load %s: %s\n", HIP_PLUGIN_PATH, error.c_str());
      std::abort();
    }
    const int rc = loaded->init(logger);
    if (rc != HETCCL_GPU_OK) {
      std::fprintf(stderr, "plugin init failed (%d): %s\n", rc, loaded->lastError());
      std::abort();
    }
    return loaded;
  }();
  return *p;
}

std::vector<std::string> logLines() {
  std::lock_guard<std::mutex> lock(gLogMutex);
  return *gLog;
}

const Fake& fake(const char* path) {
  static const Fake f = [&] {
    const char* lib = path ? path : std::getenv("HETCCL_HIP_RUNTIME_LIB");
    void* h = dlopen(lib ? lib : FAKEHIP_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      std::fprintf(stderr, "cannot open the fake runtime: %s\n", dlerror());
      std::abort();
    }
    Fake x{};
    x.stats = reinterpret_cast<decltype(x.stats)>(dlsym(h, "fakehipStats"));
    x.failCall = reinterpret_cast<decltype(x.failCall)>(dlsym(h, "fakehipFailCall"));
    x.callCount = reinterpret_cast<decltype(x.callCount)>(dlsym(h, "fakehipCallCount"));
    x.setCapturing = reinterpret_cast<decltype(x.setCapturing)>(dlsym(h, "fakehipSetCapturing"));
    x.pendingOps = reinterpret_cast<decltype(x.pendingOps)>(dlsym(h, "fakehipPendingOps"));
    x.lastBadAccess = reinterpret_cast<decltype(x.lastBadAccess)>(dlsym(h, "fakehipLastBadAccess"));
    x.knowsKernel = reinterpret_cast<decltype(x.knowsKernel)>(dlsym(h, "fakehipKnowsKernel"));
    if (!x.stats || !x.failCall || !x.callCount || !x.setCapturing || !x.pendingOps || !x.lastBadAccess || !x.knowsKernel) {
      std::fprintf(stderr, "the fake runtime lacks its control functions\n");
      std::abort();
    }
    return x;
  }();
  return f;
}

ChildResult runScenario(const std::string& name, const std::vector<std::pair<std::string, std::string>>& env) {
  ChildResult result;
  std::vector<std::string> vars;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    bool overridden = false;
    for (const auto& [k, v] : env) overridden = overridden || k == key;
    if (!overridden) vars.push_back(kv);
  }
  for (const auto& [k, v] : env)
    if (!v.empty()) vars.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  int outPipe[2], errPipe[2];
  if (pipe(outPipe) != 0 || pipe(errPipe) != 0) return result;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(outPipe[1], 1);
    dup2(errPipe[1], 2);
    close(outPipe[0]);
    close(errPipe[0]);
    const char* argv[] = {"unit_hip_plugin", "--scenario", name.c_str(), nullptr};
    execve("/proc/self/exe", const_cast<char**>(argv), envp.data());
    _exit(127);
  }
  close(outPipe[1]);
  close(errPipe[1]);
  pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open = 2;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (open > 0 && std::chrono::steady_clock::now() < deadline) {
    if (::poll(fds, 2, 200) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      } else {
        sinks[i]->append(buf, n);
      }
    }
  }
  if (open > 0) kill(pid, SIGKILL);  // hung: reported as a failure by the status
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  int status = 0;
  waitpid(pid, &status, 0);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::istringstream lines(result.out);
  for (std::string line; std::getline(lines, line);)
    if (const size_t eq = line.find('='); eq != std::string::npos) result.values[line.substr(0, eq)] = line.substr(eq + 1);
  return result;
}

std::string makeTempDir(const char* tag) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/hetccl-hip-" + tag + "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) return "";
  return buf.data();
}

void removeTree(const std::string& path) {
  if (path.empty()) return;
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      const std::string full = path + "/" + n;
      struct stat st{};
      if (lstat(full.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        removeTree(full);
      else
        unlink(full.c_str());
    }
    closedir(d);
  }
  rmdir(path.c_str());
}

std::vector<std::string> listFiles(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') names.push_back(dir + "/" + e->d_name);
    closedir(d);
  }
  return names;
}

bool eventually(int ms, const std::function<bool()>& ready) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

}  // namespace hip_test

// The test binary: `--scenario NAME` runs one child scenario (no gtest); otherwise the gtest cases, with
// the fake runtime as this process's HIP runtime (2 devices, a private kernel cache).
int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--scenario") == 0) return hip_test::scenarioMain(argv[2]);
  setenv("HETCCL_HIP_RUNTIME_LIB", FAKEHIP_LIB, 0);
  setenv("HETCCL_HIPRTC_LIB", FAKEHIP_LIB, 0);
  setenv("FAKEHIP_DEVICES", "2", 0);
  hip_test::gTempRoot = hip_test::makeTempDir("cache");
  setenv("HETCCL_HIP_KERNEL_CACHE", hip_test::gTempRoot.c_str(), 0);
  testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  hip_test::removeTree(hip_test::gTempRoot);
  return rc;
}
