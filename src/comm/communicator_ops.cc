// Reduction operators of a communicator: user PreMulSum operators (created, destroyed, looked up by
// handle) and the resolution of any handle into the engine's ReduceOp (fp8 Avg as NCCL 2.28 computes it).
#include <bit>
#include <cstring>

#include "comm/communicator.hpp"
#include "device/base/fp8_format.hpp"

namespace hetccl {

int Communicator::createPreMulSum(DataType type, const void* scalar) {
  if (!scalar) throw InvalidArgument("PreMulSum scalar pointer is null");
  if (!isValidDataType(static_cast<int>(type))) throw InvalidArgument(concat("invalid data type ", static_cast<int>(type)));
  std::lock_guard<std::mutex> lock(mu_);
  UserOp u;
  u.live = true;
  u.type = type;
  u.op.kind = RedOpKind::PreMulSum;
  std::memcpy(u.op.scalar, scalar, dataTypeSize(type));
  for (size_t i = 0; i < userOps_.size(); ++i)
    if (!userOps_[i].live) {
      userOps_[i] = u;
      return kNumBuiltinOps + static_cast<int>(i);
    }
  userOps_.push_back(u);
  return kNumBuiltinOps + static_cast<int>(userOps_.size() - 1);
}

void Communicator::destroyOp(int handle) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t i = static_cast<size_t>(handle - kNumBuiltinOps);
  if (handle < kNumBuiltinOps || i >= userOps_.size() || !userOps_[i].live)
    throw InvalidArgument(concat("reduction operator ", handle, " was not created on this communicator"));
  userOps_[i].live = false;
}

ReduceOp Communicator::resolveOp(int handle, DataType type) const {
  ReduceOp op;
  if (handle >= 0 && handle < kNumBuiltinOps) {
    op.kind = static_cast<RedOpKind>(handle);
    if (op.kind == RedOpKind::Avg && isFp8Type(type)) {
      // As NCCL 2.28 (hostToDevRedOp): fp8 Avg is PreMulSum by 1/nranks rounded to the fp8 type.
      op.kind = RedOpKind::PreMulSum;
      const float inverse = static_cast<float>(1.0 / size());
      op.scalar[0] = fp8::fromFloatBits(std::bit_cast<uint32_t>(inverse),
                                        type == DataType::Float8e4m3 ? fp8::kE4M3 : fp8::kE5M2);
    }
    return op;
  }
  std::lock_guard<std::mutex> lock(mu_);
  size_t i = static_cast<size_t>(handle - kNumBuiltinOps);
  if (handle < kNumBuiltinOps || i >= userOps_.size() || !userOps_[i].live)
    throw InvalidArgument(concat("invalid reduction operator ", handle));
  if (userOps_[i].type != type)
    throw InvalidArgument(concat("reduction operator ", handle, " was created for ", dataTypeName(userOps_[i].type),
                                 ", not ", dataTypeName(type)));
  return userOps_[i].op;
}

}  // namespace hetccl
