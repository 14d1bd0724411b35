// Loading a vendor CCL by path: function table, version, missing symbols, the guard against loading
// hetccl itself, the search order, and the translation of result codes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "bootstrap_harness.hpp"
#include "core/error.hpp"
#include "domain/nccl/library_search.hpp"
#include "domain/nccl/nccl_error.hpp"
#include "domain/nccl/nccl_library.hpp"
#include "domain/nccl/nccl_vendor.hpp"
#include "fake_control.hpp"

namespace hetccl::domain::nccl {
namespace {

using bootstrap::testing::ScopedEnv;

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(NcclLibrary, LoadsEverySymbolAndTheVersion) {
  auto lib = NcclLibrary::open(kNcclFlavor, FAKE_NCCL_FULL);
  const NcclApi& a = lib->api();
  for (const void* fn : {(const void*)a.getVersion, (const void*)a.getUniqueId, (const void*)a.getErrorString,
                         (const void*)a.getLastError, (const void*)a.commInitRank, (const void*)a.commInitRankConfig,
                         (const void*)a.commFinalize, (const void*)a.commDestroy, (const void*)a.commAbort,
                         (const void*)a.commGetAsyncError, (const void*)a.redOpCreatePreMulSum,
                         (const void*)a.redOpDestroy, (const void*)a.allReduce, (const void*)a.reduceScatter,
                         (const void*)a.allGather, (const void*)a.broadcast, (const void*)a.reduce, (const void*)a.send,
                         (const void*)a.recv, (const void*)a.groupStart, (const void*)a.groupEnd})
    EXPECT_NE(fn, nullptr);
  // The table points into the fake library, not anywhere else with the same names.
  testing::FakeControl fake(FAKE_NCCL_FULL);
  EXPECT_EQ(reinterpret_cast<void*>(a.allReduce), dlsym(fake.handle, "ncclAllReduce"));
  EXPECT_EQ(lib->versionCode(), 22304);
  EXPECT_EQ(lib->versionString(), "2.23.4");
  EXPECT_EQ(std::filesystem::canonical(lib->loadedFrom()), std::filesystem::canonical(FAKE_NCCL_FULL));
  EXPECT_EQ(lib->describe(), concat("NCCL 2.23.4 from ", lib->loadedFrom()));
}

TEST(NcclLibrary, ToleratesMissingOptionalSymbols) {
  auto lib = NcclLibrary::open(kNcclFlavor, FAKE_NCCL_MINIMAL);
  const NcclApi& a = lib->api();
  EXPECT_EQ(a.getLastError, nullptr);
  EXPECT_EQ(a.commInitRankConfig, nullptr);
  EXPECT_EQ(a.commFinalize, nullptr);
  EXPECT_EQ(a.commGetAsyncError, nullptr);
  EXPECT_EQ(a.redOpCreatePreMulSum, nullptr);
  EXPECT_EQ(a.redOpDestroy, nullptr);
  EXPECT_NE(a.allReduce, nullptr);
  EXPECT_EQ(lib->versionString(), "2.7.8");  // NCCL's pre-2.9 version code form
}

TEST(NcclLibrary, MissingRequiredSymbolsAreNamed) {
  try {
    NcclLibrary::open(kNcclFlavor, FAKE_NCCL_BROKEN);
    FAIL() << "a library without ncclAllGather loaded";
  } catch (const InvalidUsage& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("ncclAllGather"), std::string::npos) << m;
    EXPECT_NE(m.find("ncclSend"), std::string::npos) << m;
    EXPECT_EQ(m.find("ncclRecv"), std::string::npos) << m;
    EXPECT_NE(m.find(FAKE_NCCL_BROKEN), std::string::npos) << m;
    EXPECT_NE(m.find("HETCCL_NCCL_LIB"), std::string::npos) << m;
  }
}

TEST(NcclLibrary, UnloadablePathIsASystemErrorNamingTheVariable) {
  try {
    NcclLibrary::open(kNcclFlavor, "/nonexistent/libnccl.so.2");
    FAIL() << "opened a file that does not exist";
  } catch (const SystemError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("/nonexistent/libnccl.so.2"), std::string::npos) << m;
    EXPECT_NE(m.find("HETCCL_NCCL_LIB"), std::string::npos) << m;
  }
}

// The drop-in case: the path resolves to the object that holds hetccl's own code. Simulated by telling
// open() that "we" are the fake library (an address inside it).
TEST(NcclLibrary, RefusesALibraryThatIsHetcclItself) {
  testing::FakeControl fake(FAKE_NCCL_FULL);
  const void* insideFake = dlsym(fake.handle, "ncclGroupStart");
  ASSERT_NE(insideFake, nullptr);
  try {
    NcclLibrary::open(kNcclFlavor, FAKE_NCCL_FULL, insideFake);
    FAIL() << "loaded a library that is hetccl itself";
  } catch (const InvalidUsage& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("resolved to hetccl itself"), std::string::npos) << m;
    EXPECT_NE(m.find("HETCCL_NCCL_LIB"), std::string::npos) << m;
  }
  // Our own object (the test binary) is a different one: accepted.
  EXPECT_NO_THROW(NcclLibrary::open(kNcclFlavor, FAKE_NCCL_FULL));
}

