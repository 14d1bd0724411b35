#include "perf_options.hpp"

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace hetccl::perf {
namespace {

constexpr std::array<std::string_view, 8> kCollectives{"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                                       "reduce",     "alltoall",   "alltoallv",      "sendrecv"};

struct TypeName {
  std::string_view name;
  TypeSpec spec;
};
constexpr std::array<TypeName, 18> kTypeNames{{
    {"int8", {hetcclInt8, 1, "int8", false}},           {"char", {hetcclInt8, 1, "int8", false}},
    {"uint8", {hetcclUint8, 1, "uint8", false}},        {"int32", {hetcclInt32, 4, "int32", false}},
    {"int", {hetcclInt32, 4, "int32", false}},          {"uint32", {hetcclUint32, 4, "uint32", false}},
    {"int64", {hetcclInt64, 8, "int64", false}},        {"uint64", {hetcclUint64, 8, "uint64", false}},
    {"half", {hetcclFloat16, 2, "half", true}},         {"float16", {hetcclFloat16, 2, "half", true}},
    {"float", {hetcclFloat32, 4, "float", true}},       {"float32", {hetcclFloat32, 4, "float", true}},
    {"double", {hetcclFloat64, 8, "double", true}},     {"float64", {hetcclFloat64, 8, "double", true}},
    {"bfloat16", {hetcclBfloat16, 2, "bfloat16", true}}, {"bf16", {hetcclBfloat16, 2, "bfloat16", true}},
    {"f8e4m3", {hetcclFloat8e4m3, 1, "f8e4m3", true}},   {"f8e5m2", {hetcclFloat8e5m2, 1, "f8e5m2", true}},
}};

constexpr std::array<std::string_view, 6> kOpNames{"sum", "prod", "max", "min", "avg", "premulsum"};

long long parseInt(const std::string& flag, const std::string& text, long long lo, long long hi) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || errno != 0 || *end != '\0' || v < lo || v > hi)
    throw std::invalid_argument(flag + " expects an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                "], got '" + text + "'");
  return v;
}

TypeSpec parseType(const std::string& text) {
  for (const auto& t : kTypeNames)
    if (text == t.name) return t.spec;
  throw std::invalid_argument("-d: unknown data type '" + text +
                              "' (int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2)");
}

OpKind parseOp(const std::string& text) {
  for (size_t i = 0; i < kOpNames.size(); ++i)
    if (text == kOpNames[i]) return static_cast<OpKind>(i);
  if (text == "mulsum") return OpKind::PreMulSum;  // nccl-tests' name
  throw std::invalid_argument("-o: unknown reduction '" + text + "' (sum prod max min avg premulsum)");
}

BufferPlace parseBufferPlace(const std::string& text) {
  if (text == "host") return BufferPlace::Host;
  if (text == "cuda") return BufferPlace::Cuda;
  if (text == "hip") return BufferPlace::Hip;
  if (text == "gpu") return BufferPlace::Gpu;
  throw std::invalid_argument("--device: expects host, cuda, hip or gpu, got '" + text + "'");
}

}  // namespace

const char* opName(OpKind op) noexcept { return kOpNames[static_cast<size_t>(op)].data(); }

const char* bufferPlaceName(BufferPlace place) noexcept {
  switch (place) {
    case BufferPlace::Host: return "host";
    case BufferPlace::Cuda: return "cuda";
    case BufferPlace::Hip: return "hip";
    case BufferPlace::Gpu: break;
  }
  return "gpu";
}

bool isKnownCollective(const std::string& name) {
  for (auto c : kCollectives)
    if (name == c) return true;
  return false;
}

size_t parseByteSize(const std::string& flag, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  std::string_view suffix(end);
  unsigned shift = 0;
  if (suffix == "K" || suffix == "k") shift = 10;
  else if (suffix == "M" || suffix == "m") shift = 20;
  else if (suffix == "G" || suffix == "g") shift = 30;
  else if (!suffix.empty()) shift = 64;  // marks an error below
  if (text.empty() || text[0] == '-' || end == text.c_str() || errno != 0 || shift == 64 || (v >> (63 - shift)) != 0)
    throw std::invalid_argument(flag + " expects a size such as 64, 1K, 256M or 1G, got '" + text + "'");
  return static_cast<size_t>(v << shift);
}

