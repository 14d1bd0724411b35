// hetccl_soak: random collectives with exact checks for a fixed time, on the ranks a launcher started.
// Every rank draws the same sequence from --seed: the collective (all nine kinds, fused groups included),
// data type, operator, element count, root, in- or out-of-place; every 64 calls a random split of the
// communicator (a new domain layout) runs a few calls and is destroyed again. Results are compared
// element by element with the reference of tests/mp/values.hpp. Resident memory is sampled at every
// report; once warm (all sizes seen, a third of the time gone) it must stay flat.
//   hetccl_soak [--seconds 30] [--seed 1] [--max-count 300000] [--report-every 10] [--rss-growth-mb 16]
// Prints a progress line per report (rank 0) and a summary per rank; exit status 0 only when no element
// was wrong on this rank (its own comparisons: the verdict never passes through hetccl; the all-reduced
// count is printed as a summary), no call failed and memory stayed flat on this rank. Full length (>= 10 minutes):
//   hetccl-run -n 4 --layout 3,1 -- build/tests/soak/hetccl_soak --seconds 600
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include "checks.hpp"
#include "common/launch_env.hpp"

using namespace hetccl::test;

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

struct Options {
  double seconds = 30;
  uint64_t seed = 1;
  size_t maxCount = 300000;
  double reportEvery = 10;
  double rssGrowthMb = 16;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
    std::string v = argv[++i];
    if (a == "--seconds") o.seconds = std::stod(v);
    else if (a == "--seed") o.seed = std::stoull(v);
    else if (a == "--max-count") o.maxCount = std::stoull(v);
    else if (a == "--report-every") o.reportEvery = std::stod(v);
    else if (a == "--rss-growth-mb") o.rssGrowthMb = std::stod(v);
    else throw std::runtime_error("unknown argument " + a);
  }
  return o;
}

double residentMb() {
  std::ifstream in("/proc/self/statm");
  long pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

/// One random call on `check`, drawn from `rng` (identical on every rank).
void randomCall(Checker& check, std::mt19937_64& rng, int nranks, size_t maxCount, long long* calls) {
  const size_t counts[] = {0, 1, 7, 1000, 4097, 65537, maxCount};
  const auto type = static_cast<hetcclDataType_t>(rng() % hetcclNumTypes);
  const auto op = static_cast<hetcclRedOp_t>(rng() % (hetcclNumOps + 1));  // NumOps stands for PreMulSum
  const size_t count = counts[rng() % (sizeof counts / sizeof counts[0])];
  const int root = static_cast<int>(rng() % nranks);
  const bool inPlace = rng() % 2;
  switch (rng() % 9) {
    case 0: check.allReduce(type, op, count, inPlace); break;
    case 1: check.reduce(type, op, count, root, inPlace); break;
    case 2: check.reduceScatter(type, op, count, inPlace); break;
    case 3: check.allGather(type, count, inPlace); break;
    case 4: check.broadcast(type, count, root, inPlace); break;
    case 5: check.allToAll(type, count); break;
    case 6: check.allToAllv(type, count); break;
    case 7: check.sendRecvRing(type, count); break;
    default: check.fusedGroup(type, count); break;
  }
  ++*calls;
}

/// A random split (the same on every rank): 1..3 colours from a random affine map of the rank.
void splitPhase(hetcclComm_t comm, int rank, int nranks, std::mt19937_64& rng, const Options& o, long long* calls,
                long long* wrong, long long* wrongHere, int* splits) {
  const int colours = 1 + static_cast<int>(rng() % 3), a = 1 + static_cast<int>(rng() % 7),
            b = static_cast<int>(rng() % 5);
  const int colour = (rank * a + b) % colours;
  const int key = static_cast<int>((rng() ^ static_cast<uint64_t>(rank * 2654435761u)) % 1000);
  hetcclComm_t child = nullptr;
  HETCCL_CHECK(hetcclCommSplit(comm, colour, key, &child, nullptr), comm);
  int childRank = 0, childSize = 0;
  HETCCL_CHECK(hetcclCommUserRank(child, &childRank), child);
  HETCCL_CHECK(hetcclCommCount(child, &childSize), child);
  // Calls on a child must agree inside the child only: draw them from a child-specific stream.
  std::mt19937_64 childRng(rng() + static_cast<uint64_t>(colour) * 1000003u);
  HostSpace host;
  Checker check(child, childRank, childSize, host);
  for (int i = 0; i < 4; ++i) randomCall(check, childRng, childSize, o.maxCount / 4, calls);
  *wrong += check.totalWrong();
  *wrongHere += check.wrongHere();
  HETCCL_CHECK(hetcclCommDestroy(child), nullptr);
  ++*splits;
}

}  // namespace

