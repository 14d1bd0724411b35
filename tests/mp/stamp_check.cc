// stamp_check CASE: ranks make calls that disagree (or correct point-to-point programs that a checker
// must not break) and every rank checks what it got. Cases:
//   unreceived_send      rank 0 sends to rank 1, which never receives; then an AllReduce
//   reduce_count         Reduce of 131072 elements at the root, 131073 elsewhere; then an AllReduce
//   bcast_count          Broadcast of 1 element at the root, 0 elsewhere; then an AllReduce
//   allreduce_vs_reduce  rank 0 calls Reduce, the others AllReduce (same size); then an AllReduce
//   int_vs_float         rank 0 all-reduces int32, the others float32 (same size); then an AllReduce
//   bcast_roots          rank 0 broadcasts from root 0, the others from root 1; then an AllReduce
// For those, every rank must fail with hetcclRemoteError by the second AllReduce after it and never
// return wrong data; the rank that detects it (and the ranks it tells) name both calls ("... sent
// Send #1 (...), this rank expected AllReduce #1 (...)"; ctest looks for "this rank expected").
//   bad_input            three bad calls (AlltoAllv with mismatched self counts, ungrouped send to self,
//                        self send/recv of different sizes) return hetcclInvalidArgument and a correct
//                        AllReduce afterwards succeeds with the right sum
//   p2p_programs         correct point-to-point programs (a pipeline chain; pairs exchanging different
//                        numbers of messages; sends grouped on one side, receives ungrouped on the
//                        other) then an AllReduce: all succeed with the right data (run it with
//                        HETCCL_CHECK_CALLS=1 too)
// Prints "stamp_check: rank R: CASE: OK|FAIL: detail"; exit status 0 only on OK.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/launch_env.hpp"
#include "hetccl/hetccl.h"

