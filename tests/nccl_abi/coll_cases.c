/* Every collective through the NCCL names on host buffers, results checked exactly. Element i of rank r's
 * input is x(r, i) = r + 1 + i % 5: sums, products (few ranks), extremes and averages are exact. */
#include "coll_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1031 /* elements per block: odd, not a multiple of any chunk size */

static int x(int r, size_t i) { return r + 1 + (int)(i % 5); }

static void* xalloc(size_t bytes) {
  void* p = calloc(bytes ? bytes : 1, 1);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  return p;
}

static void expectInts(const DropinApi* api, const char* what, const int32_t* got, const int32_t* want, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (got[i] != want[i]) {
      char m[200];
      snprintf(m, sizeof m, "%s: element %zu is %d, expected %d", what, i, got[i], want[i]);
      dropinFail(api, m);
      return;
    }
}

/* All-reduce of int32 (sum, prod, max, min, avg), float and double (sum, avg), int64 (sum) and a
 * host-immediate PreMulSum on float (rank r scales by r + 1). */
static void allReduce(const DropinApi* api, ncclComm_t comm, int me, int n) {
  int32_t *in = xalloc(N * 4), *out = xalloc(N * 4), *want = xalloc(N * 4);
  for (size_t i = 0; i < N; ++i) in[i] = x(me, i);
  const ncclRedOp_t ops[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};
  for (int o = 0; o < 5; ++o) {
    for (size_t i = 0; i < N; ++i) {
      int64_t s = 0, p = 1;
      for (int r = 0; r < n; ++r) s += x(r, i), p *= x(r, i);
      want[i] = o == 0 ? (int32_t)s : o == 1 ? (int32_t)p : o == 2 ? x(n - 1, i) : o == 3 ? x(0, i) : (int32_t)(s / n);
    }
    dropinExpect(api, api->ncclAllReduce(in, out, N, ncclInt32, ops[o], comm, NULL), ncclSuccess,
                 "ncclAllReduce int32");
    expectInts(api, "ncclAllReduce int32", out, want, N);
  }
  float *f = xalloc(N * 4), *fo = xalloc(N * 4);
  double *d = xalloc(N * 8), *dout = xalloc(N * 8);
  int64_t *l = xalloc(N * 8), *lo = xalloc(N * 8);
  for (size_t i = 0; i < N; ++i) f[i] = (float)x(me, i), d[i] = x(me, i), l[i] = (int64_t)x(me, i) << 33;
  ncclRedOp_t premul;
  float factor = (float)(me + 1);
  dropinExpect(api, api->ncclRedOpCreatePreMulSum(&premul, &factor, ncclFloat32, ncclScalarHostImmediate, comm),
               ncclSuccess, "ncclRedOpCreatePreMulSum");
  const ncclRedOp_t fops[] = {ncclSum, ncclAvg, premul};
  for (int o = 0; o < 3; ++o) {
    dropinExpect(api, api->ncclAllReduce(f, fo, N, ncclFloat32, fops[o], comm, NULL), ncclSuccess,
                 "ncclAllReduce float");
    if (o < 2)
      dropinExpect(api, api->ncclAllReduce(d, dout, N, ncclFloat64, fops[o], comm, NULL), ncclSuccess,
                   "ncclAllReduce double");
    for (size_t i = 0; i < N; ++i) {
      int64_t s = 0, w = 0;
      for (int r = 0; r < n; ++r) s += x(r, i), w += (int64_t)(r + 1) * x(r, i);
      float wf = o == 0 ? (float)s : o == 1 ? (float)s / (float)n : (float)w;
      double wd = o == 0 ? (double)s : (double)s / n;
      if (fo[i] != wf || (o < 2 && dout[i] != wd)) {
        dropinFail(api, o == 0 ? "float/double sum" : o == 1 ? "float/double avg" : "PreMulSum");
        break;
      }
    }
  }
  dropinExpect(api, api->ncclRedOpDestroy(premul, comm), ncclSuccess, "ncclRedOpDestroy");
  dropinExpect(api, api->ncclAllReduce(l, lo, N, ncclInt64, ncclSum, comm, NULL), ncclSuccess, "ncclAllReduce int64");
  for (size_t i = 0; i < N; ++i) {
    int64_t s = 0;
    for (int r = 0; r < n; ++r) s += (int64_t)x(r, i) << 33;
    if (lo[i] != s) {
      dropinFail(api, "ncclAllReduce int64 sum");
      break;
    }
  }
  free(in), free(out), free(want), free(f), free(fo), free(d), free(dout), free(l), free(lo);
}

