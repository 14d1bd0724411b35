// Threads-as-ranks test harness: an in-memory fabric, links for each rank, a runner that starts one thread
// per rank and collects what each threw, and typed element helpers for exact reference results.
// Header-only: included by unit_engine and unit_algo.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "core/types.hpp"
#include "device/host/half.hpp"
#include "support/connection_table.hpp"
#include "support/mem_transport.hpp"

namespace hetccl::test {

/// A placement of ranks into domains.
struct Layout {
  std::string name;
  std::vector<int> domainOf;  ///< one entry per rank
};
/// How GoogleTest prints a layout parameter: its name.
inline void PrintTo(const Layout& layout, std::ostream* os) { *os << layout.name; }

/// The layouts every algorithm runs on: 1; 2; 3; 4 in one domain; 2+2; 3+1; 1+3; 2+1+2 (numbered
/// 0,1,2,0,2); 4+4; interleaved 0,1,0,1.
inline std::vector<Layout> standardLayouts() {
  return {
      {"1", {0}},
      {"2", {0, 0}},
      {"3", {0, 0, 0}},
      {"4", {0, 0, 0, 0}},
      {"2+2", {0, 0, 1, 1}},
      {"3+1", {0, 0, 0, 1}},
      {"1+3", {0, 1, 1, 1}},
      {"2+1+2", {0, 1, 2, 0, 2}},
      {"4+4", {0, 0, 0, 0, 1, 1, 1, 1}},
      {"interleaved", {0, 1, 0, 1}},
  };
}

/// Runs fn(rank) on `n` threads and returns what each threw (nullptr when it returned normally).
inline std::vector<std::exception_ptr> runRanks(int n, const std::function<void(int)>& fn) {
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        fn(r);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

/// Rethrows the first error of runRanks (so a gtest failure shows its message).
inline void rethrowFirst(const std::vector<std::exception_ptr>& errors) {
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

/// A fabric shared by `nranks` ranks and the connections of each rank to every other.
class MemWorld {
 public:
  explicit MemWorld(int nranks, size_t eagerBytes = 0)
      : fabric_(std::make_shared<transport::mem::Fabric>(nranks, eagerBytes)), transport_(fabric_) {}

  transport::mem::Fabric& fabric() { return *fabric_; }

  /// Links of `rank` to every other rank, built through the Transport interface.
  std::unique_ptr<engine::ConnectionTable> linksFor(int rank, const std::atomic<bool>* abortFlag = nullptr) {
    const int n = fabric_->nranks();
    auto links = std::make_unique<engine::ConnectionTable>(n);
    PeerInfo self;
    self.rank = rank;
    auto listener = transport_.listen(self);
    const auto deadline = Deadline::afterMs(1000);
    for (int peer = 0; peer < n; ++peer) {
      if (peer == rank) continue;
      PeerInfo other;
      other.rank = peer;
      transport::ConnectInfo info{self, other, 0, abortFlag};
      links->setSend(peer, transport_.connect(transport_.listen(other)->handle(), info, deadline));
      links->setRecv(peer, transport_.accept(*listener, info, deadline));
    }
    return links;
  }

 private:
  std::shared_ptr<transport::mem::Fabric> fabric_;
  transport::mem::MemTransport transport_;
};

/// Writes the integer `v` as one element of `type` at `dst` (integers wrap, floats are exact for the
/// small values tests use).
inline void storeElement(DataType type, int64_t v, void* dst) {
  switch (type) {
    case DataType::Int8: { int8_t x = static_cast<int8_t>(v); std::memcpy(dst, &x, 1); return; }
    case DataType::Uint8: { uint8_t x = static_cast<uint8_t>(v); std::memcpy(dst, &x, 1); return; }
    case DataType::Int32: { int32_t x = static_cast<int32_t>(v); std::memcpy(dst, &x, 4); return; }
    case DataType::Uint32: { uint32_t x = static_cast<uint32_t>(v); std::memcpy(dst, &x, 4); return; }
    case DataType::Int64: std::memcpy(dst, &v, 8); return;
    case DataType::Uint64: { uint64_t x = static_cast<uint64_t>(v); std::memcpy(dst, &x, 8); return; }
    case DataType::Float16: { uint16_t x = device::floatToHalf(static_cast<float>(v)); std::memcpy(dst, &x, 2); return; }
    case DataType::Bfloat16: { uint16_t x = device::floatToBfloat16(static_cast<float>(v)); std::memcpy(dst, &x, 2); return; }
    case DataType::Float32: { float x = static_cast<float>(v); std::memcpy(dst, &x, 4); return; }
    case DataType::Float64: { double x = static_cast<double>(v); std::memcpy(dst, &x, 8); return; }
    case DataType::Float8e4m3: { uint8_t x = device::Fp8E4M3::fromFloat(static_cast<float>(v)).bits; std::memcpy(dst, &x, 1); return; }
    case DataType::Float8e5m2: { uint8_t x = device::Fp8E5M2::fromFloat(static_cast<float>(v)).bits; std::memcpy(dst, &x, 1); return; }
  }
}

/// Stores `sum / n` the way hostDivide computes it: integers truncate in the type, floats divide in
/// float (double for float64) and round to the type.
inline void storeQuotient(DataType type, int64_t sum, uint64_t n, void* dst) {
  switch (type) {
    case DataType::Float16: { uint16_t x = device::floatToHalf(static_cast<float>(sum) / static_cast<float>(n)); std::memcpy(dst, &x, 2); return; }
    case DataType::Bfloat16: { uint16_t x = device::floatToBfloat16(static_cast<float>(sum) / static_cast<float>(n)); std::memcpy(dst, &x, 2); return; }
    case DataType::Float32: { float x = static_cast<float>(sum) / static_cast<float>(n); std::memcpy(dst, &x, 4); return; }
    case DataType::Float64: { double x = static_cast<double>(sum) / static_cast<double>(n); std::memcpy(dst, &x, 8); return; }
    default: break;
  }
  // Integers: wrap the sum into the type first, as the kernels accumulate in the type.
  unsigned char wrapped[8] = {};
  storeElement(type, sum, wrapped);
  int64_t w = 0;
  switch (type) {
    case DataType::Int8: w = *reinterpret_cast<int8_t*>(wrapped); break;
    case DataType::Uint8: w = *reinterpret_cast<uint8_t*>(wrapped); break;
    case DataType::Int32: w = *reinterpret_cast<int32_t*>(wrapped); break;
    case DataType::Uint32: w = *reinterpret_cast<uint32_t*>(wrapped); break;
    case DataType::Int64: w = *reinterpret_cast<int64_t*>(wrapped); break;
    case DataType::Uint64: storeElement(type, static_cast<int64_t>(*reinterpret_cast<uint64_t*>(wrapped) / n), dst); return;
    default: break;
  }
  storeElement(type, w / static_cast<int64_t>(n), dst);
}

inline bool isUnsigned(DataType t) {
  return t == DataType::Uint8 || t == DataType::Uint32 || t == DataType::Uint64;
}

}  // namespace hetccl::test
