#include "wire_vectors.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

#ifndef HETCCL_WIRE_VECTORS_DIR
#error "HETCCL_WIRE_VECTORS_DIR must name tests/data/wire_vectors (tests/CMakeLists.txt sets it)"
#endif

namespace hetccl::test::wire {
namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool isHexByte(const std::string& tok) { return tok.size() == 2 && hexValue(tok[0]) >= 0 && hexValue(tok[1]) >= 0; }

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string fileOf(const std::string& name) { return vectorDir() + "/" + name + ".hex"; }

constexpr const char* kProtocolNote =
    "A changed vector is a protocol change: bump the format's version, regenerate "
    "(HETCCL_WRITE_WIRE_VECTORS, tests/data/wire_vectors/README.md) and say so in the commit.";

}  // namespace

const VectorFile::Line* VectorFile::lineAt(size_t offset) const {
  for (const Line& l : lines)
    if (offset >= l.offset && offset < l.offset + l.size) return &l;
  return nullptr;
}

std::string vectorDir() {
  const char* env = std::getenv("HETCCL_WIRE_VECTORS_DIR");
  return env && *env ? env : HETCCL_WIRE_VECTORS_DIR;
}

std::string writeDir() {
  const char* env = std::getenv("HETCCL_WRITE_WIRE_VECTORS");
  return env && *env ? env : "";
}

Bytes fromHex(const std::string& text) {
  Bytes out;
  int hi = -1;
  for (char c : text) {
    if (c == ' ' || c == '\t') continue;
    int v = hexValue(c);
    if (v < 0) throw std::runtime_error("not a hex digit: '" + std::string(1, c) + "' in '" + text + "'");
    if (hi < 0) {
      hi = v;
    } else {
      out.push_back(static_cast<unsigned char>(hi << 4 | v));
      hi = -1;
    }
  }
  if (hi >= 0) throw std::runtime_error("odd number of hex digits in '" + text + "'");
  return out;
}

std::string toHex(const unsigned char* p, size_t n, const char* sep) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (i) out += sep;
    out += kDigits[p[i] >> 4];
    out += kDigits[p[i] & 15];
  }
  return out;
}

VectorFile readVector(const std::string& name) {
  VectorFile f;
  f.path = fileOf(name);
  std::ifstream in(f.path);
  if (!in) throw std::runtime_error("cannot read wire vector " + f.path);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string body = trim(line);
    if (body.empty() || body[0] == '#') continue;
    auto fail = [&](const std::string& why) {
      return std::runtime_error(f.path + ":" + std::to_string(number) + ": " + why + ": '" + line + "'");
    };
    if (body[0] != '@') throw fail("a data line starts with @OFFSET");
    std::string field;
    if (size_t bar = body.find('|'); bar != std::string::npos) {
      field = trim(body.substr(bar + 1));
      body = body.substr(0, bar);
    }
    std::istringstream tokens(body.substr(1));
    std::string tok;
    if (!(tokens >> tok)) throw fail("no offset");
    char* end = nullptr;
    unsigned long long offset = std::strtoull(tok.c_str(), &end, 10);
    if (!end || *end) throw fail("bad offset '" + tok + "'");
    if (offset != f.bytes.size())
      throw fail("offset " + std::to_string(offset) + " but " + std::to_string(f.bytes.size()) + " bytes precede this line");
    size_t before = f.bytes.size();
    while (tokens >> tok) {
      if (!isHexByte(tok)) throw fail("'" + tok + "' is not a hex byte (a field name goes after '|')");
      f.bytes.push_back(static_cast<unsigned char>(hexValue(tok[0]) << 4 | hexValue(tok[1])));
    }
    if (f.bytes.size() == before) throw fail("no bytes");
    f.lines.push_back({before, f.bytes.size() - before, field, number});
  }
  return f;
}

