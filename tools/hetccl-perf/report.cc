#include "report.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace hetccl::perf {
namespace {

/// nccl-tests' time format: fewer decimals as the number grows, always 7 wide.
std::string timeText(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, us >= 10000 ? "%7.0f" : us >= 100 ? "%7.1f" : "%7.2f", us);
  return buf;
}

void printPlace(std::FILE* out, const PlaceResult& p) {
  if (!p.ran) {
    std::fprintf(out, "  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
    return;
  }
  const std::string wrong = p.wrong < 0 ? "N/A" : std::to_string(p.wrong);
  std::fprintf(out, "  %7s  %6.2f  %6.2f  %6s", timeText(p.timeUs).c_str(), p.algBw, p.busBw, wrong.c_str());
}

void jsonPlace(std::ostringstream& os, const char* key, const PlaceResult& p) {
  os << "\"" << key << "\": ";
  if (!p.ran) {
    os << "null";
    return;
  }
  os << "{\"time_us\": " << p.timeUs << ", \"algbw_gbps\": " << p.algBw << ", \"busbw_gbps\": " << p.busBw
     << ", \"wrong\": " << (p.wrong < 0 ? std::string("null") : std::to_string(p.wrong)) << "}";
}

std::string jsonEscape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    r += c;
  }
  return r;
}

}  // namespace

double PerfRun::averageBusBw() const {
  double sum = 0;
  int n = 0;
  for (const auto& s : sizes)
    for (const PlaceResult* p : {&s.outOfPlace, &s.inPlace})
      if (p->ran) sum += p->busBw, ++n;
  return n ? sum / n : 0;
}

int64_t PerfRun::totalWrong() const {
  int64_t total = 0;
  for (const auto& s : sizes)
    for (const PlaceResult* p : {&s.outOfPlace, &s.inPlace})
      if (p->ran && p->wrong > 0) total += p->wrong;
  return total;
}

int64_t PerfRun::wrongHere() const {
  int64_t total = 0;
  for (const auto& s : sizes)
    for (const PlaceResult* p : {&s.outOfPlace, &s.inPlace})
      if (p->ran && p->wrongHere > 0) total += p->wrongHere;
  return total;
}

void printHeader(std::FILE* out, const PerfOptions& o, const PerfRun& run) {
  std::fprintf(out, "# hetccl-perf: %s\n", run.collective.c_str());
  std::fprintf(out, "# nRanks %d minBytes %zu maxBytes %zu step: ", run.nranks, o.minBytes, o.maxBytes);
  if (o.stepFactor > 1) std::fprintf(out, "%g(factor)", o.stepFactor);
  else std::fprintf(out, "%zu(bytes)", o.stepBytes);
  std::fprintf(out, " warmup iters: %d iters: %d validation: %d blocking: %d\n#\n# Using devices\n", o.warmupIters,
               o.iters, o.check ? 1 : 0, o.blocking);
  if (run.buffers != "host")
    std::fprintf(out, "# buffers: %s device memory%s; calls on one stream; time = %d calls, then a stream sync\n",
                 run.buffersName.c_str(), run.buffersChoice.empty() ? "" : (" (" + run.buffersChoice + ")").c_str(),
                 o.iters);
  for (const auto& line : run.rankLines) std::fprintf(out, "%s\n", line.c_str());
  std::fprintf(out, "#\n");
  std::fprintf(out, "# %62s %34s\n", "out-of-place", "in-place");
  std::fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size", "count", "type",
               "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
  std::fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)", "(elements)", "", "",
               "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  std::fflush(out);
}

void printRow(std::FILE* out, const PerfRun& run, const SizeResult& row) {
  std::fprintf(out, "%12zu  %12zu  %8s  %6s  %6d", row.bytes, row.count, run.typeName.c_str(), run.opName.c_str(),
               run.root);
  printPlace(out, row.outOfPlace);
  printPlace(out, row.inPlace);
  std::fprintf(out, "\n");
  std::fflush(out);
}

void printFooter(std::FILE* out, const PerfRun& run) {
  const int64_t wrong = run.totalWrong();
  std::fprintf(out, "# Out of bounds values : %lld %s\n", static_cast<long long>(wrong), wrong ? "FAILED" : "OK");
  std::fprintf(out, "# Avg bus bandwidth    : %g \n#\n", run.averageBusBw());
  std::fflush(out);
}

std::string toJson(const PerfOptions& o, const PerfRun& run) {
  std::ostringstream os;
  os.precision(10);
  os << "{\n  \"tool\": \"hetccl-perf\",\n  \"collective\": \"" << jsonEscape(run.collective) << "\",\n  \"nranks\": "
     << run.nranks << ",\n  \"type\": \"" << run.typeName << "\",\n  \"redop\": \"" << run.opName
     << "\",\n  \"root\": " << run.root << ",\n  \"iters\": " << o.iters << ",\n  \"warmup_iters\": " << o.warmupIters
     << ",\n  \"check\": " << (o.check ? "true" : "false") << ",\n  \"buffers\": \"" << jsonEscape(run.buffers) << "\",\n  \"results\": [";
  for (size_t i = 0; i < run.sizes.size(); ++i) {
    const auto& s = run.sizes[i];
    os << (i ? "," : "") << "\n    {\"size\": " << s.bytes << ", \"count\": " << s.count << ", ";
    jsonPlace(os, "out_of_place", s.outOfPlace);
    os << ", ";
    jsonPlace(os, "in_place", s.inPlace);
    os << "}";
  }
  os << "\n  ],\n  \"avg_busbw_gbps\": " << run.averageBusBw() << ",\n  \"wrong\": " << run.totalWrong() << "\n}\n";
  return os.str();
}

void writeTextFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (f) f << text;
  if (!f) throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
}

}  // namespace hetccl::perf