/* fp8 reductions with results exact in fp8, so any order gives the same bits. Patterns written out here:
 * E5M2 1.0 = 0x3c; E4M3 1..4 = 0x38 0x40 0x44 0x48. n <= 4. */
static void fp8Reductions(const DropinApi* api, ncclComm_t comm, int me, int n) {
  static const unsigned char kE4m3Int[] = {0x00, 0x38, 0x40, 0x44, 0x48};
  unsigned char in[4 * N], out[4 * N];
  if (n > 4) return;
  /* Sum: element i gets 1.0 from rank i % n only. */
  for (size_t i = 0; i < sizeof in; ++i) in[i] = (int)(i % (size_t)n) == me ? 0x3c : 0x00;
  dropinExpect(api, api->ncclAllReduce(in, out, sizeof in, ncclFloat8e5m2, ncclSum, comm, NULL), ncclSuccess,
               "ncclAllReduce fp8 e5m2 sum");
  for (size_t i = 0; i < sizeof out; ++i)
    if (out[i] != 0x3c) dropinFail(api, "ncclAllReduce fp8 e5m2 sum: wrong element");
  /* Max: rank r holds (r + i) % n + 1; the maximum is n everywhere. */
  for (size_t i = 0; i < sizeof in; ++i) in[i] = kE4m3Int[(me + (int)i) % n + 1];
  dropinExpect(api, api->ncclAllReduce(in, out, sizeof in, ncclFloat8e4m3, ncclMax, comm, NULL), ncclSuccess,
               "ncclAllReduce fp8 e4m3 max");
  for (size_t i = 0; i < sizeof out; ++i)
    if (out[i] != kE4m3Int[n]) dropinFail(api, "ncclAllReduce fp8 e4m3 max: wrong element");
  /* Avg of 1.0 on every rank (NCCL: each input times fp8(1/n), then summed): 1.0 for n = 2, 3, 4. */
  memset(in, 0x38, sizeof in);
  dropinExpect(api, api->ncclAllReduce(in, out, sizeof in, ncclFloat8e4m3, ncclAvg, comm, NULL), ncclSuccess,
               "ncclAllReduce fp8 e4m3 avg");
  for (size_t i = 0; i < sizeof out; ++i)
    if (n > 1 && out[i] != 0x38) dropinFail(api, "ncclAllReduce fp8 e4m3 avg: wrong element");
}

/* Broadcast (out of place), Bcast (in place), Reduce, AllGather, ReduceScatter, AlltoAll, Gather and
 * Scatter (in place at the root too), send/recv around a ring in a group, fp8 moved and reduced. */