std::string renderVector(const Vector& v) {
  std::ostringstream out;
  out << "# " << v.name << ".hex: " << v.format << "\n";
  for (const std::string& n : v.notes) out << "# " << n << "\n";
  out << "# " << v.bytes.size() << " bytes. Written by tests/unit/wire (the real encoder); checked byte for byte by\n"
      << "# unit_wire (project compiler) and unit_wire_clang (clang-14). A changed vector is a protocol change:\n"
      << "# bump the format's version and regenerate (README.md).\n";
  out << "# offset bytes" << std::string(44, ' ') << "| field\n";
  // The fields, with gaps filled, each cut into lines of at most 16 bytes.
  std::vector<Field> fields;
  size_t at = 0;
  for (const Field& f : v.fields) {
    if (f.offset > at) fields.push_back({at, f.offset - at, "(unnamed)"});
    fields.push_back(f);
    at = f.offset + f.size;
  }
  if (at < v.bytes.size()) fields.push_back({at, v.bytes.size() - at, "(unnamed)"});
  for (const Field& f : fields) {
    for (size_t o = 0; o < f.size; o += 16) {
      size_t n = std::min<size_t>(16, f.size - o);
      if (f.offset + o + n > v.bytes.size()) throw std::runtime_error(v.name + ": field '" + f.name + "' past the end");
      std::string hex = toHex(v.bytes.data() + f.offset + o, n);
      char head[16];
      std::snprintf(head, sizeof head, "@%-6zu  ", f.offset + o);
      out << head << hex << std::string(hex.size() < 48 ? 48 - hex.size() : 1, ' ') << "| " << f.name
          << (o ? " (cont.)" : "") << "\n";
    }
  }
  return out.str();
}

void writeVector(const Vector& v, const std::string& dir) {
  ::mkdir(dir.c_str(), 0755);
  std::string path = dir + "/" + v.name + ".hex";
  std::ofstream out(path);
  out << renderVector(v);
  if (!out) throw std::runtime_error("cannot write " + path);
}

Bytes checkVector(const Vector& v) {
  if (std::string dir = writeDir(); !dir.empty()) {
    writeVector(v, dir);
    std::printf("wrote %s/%s.hex (%zu bytes)\n", dir.c_str(), v.name.c_str(), v.bytes.size());
    return v.bytes;
  }
  VectorFile f;
  try {
    f = readVector(v.name);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wire vector " << v.name << " [" << v.format << "]: " << e.what();
    return {};
  }
  std::vector<size_t> diffs;
  for (size_t i = 0; i < std::min(f.bytes.size(), v.bytes.size()); ++i)
    if (f.bytes[i] != v.bytes[i]) diffs.push_back(i);
  if (diffs.empty() && f.bytes.size() == v.bytes.size()) return f.bytes;
  std::ostringstream msg;
  msg << "wire vector " << f.path << " [" << v.format << "] differs from what the encoder writes now:\n";
  if (f.bytes.size() != v.bytes.size())
    msg << "  length: the committed vector has " << f.bytes.size() << " bytes, the encoder wrote " << v.bytes.size() << "\n";
  for (size_t k = 0; k < diffs.size() && k < 8; ++k) {
    size_t i = diffs[k];
    const VectorFile::Line* l = f.lineAt(i);
    char line[256];
    std::snprintf(line, sizeof line, "  offset %zu (0x%zx): committed 0x%02x, encoder 0x%02x", i, i, f.bytes[i], v.bytes[i]);
    msg << line;
    if (l)
      msg << "  field '" << l->field << "' (line " << l->lineNumber << ", bytes " << l->offset << ".." << l->offset + l->size - 1
          << ")";
    msg << "\n";
  }
  if (diffs.size() > 8) msg << "  ... " << diffs.size() - 8 << " more differing bytes\n";
  msg << "  " << kProtocolNote;
  ADD_FAILURE() << msg.str();
  return f.bytes;
}

// ---- negative.txt ----