int main(int argc, char** argv) {
  int rank = -1;
  hetcclComm_t comm = nullptr;
  try {
    const Options o = parse(argc, argv);
    auto env = hetccl::tools::readLaunchEnv();
    rank = env.rank;
    HETCCL_CHECK(hetcclCommInitRank(&comm, env.size, env.id, env.rank), comm);
    HostSpace host;
    Checker check(comm, env.rank, env.size, host);
    std::mt19937_64 rng(o.seed);
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    auto nextReport = start + std::chrono::duration<double>(o.reportEvery);
    long long calls = 0, wrong = 0;  // wrong: the all-reduced summary of the split phases
    long long splitWrongHere = 0;     // this rank's own count in the split phases
    int splits = 0;
    double warmRss = -1, lastRss = residentMb();
    long long callsAtWarm = 0;
    // Warm-up: the largest size of every kind once, so buffers and scratch reach their final size.
    for (int kind = 0; kind < 9; ++kind) {
      std::mt19937_64 once(o.seed * 31 + kind);
      randomCall(check, once, env.size, o.maxCount, &calls);
    }
    for (long long it = 0;; ++it) {
      // Rank 0's clock decides for everyone: bit 0 go on, bit 1 report now.
      int32_t flags = 0;
      if (env.rank == 0) {
        const auto now = Clock::now();
        flags = (now - start < std::chrono::duration<double>(o.seconds) ? 1 : 0) | (now >= nextReport ? 2 : 0);
        if (now >= nextReport) nextReport = now + std::chrono::duration<double>(o.reportEvery);
      }
      HETCCL_CHECK(hetcclBroadcast(&flags, &flags, 1, hetcclInt32, 0, comm, nullptr), comm);
      if (flags & 2) {
        long long sumWrong = check.totalWrong();
        lastRss = residentMb();
        const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
        if (warmRss < 0 && elapsed >= o.seconds / 3) {
          warmRss = lastRss;
          callsAtWarm = calls;
        }
        if (env.rank == 0)
          std::printf("soak: %.0f s: %lld calls, %d splits, %lld wrong elements so far; rank 0 RSS %.1f MiB\n", elapsed,
                      calls, splits, sumWrong + wrong, lastRss);
        std::fflush(stdout);
      }
      if (!(flags & 1)) break;
      if (it % 64 == 63) splitPhase(comm, env.rank, env.size, rng, o, &calls, &wrong, &splitWrongHere, &splits);
      else randomCall(check, rng, env.size, o.maxCount, &calls);
    }
    wrong += check.totalWrong();
    const long long here = check.wrongHere() + splitWrongHere;  // the verdict: never through hetccl
    lastRss = residentMb();
    // Memory is judged only on a plain build (sanitizers keep shadow memory and quarantines that grow
    // by design) and only when enough calls ran after the warm point to show a trend.
    const bool judged = !kSanitized && warmRss >= 0 && calls - callsAtWarm >= 200;
    const double growth = warmRss < 0 ? 0 : lastRss - warmRss;
    const bool flat = !judged || growth <= o.rssGrowthMb;
    std::printf("soak: rank %d of %d: %lld calls, %d splits, %lld wrong elements on this rank (%lld over all ranks "
                "by all-reduce); RSS %.1f MiB, %+.1f MiB since warm%s\n",
                env.rank, env.size, calls, splits, here, wrong, lastRss, growth,
                !judged ? (kSanitized ? " (not judged: sanitizer build)" : " (not judged: too few calls after warm-up)")
                        : flat ? "" : " (NOT FLAT)");
    hetcclComm_t done = comm;
    comm = nullptr;
    HETCCL_CHECK(hetcclCommDestroy(done), nullptr);
    if (here) std::fprintf(stderr, "soak: rank %d: FAILED: %lld wrong elements\n", env.rank, here);
    return here == 0 && wrong == 0 && flat ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soak: rank %d: %s\n", rank, e.what());
    if (comm) hetcclCommAbort(comm);
    return 2;
  }
}
