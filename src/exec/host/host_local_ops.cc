#include <cstring>

#include "exec/host/local_ops.hpp"

namespace hetccl::engine {
namespace {

class HostLocalOps final : public LocalOps {
 public:
  void copy(void* dst, const void* src, size_t bytes) const override { std::memmove(dst, src, bytes); }
  device::ReduceFn reduceFn(DataType type, RedOpKind op) const override { return device::hostReduceFn(type, op); }
  void scale(void* dst, const void* src, size_t count, DataType type, const void* scalar) const override {
    device::hostScale(dst, src, count, type, scalar);
  }
  void divide(void* buf, size_t count, DataType type, uint64_t n) const override {
    device::hostDivide(buf, count, type, n);
  }
};

}  // namespace

const LocalOps& hostLocalOps() {
  static const HostLocalOps ops;
  return ops;
}

}  // namespace hetccl::engine
