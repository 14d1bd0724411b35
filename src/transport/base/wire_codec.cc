#include "transport/base/wire_codec.hpp"

#include <cstring>

#include "core/error.hpp"

namespace hetccl::transport {
namespace {

[[noreturn]] void overrun(const char* side, size_t at, size_t n, size_t size) {
  throw InternalError(concat("wire codec: ", side, " ", n, " bytes at offset ", at, " of a ", size,
                             "-byte record (the layout is longer than its record)"));
}

}  // namespace

unsigned char* WireWriter::claim(size_t n) {
  if (n > size_ - at_) overrun("writing", at_, n, size_);
  unsigned char* p = out_ + at_;
  at_ += n;
  return p;
}

WireWriter& WireWriter::bytes(const void* src, size_t n) {
  std::memcpy(claim(n), src, n);
  return *this;
}

WireWriter& WireWriter::zeros(size_t n) {
  std::memset(claim(n), 0, n);
  return *this;
}

const unsigned char* WireReader::claim(size_t n) {
  if (n > size_ - at_) overrun("reading", at_, n, size_);
  const unsigned char* p = in_ + at_;
  at_ += n;
  return p;
}

void WireReader::bytes(void* dst, size_t n) { std::memcpy(dst, claim(n), n); }

bool WireReader::zeros(size_t n) {
  const unsigned char* p = claim(n);
  for (size_t i = 0; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

bool WireReader::magicAndVersion(uint32_t magic, uint16_t version, std::string& problem) {
  const auto gotMagic = get<uint32_t>();
  const auto gotVersion = get<uint16_t>();
  if (gotMagic != magic) problem = concat("bad magic 0x", std::hex, gotMagic);
  else if (gotVersion != version) problem = concat("protocol version ", gotVersion, " (expected ", version, ")");
  else return true;
  return false;
}

}  // namespace hetccl::transport
