// hetccl-perf's header lines and JSON (tools/hetccl-perf/report.cc): where the buffers live, and for -G
// which vendor was chosen and why.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "perf_options.hpp"
#include "perf_result.hpp"
#include "report.hpp"

namespace hetccl::perf {
namespace {

std::string header(const PerfOptions& o, const PerfRun& run) {
  std::FILE* f = std::tmpfile();
  printHeader(f, o, run);
  std::rewind(f);
  std::string text;
  char buf[512];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  return text;
}

PerfRun baseRun() {
  PerfRun run;
  run.collective = "all_reduce";
  run.nranks = 1;
  run.rankLines = {"#  Rank  0 Group  0 Pid      1 on       host device  0 [gpu]"};
  return run;
}

TEST(PerfReport, HostBuffersHaveNoBuffersLine) {
  PerfOptions o;
  const std::string h = header(o, baseRun());
  EXPECT_EQ(h.find("# buffers:"), std::string::npos) << h;
  EXPECT_NE(toJson(o, baseRun()).find("\"buffers\": \"host\""), std::string::npos);
}

TEST(PerfReport, CudaBuffersLineIsUnchanged) {
  PerfOptions o;
  o.iters = 7;
  PerfRun run = baseRun();
  run.buffers = "cuda";
  run.buffersName = "CUDA";
  const std::string h = header(o, run);
  EXPECT_NE(h.find("\n# buffers: CUDA device memory; calls on one stream; time = 7 calls, then a stream sync\n"),
            std::string::npos)
      << h;
  EXPECT_NE(toJson(o, run).find("\"buffers\": \"cuda\""), std::string::npos);
}

TEST(PerfReport, GpuChoiceIsNamed) {
  PerfOptions o;
  o.iters = 3;
  PerfRun run = baseRun();
  run.buffers = "hip";
  run.buffersName = "HIP";
  run.buffersChoice = "--device gpu: HETCCL_DEVICE=hip";
  const std::string h = header(o, run);
  EXPECT_NE(h.find("\n# buffers: HIP device memory (--device gpu: HETCCL_DEVICE=hip); calls on one stream; time = 3 "
                   "calls, then a stream sync\n"),
            std::string::npos)
      << h;
  EXPECT_NE(toJson(o, run).find("\"buffers\": \"hip\""), std::string::npos);
}

}  // namespace
}  // namespace hetccl::perf
