#include "sim_ll.hpp"

#include <atomic>
#include <thread>

#include "core/error.hpp"
#include "core/types.hpp"
#include "device/gpu/ll_protocol.cuh"
#include "device/host/reduce.hpp"

namespace hetccl::test::sim {
namespace {

/// ll::allReduce's Env on the host: one block of one thread; every board access one atomic 64-bit access.
struct HostEnv {
  unsigned tid = 0, nthreads = 1, lane = 0, laneCount = 1;
  bool firstBlock = true, manyBlocks = false;
  bool lastToFinish() const { return true; }  // the only block
  static uint64_t load(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
  static void store(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
  static void loadPair(const uint64_t* p, uint64_t& lo, uint64_t& hi) { lo = load(p), hi = load(p + 1); }
  static void storePair(uint64_t* p, uint64_t lo, uint64_t hi) { store(p, lo), store(p + 1, hi); }
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

}  // namespace

std::function<void()> llKernelBody(const hetcclGpuLlAllReduce_t* args, std::string* error) {
  auto refuse = [&](const char* why) {
    *error = concat("llAllReduce: ", why);
    return std::function<void()>();
  };
  if (!args) return refuse("null arguments");
  const hetcclGpuLlAllReduce_t a = *args;
  if (a.nranks < 2 || a.nranks > HETCCL_GPU_LL_MAX_RANKS || a.rank < 0 || a.rank >= a.nranks)
    return refuse("rank or rank count out of range");
  for (int r = 0; r < a.nranks; ++r)
    if (!a.boards[r]) return refuse("null board");
  if (!a.seq || !a.abortWord || !a.report || (a.count > 0 && (!a.send || !a.recv))) return refuse("null pointer");
  const auto type = static_cast<DataType>(a.dataType);
  const auto op = static_cast<RedOpKind>(a.op);
  if (op == RedOpKind::PreMulSum) return refuse("premulsum is not supported");
  const device::ReduceFn fn = device::hostReduceFn(type, op == RedOpKind::Avg ? RedOpKind::Sum : op);
  if (!fn) return refuse("unknown type or operator");
  const size_t element = dataTypeSize(type);
  if (gpu::ll::setWordsFor(a.count * element) > a.setWords) return refuse("count beyond the boards");
  const HostReduce reduce{fn, type, 8 / element, op == RedOpKind::Avg ? static_cast<uint64_t>(a.nranks) : 0};
  return [a, reduce, element] {
    HostEnv env;
    gpu::ll::Shared shared{};
    gpu::ll::allReduce(a, element, env, reduce, shared);
  };
}

}  // namespace hetccl::test::sim
