// Baseline: MPI_Allreduce (float32, sum) with hetccl-perf's sizes, values, check and columns.
//   mpirun -np 2 ./mpi_allreduce [-b 1K] [-e 256M] [-f 2] [-n 20] [-w 5] [-c 1]
#include <mpi.h>

#include "bench_common.hpp"

namespace {

bench::Place measure(const bench::Options& o, size_t count, bool inPlace, int rank, int nranks,
                     std::vector<float>& send, std::vector<float>& recv) {
  const int n = static_cast<int>(count);
  auto once = [&] {
    if (inPlace) MPI_Allreduce(MPI_IN_PLACE, recv.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else MPI_Allreduce(send.data(), recv.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  };
  bench::fillInput(inPlace ? recv : send, count, rank);
  for (int i = 0; i < o.warmup; ++i) once();
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iters; ++i) once();
  double us = bench::secondsSince(t0) * 1e6 / o.iters, maxUs = 0;
  MPI_Allreduce(&us, &maxUs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  long long wrong = -1;
  if (o.check) {
    bench::fillInput(inPlace ? recv : send, count, rank);
    if (!inPlace) std::fill(recv.begin(), recv.begin() + static_cast<long>(count), -1.0f);
    once();
    long long mine = bench::countWrong(recv, count, nranks);
    MPI_Allreduce(&mine, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  }
  return {maxUs, wrong};
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  bench::Options o;
  try {
    o = bench::parseOptions(argc, argv, [](const std::string&, const std::string&) { return false; });
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "mpi_allreduce: %s\n", e.what());
    MPI_Finalize();
    return 2;
  }
  std::vector<float> send(o.maxBytes / 4), recv(o.maxBytes / 4);
  if (rank == 0) bench::printHeader("mpi_allreduce (MPI_Allreduce)", nranks, o);
  double busSum = 0;
  long long wrong = 0;
  int rows = 0;
  for (size_t bytes : bench::sweep(o)) {
    const size_t count = bytes / 4;
    const bench::Place out = measure(o, count, false, rank, nranks, send, recv);
    const bench::Place in = measure(o, count, true, rank, nranks, send, recv);
    if (rank == 0) bench::printRow(count * 4, nranks, out, in, busSum, wrong);
    ++rows;
  }
  if (rank == 0) bench::printFooter(busSum, rows, wrong);
  MPI_Finalize();
  return wrong ? 1 : 0;
}