static void dataMovement(const DropinApi* api, ncclComm_t comm, int me, int n, int rcclExtras) {
  const size_t all = (size_t)N * n;
  int32_t *in = xalloc(all * 4), *out = xalloc(all * 4), *want = xalloc(all * 4);
  for (size_t i = 0; i < all; ++i) in[i] = x(me, i) + 100 * (int)(i / N); /* block b: to/for rank b */

  dropinExpect(api, api->ncclBroadcast(in, out, N, ncclInt32, n - 1, comm, NULL), ncclSuccess, "ncclBroadcast");
  for (size_t i = 0; i < N; ++i) want[i] = x(n - 1, i);
  expectInts(api, "ncclBroadcast", out, want, N);
  memcpy(out, in, N * 4);
  dropinExpect(api, api->ncclBcast(out, N, ncclInt32, 0, comm, NULL), ncclSuccess, "ncclBcast");
  for (size_t i = 0; i < N; ++i) want[i] = x(0, i);
  expectInts(api, "ncclBcast", out, want, N);

  const int root = 1 % n;
  dropinExpect(api, api->ncclReduce(in, out, N, ncclInt32, ncclMax, root, comm, NULL), ncclSuccess, "ncclReduce");
  for (size_t i = 0; i < N; ++i) want[i] = x(n - 1, i);
  if (me == root) expectInts(api, "ncclReduce", out, want, N);

  dropinExpect(api, api->ncclAllGather(in, out, N, ncclInt32, comm, NULL), ncclSuccess, "ncclAllGather");
  for (size_t i = 0; i < all; ++i) want[i] = x((int)(i / N), i % N);
  expectInts(api, "ncclAllGather", out, want, all);

  dropinExpect(api, api->ncclReduceScatter(in, out, N, ncclInt32, ncclSum, comm, NULL), ncclSuccess,
               "ncclReduceScatter");
  for (size_t i = 0; i < N; ++i) {
    want[i] = 0;
    for (int r = 0; r < n; ++r) want[i] += x(r, me * N + i) + 100 * me;
  }
  expectInts(api, "ncclReduceScatter", out, want, N);

  dropinExpect(api, api->ncclAlltoAll(in, out, N, ncclInt32, comm, NULL), ncclSuccess, "ncclAlltoAll");
  for (size_t i = 0; i < all; ++i) want[i] = x((int)(i / N), me * N + i % N) + 100 * me;
  expectInts(api, "ncclAlltoAll", out, want, all);
  if (rcclExtras) { /* RCCL's spelling (librccl.so) */
    memset(out, 0, all * 4);
    dropinExpect(api, api->ncclAllToAll(in, out, N, ncclInt32, comm, NULL), ncclSuccess, "ncclAllToAll");
    expectInts(api, "ncclAllToAll", out, want, all);
  }

  dropinExpect(api, api->ncclGather(in, out, N, ncclInt32, 0, comm, NULL), ncclSuccess, "ncclGather");
  for (size_t i = 0; i < all; ++i) want[i] = x((int)(i / N), i % N);
  if (me == 0) expectInts(api, "ncclGather", out, want, all);
  memcpy(out + (size_t)(n - 1) * N, in, N * 4); /* in place at root n-1: its own block already there */
  dropinExpect(api, api->ncclGather(out + (size_t)(n - 1) * N, out, N, ncclInt32, n - 1, comm, NULL), ncclSuccess,
               "ncclGather in place");
  if (me == n - 1) expectInts(api, "ncclGather in place", out, want, all);

  dropinExpect(api, api->ncclScatter(in, out, N, ncclInt32, n - 1, comm, NULL), ncclSuccess, "ncclScatter");
  for (size_t i = 0; i < N; ++i) want[i] = x(n - 1, me * N + i) + 100 * me;
  expectInts(api, "ncclScatter", out, want, N);

  dropinExpect(api, api->ncclGroupStart(), ncclSuccess, "ncclGroupStart");
  dropinExpect(api, api->ncclSend(in, N, ncclInt32, (me + 1) % n, comm, NULL), ncclSuccess, "ncclSend");
  dropinExpect(api, api->ncclRecv(out, N, ncclInt32, (me + n - 1) % n, comm, NULL), ncclSuccess, "ncclRecv");
  dropinExpect(api, api->ncclGroupEnd(), ncclSuccess, "ncclGroupEnd (send/recv)");
  for (size_t i = 0; i < N; ++i) want[i] = x((me + n - 1) % n, i);
  expectInts(api, "ring send/recv", out, want, N);

  /* fp8 data moves as bytes (4 fp8 elements per int32 here). */
  dropinExpect(api, api->ncclAllGather(in, out, 4 * N, ncclFloat8e4m3, comm, NULL), ncclSuccess, "ncclAllGather fp8");
  for (size_t i = 0; i < all; ++i) want[i] = x((int)(i / N), i % N);
  expectInts(api, "ncclAllGather fp8", out, want, all);
  fp8Reductions(api, comm, me, n);
  free(in), free(out), free(want);
}

/* Every NCCL data type (fp8 included) moved by ncclSend/ncclRecv around a ring, ncclGather and ncclScatter:
 * blocks are addressed by count x element size, so a wrong size for one type lands bytes at the wrong offset.
 * The sizes are NCCL's documented ones, written out here, not taken from the library. */