namespace {

std::vector<NegativeCase> parseNegatives() {
  const std::string path = vectorDir() + "/negative.txt";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<NegativeCase> cases;
  std::string line;
  int number = 0;
  auto fail = [&](const std::string& why) {
    return std::runtime_error(path + ":" + std::to_string(number) + ": " + why + ": '" + line + "'");
  };
  while (std::getline(in, line)) {
    ++number;
    std::string body = trim(line);
    if (body.empty() || body[0] == '#') continue;
    if (body[0] == '[') {
      size_t slash = body.find('/'), close = body.find(']');
      if (slash == std::string::npos || close == std::string::npos || slash > close) throw fail("expected [format/name]");
      NegativeCase c;
      c.format = body.substr(1, slash - 1);
      c.name = body.substr(slash + 1, close - slash - 1);
      c.lineNumber = number;
      cases.push_back(std::move(c));
      continue;
    }
    if (cases.empty()) throw fail("a directive before the first [format/name]");
    NegativeCase& c = cases.back();
    std::string word = body.substr(0, body.find(' '));
    std::string rest = body.size() > word.size() ? trim(body.substr(word.size())) : "";
    if (word == "base") {
      c.base = rest;
      c.bytes = readVector(rest).bytes;
    } else if (word == "set") {
      if (c.base.empty()) throw fail("set before base");
      std::istringstream tokens(rest);
      size_t offset = 0;
      if (!(tokens >> offset)) throw fail("set OFFSET BYTES...");
      std::string hex((std::istreambuf_iterator<char>(tokens)), std::istreambuf_iterator<char>());
      Bytes b = fromHex(hex);
      if (b.empty() || offset + b.size() > c.bytes.size()) throw fail("set outside the vector");
      std::copy(b.begin(), b.end(), c.bytes.begin() + static_cast<long>(offset));
      c.patches.push_back(body);
    } else if (word == "truncate") {
      size_t n = std::strtoull(rest.c_str(), nullptr, 10);
      if (n >= c.bytes.size()) throw fail("truncate to a length not below the vector's");
      c.bytes.resize(n);
      c.patches.push_back(body);
    } else if (word == "append") {
      Bytes b = fromHex(rest);
      c.bytes.insert(c.bytes.end(), b.begin(), b.end());
      c.patches.push_back(body);
    } else if (word == "error") {
      c.error = rest;
    } else {
      throw fail("unknown directive '" + word + "'");
    }
  }
  for (const NegativeCase& c : cases)
    if (c.base.empty() || c.error.empty() || c.patches.empty())
      throw std::runtime_error(path + ":" + std::to_string(c.lineNumber) + ": case " + c.format + "/" + c.name +
                               " needs base, at least one patch and error");
  return cases;
}

const std::vector<NegativeCase>& allNegatives() {
  static std::vector<NegativeCase> cases = parseNegatives();
  return cases;
}

}  // namespace

std::vector<NegativeCase> negativeCases(const std::string& format) {
  std::vector<NegativeCase> out;
  for (const NegativeCase& c : allNegatives())
    if (c.format == format) out.push_back(c);
  return out;
}

std::vector<std::string> negativeFormats() {
  std::vector<std::string> out;
  for (const NegativeCase& c : allNegatives())
    if (std::find(out.begin(), out.end(), c.format) == out.end()) out.push_back(c.format);
  return out;
}

int runNegativeCases(const std::string& format, const std::function<std::string(const Bytes&)>& decode) {
  if (!writeDir().empty()) return 0;  // regenerating: the bases may be changing
  int n = 0;
  for (const NegativeCase& c : negativeCases(format)) {
    ++n;
    std::string patches;
    for (const std::string& p : c.patches) patches += "\n    " + p;
    std::string error;
    try {
      error = decode(c.bytes);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "negative vector " << c.format << "/" << c.name << " (negative.txt:" << c.lineNumber
                    << "): the decode harness threw instead of returning the decoder's error: " << e.what();
      continue;
    }
    if (error.empty())
      ADD_FAILURE() << "negative vector " << c.format << "/" << c.name << " (negative.txt:" << c.lineNumber << ", "
                    << c.base << " with" << patches << ") was ACCEPTED; expected an error containing '" << c.error << "'";
    else if (error.find(c.error) == std::string::npos)
      ADD_FAILURE() << "negative vector " << c.format << "/" << c.name << " (negative.txt:" << c.lineNumber
                    << ") was rejected with '" << error << "', expected an error containing '" << c.error << "'";
  }
  EXPECT_GT(n, 0) << "negative.txt has no case for format " << format;
  return n;
}

}  // namespace hetccl::test::wire
