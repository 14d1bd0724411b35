#include "kernels.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "core/types.hpp"
#include "device/base/gpu_plugin.h"
#include "device/host/reduce.hpp"
#include "runtime.hpp"
#include "support/ll_host_kernel.hpp"

namespace fakehip {
namespace {

// Names as the kernel ABI spells them (hetccl::DataType order; RedOpKind sum, prod, max, min).
constexpr const char* kTypes[] = {"i8", "u8", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "bf16", "f8e4m3", "f8e5m2"};
constexpr size_t kTypeBytes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
constexpr const char* kOps[] = {"sum", "prod", "max", "min"};
constexpr size_t kNumTypes = sizeof kTypes / sizeof kTypes[0];

// ElementwiseArgs: void* dst, const void* src, uint64_t count, uint32_t vectorized, uint64_t arg.
const std::vector<size_t> kElementwiseParams = {8, 8, 8, 4, 8};
constexpr size_t kStreamOpBatchBytes = sizeof(hetcclGpuStreamOp_t) * HETCCL_GPU_MAX_STREAM_OPS + 8;  // 520

const std::map<std::string, KernelDef>& table() {
  static const auto* t = [] {
    auto* m = new std::map<std::string, KernelDef>;
    auto add = [&](KernelDef d) { (*m)[d.name] = d; };
    for (size_t t = 0; t < kNumTypes; ++t) {
      for (int op = 0; op < 4; ++op)
        add({std::string("hetccl_reduce_") + kTypes[t] + "_" + kOps[op], kElementwiseParams, KernelDef::Reduce,
             static_cast<int>(t), op});
      add({std::string("hetccl_scale_") + kTypes[t], kElementwiseParams, KernelDef::Scale, static_cast<int>(t), -1});
      add({std::string("hetccl_divide_") + kTypes[t], kElementwiseParams, KernelDef::Divide, static_cast<int>(t), -1});
      for (int op = 0; op < 4; ++op)  // the latency path: its arguments by value
        add({std::string("hetccl_ll_allreduce_") + kTypes[t] + "_" + kOps[op], {sizeof(hetcclGpuLlAllReduce_t)},
             KernelDef::LatencyAllReduce, static_cast<int>(t), op});
    }
    add({"hetccl_wait_flag", {8, 8}, KernelDef::WaitFlag});
    add({"hetccl_write_flag", {8, 8}, KernelDef::WriteFlag});
    add({"hetccl_stream_ops", {kStreamOpBatchBytes}, KernelDef::StreamOps});
    return m;
  }();
  return *t;
}

template <typename T>
T at(const std::vector<char>& params, size_t offset) {
  T v;
  std::memcpy(&v, params.data() + offset, sizeof v);
  return v;
}

uint64_t loadWord(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
void storeWord(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

bool checkWord(const void* p, const char* what) {
  if (!p || reinterpret_cast<uintptr_t>(p) % 8 != 0 || !deviceAccessible(p, 8)) {
    char text[160];
    std::snprintf(text, sizeof text, "%s: word %p is null, misaligned or not device-accessible memory", what, p);
    badAccess(text);
    return false;
  }
  return true;
}

void runStreamOps(const std::vector<char>& params) {
  hetcclGpuStreamOp_t ops[HETCCL_GPU_MAX_STREAM_OPS];
  std::memcpy(ops, params.data(), sizeof ops);
  const unsigned count = at<unsigned>(params, sizeof ops);
  if (count > HETCCL_GPU_MAX_STREAM_OPS) {
    badAccess("hetccl_stream_ops: batch.count " + std::to_string(count) + " > HETCCL_GPU_MAX_STREAM_OPS");
    return;
  }
  for (unsigned i = 0; i < count; ++i) {
    const hetcclGpuStreamOp_t& op = ops[i];
    if (!checkWord(op.word, "hetccl_stream_ops")) return;
    switch (op.kind) {
      case HETCCL_GPU_OP_WAIT_GEQ:
        pollUntil([&] { return static_cast<int64_t>(loadWord(op.word) - op.value) >= 0; });
        break;
      case HETCCL_GPU_OP_WAIT_EQ:
        pollUntil([&] { return loadWord(op.word) == op.value; });
        break;
      case HETCCL_GPU_OP_WRITE:
        storeWord(op.word, op.value);
        break;
      case HETCCL_GPU_OP_STAMP_CHECK: {
        if (!deviceAccessible(op.word, 32) || !checkWord(op.report, "hetccl_stream_ops (report)") ||
            !deviceAccessible(op.report, HETCCL_GPU_REPORT_WORDS * 8)) {
          badAccess("hetccl_stream_ops: STAMP_CHECK words or report outside device-accessible memory");
          return;
        }
        uint64_t got[4];
        bool same = true;
        for (int w = 0; w < 4; ++w) {
          got[w] = loadWord(op.word + w);
          same = same && got[w] == op.expect[w];
        }
        if (!same && loadWord(op.report) == 0) {
          for (int w = 0; w < 4; ++w) {
            storeWord(op.report + 1 + w, got[w]);
            storeWord(op.report + 5 + w, op.expect[w]);
          }
          storeWord(op.report, 1);
        }
        break;
      }
      default:
        badAccess("hetccl_stream_ops: unknown operation kind " + std::to_string(op.kind));
        return;
    }
  }
}

}  // namespace

const KernelDef* findKernel(const std::string& name) {
  auto it = table().find(name);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<std::string> kernelNames() {
  std::vector<std::string> names;
  for (const auto& [name, def] : table()) names.push_back(name);
  return names;
}

void runKernel(const KernelDef& k, const LaunchShape& shape, const std::vector<char>& params) {
  static const bool trace = std::getenv("FAKEHIP_TRACE") != nullptr;
  if (trace) {
    std::fprintf(stderr, "fakehip: kernel %s grid %u block %u params", k.name.c_str(), shape.grid[0], shape.block[0]);
    for (size_t i = 0; i + 8 <= params.size() && i < 40; i += 8) std::fprintf(stderr, " %#llx", (unsigned long long)at<uint64_t>(params, i));
    std::fprintf(stderr, "\n");
  }
  using hetccl::DataType;
  using hetccl::RedOpKind;
  switch (k.kind) {
    case KernelDef::WaitFlag: {
      const auto* flag = at<const uint64_t*>(params, 0);
      const uint64_t value = at<uint64_t>(params, 8);
      if (!checkWord(flag, "hetccl_wait_flag")) return;
      pollUntil([&] { return static_cast<int64_t>(loadWord(flag) - value) >= 0; });
      return;
    }
    case KernelDef::WriteFlag: {
      auto* flag = at<uint64_t*>(params, 0);
      if (!checkWord(flag, "hetccl_write_flag")) return;
      storeWord(flag, at<uint64_t>(params, 8));
      return;
    }
    case KernelDef::StreamOps:
      runStreamOps(params);
      return;
    case KernelDef::LatencyAllReduce: {  // the protocol's own code, blocking this stream's thread until done
      const auto args = at<hetcclGpuLlAllReduce_t>(params, 0);
      std::string error;
      const std::function<void()> body = hetccl::test::llHostKernel(&args, &error);
      const bool matches = args.dataType == k.type && (args.op == k.op || (args.op == 4 && k.op == 0));
      if (!body || !matches) {
        badAccess(k.name + ": " + (body ? std::string("launched for another type or operator") : error));
        return;
      }
      body();
      return;
    }
    default:
      break;
  }
  // Elementwise kernels: grid-stride, so every element is processed whatever the grid.
  void* dst = at<void*>(params, 0);
  const void* src = at<const void*>(params, 8);
  const uint64_t count = at<uint64_t>(params, 16);
  const uint32_t vectorized = at<uint32_t>(params, 24);
  const uint64_t arg = at<uint64_t>(params, 28);  // parameters are packed one after the other (kernelParams copies)
  const size_t bytes = count * kTypeBytes[k.type];
  const auto type = static_cast<DataType>(k.type);
  char text[256];
  if (count == 0) return;
  if (!dst || !deviceAccessible(dst, bytes) || (k.kind != KernelDef::Divide && (!src || !deviceAccessible(src, bytes)))) {
    std::snprintf(text, sizeof text, "%s: dst %p / src %p (%zu bytes) not inside device-accessible memory",
                  k.name.c_str(), dst, src, bytes);
    badAccess(text);
    return;
  }
  if (vectorized && (reinterpret_cast<uintptr_t>(dst) % 16 || reinterpret_cast<uintptr_t>(src) % 16)) {
    std::snprintf(text, sizeof text, "%s: vectorized = 1 with dst %p / src %p not 16-byte aligned", k.name.c_str(),
                  dst, src);
    badAccess(text);
    return;
  }
  if (k.kind == KernelDef::Divide && src != dst) {
    std::snprintf(text, sizeof text, "%s: divide needs src == dst (got %p / %p)", k.name.c_str(), dst, src);
    badAccess(text);
    return;
  }
  const auto* d = static_cast<const char*>(dst);
  const auto* s = static_cast<const char*>(src);
  if (k.kind != KernelDef::Divide && d != s && d < s + bytes && s < d + bytes) {
    std::snprintf(text, sizeof text, "%s: dst and src overlap without being equal", k.name.c_str());
    badAccess(text);
    return;
  }
  switch (k.kind) {
    case KernelDef::Reduce:
      hetccl::device::hostReduceFn(type, static_cast<RedOpKind>(k.op))(dst, src, count);
      break;
    case KernelDef::Scale:
      hetccl::device::hostScale(dst, src, count, type, &arg);  // little endian: the element is arg's low bytes
      break;
    case KernelDef::Divide:
      hetccl::device::hostDivide(dst, count, type, arg);
      break;
    default:
      break;
  }
  (void)shape;
}

}  // namespace fakehip
