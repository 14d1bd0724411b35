// Little-endian writing and bounds-checked reading of the agent's blobs and handshake messages.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace hetccl::agent {

class ByteWriter {
 public:
  template <typename T>
  void put(T v) {
    for (size_t i = 0; i < sizeof(T); ++i) out_.push_back(static_cast<unsigned char>(static_cast<uint64_t>(v) >> (8 * i)));
  }
  void bytes(std::span<const unsigned char> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  /// u16 length, then the bytes (InternalError beyond 65535).
  void text(const std::string& s) {
    if (s.size() > 0xffff) throw InternalError("agent blob: a string of more than 65535 bytes");
    put<uint16_t>(static_cast<uint16_t>(s.size()));
    bytes({reinterpret_cast<const unsigned char*>(s.data()), s.size()});
  }
  std::vector<unsigned char>& data() { return out_; }

 private:
  std::vector<unsigned char> out_;
};

/// Reads what ByteWriter wrote; running past the end throws InvalidArgument("<what>: truncated ...").
class ByteReader {
 public:
  ByteReader(std::span<const unsigned char> in, const char* what) : in_(in), what_(what) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<uint64_t>(in_[at_ + i]) << (8 * i);
    at_ += sizeof(T);
    return static_cast<T>(v);
  }
  std::span<const unsigned char> bytes(size_t n) {
    need(n);
    auto s = in_.subspan(at_, n);
    at_ += n;
    return s;
  }
  std::string text(size_t maxBytes) {
    const size_t n = get<uint16_t>();
    if (n > maxBytes) throw InvalidArgument(concat(what_, ": a field of ", n, " bytes (at most ", maxBytes, ")"));
    auto s = bytes(n);
    return std::string(reinterpret_cast<const char*>(s.data()), s.size());
  }
  size_t offset() const { return at_; }
  size_t left() const { return in_.size() - at_; }

 private:
  void need(size_t n) const {
    if (n > in_.size() - at_) throw InvalidArgument(concat(what_, ": truncated (", in_.size(), " bytes)"));
  }
  std::span<const unsigned char> in_;
  const char* what_;
  size_t at_ = 0;
};

}  // namespace hetccl::agent
