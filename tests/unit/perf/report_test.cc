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

/// What `print` wrote to a FILE*.
template <typename Print>
std::string printed(Print print) {
  std::FILE* f = std::tmpfile();
  print(f);
  std::rewind(f);
  std::string text;
  char buf[512];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  return text;
}

std::string header(const PerfOptions& o, const PerfRun& run) {
  return printed([&](std::FILE* f) { printHeader(f, o, run); });
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

std::string verdict(const PerfOptions& o, const PerfRun& run, unsigned cores) {
  return printed([&](std::FILE* f) { printVerdict(f, o, run, cores); });
}

PerfRun fourRanksTwoDomains(int64_t wrongElsewhere, int64_t wrongHere) {
  PerfRun run = baseRun();
  run.typeName = "float";
  run.opName = "sum";
  run.nranks = 4;
  run.rankHosts = {"a", "a", "a", "b"};
  run.rankDomains = {"d0", "d1", "d0", "d0"};
  SizeResult r;
  r.bytes = 8;
  r.outOfPlace = {true, 1, 1, 1, wrongElsewhere, wrongHere};
  r.inPlace = {true, 1, 1, 1, 0, 0};
  run.sizes = {r};
  r.bytes = 4096;
  r.outOfPlace.wrong = r.outOfPlace.wrongHere = 0;
  run.sizes.push_back(r);
  return run;
}

TEST(PerfReport, VerdictNamesWhatWasCheckedAndTheDomains) {
  PerfOptions o;
  const std::string v = verdict(o, fourRanksTwoDomains(0, 0), 16);
  EXPECT_NE(v.find("# hetccl-perf: PASS: all_reduce float sum, 2 size(s) from 8 to 4096 B"), std::string::npos) << v;
  EXPECT_NE(v.find("4 ranks in 2 domain(s) (d0: ranks 0, 2-3; d1: rank 1)"), std::string::npos) << v;
  EXPECT_EQ(v.find("# note:"), std::string::npos) << v;  // 3 ranks on host a, 16 cores
}

TEST(PerfReport, VerdictFailsOnWrongElementsOfAnyRankOrOfRankZero) {
  PerfOptions o;
  EXPECT_NE(verdict(o, fourRanksTwoDomains(3, 0), 16).find("FAIL: "), std::string::npos);
  EXPECT_NE(verdict(o, fourRanksTwoDomains(0, 2), 16).find("FAIL: "), std::string::npos);  // the table said 0
  o.check = false;
  EXPECT_NE(verdict(o, fourRanksTwoDomains(0, 0), 16).find("UNCHECKED: "), std::string::npos);
}

TEST(PerfReport, RanksOutnumberingCoresAreNoBandwidthFigures) {
  PerfOptions o;
  const std::string v = verdict(o, fourRanksTwoDomains(0, 0), 2);
  EXPECT_NE(v.find("# note: 3 ranks share 2 CPU core(s) on host a"), std::string::npos) << v;
  PerfRun gpu = fourRanksTwoDomains(0, 0);
  gpu.buffers = "cuda";
  EXPECT_EQ(verdict(o, gpu, 2).find("# note:"), std::string::npos);
}

}  // namespace
}  // namespace hetccl::perf