PerfOptions parsePerfOptions(int argc, const char* const* argv) {
  PerfOptions o;
  bool factorGiven = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      o.help = true;
      continue;
    }
    if (arg == "-G") {  // a flag without value
      o.buffers = BufferPlace::Gpu;
      continue;
    }
    if (arg.empty() || arg[0] != '-') {
      if (!o.collective.empty()) throw std::invalid_argument("unexpected argument '" + arg + "'");
      if (!isKnownCollective(arg)) throw std::invalid_argument("unknown collective '" + arg + "'");
      o.collective = arg;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "-b") o.minBytes = parseByteSize(arg, value);
    else if (arg == "-e") o.maxBytes = parseByteSize(arg, value);
    else if (arg == "-i") o.stepBytes = parseByteSize(arg, value);
    else if (arg == "-f") {
      char* end = nullptr;
      o.stepFactor = std::strtod(value.c_str(), &end);
      if (*end != '\0' || !(o.stepFactor >= 1) || !std::isfinite(o.stepFactor))
        throw std::invalid_argument("-f expects a factor >= 1, got '" + value + "'");
      factorGiven = true;
    } else if (arg == "-n") o.iters = static_cast<int>(parseInt(arg, value, 1, 1000000));
    else if (arg == "-w") o.warmupIters = static_cast<int>(parseInt(arg, value, 0, 1000000));
    else if (arg == "-c") o.check = parseInt(arg, value, 0, 1) == 1;
    else if (arg == "-d") o.type = parseType(value);
    else if (arg == "-o") o.op = parseOp(value);
    else if (arg == "-r") o.root = static_cast<int>(parseInt(arg, value, 0, 1 << 30));
    else if (arg == "-z") o.blocking = static_cast<int>(parseInt(arg, value, 0, 1));
    else if (arg == "-p") o.parallelInit = static_cast<int>(parseInt(arg, value, 0, 1));
    else if (arg == "--json") o.jsonPath = value;
    else if (arg == "--plot") o.plotPath = value;
    else if (arg == "--device") o.buffers = parseBufferPlace(value);
    else throw std::invalid_argument("unknown option '" + arg + "'");
  }
  if (o.help) return o;
  if (o.collective.empty()) throw std::invalid_argument("missing the collective to measure");
  if (o.minBytes > o.maxBytes) throw std::invalid_argument("-b (min size) is larger than -e (max size)");
  if (!factorGiven) o.stepFactor = 1;
  if (o.stepFactor == 1 && o.stepBytes == 0) throw std::invalid_argument("-i must be > 0 when -f is 1");
  return o;
}

std::string perfUsage() {
  return "usage: hetccl-perf COLL [options]\n"
         "  COLL: all_reduce all_gather reduce_scatter broadcast reduce alltoall alltoallv sendrecv\n"
         "  -b MIN       smallest size in bytes (K/M/G suffixes; default 32M)\n"
         "  -e MAX       largest size in bytes (default 32M)\n"
         "  -f FACTOR    multiply the size by FACTOR each step (default: add -i)\n"
         "  -i BYTES     add BYTES each step when -f is 1 (default 1M)\n"
         "  -n ITERS     timed iterations per size (default 20)\n"
         "  -w ITERS     warm-up iterations per size (default 5)\n"
         "  -c 0|1       check results exactly (default 1)\n"
         "  -d TYPE      int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2 (default float)\n"
         "  -o OP        sum prod max min avg premulsum (default sum)\n"
         "  -r ROOT      root rank of broadcast and reduce (default 0)\n"
         "  -z 0|1, -p 0|1   accepted for nccl-tests compatibility\n"
         "  --json FILE  write the results as JSON (rank 0)\n"
         "  --plot FILE  draw bus bandwidth against size as SVG (rank 0)\n"
         "  --device host|cuda|hip|gpu   where the buffers live (default host). cuda / hip: GPU memory of that\n"
         "               vendor's runtime (libcudart / libamdhip64, opened at run time), device HETCCL_LOCAL_RANK %\n"
         "               device count, calls on one stream, time = n calls then one stream sync. gpu: the GPU\n"
         "               hetccl gives the rank: HETCCL_DEVICE=cuda|hip picks that vendor, auto (default) CUDA\n"
         "               when its runtime sees a device, else HIP\n"
         "  -G           same as --device gpu\n"
         "Run under a launcher, e.g.: hetccl-run -n 2 -- hetccl-perf all_reduce -b 1K -e 256M -f 2\n";
}

}  // namespace hetccl::perf
