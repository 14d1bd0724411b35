/* coll_check: one rank of a job started by hetccl-run, driving hetccl only through NCCL's names.
 *   coll_check --lib PATH            dlopen PATH (libnccl.so.2 or librccl.so)
 *   coll_check --lib-odd PATH2 ...   odd ranks open PATH2 instead (both builds in one job)
 *   coll_check --global [--expect-from PATH]  use the names already in the process (LD_PRELOAD); with
 *                                    --expect-from they must come from the library at PATH
 * Runs: init from the launcher's id (blocking config), queries, every collective (coll_cases.c), split
 * (colors, keys, NCCL_SPLIT_NOCOLOR), a non-blocking communicator polled with ncclCommGetAsyncError, a
 * communicator created inside a group, finalize/destroy. Host buffers, CPU ranks; exits non-zero on any
 * failure. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll_cases.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Polls ncclCommGetAsyncError until it leaves ncclInProgress (60 s deadline). */
static ncclResult_t waitReady(const DropinApi* api, ncclComm_t comm) {
  ncclResult_t state = ncclInProgress;
  const double deadline = now() + 60;
  while (now() < deadline) {
    if (api->ncclCommGetAsyncError(comm, &state) != ncclSuccess) return ncclInternalError;
    if (state != ncclInProgress) return state;
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
  return ncclInProgress;
}

/* A fresh unique id made by rank 0 and broadcast over `comm`: how applications bootstrap more comms. */
static ncclUniqueId shareNewId(const DropinApi* api, ncclComm_t comm, int me) {
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  if (me == 0) dropinExpect(api, api->ncclGetUniqueId(&id), ncclSuccess, "ncclGetUniqueId");
  dropinExpect(api, api->ncclBroadcast(&id, &id, sizeof id, ncclUint8, 0, comm, NULL), ncclSuccess, "id broadcast");
  return id;
}

static void checkSmallAllReduce(const DropinApi* api, ncclComm_t comm, int n, const char* what) {
  int32_t v = 1, sum = 0;
  dropinExpect(api, api->ncclAllReduce(&v, &sum, 1, ncclInt32, ncclSum, comm, NULL), ncclSuccess, what);
  if (sum != n) dropinFail(api, what);
}

/* color = rank % 2, key = -rank (reverse order); with 3+ ranks the last rank takes NCCL_SPLIT_NOCOLOR. */
static void splitCases(const DropinApi* api, ncclComm_t comm, int me, int n) {
  const int color = (n >= 3 && me == n - 1) ? NCCL_SPLIT_NOCOLOR : me % 2;
  ncclComm_t sub = (ncclComm_t)&sub; /* must be overwritten */
  dropinExpect(api, api->ncclCommSplit(comm, color, -me, &sub, NULL), ncclSuccess, "ncclCommSplit");
  if (color == NCCL_SPLIT_NOCOLOR) {
    if (sub != NULL) dropinFail(api, "NCCL_SPLIT_NOCOLOR gave a communicator");
    return;
  }
  int members = 0, higher = 0, count = -1, rank = -1;
  for (int r = 0; r < n; ++r)
    if (!(n >= 3 && r == n - 1) && r % 2 == color) ++members, higher += r > me;
  dropinExpect(api, api->ncclCommCount(sub, &count), ncclSuccess, "ncclCommCount (split)");
  dropinExpect(api, api->ncclCommUserRank(sub, &rank), ncclSuccess, "ncclCommUserRank (split)");
  if (count != members || rank != higher) dropinFail(api, "split: wrong size or key order");
  checkSmallAllReduce(api, sub, members, "allreduce on the split communicator");
  dropinExpect(api, api->ncclCommDestroy(sub), ncclSuccess, "ncclCommDestroy (split)");
}

/* blocking = 0: init and finalize may return ncclInProgress; ncclCommGetAsyncError reports readiness. */
static void nonBlockingCases(const DropinApi* api, ncclComm_t comm, int me, int n) {
  ncclUniqueId id = shareNewId(api, comm, me);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t nb = NULL;
  ncclResult_t r = api->ncclCommInitRankConfig(&nb, n, id, me, &config);
  if ((r != ncclInProgress && r != ncclSuccess) || nb == NULL) {
    dropinFail(api, "non-blocking init");
    return;
  }
  dropinExpect(api, waitReady(api, nb), ncclSuccess, "non-blocking init completion");
  checkSmallAllReduce(api, nb, n, "allreduce on the non-blocking communicator");
  r = api->ncclCommFinalize(nb);
  if (r != ncclInProgress && r != ncclSuccess) dropinFail(api, "non-blocking finalize");
  dropinExpect(api, waitReady(api, nb), ncclSuccess, "non-blocking finalize completion");
  dropinExpect(api, api->ncclCommDestroy(nb), ncclSuccess, "ncclCommDestroy (non-blocking)");
}

/* Creation and finalization inside groups (NCCL's way to drive them without blocking the thread). */
static void groupedLifecycle(const DropinApi* api, ncclComm_t comm, int me, int n) {
  ncclUniqueId id = shareNewId(api, comm, me);
  ncclComm_t g = NULL;
  dropinExpect(api, api->ncclGroupStart(), ncclSuccess, "ncclGroupStart (init)");
  dropinExpect(api, api->ncclCommInitRank(&g, n, id, me), ncclSuccess, "ncclCommInitRank in a group");
  dropinExpect(api, api->ncclGroupEnd(), ncclSuccess, "ncclGroupEnd (init)");
  if (!g) {
    dropinFail(api, "grouped init gave no communicator");
    return;
  }
  checkSmallAllReduce(api, g, n, "allreduce on the grouped communicator");
  dropinExpect(api, api->ncclGroupStart(), ncclSuccess, "ncclGroupStart (finalize)");
  dropinExpect(api, api->ncclCommFinalize(g), ncclSuccess, "ncclCommFinalize in a group");
  dropinExpect(api, api->ncclGroupEnd(), ncclSuccess, "ncclGroupEnd (finalize)");
  dropinExpect(api, api->ncclCommDestroy(g), ncclSuccess, "ncclCommDestroy (grouped)");
}

int main(int argc, char** argv) {
  const char *lib = NULL, *libOdd = NULL, *expectFrom = NULL;
  int global = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--lib") && i + 1 < argc)
      lib = argv[++i];
    else if (!strcmp(argv[i], "--lib-odd") && i + 1 < argc)
      libOdd = argv[++i];
    else if (!strcmp(argv[i], "--global"))
      global = 1;
    else if (!strcmp(argv[i], "--expect-from") && i + 1 < argc)
      expectFrom = argv[++i];
    else
      return fprintf(stderr, "usage: coll_check --lib PATH [--lib-odd PATH] | --global [--expect-from PATH]\n"), 2;
  }
  int me = 0, n = 0;
  ncclUniqueId id;
  dropinLaunchEnv(&me, &n, &id);
  if (!global && !lib) return fprintf(stderr, "coll_check: --lib or --global is required\n"), 2;
  DropinApi api;
  dropinLoad(&api, global ? NULL : (libOdd && me % 2) ? libOdd : lib, RTLD_LOCAL);

  int version = 0;
  dropinExpect(&api, api.ncclGetVersion(&version), ncclSuccess, "ncclGetVersion");
  if (version < NCCL_VERSION(2, 28, 0)) dropinFail(&api, "ncclGetVersion reports less than 2.28");

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
  ncclComm_t comm = NULL;
  dropinExpect(&api, api.ncclCommInitRankConfig(&comm, n, id, me, &config), ncclSuccess, "ncclCommInitRankConfig");
  if (!comm) return fprintf(stderr, "rank %d: no communicator\n", me), 1;
  int count = -1, rank = -1, device = 0;
  dropinExpect(&api, api.ncclCommCount(comm, &count), ncclSuccess, "ncclCommCount");
  dropinExpect(&api, api.ncclCommUserRank(comm, &rank), ncclSuccess, "ncclCommUserRank");
  dropinExpect(&api, api.ncclCommCuDevice(comm, &device), ncclSuccess, "ncclCommCuDevice");
  if (count != n || rank != me || device != -1) dropinFail(&api, "count / rank / device (-1 for a CPU rank)");

  runCollectiveCases(&api, comm, me, n);
  splitCases(&api, comm, me, n);
  nonBlockingCases(&api, comm, me, n);
  groupedLifecycle(&api, comm, me, n);

  ncclResult_t async = ncclInternalError;
  dropinExpect(&api, api.ncclCommGetAsyncError(comm, &async), ncclSuccess, "ncclCommGetAsyncError");
  dropinExpect(&api, async, ncclSuccess, "asynchronous error state");
  dropinExpect(&api, api.ncclCommFinalize(comm), ncclSuccess, "ncclCommFinalize");
  dropinExpect(&api, api.ncclCommDestroy(comm), ncclSuccess, "ncclCommDestroy");

  Dl_info info;
  const char* where = dladdr((void*)api.ncclAllReduce, &info) && info.dli_fname ? info.dli_fname : "?";
  char *want = expectFrom ? realpath(expectFrom, NULL) : NULL, *got = realpath(where, NULL);
  if (expectFrom && (!want || !got || strcmp(want, got) != 0))
    dropinFail(&api, "ncclAllReduce is not the expected library's");
  free(want), free(got);
  printf("rank %d of %d: %s, %d failures (%s)\n", me, n, dropinFailures() ? "FAILED" : "ok", dropinFailures(), where);
  return dropinFailures() ? 1 : 0;
}