static void everyTypeMoved(const DropinApi* api, ncclComm_t comm, int me, int n) {
  static const size_t kBytes[ncclNumTypes] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  enum { kCount = 37 };
  const size_t block = kCount * 8, all = block * (size_t)n;
  unsigned char *in = xalloc(all), *out = xalloc(all);
  for (int t = 0; t < ncclNumTypes; ++t) {
    const size_t bytes = kCount * kBytes[t];
    char what[80];
    /* byte j of block b from rank r: distinct per (type, rank, block, byte) */
    for (size_t i = 0; i < all; ++i) in[i] = (unsigned char)(t * 31 + me * 7 + (i / block) * 3 + i % block);
    memset(out, 0xee, all);
    snprintf(what, sizeof what, "send/recv of type %d", t);
    dropinExpect(api, api->ncclGroupStart(), ncclSuccess, what);
    dropinExpect(api, api->ncclSend(in, kCount, (ncclDataType_t)t, (me + 1) % n, comm, NULL), ncclSuccess, what);
    dropinExpect(api, api->ncclRecv(out, kCount, (ncclDataType_t)t, (me + n - 1) % n, comm, NULL), ncclSuccess, what);
    dropinExpect(api, api->ncclGroupEnd(), ncclSuccess, what);
    for (size_t i = 0; i < bytes; ++i)
      if (out[i] != (unsigned char)(t * 31 + ((me + n - 1) % n) * 7 + i)) {
        dropinFail(api, what);
        break;
      }
    /* Gather to rank 0: block r of the root's output is rank r's first `bytes`. */
    memset(out, 0xee, all);
    snprintf(what, sizeof what, "ncclGather of type %d", t);
    dropinExpect(api, api->ncclGather(in, out, kCount, (ncclDataType_t)t, 0, comm, NULL), ncclSuccess, what);
    if (me == 0)
      for (size_t i = 0; i < bytes * (size_t)n; ++i)
        if (out[i] != (unsigned char)(t * 31 + (int)(i / bytes) * 7 + i % bytes)) {
          dropinFail(api, what);
          break;
        }
    /* Scatter from rank n-1: rank r gets bytes [r * bytes, (r + 1) * bytes) of the root's input. */
    memset(out, 0xee, all);
    snprintf(what, sizeof what, "ncclScatter of type %d", t);
    dropinExpect(api, api->ncclScatter(in, out, kCount, (ncclDataType_t)t, n - 1, comm, NULL), ncclSuccess, what);
    for (size_t i = 0; i < bytes; ++i) {
      const size_t at = (size_t)me * bytes + i;
      if (out[i] != (unsigned char)(t * 31 + (n - 1) * 7 + (at / block) * 3 + at % block)) {
        dropinFail(api, what);
        break;
      }
    }
  }
  free(in), free(out);
}

/* RCCL's variable all-to-all: rank r sends p+1 elements to rank p. */
static void allToAllv(const DropinApi* api, ncclComm_t comm, int me, int n) {
  size_t sc[64], sd[64], rc[64], rd[64], total = 0;
  for (int p = 0; p < n; ++p) sc[p] = (size_t)p + 1, rc[p] = (size_t)me + 1;
  for (int p = 0; p < n; ++p) sd[p] = total, total += sc[p];
  for (int p = 0; p < n; ++p) rd[p] = (size_t)p * (me + 1);
  int32_t *in = xalloc(total * 4), *out = xalloc((size_t)n * (me + 1) * 4);
  for (int p = 0; p < n; ++p)
    for (size_t k = 0; k < sc[p]; ++k) in[sd[p] + k] = 1000 * me + 10 * p + (int)k;
  dropinExpect(api, api->ncclAllToAllv(in, sc, sd, out, rc, rd, ncclInt32, comm, NULL), ncclSuccess, "ncclAllToAllv");
  for (int p = 0; p < n; ++p)
    for (size_t k = 0; k < rc[p]; ++k)
      if (out[rd[p] + k] != 1000 * p + 10 * me + (int)k) {
        dropinFail(api, "ncclAllToAllv data");
        p = n;
        break;
      }
  free(in), free(out);
}

void runCollectiveCases(const DropinApi* api, ncclComm_t comm, int me, int n) {
  /* RCCL's extras run when every rank's library has them (a job may mix libnccl.so.2 and librccl.so). */
  int32_t mine = api->ncclAllToAll && api->ncclAllToAllv, all = 0;
  dropinExpect(api, api->ncclAllReduce(&mine, &all, 1, ncclInt32, ncclMin, comm, NULL), ncclSuccess, "extras vote");
  allReduce(api, comm, me, n);
  dataMovement(api, comm, me, n, all);
  everyTypeMoved(api, comm, me, n);
  if (all && n <= 64) allToAllv(api, comm, me, n);
}
