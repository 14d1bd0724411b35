// Opaque C handles as numbers looked up in a table (never dereferenced), so that a released, foreign or
// garbage handle is an InvalidArgument, never undefined behaviour. One process-wide counter numbers
// every kind of handle (RMA, agents): a handle of one kind is never a valid handle of another.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/error.hpp"

namespace hetccl::abi {

/// The next handle number (steps of 0x10, never 0).
uintptr_t nextHandleNumber();

template <typename T>
class HandleTable {
 public:
  explicit HandleTable(const char* what) : what_(what) {}
  uintptr_t add(std::shared_ptr<T> v) {
    const uintptr_t h = nextHandleNumber();
    std::lock_guard<std::mutex> lock(mu_);
    map_.emplace(h, std::move(v));
    return h;
  }
  std::shared_ptr<T> get(const void* handle) const {
    if (!handle) throw InvalidArgument(concat(what_, " is NULL"));
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(reinterpret_cast<uintptr_t>(handle));
    if (it == map_.end()) throw InvalidArgument(concat(what_, " is not a live handle (released, or never returned by hetccl)"));
    return it->second;
  }
  void erase(const void* handle) {
    std::lock_guard<std::mutex> lock(mu_);
    map_.erase(reinterpret_cast<uintptr_t>(handle));
  }

 private:
  const char* what_;
  mutable std::mutex mu_;
  std::unordered_map<uintptr_t, std::shared_ptr<T>> map_;
};

}  // namespace hetccl::abi
