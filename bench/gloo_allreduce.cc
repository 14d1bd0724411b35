// Baseline: Gloo allreduce (float32, sum) over its TCP transport (loopback, or --hostname), with hetccl-perf's sizes,
// values, check and columns. Ranks meet through a gloo::rendezvous::FileStore directory:
//   gloo_allreduce --rank R --size N --store DIR [--hostname ADDR] [-b 1K] [-e 256M] [-f 2] [-n 20] [-w 5] [-c 1]
// (--rank/--size default to HETCCL_RANK/HETCCL_NRANKS, so hetccl-run can start it too). --hostname: the
// address Gloo's TCP device binds and advertises (default 127.0.0.1; run_netns_allreduce.py passes the
// rank's eth0 address, 10.99.0.x, so that the ranks meet across network namespaces).
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <memory>

#include "bench_common.hpp"

namespace {

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

template <typename T>
T allreduceOne(const std::shared_ptr<gloo::Context>& ctx, T value, ReduceFn fn) {
  gloo::AllreduceOptions opts(ctx);
  opts.setInput(&value, 1);
  opts.setOutput(&value, 1);
  opts.setReduceFunction(fn);
  gloo::allreduce(opts);
  return value;
}

bench::Place measure(const bench::Options& o, const std::shared_ptr<gloo::Context>& ctx, size_t count, bool inPlace,
                     std::vector<float>& send, std::vector<float>& recv) {
  const int rank = ctx->rank, nranks = ctx->size;
  gloo::AllreduceOptions opts(ctx);
  opts.setInput(inPlace ? recv.data() : send.data(), count);
  opts.setOutput(recv.data(), count);
  opts.setReduceFunction(static_cast<ReduceFn>(&gloo::sum<float>));
  bench::fillInput(inPlace ? recv : send, count, rank);
  for (int i = 0; i < o.warmup; ++i) gloo::allreduce(opts);
  gloo::BarrierOptions barrier(ctx);
  gloo::barrier(barrier);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iters; ++i) gloo::allreduce(opts);
  const double us = bench::secondsSince(t0) * 1e6 / o.iters;
  const double maxUs = allreduceOne<double>(ctx, us, static_cast<ReduceFn>(&gloo::max<double>));
  long long wrong = -1;
  if (o.check) {
    bench::fillInput(inPlace ? recv : send, count, rank);
    if (!inPlace) std::fill(recv.begin(), recv.begin() + static_cast<long>(count), -1.0f);
    gloo::allreduce(opts);
    const double mine = static_cast<double>(bench::countWrong(recv, count, nranks));
    wrong = static_cast<long long>(allreduceOne<double>(ctx, mine, static_cast<ReduceFn>(&gloo::sum<double>)));
  }
  return {maxUs, wrong};
}

int envInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  int rank = envInt("HETCCL_RANK", -1), size = envInt("HETCCL_NRANKS", -1);
  std::string storeDir, hostname = "127.0.0.1";
  bench::Options o;
  try {
    o = bench::parseOptions(argc, argv, [&](const std::string& flag, const std::string& value) {
      if (flag == "--rank") rank = std::atoi(value.c_str());
      else if (flag == "--size") size = std::atoi(value.c_str());
      else if (flag == "--store") storeDir = value;
      else if (flag == "--hostname") hostname = value;
      else return false;
      return true;
    });
    if (rank < 0 || size < 1 || rank >= size || storeDir.empty())
      throw std::invalid_argument("need --rank R --size N --store DIR (0 <= R < N, DIR shared by all ranks)");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gloo_allreduce: %s\n", e.what());
    return 2;
  }
  gloo::transport::tcp::attr attr;
  attr.hostname = hostname;
  auto device = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore store(storeDir);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->connectFullMesh(store, device);
  std::shared_ptr<gloo::Context> ctx = context;

  std::vector<float> send(o.maxBytes / 4), recv(o.maxBytes / 4);
  const char* title = hostname == "127.0.0.1" ? "gloo_allreduce (gloo::allreduce, tcp loopback)"
                                               : "gloo_allreduce (gloo::allreduce, tcp)";
  if (rank == 0) bench::printHeader(title, size, o);
  double busSum = 0;
  long long wrong = 0;
  int rows = 0;
  for (size_t bytes : bench::sweep(o)) {
    const size_t count = bytes / 4;
    const bench::Place out = measure(o, ctx, count, false, send, recv);
    const bench::Place in = measure(o, ctx, count, true, send, recv);
    if (rank == 0) bench::printRow(count * 4, size, out, in, busSum, wrong);
    ++rows;
  }
  if (rank == 0) bench::printFooter(busSum, rows, wrong);
  return wrong ? 1 : 0;
}
