// coll_check on CUDA device buffers: every collective x type x op through hetccl's device path, results
// copied back and compared exactly (tests/mp/coll_check.cc). Each rank uses GPU local_rank % devices.
// Exits 77 (ctest: skipped) when there is no CUDA device, 1 then under HETCCL_TEST_REQUIRE_GPU=1.
#include <cstdio>

#include "common/launch_env.hpp"
#include "cuda_space.hpp"
#include "require_gpu.hpp"

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
    return hetccl::test::cannotRunExitStatus("coll_check_gpu", "no CUDA device");
  try {
    auto env = hetccl::tools::readLaunchEnv();
    hetccl::test::cudaCheck(cudaSetDevice(env.localRank % devices), "cudaSetDevice");
    hetccl::test::CudaSpace space;
    return hetccl::test::runCollCheck(argc, argv, space);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "coll_check_gpu: %s\n", e.what());
    return 2;
  }
}