namespace {

struct Rank {
  hetcclComm_t comm;
  int rank, size;
};

/// The follow-up every mismatch case ends with: an AllReduce of 1.0 on every rank (sum = size).
hetcclResult_t followUp(const Rank& r, float* out) {
  *out = 1.0f;
  return hetcclAllReduce(out, out, 1, hetcclFloat32, hetcclSum, r.comm, nullptr);
}

/// Runs the disagreeing call(s) of `name`; returns their result (the first failure).
hetcclResult_t disagree(const std::string& name, const Rank& r) {
  static std::vector<float> buf(131073 * 2, 1000.0f);
  if (name == "unreceived_send") {
    if (r.rank == 0) return hetcclSend(buf.data(), 1, hetcclFloat32, 1, r.comm, nullptr);
    return hetcclSuccess;
  }
  if (name == "reduce_count") {
    size_t count = r.rank == 0 ? 131072 : 131073;
    return hetcclReduce(buf.data(), buf.data() + 131073, count, hetcclFloat32, hetcclSum, 0, r.comm, nullptr);
  }
  if (name == "bcast_count")
    return hetcclBroadcast(buf.data(), buf.data(), r.rank == 0 ? 1 : 0, hetcclFloat32, 0, r.comm, nullptr);
  if (name == "allreduce_vs_reduce") {
    if (r.rank == 0)
      return hetcclReduce(buf.data(), buf.data() + 1024, 1024, hetcclFloat32, hetcclSum, 0, r.comm, nullptr);
    return hetcclAllReduce(buf.data(), buf.data() + 1024, 1024, hetcclFloat32, hetcclSum, r.comm, nullptr);
  }
  if (name == "int_vs_float")
    return hetcclAllReduce(buf.data(), buf.data() + 1024, 1024, r.rank == 0 ? hetcclInt32 : hetcclFloat32, hetcclSum,
                           r.comm, nullptr);
  if (name == "bcast_roots")
    return hetcclBroadcast(buf.data(), buf.data(), 1024, hetcclFloat32, r.rank == 0 ? 0 : 1, r.comm, nullptr);
  std::fprintf(stderr, "stamp_check: unknown case %s\n", name.c_str());
  std::exit(2);
}

bool mismatchCase(const std::string& name, const Rank& r, std::string& detail) {
  // The disagreeing call, then AllReduces until one fails (at most two): a call that succeeds must have
  // the right data; the error must come at the latest on the second AllReduce (by then the detecting
  // rank has failed and told the others) and must be hetcclRemoteError.
  hetcclResult_t res = disagree(name, r);
  detail = std::string("call ") + hetcclGetErrorString(res);
  for (int i = 0; i < 2 && res == hetcclSuccess; ++i) {
    float sum = 0;
    res = followUp(r, &sum);
    detail += std::string(", allreduce ") + hetcclGetErrorString(res);
    if (res == hetcclSuccess && sum != static_cast<float>(r.size)) {
      detail += " with wrong sum " + std::to_string(sum);
      return false;
    }
  }
  detail += std::string(": ") + hetcclGetLastError(r.comm);
  return res == hetcclRemoteError;
}

bool badInputCase(const Rank& r, std::string& detail) {
  const int n = r.size;
  std::vector<float> send(4 * n, 1.0f), recv(4 * n, 0.0f);
  std::vector<size_t> counts(n, 1), displs(n), rcounts(n, 1);
  for (int i = 0; i < n; ++i) displs[i] = i * 2;
  rcounts[r.rank] = 2;  // self: send 1, receive 2
  hetcclResult_t a = hetcclAlltoAllv(send.data(), counts.data(), displs.data(), recv.data(), rcounts.data(),
                                     displs.data(), hetcclFloat32, r.comm, nullptr);
  std::string ma = hetcclGetLastError(r.comm);
  hetcclResult_t b = hetcclSend(send.data(), 1, hetcclFloat32, r.rank, r.comm, nullptr);  // ungrouped send to self
  std::string mb = hetcclGetLastError(r.comm);
  hetcclGroupStart();
  hetcclSend(send.data(), 2, hetcclFloat32, r.rank, r.comm, nullptr);
  hetcclRecv(recv.data(), 3, hetcclFloat32, r.rank, r.comm, nullptr);
  hetcclResult_t c = hetcclGroupEnd();
  std::string mc = hetcclGetLastError(r.comm);
  float sum = 0;
  hetcclResult_t d = followUp(r, &sum);
  detail = std::string("alltoallv ") + hetcclGetErrorString(a) + " (" + ma + "); send to self " +
           hetcclGetErrorString(b) + " (" + mb + "); self size mismatch " + hetcclGetErrorString(c) + " (" + mc +
           "); then allreduce " + hetcclGetErrorString(d) + " sum " + std::to_string(sum) + " " +
           hetcclGetLastError(r.comm);
  return a == hetcclInvalidArgument && b == hetcclInvalidArgument && c == hetcclInvalidArgument && d == hetcclSuccess &&
         sum == static_cast<float>(n) && recv[0] == 0.0f;
}

bool p2pCase(const Rank& r, std::string& detail) {
  const int me = r.rank, n = r.size;
  bool ok = true;
  auto check = [&](hetcclResult_t res, const char* what) {
    if (res != hetcclSuccess && ok) {
      ok = false;
      detail = std::string(what) + ": " + hetcclGetErrorString(res) + ": " + hetcclGetLastError(r.comm);
    }
  };
  // A pipeline chain: rank i receives from i-1 and adds its rank, passes it to i+1 (ungrouped calls).
  for (int iter = 0; iter < 3 && ok; ++iter) {
    int v = 0;
    if (me > 0) check(hetcclRecv(&v, 1, hetcclInt32, me - 1, r.comm, nullptr), "chain recv");
    v += me + iter;
    if (me < n - 1)
      check(hetcclSend(&v, 1, hetcclInt32, me + 1, r.comm, nullptr), "chain send");
    else if (ok && v != n * (n - 1) / 2 + iter * n) {
      ok = false;
      detail = "chain end got " + std::to_string(v);
    }
  }
  // Pairs (0,1), (2,3), ... exchange as many messages as the pair number + 1 (a lone last rank idles).
  const int partner = me ^ 1;
  if (partner < n) {
    const int messages = me / 2 + 1;
    for (int m = 0; m < messages && ok; ++m) {
      double out = me * 100 + m, in = -1;
      hetcclGroupStart();
      hetcclSend(&out, 1, hetcclFloat64, partner, r.comm, nullptr);
      hetcclRecv(&in, 1, hetcclFloat64, partner, r.comm, nullptr);
      check(hetcclGroupEnd(), "pair exchange");
      if (ok && in != partner * 100 + m) {
        ok = false;
        detail = "pair exchange got " + std::to_string(in);
      }
    }
  }
  // Rank 0 groups two sends to rank 1; rank 1 receives them with two ungrouped calls.
  if (n >= 2 && ok && me <= 1) {
    int64_t a = 7, b = 8, ga = 0, gb = 0;
    if (me == 0) {
      hetcclGroupStart();
      hetcclSend(&a, 1, hetcclInt64, 1, r.comm, nullptr);
      hetcclSend(&b, 1, hetcclInt64, 1, r.comm, nullptr);
      check(hetcclGroupEnd(), "grouped sends");
    } else {
      check(hetcclRecv(&ga, 1, hetcclInt64, 0, r.comm, nullptr), "first recv");
      check(hetcclRecv(&gb, 1, hetcclInt64, 0, r.comm, nullptr), "second recv");
      if (ok && (ga != 7 || gb != 8)) {
        ok = false;
        detail = "grouped sends arrived as " + std::to_string(ga) + ", " + std::to_string(gb);
      }
    }
  }
  float sum = 0;
  if (ok) check(followUp(r, &sum), "allreduce");
  if (ok && sum != static_cast<float>(n)) {
    ok = false;
    detail = "allreduce sum " + std::to_string(sum);
  }
  if (ok) detail = "all calls succeeded";
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: stamp_check CASE\n");
    return 2;
  }
  const std::string name = argv[1];
  auto env = hetccl::tools::readLaunchEnv();
  Rank r{nullptr, env.rank, env.size};
  if (hetcclCommInitRank(&r.comm, env.size, env.id, env.rank) != hetcclSuccess) return 2;
  std::string detail;
  bool ok = name == "bad_input"      ? badInputCase(r, detail)
            : name == "p2p_programs" ? p2pCase(r, detail)
                                     : mismatchCase(name, r, detail);
  std::printf("stamp_check: rank %d: %s: %s: %s\n", r.rank, name.c_str(), ok ? "OK" : "FAIL", detail.c_str());
  std::fflush(stdout);
  if (ok && name != "bad_input" && name != "p2p_programs")
    hetcclCommAbort(r.comm);  // failed: abort, not finalize
  else
    hetcclCommDestroy(r.comm);
  return ok ? 0 : 1;
}
