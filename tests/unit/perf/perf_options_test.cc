// hetccl-perf's command line (tools/hetccl-perf/perf_options.cc): sizes, flags and where the buffers live.
#include <gtest/gtest.h>

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "perf_options.hpp"

namespace hetccl::perf {
namespace {

PerfOptions parse(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"hetccl-perf"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parsePerfOptions(static_cast<int>(argv.size()), argv.data());
}

std::string parseError(std::initializer_list<const char*> args) {
  try {
    parse(args);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PerfOptions, Defaults) {
  const PerfOptions o = parse({"all_reduce"});
  EXPECT_EQ(o.collective, "all_reduce");
  EXPECT_EQ(o.minBytes, 32u << 20);
  EXPECT_EQ(o.maxBytes, 32u << 20);
  EXPECT_EQ(o.buffers, BufferPlace::Host);
  EXPECT_TRUE(o.check);
}

TEST(PerfOptions, SizesAndFlags) {
  const PerfOptions o = parse({"all_gather", "-b", "1K", "-e", "256M", "-f", "2", "-n", "3", "-w", "0", "-c", "0",
                               "-d", "bf16", "-o", "max", "--json", "r.json"});
  EXPECT_EQ(o.minBytes, 1024u);
  EXPECT_EQ(o.maxBytes, 256u << 20);
  EXPECT_EQ(o.stepFactor, 2);
  EXPECT_EQ(o.iters, 3);
  EXPECT_EQ(o.warmupIters, 0);
  EXPECT_FALSE(o.check);
  EXPECT_STREQ(o.type.name, "bfloat16");
  EXPECT_EQ(o.op, OpKind::Max);
  EXPECT_EQ(o.jsonPath, "r.json");
  EXPECT_NE(parseError({"all_reduce", "-b", "2K", "-e", "1K"}).find("larger than -e"), std::string::npos);
  EXPECT_NE(parseError({"all_reduce", "-b", "1X"}).find("-b expects a size"), std::string::npos);
  EXPECT_NE(parseError({"nothing"}).find("unknown collective 'nothing'"), std::string::npos);
}

TEST(PerfOptions, DeviceValues) {
  EXPECT_EQ(parse({"all_reduce", "--device", "host"}).buffers, BufferPlace::Host);
  EXPECT_EQ(parse({"all_reduce", "--device", "cuda"}).buffers, BufferPlace::Cuda);
  EXPECT_EQ(parse({"all_reduce", "--device", "hip"}).buffers, BufferPlace::Hip);
  EXPECT_EQ(parse({"all_reduce", "--device", "gpu"}).buffers, BufferPlace::Gpu);
  EXPECT_EQ(parse({"all_reduce", "-b", "8", "--device", "hip", "-e", "8"}).buffers, BufferPlace::Hip);
  EXPECT_STREQ(bufferPlaceName(BufferPlace::Host), "host");
  EXPECT_STREQ(bufferPlaceName(BufferPlace::Cuda), "cuda");
  EXPECT_STREQ(bufferPlaceName(BufferPlace::Hip), "hip");
  EXPECT_STREQ(bufferPlaceName(BufferPlace::Gpu), "gpu");
}

TEST(PerfOptions, DashGIsTheRanksGpu) {
  EXPECT_EQ(parse({"all_reduce", "-G"}).buffers, BufferPlace::Gpu);
  EXPECT_EQ(parse({"-G", "sendrecv", "-b", "8", "-e", "8"}).buffers, BufferPlace::Gpu);
  // The last of -G and --device wins, as for every other flag.
  EXPECT_EQ(parse({"all_reduce", "-G", "--device", "hip"}).buffers, BufferPlace::Hip);
  EXPECT_EQ(parse({"all_reduce", "--device", "cuda", "-G"}).buffers, BufferPlace::Gpu);
}

TEST(PerfOptions, BadDeviceNamesTheChoices) {
  const std::string e = parseError({"all_reduce", "--device", "rocm"});
  EXPECT_NE(e.find("--device: expects host, cuda, hip or gpu, got 'rocm'"), std::string::npos) << e;
  EXPECT_NE(parseError({"all_reduce", "--device"}).find("--device needs a value"), std::string::npos);
  EXPECT_NE(parseError({"all_reduce", "--device", "HIP"}).find("got 'HIP'"), std::string::npos);
}

TEST(PerfOptions, UsageNamesEveryDevice) {
  const std::string usage = perfUsage();
  EXPECT_NE(usage.find("--device host|cuda|hip|gpu"), std::string::npos) << usage;
  EXPECT_NE(usage.find("-G           same as --device gpu"), std::string::npos) << usage;
  EXPECT_NE(usage.find("HETCCL_DEVICE"), std::string::npos) << usage;
}

}  // namespace
}  // namespace hetccl::perf
