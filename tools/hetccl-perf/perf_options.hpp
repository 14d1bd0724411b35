// Command line of hetccl-perf, compatible with nccl-tests' flags:
//   hetccl-perf COLL [-b MIN] [-e MAX] [-f FACTOR | -i INCREMENT] [-n ITERS] [-w WARMUP] [-c 0|1]
//               [-d TYPE] [-o OP] [-r ROOT] [-z 0|1] [-p 0|1] [--json FILE] [--plot FILE.svg]
//               [-G | --device host|cuda|hip|gpu]
#pragma once

#include <cstddef>
#include <string>

#include "hetccl/hetccl.h"

namespace hetccl::perf {

/// Element type as the tool names it (nccl-tests' names).
struct TypeSpec {
  hetcclDataType_t type;
  size_t size;       ///< bytes per element
  const char* name;  ///< "float", "half", "bfloat16", "int8", ...
  bool floating;
};

/// Reduction as the tool names it ("sum", "prod", "max", "min", "avg", "premulsum").
enum class OpKind { Sum, Prod, Max, Min, Avg, PreMulSum };
const char* opName(OpKind op) noexcept;

/// Where the send and receive buffers live: host memory, CUDA or HIP device memory (--device cuda|hip),
/// or the GPU of the rank as hetccl chooses it from HETCCL_DEVICE (-G / --device gpu; main.cc resolves it
/// to Cuda or Hip before allocating).
enum class BufferPlace { Host, Cuda, Hip, Gpu };
/// "host", "cuda", "hip", "gpu": the --device value.
const char* bufferPlaceName(BufferPlace place) noexcept;

struct PerfOptions {
  std::string collective;       ///< all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, alltoallv, sendrecv
  size_t minBytes = 32u << 20;  ///< -b
  size_t maxBytes = 32u << 20;  ///< -e
  double stepFactor = 1;        ///< -f: multiply the size by this (when > 1)
  size_t stepBytes = 1u << 20;  ///< -i: else add this
  int iters = 20;               ///< -n
  int warmupIters = 5;          ///< -w (per size)
  bool check = true;            ///< -c
  TypeSpec type{hetcclFloat32, 4, "float", true};  ///< -d
  OpKind op = OpKind::Sum;      ///< -o
  int root = 0;                 ///< -r
  int blocking = 1;             ///< -z (accepted; calls on host memory always complete before returning)
  int parallelInit = 0;         ///< -p (accepted; one process per rank already inits in parallel)
  std::string jsonPath;         ///< --json
  std::string plotPath;         ///< --plot
  BufferPlace buffers = BufferPlace::Host;  ///< -G / --device
  bool help = false;            ///< -h / --help
};

/// Parses argv. Sizes accept K/M/G suffixes (powers of 1024). Throws std::invalid_argument with a
/// message naming the bad flag or value.
PerfOptions parsePerfOptions(int argc, const char* const* argv);

/// Parses "1K", "256M", "64", ... into bytes. Throws std::invalid_argument naming `flag`.
size_t parseByteSize(const std::string& flag, const std::string& text);

/// Usage text for --help and argument errors.
std::string perfUsage();

/// The collective names hetccl-perf knows, in the order of the usage text.
bool isKnownCollective(const std::string& name);

}  // namespace hetccl::perf
