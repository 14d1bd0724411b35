// Little-endian field codec for the fixed-size records the tcp and ucx transports put on the wire
// (tcp_hello.hpp, tcp_piece.hpp, ucx_wire.hpp, piece_fields.hpp, address_handle.hpp). A WireWriter and a
// WireReader walk a record field by field, so an encoder reads like the layout in its header comment
// (each field's offset follows from the sizes before it) and the bytes depend on neither the host's byte
// order nor struct padding. Both are bounded by the record's size: a field past its end is a mistake in
// the layout and throws InternalError instead of touching the memory behind the record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace hetccl::transport {

class WireWriter {
 public:
  /// Writes into the `size` bytes at `out`, from offset 0.
  WireWriter(unsigned char* out, size_t size) : out_(out), size_(size) {}

  /// Appends `v` as sizeof(T) little-endian bytes (signed values as two's complement). T is always
  /// named (put<uint16_t>(0)): the field's width is part of the layout, never deduced from a literal.
  template <typename T>
  WireWriter& put(std::type_identity_t<T> v) {
    static_assert(std::is_integral_v<T>, "wire fields are integers");
    const auto u = static_cast<std::make_unsigned_t<T>>(v);
    unsigned char* p = claim(sizeof(T));
    for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<unsigned char>(u >> (8 * i));
    return *this;
  }
  /// Appends `n` bytes from `src` as they are.
  WireWriter& bytes(const void* src, size_t n);
  /// Appends `n` zero bytes (a reserved field).
  WireWriter& zeros(size_t n);
  /// Bytes written so far.
  size_t offset() const { return at_; }

 private:
  unsigned char* claim(size_t n);

  unsigned char* out_;
  size_t size_;
  size_t at_ = 0;
};

class WireReader {
 public:
  /// Reads the `size` bytes at `in`, from offset 0.
  WireReader(const unsigned char* in, size_t size) : in_(in), size_(size) {}

  /// The next sizeof(T) bytes as a little-endian T.
  template <typename T>
  T get() {
    static_assert(std::is_integral_v<T>, "wire fields are integers");
    using U = std::make_unsigned_t<T>;
    const unsigned char* p = claim(sizeof(T));
    U u = 0;
    for (size_t i = 0; i < sizeof(T); ++i) u |= static_cast<U>(static_cast<U>(p[i]) << (8 * i));
    return static_cast<T>(u);
  }
  /// Copies the next `n` bytes to `dst`.
  void bytes(void* dst, size_t n);
  /// Consumes `n` reserved bytes; true when they are all zero.
  bool zeros(size_t n);
  /// Reads the u32 magic and u16 version a versioned record starts with. False when they are not `magic`
  /// and `version`; `problem` then says "bad magic 0x..." or "protocol version V (expected E)".
  bool magicAndVersion(uint32_t magic, uint16_t version, std::string& problem);
  /// Bytes read so far.
  size_t offset() const { return at_; }

 private:
  const unsigned char* claim(size_t n);

  const unsigned char* in_;
  size_t size_;
  size_t at_ = 0;
};

}  // namespace hetccl::transport
