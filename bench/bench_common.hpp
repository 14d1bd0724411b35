// Shared by the baseline all-reduce benchmarks (MPI, Gloo): the same flags, sizes, input values, exact
// check and output columns as `hetccl-perf all_reduce -d float -o sum`, so their tables line up.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

struct Options {
  size_t minBytes = 1024;
  size_t maxBytes = 256u << 20;
  double factor = 2;
  int iters = 20;
  int warmup = 5;
  bool check = true;
};

/// "1K", "256M", "64": bytes with K/M/G suffixes.
inline size_t parseSize(const std::string& text) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  const std::string suffix(end);
  const int shift = suffix.empty() ? 0 : suffix == "K" ? 10 : suffix == "M" ? 20 : suffix == "G" ? 30 : -1;
  if (end == text.c_str() || shift < 0) throw std::invalid_argument("bad size '" + text + "'");
  return static_cast<size_t>(v) << shift;
}

/// Parses -b -e -f -n -w -c; other arguments are handed to `extra(flag, value)` (which returns false
/// for an unknown flag).
template <typename Extra>
Options parseOptions(int argc, char** argv, Extra&& extra) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "-b") o.minBytes = parseSize(value);
    else if (flag == "-e") o.maxBytes = parseSize(value);
    else if (flag == "-f") o.factor = std::atof(value.c_str());
    else if (flag == "-n") o.iters = std::atoi(value.c_str());
    else if (flag == "-w") o.warmup = std::atoi(value.c_str());
    else if (flag == "-c") o.check = std::atoi(value.c_str()) != 0;
    else if (!extra(flag, value)) throw std::invalid_argument("unknown flag " + flag);
  }
  if (argc % 2 == 0) throw std::invalid_argument(std::string("flag ") + argv[argc - 1] + " needs a value");
  if (o.factor <= 1 || o.iters < 1 || o.warmup < 0 || o.minBytes < 4 || o.minBytes > o.maxBytes)
    throw std::invalid_argument("need -f > 1, -n >= 1, -w >= 0, 4 <= -b <= -e");
  return o;
}

inline std::vector<size_t> sweep(const Options& o) {
  std::vector<size_t> sizes;
  for (size_t s = o.minBytes; s <= o.maxBytes; s = static_cast<size_t>(static_cast<double>(s) * o.factor))
    sizes.push_back(s);
  return sizes;
}

/// Input element i of `rank` and the expected sum over `nranks` (hetccl-perf's values: exact in float).
inline float inputValue(int rank, size_t i) { return static_cast<float>(1 + (static_cast<size_t>(rank) * 7 + i * 3) % 11); }
inline float expectedSum(int nranks, size_t i) {
  float sum = 0;
  for (int r = 0; r < nranks; ++r) sum += inputValue(r, i);
  return sum;
}
inline void fillInput(std::vector<float>& buf, size_t count, int rank) {
  for (size_t i = 0; i < count; ++i) buf[i] = inputValue(rank, i);
}
inline long long countWrong(const std::vector<float>& buf, size_t count, int nranks) {
  long long wrong = 0;
  for (size_t i = 0; i < count; ++i) wrong += buf[i] != expectedSum(nranks, i);
  return wrong;
}

/// One placement's result: time already maxed over ranks, wrong already summed.
struct Place {
  double timeUs;
  long long wrong;  // -1: unchecked
};

inline double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline void printHeader(const char* title, int nranks, const Options& o) {
  std::printf("# %s\n# nRanks %d minBytes %zu maxBytes %zu step: %g(factor) warmup iters: %d iters: %d validation: %d\n#\n",
              title, nranks, o.minBytes, o.maxBytes, o.factor, o.warmup, o.iters, o.check ? 1 : 0);
  std::printf("# %62s %34s\n", "out-of-place", "in-place");
  std::printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size", "count", "type", "redop",
              "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
  std::printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)", "(elements)", "", "", "",
              "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

/// Prints a row and returns the two bus bandwidths (all-reduce factor 2(n-1)/n) added to `busSum`.
inline void printRow(size_t bytes, int nranks, const Place& out, const Place& in, double& busSum, long long& wrongSum) {
  std::printf("%12zu  %12zu  %8s  %6s  %6d", bytes, bytes / 4, "float", "sum", -1);
  for (const Place* p : {&out, &in}) {
    const double alg = static_cast<double>(bytes) / (p->timeUs * 1e3);
    const double bus = alg * 2.0 * (nranks - 1) / nranks;
    busSum += bus;
    if (p->wrong > 0) wrongSum += p->wrong;
    const char* fmt = p->timeUs >= 10000 ? "  %7.0f" : p->timeUs >= 100 ? "  %7.1f" : "  %7.2f";
    std::printf(fmt, p->timeUs);
    std::printf("  %6.2f  %6.2f  %6s", alg, bus, p->wrong < 0 ? "N/A" : std::to_string(p->wrong).c_str());
  }
  std::printf("\n");
  std::fflush(stdout);
}

inline void printFooter(double busSum, int rows, long long wrong) {
  std::printf("# Out of bounds values : %lld %s\n# Avg bus bandwidth    : %g \n#\n", wrong, wrong ? "FAILED" : "OK",
              rows ? busSum / (2 * rows) : 0.0);
}

}  // namespace bench
