// netns_fault_rank: one rank of a fault-injection job (tests/netns/run_faults.py starts one per network
// namespace). It initialises, runs one collective kind --iters times with exact checks (0: until a call
// fails, at most two minutes), then finalizes and destroys; the driver injects a fault into one rank (the victim) at some point. Every
// step is printed as a machine-readable line on stdout:
//   T <event> <unix seconds>            start, init_begin, init_done, loop, hold, split_begin, finalize_begin, done
//   ERROR <phase> <unix seconds> <code> <message>      the first failed call (phase: init, coll, split, finalize)
//   ITERS <n>   FDS <before init> <after teardown>
// Exit status: 0 the job completed; 3 a call failed and the rank tore down cleanly (the expected
// outcome for a survivor of a fault); 1 wrong data or misuse.
//   netns_fault_rank --coll all_reduce|all_gather|broadcast|reduce|reduce_scatter|alltoall|sendrecv
//                    [--count N] [--iters N] [--hold init|split|finalize --victim R] [--wait-go 1]
// --split 1: after the loop every rank calls hetcclCommSplit (color rank % 2) and destroys the child;
// --hold split implies it, and the victim holds before the split.
// --wait-go 1: after "T start", wait for a line on stdin before anything else (the driver starts every
// rank's init at the same moment).
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/launch_env.hpp"
#include "hetccl/hetccl.h"

namespace {

double now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

int rankId = -1;
void event(const char* what) {
  std::printf("T %s %.6f\n", what, now());
  std::fflush(stdout);
}

int openFds() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
    --n;  // the directory itself
  }
  return n;
}

struct Options {
  std::string coll = "all_reduce";
  size_t count = 1 << 16;
  int iters = 0;
  std::string hold;
  int victim = -1;
  bool waitGo = false;
  bool split = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
    std::string v = argv[++i];
    if (a == "--coll") o.coll = v;
    else if (a == "--count") o.count = std::stoull(v);
    else if (a == "--iters") o.iters = std::stoi(v);
    else if (a == "--hold") o.hold = v;
    else if (a == "--victim") o.victim = std::stoi(v);
    else if (a == "--wait-go") o.waitGo = v == "1";
    else if (a == "--split") o.split = v == "1";
    else throw std::runtime_error("unknown argument " + a);
  }
  return o;
}

/// Input element i of rank r at iteration `it` (small, so sums are exact in int32).
int32_t value(int r, int it, size_t i) { return static_cast<int32_t>((r * 7 + it * 3 + i) % 1000); }

/// One collective of kind `coll` with checked results; returns its result code (wrong data exits).
hetcclResult_t step(const std::string& coll, hetcclComm_t comm, int rank, int n, int it, size_t count) {
  std::vector<int32_t> in(count * n), out(count * n, -1);
  for (size_t i = 0; i < in.size(); ++i) in[i] = value(rank, it, i);
  hetcclResult_t r;
  const int root = it % n;
  size_t wrong = 0;
  auto sumOver = [&](size_t i) {
    int64_t s = 0;
    for (int q = 0; q < n; ++q) s += value(q, it, i);
    return static_cast<int32_t>(s);
  };
  if (coll == "all_reduce") {
    r = hetcclAllReduce(in.data(), out.data(), count, hetcclInt32, hetcclSum, comm, nullptr);
    for (size_t i = 0; r == hetcclSuccess && i < count; ++i) wrong += out[i] != sumOver(i);
  } else if (coll == "reduce") {
    r = hetcclReduce(in.data(), out.data(), count, hetcclInt32, hetcclSum, root, comm, nullptr);
    for (size_t i = 0; r == hetcclSuccess && rank == root && i < count; ++i) wrong += out[i] != sumOver(i);
  } else if (coll == "broadcast") {
    r = hetcclBroadcast(in.data(), out.data(), count, hetcclInt32, root, comm, nullptr);
    for (size_t i = 0; r == hetcclSuccess && i < count; ++i) wrong += out[i] != value(root, it, i);
  } else if (coll == "all_gather") {
    r = hetcclAllGather(in.data(), out.data(), count, hetcclInt32, comm, nullptr);
    for (size_t i = 0; r == hetcclSuccess && i < count * n; ++i) wrong += out[i] != value(int(i / count), it, i % count);
  } else if (coll == "reduce_scatter") {
    r = hetcclReduceScatter(in.data(), out.data(), count, hetcclInt32, hetcclSum, comm, nullptr);
    for (size_t i = 0; r == hetcclSuccess && i < count; ++i) wrong += out[i] != sumOver(rank * count + i);
  } else if (coll == "alltoall") {
    r = hetcclAlltoAll(in.data(), out.data(), count, hetcclInt32, comm, nullptr);
    // Block q of the output is block `rank` of rank q's input.
    for (size_t i = 0; r == hetcclSuccess && i < count * n; ++i)
      wrong += out[i] != value(int(i / count), it, rank * count + i % count);
  } else if (coll == "sendrecv") {
    const int to = (rank + 1) % n, from = (rank + n - 1) % n;
    r = hetcclGroupStart();
    if (r == hetcclSuccess) r = hetcclSend(in.data(), count, hetcclInt32, to, comm, nullptr);
    if (r == hetcclSuccess) r = hetcclRecv(out.data(), count, hetcclInt32, from, comm, nullptr);
    hetcclResult_t end = hetcclGroupEnd();
    if (r == hetcclSuccess) r = end;
    for (size_t i = 0; r == hetcclSuccess && i < count; ++i) wrong += out[i] != value(from, it, i);
  } else {
    throw std::runtime_error("unknown collective " + coll);
  }
  if (wrong) {
    std::printf("WRONG %s iteration %d: %zu elements\n", coll.c_str(), it, wrong);
    std::fflush(stdout);
    std::exit(1);
  }
  return r;
}

