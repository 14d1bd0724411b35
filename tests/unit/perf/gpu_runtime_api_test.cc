// hetccl-perf's GPU runtime loader (tools/hetccl-perf/gpu_runtime_api.cc): the per-vendor specs, the
// loader over a fake runtime (prefix "fakegpu", HETCCL_PERF_FAKE_RUNTIME), its errors, the choice of
// -G / --device gpu, and the real HIP runtime of this host when it has no device.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_runtime_api.hpp"

namespace hetccl::perf {
namespace {

GpuRuntimeSpec fakeSpec(std::vector<std::string> libraries = {HETCCL_PERF_FAKE_RUNTIME}) {
  return GpuRuntimeSpec{"fake", "FAKE", "fakegpu", std::move(libraries), "build the fake", "libhetccl-fake.so"};
}

template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GpuRuntimeSpec, VendorsDifferOnlyInTheirSpec) {
  const GpuRuntimeSpec& cuda = gpuRuntimeSpec(GpuVendor::Cuda);
  EXPECT_EQ(cuda.device, "cuda");
  EXPECT_EQ(cuda.displayName, "CUDA");
  EXPECT_EQ(cuda.symbolPrefix, "cuda");
  EXPECT_EQ(cuda.plugin, "libhetccl-cuda.so");
  EXPECT_EQ(cuda.libraries, (std::vector<std::string>{"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                                       "/usr/local/cuda/lib64/libcudart.so",
                                                       "/usr/local/cuda/lib64/libcudart.so.13",
                                                       "/usr/local/cuda/lib64/libcudart.so.12"}));
  const GpuRuntimeSpec& hip = gpuRuntimeSpec(GpuVendor::Hip);
  EXPECT_EQ(hip.device, "hip");
  EXPECT_EQ(hip.displayName, "HIP");
  EXPECT_EQ(hip.symbolPrefix, "hip");
  EXPECT_EQ(hip.plugin, "libhetccl-hip.so");
  EXPECT_EQ(hip.libraries, (std::vector<std::string>{"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
                                                      "libamdhip64.so", "/opt/rocm/lib/libamdhip64.so.7",
                                                      "/opt/rocm/lib/libamdhip64.so.6", "/opt/rocm/lib/libamdhip64.so.5",
                                                      "/opt/rocm/lib/libamdhip64.so"}));
}

TEST(GpuRuntimeApi, FakeRuntimeThroughItsPrefix) {
  setenv("FAKEGPU_DEVICES", "3", 1);
  GpuRuntimeApi gpu(fakeSpec());
  EXPECT_EQ(gpu.libraryName(), HETCCL_PERF_FAKE_RUNTIME);
  EXPECT_EQ(gpu.deviceCount(), 3);
  gpu.setDevice(2);
  void* stream = gpu.createStream();
  ASSERT_NE(stream, nullptr);
  const std::string text = "device bytes";
  void* dev = gpu.allocDevice(text.size());
  gpu.copyToDevice(dev, text.data(), text.size());
  std::string back(text.size(), '\0');
  gpu.copyToHost(back.data(), dev, back.size());
  EXPECT_EQ(back, text);
  gpu.synchronizeStream(stream);
  gpu.synchronizeDevice();
  gpu.freeDevice(dev);
  gpu.freeDevice(nullptr);
  gpu.destroyStream(stream);
  gpu.destroyStream(nullptr);
  { DeviceMemory owned(gpu, 0); EXPECT_NE(owned.data(), nullptr); }  // at least one byte
}

TEST(GpuRuntimeApi, ErrorsNameTheCallTheVendorAndTheLibrary) {
  setenv("FAKEGPU_DEVICES", "2", 1);
  GpuRuntimeApi gpu(fakeSpec());
  const std::string e = errorOf([&] { gpu.setDevice(5); });
  EXPECT_EQ(e, std::string("--device fake: fakegpuSetDevice(5) failed: fakegpuErrorInvalidDevice (FAKE error 101, ") +
                   HETCCL_PERF_FAKE_RUNTIME + ")");
  EXPECT_NE(errorOf([&] { gpu.synchronizeStream(&gpu); }).find("fakegpuStreamSynchronize failed: fakegpuErrorInvalidHandle"),
            std::string::npos);
}

TEST(GpuRuntimeApi, NoDeviceIsAClearError) {
  setenv("FAKEGPU_DEVICES", "-1", 1);  // the count call fails (as hipGetDeviceCount does without a GPU)
  GpuRuntimeApi gpu(fakeSpec());
  EXPECT_NE(errorOf([&] { gpu.deviceCount(); }).find("--device fake: fakegpuGetDeviceCount failed: fakegpuErrorNoDevice (FAKE error 100"),
            std::string::npos);
  setenv("FAKEGPU_DEVICES", "0", 1);  // the count call succeeds with 0
  EXPECT_EQ(errorOf([&] { gpu.deviceCount(); }), "--device fake: no FAKE device is visible (fakegpuGetDeviceCount gave 0)");
}

TEST(GpuRuntimeApi, NoLibraryListsEveryNameTried) {
  const std::string e = errorOf([] { GpuRuntimeApi gpu(fakeSpec({"libnothing-here.so.9", "/nowhere/libnothing.so"})); });
  EXPECT_NE(e.find("--device fake: cannot open the FAKE runtime library (build the fake); tried:"), std::string::npos) << e;
  EXPECT_NE(e.find("\n  libnothing-here.so.9: "), std::string::npos) << e;
  EXPECT_NE(e.find("\n  /nowhere/libnothing.so: "), std::string::npos) << e;
}

TEST(GpuRuntimeApi, MissingFunctionIsNamed) {
  GpuRuntimeSpec spec = fakeSpec();
  spec.symbolPrefix = "nosuch";  // the fake library opens, but has no nosuchSetDevice
  const std::string e = errorOf([&] { GpuRuntimeApi gpu(spec); });
  EXPECT_EQ(e, std::string("--device fake: ") + HETCCL_PERF_FAKE_RUNTIME + " has no function nosuchSetDevice");
}

// The real HIP runtime of this host (Debian's libamdhip64.so.5 in CI, no GPU): opened from the HIP spec,
// hipGetDeviceCount's error is reported, promptly. Skipped where no HIP runtime is installed or a HIP
// device is present.
TEST(GpuRuntimeApi, RealHipRuntimeWithoutDevice) {
  GpuRuntimeApi* hip = nullptr;
  try {
    hip = &GpuRuntimeApi::instance(GpuVendor::Hip);
  } catch (const std::runtime_error& e) {
    GTEST_SKIP() << "no HIP runtime here: " << e.what();
  }
  int count = 0;
  std::string e;
  try {
    count = hip->deviceCount();
  } catch (const std::runtime_error& err) {
    e = err.what();
  }
  if (e.empty()) GTEST_SKIP() << "a HIP device is present (" << count << ")";
  EXPECT_TRUE(e.find("--device hip: hipGetDeviceCount failed: ") == 0 ||
              e.find("--device hip: no HIP device is visible (hipGetDeviceCount gave 0)") == 0)
      << e;
  EXPECT_NE(e.find(hip->libraryName()), std::string::npos) << e;
}

TEST(ChooseGpuVendor, HetcclDeviceNamesTheVendor) {
  int probes = 0;
  auto probe = [&](GpuVendor) {
    ++probes;
    return std::string();
  };
  GpuChoice c = chooseGpuVendor("hip", probe);
  EXPECT_EQ(c.vendor, GpuVendor::Hip);
  EXPECT_EQ(c.reason, "HETCCL_DEVICE=hip");
  c = chooseGpuVendor("cuda", probe);
  EXPECT_EQ(c.vendor, GpuVendor::Cuda);
  EXPECT_EQ(c.reason, "HETCCL_DEVICE=cuda");
  EXPECT_EQ(probes, 0);  // named vendors are not probed: their own errors come when they are used
}

TEST(ChooseGpuVendor, AutoTriesCudaThenHip) {
  std::vector<GpuVendor> asked;
  auto cudaOk = [&](GpuVendor v) {
    asked.push_back(v);
    return std::string();
  };
  GpuChoice c = chooseGpuVendor("auto", cudaOk);
  EXPECT_EQ(c.vendor, GpuVendor::Cuda);
  EXPECT_NE(c.reason.find("HETCCL_DEVICE=auto"), std::string::npos);
  EXPECT_EQ(asked, (std::vector<GpuVendor>{GpuVendor::Cuda}));

  asked.clear();
  auto onlyHip = [&](GpuVendor v) {
    asked.push_back(v);
    return v == GpuVendor::Cuda ? std::string("no CUDA device") : std::string();
  };
  c = chooseGpuVendor("", onlyHip);  // unset = auto
  EXPECT_EQ(c.vendor, GpuVendor::Hip);
  EXPECT_NE(c.reason.find("HETCCL_DEVICE=auto"), std::string::npos);
  EXPECT_NE(c.reason.find("HIP"), std::string::npos);
  EXPECT_EQ(asked, (std::vector<GpuVendor>{GpuVendor::Cuda, GpuVendor::Hip}));
}

TEST(ChooseGpuVendor, ClearErrors) {
  auto none = [](GpuVendor v) { return v == GpuVendor::Cuda ? std::string("cuda says no") : std::string("hip says no"); };
  const std::string e = errorOf([&] { chooseGpuVendor("auto", none); });
  EXPECT_NE(e.find("neither GPU runtime is usable"), std::string::npos) << e;
  EXPECT_NE(e.find("CUDA: cuda says no"), std::string::npos) << e;
  EXPECT_NE(e.find("HIP: hip says no"), std::string::npos) << e;
  EXPECT_NE(errorOf([&] { chooseGpuVendor("host", none); }).find("HETCCL_DEVICE=host makes host ranks"), std::string::npos);
  EXPECT_NE(errorOf([&] { chooseGpuVendor("rocm", none); }).find("HETCCL_DEVICE='rocm' is not one of"), std::string::npos);
}

}  // namespace
}  // namespace hetccl::perf
