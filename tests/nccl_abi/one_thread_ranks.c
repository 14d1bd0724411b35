/* one_thread_ranks LIB: one thread drives several ranks, the ways NCCL allows it: ncclCommInitAll, groups
 * of collectives over several communicators, creation / split / finalize inside groups, and non-blocking
 * communicators polled with ncclCommGetAsyncError. Each of these would deadlock if a call blocked until
 * the other ranks (same thread) arrived. CPU ranks, exact checks. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

#include "dropin_api.h"

#define R 3
static const DropinApi* A;

static void allReduceAll(ncclComm_t* comms, int n, const char* what) {
  int32_t in[R], out[R];
  dropinExpect(A, A->ncclGroupStart(), ncclSuccess, what);
  for (int r = 0; r < n; ++r) {
    in[r] = 10 + r, out[r] = 0;
    dropinExpect(A, A->ncclAllReduce(&in[r], &out[r], 1, ncclInt32, ncclSum, comms[r], NULL), ncclSuccess, what);
  }
  dropinExpect(A, A->ncclGroupEnd(), ncclSuccess, what);
  for (int r = 0; r < n; ++r)
    if (out[r] != 10 * n + n * (n - 1) / 2) dropinFail(A, what);
}

static void finalizeAll(ncclComm_t* comms, int n, const char* what) {
  dropinExpect(A, A->ncclGroupStart(), ncclSuccess, what);
  for (int r = 0; r < n; ++r) dropinExpect(A, A->ncclCommFinalize(comms[r]), ncclSuccess, what);
  dropinExpect(A, A->ncclGroupEnd(), ncclSuccess, what);
  for (int r = 0; r < n; ++r) dropinExpect(A, A->ncclCommDestroy(comms[r]), ncclSuccess, what);
}

/* Polls every communicator until none reports ncclInProgress (60 s deadline). */
static void waitAll(ncclComm_t* comms, int n, const char* what) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (int pending = n; pending > 0;) {
    pending = 0;
    for (int r = 0; r < n; ++r) {
      ncclResult_t state = ncclInternalError;
      dropinExpect(A, A->ncclCommGetAsyncError(comms[r], &state), ncclSuccess, what);
      if (state == ncclInProgress)
        ++pending;
      else
        dropinExpect(A, state, ncclSuccess, what);
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (pending && now.tv_sec - start.tv_sec > 60) {
      dropinFail(A, what);
      return;
    }
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
}

int main(int argc, char** argv) {
  if (argc != 2) return fprintf(stderr, "usage: one_thread_ranks LIB\n"), 2;
  DropinApi api;
  dropinLoad(&api, argv[1], RTLD_LOCAL);
  A = &api;
  ncclComm_t comms[R] = {NULL}, subs[R] = {NULL};

  dropinExpect(A, A->ncclCommInitAll(comms, R, NULL), ncclSuccess, "ncclCommInitAll");
  for (int r = 0; r < R; ++r) {
    int rank = -1, count = -1;
    A->ncclCommUserRank(comms[r], &rank), A->ncclCommCount(comms[r], &count);
    if (rank != r || count != R) dropinFail(A, "ncclCommInitAll: rank or count");
  }
  allReduceAll(comms, R, "group of all-reduces over ncclCommInitAll's communicators");

  /* Splits inside a group: ranks 0 and 1 form a communicator, rank 2 takes NCCL_SPLIT_NOCOLOR. */
  dropinExpect(A, A->ncclGroupStart(), ncclSuccess, "ncclGroupStart (split)");
  for (int r = 0; r < R; ++r)
    dropinExpect(A, A->ncclCommSplit(comms[r], r < 2 ? 7 : NCCL_SPLIT_NOCOLOR, r, &subs[r], NULL), ncclSuccess,
                 "ncclCommSplit in a group");
  dropinExpect(A, A->ncclGroupEnd(), ncclSuccess, "ncclGroupEnd (split)");
  if (!subs[0] || !subs[1] || subs[2])
    dropinFail(A, "grouped split: wrong communicators");
  else {
    allReduceAll(subs, 2, "all-reduce over the grouped split");
    finalizeAll(subs, 2, "finalize of the split communicators");
  }
  finalizeAll(comms, R, "grouped finalize of ncclCommInitAll's communicators");

  /* Non-blocking creation of R ranks from this thread, then a non-blocking finalize. */
  ncclUniqueId id;
  dropinExpect(A, A->ncclGetUniqueId(&id), ncclSuccess, "ncclGetUniqueId");
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  for (int r = 0; r < R; ++r) {
    ncclResult_t res = A->ncclCommInitRankConfig(&comms[r], R, id, r, &config);
    if (res != ncclInProgress && res != ncclSuccess) dropinFail(A, "non-blocking init");
  }
  waitAll(comms, R, "non-blocking init");
  allReduceAll(comms, R, "all-reduce over non-blocking communicators");
  for (int r = 0; r < R; ++r) {
    ncclResult_t res = A->ncclCommFinalize(comms[r]);
    if (res != ncclInProgress && res != ncclSuccess) dropinFail(A, "non-blocking finalize");
  }
  waitAll(comms, R, "non-blocking finalize");
  for (int r = 0; r < R; ++r) dropinExpect(A, A->ncclCommDestroy(comms[r]), ncclSuccess, "destroy (non-blocking)");

  /* Blocking creation inside a group. */
  dropinExpect(A, A->ncclGetUniqueId(&id), ncclSuccess, "ncclGetUniqueId");
  dropinExpect(A, A->ncclGroupStart(), ncclSuccess, "ncclGroupStart (init)");
  for (int r = 0; r < R; ++r)
    dropinExpect(A, A->ncclCommInitRank(&comms[r], R, id, r), ncclSuccess, "ncclCommInitRank in a group");
  dropinExpect(A, A->ncclGroupEnd(), ncclSuccess, "ncclGroupEnd (init)");
  allReduceAll(comms, R, "all-reduce over communicators created in a group");
  finalizeAll(comms, R, "grouped finalize");

  printf("one_thread_ranks: %d failures\n", dropinFailures());
  return dropinFailures() ? 1 : 0;
}
