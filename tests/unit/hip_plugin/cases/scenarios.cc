// The child side of the configuration tests (scenarios_test.cc): `unit_hip_plugin --scenario NAME` loads
// the plugin in a fresh process with the environment the parent chose, exercises it and prints what it
// saw as key=value lines; the parent asserts on them. Exit code 0 unless the scenario could not run.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"

namespace hip_test {
namespace {

void put(const char* key, const std::string& value) { std::printf("%s=%s\n", key, value.c_str()); }
void put(const char* key, long value) { std::printf("%s=%ld\n", key, value); }

std::string memTypeName(int t) {
  switch (t) {
    case HETCCL_GPU_MEM_HOST: return "host";
    case HETCCL_GPU_MEM_PINNED: return "pinned";
    case HETCCL_GPU_MEM_DEVICE: return "device";
    case HETCCL_GPU_MEM_MANAGED: return "managed";
    default: return "?";
  }
}

void putStats() {
  const fakehipStats_t s = fake().snapshot();
  put("compiles", static_cast<long>(s.compiles));
  put("compile_failures", static_cast<long>(s.compileFailures));
  put("module_loads", static_cast<long>(s.moduleLoads));
  put("module_load_failures", static_cast<long>(s.moduleLoadFailures));
  put("wait_value_ops", static_cast<long>(s.waitValueOps));
  put("launches", static_cast<long>(s.launches));
  put("bad_accesses", static_cast<long>(s.badAccesses));
}

/// Everything a configuration changes: versions, pointer kinds, flag method and ordering, kernels.
int probe(const hetcclGpuPlugin_t& p) {
  int runtime = 0, driver = 0;
  put("versions_rc", p.versions(&runtime, &driver));
  put("runtime_version", runtime);
  int count = 0;
  p.deviceCount(&count);
  put("devices", count);
  int native = -1;
  put("flag_method_rc", p.flagMethod(&native));
  put("native", native);

  void *dev = nullptr, *pinned = nullptr, *stream = nullptr;
  if (p.allocDevice(&dev, 8192) || p.allocPinned(&pinned, 4096) || p.streamCreate(&stream)) {
    put("alloc_error", p.lastError());
    return 0;
  }
  std::vector<char> registered(4096), plain(64);
  p.hostRegister(registered.data(), registered.size());
  const std::pair<const char*, void*> pointers[] = {
      {"ptr_device", dev}, {"ptr_pinned", pinned}, {"ptr_registered", registered.data()}, {"ptr_host", plain.data()}};
  for (const auto& [key, ptr] : pointers) {
    int type = -1, device = -2;
    const int rc = p.pointerQuery(ptr, &type, &device);
    put(key, rc == HETCCL_GPU_OK ? memTypeName(type) : "error: " + std::string(p.lastError()));
  }

  // Kernels: a float sum on device memory.
  std::vector<float> a(1000), b(1000), got(1000);
  for (int i = 0; i < 1000; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 0.5f;
  }
  auto* da = static_cast<float*>(dev);
  float* db = da + 1000;
  int rc = p.memcpySync(da, a.data(), 4000);
  if (!rc) rc = p.memcpySync(db, b.data(), 4000);
  if (!rc) rc = p.reduce(da, db, 1000, /*float32*/ 7, /*sum*/ 0, stream);
  if (!rc) rc = p.streamSynchronize(stream);
  if (!rc) rc = p.memcpySync(got.data(), da, 4000);
  bool right = rc == HETCCL_GPU_OK;
  for (int i = 0; right && i < 1000; ++i) right = got[i] == static_cast<float>(i) + 0.5f;
  put("reduce_rc", rc);
  put("reduce_ok", right ? 1 : 0);
  if (rc) put("reduce_error", p.lastError());

  // A flag wait holds a later flag write until the host writes the flag.
  auto* flags = static_cast<uint64_t*>(pinned);
  rc = p.streamWaitFlag(stream, flags, 1, 0);
  if (!rc) rc = p.streamWriteFlag(stream, flags + 1, 5, 0);
  put("flag_rc", rc);
  if (!rc) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    put("wait_blocks", __atomic_load_n(flags + 1, __ATOMIC_ACQUIRE) == 0 ? 1 : 0);
    __atomic_store_n(flags, 1, __ATOMIC_RELEASE);
    put("sync_rc", p.streamSynchronize(stream));
    put("wait_released", __atomic_load_n(flags + 1, __ATOMIC_ACQUIRE) == 5 ? 1 : 0);
  } else {
    put("flag_error", p.lastError());
  }
  p.hostUnregister(registered.data());
  p.streamDestroy(stream);
  p.freeDevice(dev);
  p.freePinned(pinned);
  putStats();
  return 0;
}

/// Two processes ping-pong through a registered shared-memory segment (HIP_TEST_SHM names it): the
/// "first" writes word 0 from its stream and waits for word 1; the "second" waits for word 0, then writes
/// word 1. Each process loads its own fake runtime.
int shmPeer(const hetcclGpuPlugin_t& p) {
  const char* name = std::getenv("HIP_TEST_SHM");
  const bool first = std::getenv("HIP_TEST_ROLE") && std::strcmp(std::getenv("HIP_TEST_ROLE"), "first") == 0;
  const int fd = name ? shm_open(name, O_RDWR, 0600) : -1;
  if (fd < 0) return 4;
  void* seg = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (seg == MAP_FAILED) return 5;
  auto* w = static_cast<uint64_t*>(seg);
  void* stream = nullptr;
  int rc = p.hostRegister(seg, 4096);
  if (!rc) rc = p.streamCreate(&stream);
  if (!rc && first) {
    rc = p.streamWriteFlag(stream, w + 0, 1, HETCCL_GPU_FLAG_FORCE_KERNEL);
    if (!rc) rc = p.streamWaitFlag(stream, w + 1, 1, 0);
    if (!rc) rc = p.streamWriteFlag(stream, w + 2, 7, 0);
  } else if (!rc) {
    rc = p.streamWaitFlag(stream, w + 0, 1, HETCCL_GPU_FLAG_FORCE_KERNEL);
    if (!rc) rc = p.streamWriteFlag(stream, w + 1, 1, 0);
  }
  if (!rc) rc = p.streamSynchronize(stream);
  put("rc", rc);
  if (rc) put("error", p.lastError());
  put("word2", static_cast<long>(__atomic_load_n(w + 2, __ATOMIC_ACQUIRE)));
  p.streamDestroy(stream);
  p.hostUnregister(seg);
  munmap(seg, 4096);
  return 0;
}

}  // namespace

int scenarioMain(const std::string& name) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (name == "fake_ipc_peer") return fakeIpcPeer();
  std::string error;
  const hetcclGpuPlugin_t* p = loadPluginStruct(&error);
  if (!p) {
    put("load_error", error);
    return 3;
  }
  const int rc = p->init(nullptr);
  put("init", rc);
  put("error", p->lastError());
  if (rc != HETCCL_GPU_OK) return 0;
  if (name == "probe") return probe(*p);
  if (name == "shm_peer") return shmPeer(*p);
  if (name == "init") return 0;
  put("unknown_scenario", name);
  return 2;
}

}  // namespace hip_test
