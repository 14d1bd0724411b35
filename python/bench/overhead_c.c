/* C side of the Python per-call overhead benchmark: hetcclGetVersion and a 1-element float32 all-reduce
 * on a 1-rank host communicator, N calls each, best of R repetitions, ns per call.
 * Build: cc -O2 overhead_c.c -I include -L build -lhetccl -Wl,-rpath,build -o overhead_c */
#include <hetccl/hetccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 200000;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  int v = 0;
  double best = 1e9;
  for (int r = 0; r < reps; ++r) {
    double t0 = now();
    for (long i = 0; i < n; ++i) hetcclGetVersion(&v);
    double dt = (now() - t0) / n;
    if (dt < best) best = dt;
  }
  printf("c get_version_ns %.1f\n", best * 1e9);

  hetcclUniqueId id;
  hetcclComm_t comm;
  if (hetcclGetUniqueId(&id) || hetcclCommInitRank(&comm, 1, id, 0)) {
    fprintf(stderr, "init failed: %s\n", hetcclGetLastError(NULL));
    return 1;
  }
  float x = 1.0f;
  best = 1e9;
  long m = n / 4;
  for (int r = 0; r < reps; ++r) {
    double t0 = now();
    for (long i = 0; i < m; ++i)
      if (hetcclAllReduce(&x, &x, 1, hetcclFloat32, hetcclSum, comm, NULL)) return 1;
    double dt = (now() - t0) / m;
    if (dt < best) best = dt;
  }
  printf("c all_reduce_ns %.1f\n", best * 1e9);
  hetcclCommDestroy(comm);
  return 0;
}
