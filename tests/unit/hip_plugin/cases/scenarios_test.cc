// Configurations of the HIP runtime that need a fresh process each (the plugin initialises once per
// process): every case runs `unit_hip_plugin --scenario NAME` (scenarios.cc) with its own environment.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "device/hip/hip_api.hpp"
#include "device/hip/kernel_abi.hpp"
#include "harness.hpp"
#include "hip_types.hpp"

namespace hip_test {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

std::string describe(const ChildResult& r) { return "stdout:\n" + r.out + "stderr:\n" + r.err; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(HipPluginInit, NoRuntimeNamesWhatWasTried) {
  const ChildResult r = runScenario("init", {{"HETCCL_HIP_RUNTIME_LIB", "/nonexistent/libamdhip64.so.6"}});
  ASSERT_EQ(r.status, 0) << describe(r);
  EXPECT_EQ(r.num("init"), HETCCL_GPU_ERR_NO_DEVICE) << describe(r);
  EXPECT_TRUE(contains(r.get("error"), "/nonexistent/libamdhip64.so.6")) << describe(r);
}

TEST(HipPluginInit, DefaultSearchWithoutTheFake) {
  // Without HETCCL_HIP_RUNTIME_LIB the plugin searches libamdhip64.so.7/.6/.5: on a machine without ROCm it
  // fails naming them; with a ROCm runtime but no GPU it fails naming the runtime it opened.
  const ChildResult r = runScenario("init", {{"HETCCL_HIP_RUNTIME_LIB", ""}});
  ASSERT_EQ(r.status, 0) << describe(r);
  if (r.num("init") == HETCCL_GPU_OK) return;  // a real AMD GPU: nothing to check here
  EXPECT_EQ(r.num("init"), HETCCL_GPU_ERR_NO_DEVICE) << describe(r);
  EXPECT_TRUE(contains(r.get("error"), "libamdhip64.so")) << describe(r);
}

TEST(HipPluginInit, NoDevice) {
  const ChildResult r = runScenario("init", {{"FAKEHIP_NO_DEVICE", "1"}});
  EXPECT_EQ(r.num("init"), HETCCL_GPU_ERR_NO_DEVICE) << describe(r);
  EXPECT_TRUE(contains(r.get("error"), "hipGetDeviceCount")) << describe(r);
  EXPECT_TRUE(contains(r.get("error"), "hipErrorNoDevice")) << describe(r);
}

TEST(HipPluginInit, MissingRequiredSymbol) {
  const ChildResult r = runScenario("init", {{"HETCCL_HIP_RUNTIME_LIB", FAKEHIP_LIB_MISSING}});
  EXPECT_EQ(r.num("init"), HETCCL_GPU_ERR_RUNTIME) << describe(r);
  EXPECT_TRUE(contains(r.get("error"), "hipStreamQuery")) << describe(r);
}

TEST(HipPluginInit, InjectedDeviceCountFailure) {
  const ChildResult r = runScenario("init", {{"FAKEHIP_FAIL", "hipGetDeviceCount:1:999"}});
  EXPECT_EQ(r.num("init"), HETCCL_GPU_ERR_RUNTIME) << describe(r);
  EXPECT_TRUE(contains(r.get("error"), "hipGetDeviceCount: hipErrorUnknown")) << describe(r);
}

// Per-major handling: versions, hipMemoryType values, unregistered host pointers, properties entry points.
struct VersionCase {
  const char* lib;
  const char* version;
  const char* unregistered;  // FAKEHIP_UNREGISTERED_PTR: "" (the version's behaviour), "error", "success"
  long expected;
};

TEST(HipPluginVersions, EachMajorReportsAndClassifiesPointers) {
  const VersionCase cases[] = {
      {FAKEHIP_LIB_ROCM5, "50700", "", 5070},
      {FAKEHIP_LIB, "60200", "", 6020},
      {FAKEHIP_LIB, "60241134", "success", 6020},
      {FAKEHIP_LIB, "70000", "", 7000},
      {FAKEHIP_LIB, "70100", "error", 7010},
  };
  for (const VersionCase& c : cases) {
    SCOPED_TRACE(std::string(c.lib) + " " + c.version + " " + c.unregistered);
    const ChildResult r = runScenario("probe", {{"HETCCL_HIP_RUNTIME_LIB", c.lib},
                                                {"HETCCL_HIPRTC_LIB", c.lib},
                                                {"FAKEHIP_VERSION", c.version},
                                                {"FAKEHIP_UNREGISTERED_PTR", c.unregistered}});
    ASSERT_EQ(r.num("init"), HETCCL_GPU_OK) << describe(r);
    EXPECT_EQ(r.num("runtime_version"), c.expected) << describe(r);
    EXPECT_EQ(r.get("ptr_device"), "device") << describe(r);
    EXPECT_EQ(r.get("ptr_pinned"), "pinned") << describe(r);
    EXPECT_EQ(r.get("ptr_registered"), "pinned") << describe(r);
    EXPECT_EQ(r.get("ptr_host"), "host") << describe(r);
    EXPECT_EQ(r.num("reduce_ok"), 1) << describe(r);
    EXPECT_EQ(r.num("compiles"), 0) << "gfx90a is built in whatever the properties entry point; " << describe(r);
    EXPECT_EQ(r.num("wait_blocks"), 1) << describe(r);
    EXPECT_EQ(r.num("wait_released"), 1) << describe(r);
    EXPECT_EQ(r.num("bad_accesses"), 0) << describe(r);
  }
}

// Flags without stream memory operations: the polling / writing kernels keep the same ordering.
TEST(HipPluginFlags, NoStreamMemopsAttributeUsesKernels) {
  const ChildResult r = runScenario("probe", {{"FAKEHIP_NO_STREAM_MEMOPS", "1"}});
  ASSERT_EQ(r.num("init"), HETCCL_GPU_OK) << describe(r);
  EXPECT_EQ(r.num("native"), 0) << describe(r);
  EXPECT_EQ(r.num("wait_blocks"), 1) << describe(r);
  EXPECT_EQ(r.num("wait_released"), 1) << describe(r);
  EXPECT_EQ(r.num("wait_value_ops"), 0) << describe(r);
  EXPECT_GE(r.num("launches"), 3) << describe(r);  // reduce + wait + write kernels
}

TEST(HipPluginFlags, NoStreamMemopSymbolsUsesKernels) {
  const ChildResult r = runScenario("probe", {{"HETCCL_HIP_RUNTIME_LIB", FAKEHIP_LIB_NOMEMOPS},
                                              {"HETCCL_HIPRTC_LIB", FAKEHIP_LIB_NOMEMOPS}});
  ASSERT_EQ(r.num("init"), HETCCL_GPU_OK) << describe(r);
  EXPECT_EQ(r.num("native"), 0) << describe(r);
  EXPECT_EQ(r.num("wait_blocks"), 1) << describe(r);
  EXPECT_EQ(r.num("wait_released"), 1) << describe(r);
}

TEST(HipPluginFlags, NativeByDefault) {
  const ChildResult r = runScenario("probe", {});
  ASSERT_EQ(r.num("init"), HETCCL_GPU_OK) << describe(r);
  EXPECT_EQ(r.num("native"), 1) << describe(r);
  EXPECT_EQ(r.num("wait_value_ops"), 1) << describe(r);
  EXPECT_EQ(r.num("wait_blocks"), 1) << describe(r);
}

// Code object choice: an architecture without a built-in object is compiled by hiprtc once, then found in
// the cache by later processes; a cache entry that does not load is compiled again and replaced.
TEST(HipPluginCodeObjects, HiprtcCompileOnceThenCache) {
  const std::string cache = makeTempDir("rtc");
  const Env env = {{"FAKEHIP_ARCH", "gfx942:sramecc+:xnack-"}, {"HETCCL_HIP_KERNEL_CACHE", cache}};
  auto run = [&](const char* what, long compiles) {
    SCOPED_TRACE(what);
    const ChildResult r = runScenario("probe", env);
    EXPECT_EQ(r.num("init"), HETCCL_GPU_OK) << describe(r);
    EXPECT_EQ(r.num("reduce_ok"), 1) << describe(r);
    EXPECT_EQ(r.num("compiles"), compiles) << describe(r);
    EXPECT_EQ(r.num("bad_accesses"), 0) << describe(r);
    return r;
  };
  run("first process: compiles", 1);
  std::vector<std::string> files = listFiles(cache);
  ASSERT_EQ(files.size(), 1u) << "one cache entry expected";
  EXPECT_TRUE(contains(files[0], "gfx942")) << files[0];
  run("second process: cached", 0);

  // Garbage of the same size.
  {
    std::ifstream in(files[0], std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(files[0], std::ios::binary | std::ios::trunc) << std::string(bytes.size(), 'x');
  }
  run("garbage entry: recompiled", 1);
  run("replaced entry: cached", 0);

  // A valid ELF for another architecture (EF_AMDGPU_MACH of gfx90a): the runtime refuses it.
  {
    std::fstream f(files[0], std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(48);  // e_flags of an ELF64 header
    const char gfx90a = 0x3f;
    f.write(&gfx90a, 1);
  }
  run("foreign architecture entry: recompiled", 1);
  run("replaced again: cached", 0);
  EXPECT_EQ(listFiles(cache).size(), 1u) << "temporary files left behind";
  removeTree(cache);
}

// A truncated cache entry that still starts with an ELF header must not reach hipModuleLoadData, which has
// no size argument and reads as far as the ELF headers say (the plugin checks that its header tables and
// sections lie within the file, kernels.cc looksLikeCodeObject): it is compiled again.
TEST(HipPluginCodeObjects, TruncatedCacheEntryIsNotReadPastItsEnd) {
  const std::string cache = makeTempDir("trunc");
  const Env env = {{"FAKEHIP_ARCH", "gfx942"}, {"HETCCL_HIP_KERNEL_CACHE", cache}};
  ChildResult r = runScenario("probe", env);
  ASSERT_EQ(r.num("compiles"), 1) << describe(r);
  const std::vector<std::string> files = listFiles(cache);
  ASSERT_EQ(files.size(), 1u);
  ASSERT_EQ(truncate(files[0].c_str(), 200), 0);
  r = runScenario("probe", env);
  EXPECT_EQ(r.num("reduce_ok"), 1) << describe(r);
  EXPECT_EQ(r.num("compiles"), 1) << describe(r);
  EXPECT_EQ(r.num("bad_accesses"), 0) << "the truncated entry was read past its end; " << describe(r);
  removeTree(cache);
}

TEST(HipPluginCodeObjects, CacheOffCompilesEveryTime) {
  const std::string cache = makeTempDir("off");
  for (int i = 0; i < 2; ++i) {
    const ChildResult r = runScenario("probe", {{"FAKEHIP_ARCH", "gfx942"}, {"HETCCL_HIP_KERNEL_CACHE", "off"},
                                                {"XDG_CACHE_HOME", cache}, {"HOME", cache}});
    EXPECT_EQ(r.num("reduce_ok"), 1) << describe(r);
    EXPECT_EQ(r.num("compiles"), 1) << describe(r);
  }
  EXPECT_TRUE(listFiles(cache).empty());
  removeTree(cache);
}

TEST(HipPluginCodeObjects, CompileFailureNamesHiprtc) {
  const std::string cache = makeTempDir("fail");
  const ChildResult r = runScenario("probe", {{"FAKEHIP_ARCH", "gfx942"}, {"HETCCL_HIP_KERNEL_CACHE", cache},
                                              {"FAKEHIP_FAIL", "hiprtcCompileProgram"}});
  EXPECT_EQ(r.num("init"), HETCCL_GPU_OK) << describe(r);  // kernels load at first use
  EXPECT_EQ(r.num("reduce_rc"), HETCCL_GPU_ERR_RUNTIME) << describe(r);
  EXPECT_TRUE(contains(r.get("reduce_error"), "hiprtcCompileProgram")) << describe(r);
  EXPECT_TRUE(contains(r.get("reduce_error"), "HIPRTC_ERROR_COMPILATION")) << describe(r);
  EXPECT_TRUE(listFiles(cache).empty()) << "a failed compilation left a cache entry";
  removeTree(cache);
}

// Every architecture this build embeds (HIP_BUILT_ARCHS, from HETCCL_HIP_OFFLOAD_ARCHS; by default gfx90a,
// gfx940 and gfx1100), also named with target features as devices report it.
TEST(HipPluginCodeObjects, BuiltInArchitecturesNeedNoCompiler) {
  std::vector<std::string> archs;
  for (std::string rest = HIP_BUILT_ARCHS; !rest.empty();) {
    const size_t comma = rest.find(',');
    archs.push_back(rest.substr(0, comma));
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
  }
  ASSERT_FALSE(archs.empty());
  archs.push_back(archs.front() + ":sramecc+:xnack-");
  for (const std::string& arch : archs) {
    SCOPED_TRACE(arch);
    const ChildResult r = runScenario("probe", {{"FAKEHIP_ARCH", arch}, {"HETCCL_HIPRTC_LIB", "/nonexistent/libhiprtc.so"}});
    EXPECT_EQ(r.num("reduce_ok"), 1) << describe(r);
    EXPECT_EQ(r.num("compiles"), 0) << describe(r);
    EXPECT_EQ(r.num("module_load_failures"), 0) << describe(r);
  }
}

// Several processes, each with its own fake runtime, synchronise through one registered shared segment.
TEST(HipPluginProcesses, SharedSegmentPingPong) {
  const std::string name = "/hetccl-hip-test-" + std::to_string(getpid());
  const int fd = shm_open(name.c_str(), O_CREAT | O_RDWR | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 4096), 0);
  close(fd);
  ChildResult first, second;
  std::thread a([&] { first = runScenario("shm_peer", {{"HIP_TEST_SHM", name}, {"HIP_TEST_ROLE", "first"}}); });
  std::thread b([&] { second = runScenario("shm_peer", {{"HIP_TEST_SHM", name}, {"HIP_TEST_ROLE", "second"}}); });
  a.join();
  b.join();
  shm_unlink(name.c_str());
  EXPECT_EQ(first.num("rc"), 0) << describe(first);
  EXPECT_EQ(second.num("rc"), 0) << describe(second);
  EXPECT_EQ(first.num("word2"), 7) << describe(first);
}

// The plugin's header and the fake agree on the HIP values both were written from (ROCm's headers).
TEST(HipPluginAbi, ConstantsAndKernelNamesAgreeWithTheFake) {
  namespace api = hetccl::hip_plugin::api;
  namespace abi = hetccl::hip_plugin::abi;
  EXPECT_EQ(api::hipErrorInvalidValue, fakehip::hipErrorInvalidValue);
  EXPECT_EQ(api::hipErrorOutOfMemory, fakehip::hipErrorOutOfMemory);
  EXPECT_EQ(api::hipErrorNotInitialized, fakehip::hipErrorNotInitialized);
  EXPECT_EQ(api::hipErrorInsufficientDriver, fakehip::hipErrorInsufficientDriver);
  EXPECT_EQ(api::hipErrorNoDevice, fakehip::hipErrorNoDevice);
  EXPECT_EQ(api::hipErrorInvalidDevice, fakehip::hipErrorInvalidDevice);
  EXPECT_EQ(api::hipErrorInvalidImage, fakehip::hipErrorInvalidImage);
  EXPECT_EQ(api::hipErrorNoBinaryForGpu, fakehip::hipErrorNoBinaryForGpu);
  EXPECT_EQ(api::hipErrorSharedObjectInitFailed, fakehip::hipErrorSharedObjectInitFailed);
  EXPECT_EQ(api::hipErrorNotFound, fakehip::hipErrorNotFound);
  EXPECT_EQ(api::hipErrorNotReady, fakehip::hipErrorNotReady);
  EXPECT_EQ(api::hipErrorNotSupported, fakehip::hipErrorNotSupported);
  EXPECT_EQ(api::hipErrorStreamCaptureUnsupported, fakehip::hipErrorStreamCaptureUnsupported);
  EXPECT_EQ(api::hipMemcpyDefault, fakehip::hipMemcpyDefault);
  EXPECT_EQ(api::hipStreamNonBlocking, fakehip::hipStreamNonBlocking);
  EXPECT_EQ(api::hipEventDisableTiming, fakehip::hipEventDisableTiming);
  EXPECT_EQ(api::hipHostMallocPortable, fakehip::hipHostMallocPortable);
  EXPECT_EQ(api::hipHostMallocMapped, fakehip::hipHostMallocMapped);
  EXPECT_EQ(api::hipHostRegisterPortable, fakehip::hipHostRegisterPortable);
  EXPECT_EQ(api::hipHostRegisterMapped, fakehip::hipHostRegisterMapped);
  EXPECT_EQ(api::hipStreamWaitValueGte, fakehip::hipStreamWaitValueGte);
  EXPECT_EQ(api::hipStreamWaitValueEq, fakehip::hipStreamWaitValueEq);
  EXPECT_EQ(api::hipStreamCaptureStatusActive, fakehip::hipStreamCaptureStatusActive);
  EXPECT_EQ(api::hipStreamCaptureModeRelaxed, fakehip::hipStreamCaptureModeRelaxed);
  EXPECT_EQ(api::hipDeviceAttributeMultiprocessorCount, fakehip::hipDeviceAttributeMultiprocessorCount);
  EXPECT_EQ(api::hipDeviceAttributeCanUseStreamWaitValue, fakehip::hipDeviceAttributeCanUseStreamWaitValue);
  EXPECT_EQ(api::MemoryType5::kHost, fakehip::hipMemoryTypeHost_v5);
  EXPECT_EQ(api::MemoryType5::kDevice, fakehip::hipMemoryTypeDevice_v5);
  EXPECT_EQ(api::MemoryType6::kUnregistered, fakehip::hipMemoryTypeUnregistered);
  EXPECT_EQ(api::MemoryType6::kHost, fakehip::hipMemoryTypeHost);
  EXPECT_EQ(api::MemoryType6::kDevice, fakehip::hipMemoryTypeDevice);
  EXPECT_EQ(api::MemoryType6::kManaged, fakehip::hipMemoryTypeManaged);
  EXPECT_EQ(api::kGcnArchNameOffsetR0600, 1160u);
  EXPECT_EQ(api::kGcnArchNameOffsetR0000, 396u);
  char name[64];
  for (int t = 0; t < abi::kNumTypes; ++t) {
    for (int op = 0; op < abi::kNumKernelOps; ++op) {
      abi::elementwiseKernelName(name, sizeof name, abi::ElementwiseKind::kReduce, t, op);
      EXPECT_TRUE(fake(FAKEHIP_LIB).knowsKernel(name)) << name;
    }
    abi::elementwiseKernelName(name, sizeof name, abi::ElementwiseKind::kScale, t, 0);
    EXPECT_TRUE(fake(FAKEHIP_LIB).knowsKernel(name)) << name;
    abi::elementwiseKernelName(name, sizeof name, abi::ElementwiseKind::kDivide, t, 0);
    EXPECT_TRUE(fake(FAKEHIP_LIB).knowsKernel(name)) << name;
  }
  for (const char* k : {abi::kWaitFlagKernel, abi::kWriteFlagKernel, abi::kStreamOpsKernel})
    EXPECT_TRUE(fake(FAKEHIP_LIB).knowsKernel(k)) << k;
  EXPECT_FALSE(fake(FAKEHIP_LIB).knowsKernel("hetccl_reduce_f32_avg"));
}

}  // namespace
}  // namespace hip_test
