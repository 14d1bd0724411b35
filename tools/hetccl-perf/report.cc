#include "report.hpp"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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

namespace {
/// "ranks 0-1, 4" for a sorted list of ranks.
std::string rankRanges(const std::vector<int>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    s += (s.empty() ? "" : ", ") + std::to_string(ranks[i]) + (j > i ? "-" + std::to_string(ranks[j]) : "");
    i = j + 1;
  }
  return s;
}
}  // namespace

unsigned onlineCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

void printVerdict(std::FILE* out, const PerfOptions& o, const PerfRun& run, unsigned coresHere) {
  std::vector<std::pair<std::string, std::vector<int>>> domains;  // in order of first rank
  for (int r = 0; r < static_cast<int>(run.rankDomains.size()); ++r) {
    auto it = std::find_if(domains.begin(), domains.end(), [&](const auto& d) { return d.first == run.rankDomains[r]; });
    if (it == domains.end()) domains.push_back({run.rankDomains[r], {r}});
    else it->second.push_back(r);
  }
  std::string layout;
  for (const auto& [name, ranks] : domains)
    layout += (layout.empty() ? "" : "; ") + name + ": rank" + (ranks.size() > 1 ? "s " : " ") + rankRanges(ranks);
  // The counts of the other ranks came through hetccl (the table); rank 0's own check did not: both count.
  const int64_t wrong = std::max<int64_t>(run.totalWrong(), run.wrongHere());
  const char* verdict = !o.check ? "UNCHECKED" : wrong ? "FAIL" : "PASS";
  std::fprintf(out, "# hetccl-perf: %s: %s %s %s, %zu size(s) from %zu to %zu B, out of place and in place, %s; %d ranks in "
               "%zu domain(s) (%s)\n",
               verdict, run.collective.c_str(), run.typeName.c_str(), run.opName.c_str(), run.sizes.size(),
               run.sizes.empty() ? size_t{0} : run.sizes.front().bytes, run.sizes.empty() ? size_t{0} : run.sizes.back().bytes,
               !o.check ? "results not checked (-c 0)"
               : wrong ? (std::to_string(wrong) + " wrong element(s) found by the ranks").c_str()
                       : "every rank checked every element of its results against values it computed itself",
               run.nranks, domains.size(), layout.c_str());
  const std::string me = run.rankHosts.empty() ? "" : run.rankHosts.front();
  const auto here = static_cast<unsigned>(std::count(run.rankHosts.begin(), run.rankHosts.end(), me));
  if (run.buffers == "host" && here > coresHere)
    std::fprintf(out, "# note: %u ranks share %u CPU core(s) on host %s: the times above are processes taking turns on "
                 "the cores, not the bandwidth of the links\n", here, coresHere, me.c_str());
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
