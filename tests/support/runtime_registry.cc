#include "support/runtime_registry.hpp"

#include <memory>

#include "core/error.hpp"
#include "support/host_runtime.hpp"

namespace hetccl::device {

RuntimeRegistry::RuntimeRegistry() { add(std::make_unique<HostRuntime>()); }

RuntimeRegistry::~RuntimeRegistry() = default;

void RuntimeRegistry::add(std::unique_ptr<Runtime> runtime) {
  if (!runtime) throw InvalidArgument("RuntimeRegistry::add: runtime is null");
  const auto index = static_cast<size_t>(runtime->kind());
  if (index >= byKind_.size())
    throw InvalidArgument(concat("RuntimeRegistry::add: runtime '", runtime->name(), "' has an invalid memory kind ",
                                 static_cast<int>(runtime->kind())));
  std::lock_guard lock(addMutex_);
  if (byKind_[index].load() != nullptr)
    throw InvalidUsage(concat("RuntimeRegistry::add: a ", memoryKindName(runtime->kind()),
                              " runtime is already registered ('", byKind_[index].load()->name(), "')"));
  owned_.push_back(std::move(runtime));
  byKind_[index].store(owned_.back().get(), std::memory_order_release);
}

Runtime* RuntimeRegistry::find(MemoryKind kind) const noexcept {
  const auto index = static_cast<size_t>(kind);
  return index < byKind_.size() ? byKind_[index].load(std::memory_order_acquire) : nullptr;
}

Runtime& RuntimeRegistry::get(MemoryKind kind) const {
  Runtime* rt = find(kind);
  if (!rt)
    throw InvalidUsage(concat("no ", memoryKindName(kind), " device runtime is loaded in this process"));
  return *rt;
}

MemoryKind RuntimeRegistry::kindOf(const void* ptr) const noexcept {
  for (size_t i = 1; i < byKind_.size(); ++i) {  // index 0 is the host runtime: the fallback
    const Runtime* rt = byKind_[i].load(std::memory_order_acquire);
    if (rt && rt->owns(ptr)) return rt->kind();
  }
  return MemoryKind::Host;
}

RuntimeRegistry& runtimes() {
  static RuntimeRegistry registry;
  return registry;
}

}  // namespace hetccl::device
