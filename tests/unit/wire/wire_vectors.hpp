// Committed wire-format test vectors (tests/data/wire_vectors/, format described in its README.md).
//
// A positive vector is one file NAME.hex: comment lines (#) and data lines
//     @OFFSET  HEX BYTES ...  | field name
// where OFFSET (decimal) must equal the number of bytes before the line, so a reader can trust the
// offsets printed in the file. The test encodes the same fixed inputs with the real encoder and
// compares byte for byte (checkVector): a difference names the vector, the format, the byte offset and
// the field of the committed line. With HETCCL_WRITE_WIRE_VECTORS=<dir> the test writes the files into
// <dir> instead of comparing (regeneration; a changed vector is a protocol change).
//
// Negative vectors live in negative.txt: cases that patch a positive vector (set bytes, truncate,
// append) and name the text the real decoder's error must contain (NegativeCase).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace hetccl::test::wire {

using Bytes = std::vector<unsigned char>;

/// One named field of a format: bytes [offset, offset + size).
struct Field {
  size_t offset;
  size_t size;
  std::string name;
};

/// A vector as the test produces it: the real encoder's bytes and what they mean.
struct Vector {
  std::string name;                 ///< file stem, e.g. "unique_id.ipv4"
  std::string format;               ///< e.g. "unique id (src/bootstrap/unique_id.hpp)"
  std::vector<std::string> notes;   ///< comment lines: inputs, what is not compared, ...
  std::vector<Field> fields;        ///< in offset order; gaps are written as "(unnamed)"
  Bytes bytes;
};

/// A committed vector file, parsed.
struct VectorFile {
  std::string path;
  Bytes bytes;
  struct Line {
    size_t offset, size;
    std::string field;
    int lineNumber;
  };
  std::vector<Line> lines;
  /// The line holding byte `offset` (nullptr past the end).
  const Line* lineAt(size_t offset) const;
};

/// Where the committed vectors are (HETCCL_WIRE_VECTORS_DIR, else the source tree's).
std::string vectorDir();
/// Non-empty when HETCCL_WRITE_WIRE_VECTORS is set: the test writes vectors there instead of comparing.
std::string writeDir();

/// Parses `dir/name.hex`; throws std::runtime_error naming the file and line on a syntax error.
VectorFile readVector(const std::string& name);
/// Writes `v` as `dir/v.name.hex`.
void writeVector(const Vector& v, const std::string& dir);
/// The text of a vector file (what writeVector writes).
std::string renderVector(const Vector& v);

/// In write mode: writes `v` and returns. Otherwise compares `v.bytes` with the committed file: every
/// differing byte is reported (first ones in full), naming format, offset and field. Returns the
/// committed bytes (empty when the file is missing), which callers then decode.
Bytes checkVector(const Vector& v);

/// Hex helpers.
Bytes fromHex(const std::string& text);  ///< "00 ff 1a" or "00ff1a"
std::string toHex(const unsigned char* p, size_t n, const char* sep = " ");

/// One case of negative.txt: [format/name], base vector, patches, expected error text.
struct NegativeCase {
  std::string format;  ///< before the '/'
  std::string name;    ///< after the '/'
  std::string base;    ///< vector stem
  std::vector<std::string> patches;  ///< for messages
  std::string error;   ///< substring of the decoder's error
  Bytes bytes;         ///< the base vector with the patches applied
  int lineNumber = 0;
};

/// Every case of negative.txt whose format is `format` (the file is parsed once).
std::vector<NegativeCase> negativeCases(const std::string& format);
/// Formats named in negative.txt (for the check that every case has a decoder).
std::vector<std::string> negativeFormats();

/// Runs `decode` on every negative case of `format`: it must return the decoder's error text ("" when
/// the bytes were accepted). A case whose bytes are accepted, or whose error lacks the expected text,
/// fails with the case, its patches and the text. Returns the number of cases run.
int runNegativeCases(const std::string& format, const std::function<std::string(const Bytes&)>& decode);

}  // namespace hetccl::test::wire
