// The kernels the fake can run: those of the plugin's kernel ABI (src/device/hip/kernel_abi.hpp),
// reimplemented on the host (the reductions with hetccl's host kernels, src/device/host/reduce.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fakehip {

struct KernelDef {
  std::string name;
  std::vector<size_t> paramSizes;  // bytes of each kernelParams entry
  enum Kind { Reduce, Scale, Divide, WaitFlag, WriteFlag, StreamOps, LatencyAllReduce } kind;
  int type = -1;  // hetccl::DataType code (elementwise kernels)
  int op = -1;    // RedOpKind code (reduce)
};

/// The kernel of that name, or nullptr.
const KernelDef* findKernel(const std::string& name);
/// Every kernel name (the fake's hiprtc puts them all in the code object it "compiles").
std::vector<std::string> kernelNames();

struct LaunchShape {
  unsigned grid[3];
  unsigned block[3];
};
/// Runs `k` with its parameter bytes (concatenated in order, each at its own offset) on the calling
/// stream worker. Memory it may not touch is reported through badAccess().
void runKernel(const KernelDef& k, const LaunchShape& shape, const std::vector<char>& params);

}  // namespace fakehip
