// The tests' handle on a fake NCCL (fake_nccl/fake_nccl.h): opens the same file the adaptor opens and
// looks up its control functions.
#pragma once

#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include "fake_nccl.h"

namespace hetccl::domain::testing {

struct FakeControl {
  explicit FakeControl(const char* path) : handle(dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
    if (!handle) throw std::runtime_error(std::string("cannot open fake NCCL: ") + dlerror());
    lastCall = sym<FakeNcclLastCallFn>("fakeNcclLastCall");
    commInfo = sym<FakeNcclCommInfoFn>("fakeNcclCommInfo");
    counters = sym<FakeNcclCountersFn>("fakeNcclCounters");
    failNext = sym<FakeNcclFailNextFn>("fakeNcclFailNext");
    setAsyncError = sym<FakeNcclSetAsyncErrorFn>("fakeNcclSetAsyncError");
  }
  template <typename Fn>
  Fn sym(const char* name) {
    auto fn = reinterpret_cast<Fn>(dlsym(handle, name));
    if (!fn) throw std::runtime_error(std::string("fake NCCL lacks ") + name);
    return fn;
  }
  FakeNcclCounters snapshot() const {
    FakeNcclCounters c{};
    counters(&c);
    return c;
  }

  void* handle;  // never closed: the adaptor keeps the library loaded too
  FakeNcclLastCallFn lastCall;
  FakeNcclCommInfoFn commInfo;
  FakeNcclCountersFn counters;
  FakeNcclFailNextFn failNext;
  FakeNcclSetAsyncErrorFn setAsyncError;
};

}  // namespace hetccl::domain::testing
