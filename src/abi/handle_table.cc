#include "abi/handle_table.hpp"

namespace hetccl::abi {

uintptr_t nextHandleNumber() {
  static std::atomic<uintptr_t> next{0x5a000};
  return next.fetch_add(0x10);
}

}  // namespace hetccl::abi