/// Reports the failed call and tears the communicator down; returns the exit status.
int failed(const char* phase, hetcclResult_t code, hetcclComm_t comm, int fdsBefore, bool destroyed) {
  const double at = now();
  std::string msg = hetcclGetLastError(destroyed ? nullptr : comm);
  for (char& c : msg)
    if (c == '\n') c = ' ';
  std::printf("ERROR %s %.6f %d %s\n", phase, at, static_cast<int>(code), msg.c_str());
  std::fflush(stdout);
  if (comm && !destroyed) hetcclCommAbort(comm);
  // Background threads (a rendezvous root answering the last ranks) may close their sockets a moment
  // after the call returned: give them a second to get back to the count before init.
  int fds = openFds();
  for (int i = 0; i < 100 && fds > fdsBefore; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    fds = openFds();
  }
  std::printf("FDS %d %d\n", fdsBefore, fds);
  event("done");
  return 3;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options opt = parse(argc, argv);
    auto env = hetccl::tools::readLaunchEnv();
    rankId = env.rank;
    event("start");
    if (opt.waitGo) {  // the driver releases every rank at once, so process start-up skew does not eat T
      char line[16];
      if (!std::fgets(line, sizeof line, stdin)) throw std::runtime_error("no go line on stdin");
    }
    const int fdsBefore = openFds();
    const bool victim = env.rank == opt.victim;
    if (victim && opt.hold == "init") {
      event("hold");
      std::this_thread::sleep_for(std::chrono::seconds(120));  // the driver injects the fault now
    }
    hetcclComm_t comm = nullptr;
    event("init_begin");
    hetcclResult_t r = hetcclCommInitRank(&comm, env.size, env.id, env.rank);
    if (r != hetcclSuccess) return failed("init", r, nullptr, fdsBefore, true);
    event("init_done");
    event("loop");
    int it = 0;
    const auto cap = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    for (; opt.iters > 0 ? it < opt.iters : std::chrono::steady_clock::now() < cap; ++it) {
      r = step(opt.coll, comm, env.rank, env.size, it, opt.count);
      if (r != hetcclSuccess) {
        std::printf("ITERS %d\n", it);
        return failed("coll", r, comm, fdsBefore, false);
      }
    }
    std::printf("ITERS %d\n", it);
    if (opt.split || opt.hold == "split") {
      if (victim && opt.hold == "split") {
        event("hold");
        std::this_thread::sleep_for(std::chrono::seconds(120));
      }
      event("split_begin");
      hetcclComm_t child = nullptr;
      r = hetcclCommSplit(comm, env.rank % 2, env.rank, &child, nullptr);
      if (r != hetcclSuccess) return failed("split", r, comm, fdsBefore, false);
      if (child && (r = hetcclCommDestroy(child)) != hetcclSuccess) return failed("split", r, comm, fdsBefore, false);
    }
    if (victim && opt.hold == "finalize") {
      event("hold");
      std::this_thread::sleep_for(std::chrono::seconds(120));
    }
    event("finalize_begin");
    r = hetcclCommFinalize(comm);
    if (r != hetcclSuccess) return failed("finalize", r, comm, fdsBefore, false);
    r = hetcclCommDestroy(comm);
    if (r != hetcclSuccess) return failed("finalize", r, nullptr, fdsBefore, true);
    std::printf("FDS %d %d\n", fdsBefore, openFds());
    event("done");
    return 0;
  } catch (const std::exception& e) {
    std::printf("MISUSE rank %d: %s\n", rankId, e.what());
    return 1;
  }
}
