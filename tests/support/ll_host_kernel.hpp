// The latency path's kernel run on the host (hetcclGpuPlugin_t::llAllReduce), for the test doubles of a GPU:
// the protocol's own code (src/device/gpu/ll_protocol.cuh) as a one-thread block, with hetccl's host
// reductions (bit-identical to the GPU kernels'). The simulated GPU of the unit tests
// (tests/unit/stream_exec/sim_gpu.cc) and the fake HIP runtime (tests/fake_hip/kernels.cc) run it, so the tests
// exercise the waits the GPU kernels run (scripts/mutate-stream-waits.sh removes them). The body blocks until
// the call's words arrive (or the abort word is set): run it where a blocked thread stops nothing else.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "core/types.hpp"
#include "device/base/gpu_plugin.h"
#include "device/gpu/ll_protocol.cuh"
#include "device/host/reduce.hpp"

namespace hetccl::test {

/// Set by the kernel body before every second call (even call numbers): the call's first line store then
/// waits kLateLine, so that its header words are out well before its data (as on a GPU whose blocks run
/// late). A reader that takes a line without waiting for it (wait:ll-line removed) then reads the previous
/// call's words; with the lines written right behind the header it seldom did, and the mutation went
/// unnoticed in some runs of the check. Odd calls keep the lines right behind the header: there a peer's
/// header is often not out yet when a rank checks it, which is how wait:ll-header's removal is caught
/// (RanksWhoseCountsDiffer*: one call).
inline thread_local bool lateFirstLine = false;
inline constexpr auto kLateLine = std::chrono::milliseconds(2);

/// ll::allReduce's Env on the host: one block of one thread; every board access one atomic 64-bit access.
struct HostEnv {
  unsigned tid = 0, nthreads = 1, lane = 0, laneCount = 1;
  bool firstBlock = true, manyBlocks = false;
  bool lastToFinish() const { return true; }  // the only block
  static uint64_t load(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
  static void store(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
  static void loadPair(const uint64_t* p, uint64_t& lo, uint64_t& hi) { lo = load(p), hi = load(p + 1); }
  static void storePair(uint64_t* p, uint64_t lo, uint64_t hi) {
    if (lateFirstLine) lateFirstLine = false, std::this_thread::sleep_for(kLateLine);
    store(p, lo), store(p + 1, hi);
  }
  static void pause() { std::this_thread::yield(); }
  static void fence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
  void sync() const {}
};

/// combine / finish on 8 bytes with hetccl's host kernels (bit-identical to the GPU's).
struct HostReduce {
  device::ReduceFn fn;
  DataType type;
  size_t perLine;       // elements in 8 bytes
  uint64_t avgDivisor;  // 0: not an average
  void combine(uint64_t& acc, uint64_t in) const { fn(&acc, &in, perLine); }
  void finish(uint64_t& acc) const {
    if (avgDivisor) device::hostDivide(&acc, perLine, type, avgDivisor);
  }
};

/// The body of one call's kernel (arguments copied), or an empty function and the reason in *error when
/// `args` is one the GPU plugins refuse too.
inline std::function<void()> llHostKernel(const hetcclGpuLlAllReduce_t* args, std::string* error) {
  auto refuse = [&](const char* why) {
    *error = concat("llAllReduce: ", why);
    return std::function<void()>();
  };
  const uint64_t element = args ? gpu::ll::elementBytes(args->dataType) : 0;
  if (const char* why = gpu::ll::invalidArgs(args, element)) return refuse(why);
  const hetcclGpuLlAllReduce_t a = *args;
  const auto type = static_cast<DataType>(a.dataType);
  const auto op = static_cast<RedOpKind>(a.op);
  const device::ReduceFn fn = device::hostReduceFn(type, op == RedOpKind::Avg ? RedOpKind::Sum : op);
  if (!fn) return refuse("unknown type or operator");
  const HostReduce reduce{fn, type, 8 / element, op == RedOpKind::Avg ? static_cast<uint64_t>(a.nranks) : 0};
  return [a, reduce, element] {
    HostEnv env;
    lateFirstLine = a.callNumber % 2 == 0;
    gpu::ll::Shared shared{};
    gpu::ll::allReduce(a, element, env, reduce, shared);
  };
}

}  // namespace hetccl::test