TEST(LibrarySearch, FindsAnAlreadyLoadedLibraryAndEndsWithTheBareName) {
  testing::FakeControl fake(FAKE_NCCL_FULL);  // now loaded in this process as .../full/libnccl.so
  auto candidates = searchCandidates(kNcclFlavor);
  ASSERT_FALSE(candidates.empty());
  EXPECT_EQ(candidates.back(), "libnccl.so.2");
  std::string full = std::filesystem::path(FAKE_NCCL_FULL).lexically_normal().string();
  EXPECT_NE(std::find(candidates.begin(), candidates.end(), full), candidates.end());
  // ... but not when that object is hetccl itself.
  auto withoutSelf = searchCandidates(kNcclFlavor, dlsym(fake.handle, "ncclGroupStart"));
  EXPECT_EQ(std::find(withoutSelf.begin(), withoutSelf.end(), full), withoutSelf.end());
}

TEST(LibrarySearch, ConfiguredPathWinsAndFailsWithoutFallback) {
  {
    ScopedEnv env("HETCCL_NCCL_LIB", FAKE_NCCL_MINIMAL);
    EXPECT_EQ(findLibrary(kNcclFlavor)->versionString(), "2.7.8");
  }
  ScopedEnv env("HETCCL_NCCL_LIB", "/nonexistent/libnccl.so.2");
  EXPECT_THROW(findLibrary(kNcclFlavor), SystemError);
}

TEST(LibrarySearch, ProcessInstanceIsLoadedOnceFromTheConfiguredPath) {
  ScopedEnv env("HETCCL_NCCL_LIB", FAKE_NCCL_FULL);
  NcclVendor& first = processNccl();
  EXPECT_EQ(&first, &processNccl());
  EXPECT_EQ(first.version(), 22304);
  EXPECT_NE(first.describe().find("NCCL 2.23.4 from "), std::string::npos) << first.describe();
}

TEST(LibrarySearch, RcclFlavorSearchesItsOwnNamesAndToolkit) {
  const auto tmp = std::filesystem::temp_directory_path() / ("hetccl-rocm-" + std::to_string(getpid()));
  std::filesystem::create_directories(tmp / "lib");
  std::filesystem::copy_file(FAKE_NCCL_MINIMAL, tmp / "lib" / "librccl.so",
                             std::filesystem::copy_options::overwrite_existing);
  const std::string rocmPath = tmp.string();
  ScopedEnv rocm("ROCM_PATH", rocmPath.c_str());
  auto candidates = searchCandidates(kRcclFlavor);
  ASSERT_GE(candidates.size(), 3u);
  // The toolkit's copy, then both bare names (the soname applications link first); nothing of NCCL's.
  EXPECT_NE(std::find(candidates.begin(), candidates.end(), (tmp / "lib" / "librccl.so").string()), candidates.end());
  EXPECT_EQ(candidates[candidates.size() - 2], "librccl.so.1");
  EXPECT_EQ(candidates.back(), "librccl.so");
  for (const auto& c : candidates) EXPECT_EQ(c.find("nccl"), std::string::npos) << c;
  {
    ScopedEnv unset("HETCCL_RCCL_LIB", nullptr);
    auto lib = findLibrary(kRcclFlavor);  // found in $ROCM_PATH/lib, described as RCCL
    EXPECT_EQ(lib->versionString(), "2.7.8");
    EXPECT_EQ(lib->describe().rfind("RCCL 2.7.8 from ", 0), 0u) << lib->describe();
  }
  std::filesystem::remove_all(tmp);
  ScopedEnv missing("HETCCL_RCCL_LIB", "/nonexistent/librccl.so.1");
  const std::string m = errorOf([] { findLibrary(kRcclFlavor); });
  EXPECT_NE(m.find("/nonexistent/librccl.so.1"), std::string::npos) << m;
}

TEST(LibrarySearch, TheDevicePicksTheFlavorUnlessTheSettingForcesOne) {
  EXPECT_EQ(flavorFor(DeviceKind::Cuda, "auto"), &kNcclFlavor);
  EXPECT_EQ(flavorFor(DeviceKind::Hip, "auto"), &kRcclFlavor);
  EXPECT_EQ(flavorFor(DeviceKind::Host, "auto"), nullptr);
  EXPECT_EQ(flavorFor(DeviceKind::Cuda, "rccl"), &kRcclFlavor);
  EXPECT_EQ(flavorFor(DeviceKind::Hip, "nccl"), &kNcclFlavor);
  EXPECT_EQ(flavorFor(DeviceKind::Hip, "off"), nullptr);
  EXPECT_THROW(flavorFor(DeviceKind::Cuda, "mccl"), InvalidArgument);
}

TEST(NcclError, ResultCodesBecomeTypedExceptions) {
  using abi::ncclResult_t;
  auto check = [](ncclResult_t r) { return [r] { throwVendorError(r, "msg"); }; };
  EXPECT_THROW(check(abi::ncclInvalidArgument)(), InvalidArgument);
  EXPECT_THROW(check(abi::ncclInvalidUsage)(), InvalidUsage);
  EXPECT_THROW(check(abi::ncclSystemError)(), SystemError);
  EXPECT_THROW(check(abi::ncclInternalError)(), InternalError);
  EXPECT_THROW(check(abi::ncclRemoteError)(), PeerError);
  try {
    check(abi::ncclUnhandledCudaError)();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Result::UnhandledCudaError);
  }
  EXPECT_THROW(check(static_cast<ncclResult_t>(42))(), InternalError);
  EXPECT_EQ(resultName(abi::ncclRemoteError), "ncclRemoteError");
  EXPECT_EQ(resultName(static_cast<ncclResult_t>(42)), "ncclResult 42");
  EXPECT_NE(errorOf(check(abi::ncclInProgress)).find("non-blocking"), std::string::npos);
}

}  // namespace
}  // namespace hetccl::domain::nccl
