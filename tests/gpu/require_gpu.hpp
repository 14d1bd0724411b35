// What a GPU test does where it cannot run (no plugin, no device): skip, saying why, unless
// HETCCL_TEST_REQUIRE_GPU=1 (tests/gpu/run_on_device.sh and scripts/test.sh on a GPU machine set it)
// says that a GPU must be there: then the test fails instead.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hetccl::test {

/// Whether HETCCL_TEST_REQUIRE_GPU=1.
inline bool gpuRequired() {
  const char* required = std::getenv("HETCCL_TEST_REQUIRE_GPU");
  return required && std::strcmp(required, "1") == 0;
}

/// The exit status of a GPU test program that cannot run: 77 (ctest: skipped), or 1 (failed) when a GPU
/// is required. Prints which, with `reason`.
inline int cannotRunExitStatus(const char* program, const char* reason) {
  if (gpuRequired()) {
    std::fprintf(stderr, "%s: FAILED: HETCCL_TEST_REQUIRE_GPU=1 but %s\n", program, reason);
    return 1;
  }
  std::printf("%s: SKIPPED: %s\n", program, reason);
  return 77;
}

}  // namespace hetccl::test
