/* abort_race LIB [ITERATIONS]: the drop-in's communicator lifetime under the races PyTorch produces
 * (issue 12 item 1): a watchdog thread polling ncclCommGetAsyncError while another thread calls
 * ncclCommAbort, an ncclAllReduce in flight while another thread aborts, ncclCommDestroy while another
 * thread keeps querying, and calls on destroyed or aborted handles (ncclInvalidUsage, never a crash).
 * Two CPU ranks of one process (ncclCommInitAll). Runs under ASan and TSan in scripts/test.sh. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dropin_api.h"

static const DropinApi* A;

enum Kind { kPollAsync, kAllReduce, kCount };

typedef struct {
  ncclComm_t comm;
  enum Kind kind;
  atomic_int stop;
  atomic_int calls;
  atomic_int unexpected;
  ncclResult_t allowed[4];
  int nallowed;
} Hammer;

static void* hammer(void* arg) {
  Hammer* h = arg;
  while (!atomic_load(&h->stop)) {
    ncclResult_t r = ncclSuccess, async = ncclSuccess;
    float x = 1;
    int n = 0;
    switch (h->kind) {
      case kPollAsync: r = A->ncclCommGetAsyncError(h->comm, &async); break;
      case kAllReduce: r = A->ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, h->comm, NULL); break;
      case kCount:
        r = A->ncclCommCount(h->comm, &n);
        if (r == ncclSuccess && n != 2) r = ncclInternalError;
        break;
    }
    int ok = 0;
    for (int i = 0; i < h->nallowed; ++i) ok |= r == h->allowed[i];
    if (!ok) {
      if (atomic_fetch_add(&h->unexpected, 1) == 0)
        fprintf(stderr, "unexpected result %d: %s\n", (int)r, A->ncclGetLastError(NULL));
    }
    atomic_fetch_add(&h->calls, 1);
  }
  return NULL;
}

static void waitCalls(Hammer* h, int n) {
  while (atomic_load(&h->calls) < n) sched_yield();
}

static void startHammer(Hammer* h, pthread_t* t, ncclComm_t comm, enum Kind kind, const ncclResult_t* allowed,
                        int nallowed) {
  memset(h, 0, sizeof *h);
  h->comm = comm;
  h->kind = kind;
  memcpy(h->allowed, allowed, sizeof(ncclResult_t) * (size_t)nallowed);
  h->nallowed = nallowed;
  pthread_create(t, NULL, hammer, h);
}

static void stopHammer(Hammer* h, pthread_t t, const char* what) {
  atomic_store(&h->stop, 1);
  pthread_join(t, NULL);
  if (atomic_load(&h->unexpected) != 0) dropinFail(A, what);
}

static void initTwo(ncclComm_t comms[2]) {
  if (A->ncclCommInitAll(comms, 2, NULL) != ncclSuccess) {
    dropinFail(A, "ncclCommInitAll");
    exit(1);
  }
}

/* The calls on a dead handle all say ncclInvalidUsage. */
static void expectDead(ncclComm_t c, const char* what) {
  ncclResult_t async = ncclSuccess;
  float x = 1;
  int n = 0;
  dropinExpect(A, A->ncclCommGetAsyncError(c, &async), ncclInvalidUsage, what);
  dropinExpect(A, A->ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, c, NULL), ncclInvalidUsage, what);
  dropinExpect(A, A->ncclCommCount(c, &n), ncclInvalidUsage, what);
  dropinExpect(A, A->ncclCommAbort(c), ncclInvalidUsage, what);
  dropinExpect(A, A->ncclCommDestroy(c), ncclInvalidUsage, what);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: abort_race LIB [ITERATIONS]\n");
    return 2;
  }
  static DropinApi api;
  dropinLoad(&api, argv[1], 0);
  A = &api;
  int iterations = argc > 2 ? atoi(argv[2]) : 50;
  for (int it = 0; it < iterations; ++it) {
    ncclComm_t comms[2];
    Hammer h;
    pthread_t t;

    /* A watchdog polls while another thread aborts. */
    initTwo(comms);
    const ncclResult_t pollOk[] = {ncclSuccess, ncclInvalidUsage};
    startHammer(&h, &t, comms[0], kPollAsync, pollOk, 2);
    waitCalls(&h, 10);
    dropinExpect(A, A->ncclCommAbort(comms[0]), ncclSuccess, "abort under a polling watchdog");
    waitCalls(&h, atomic_load(&h.calls) + 10);
    stopHammer(&h, t, "watchdog racing abort");
    expectDead(comms[0], "calls after abort");
    A->ncclCommAbort(comms[1]);

    /* A collective in flight (rank 1 never joins) while another thread aborts. */
    initTwo(comms);
    const ncclResult_t collOk[] = {ncclInvalidUsage, ncclRemoteError};
    startHammer(&h, &t, comms[0], kAllReduce, collOk, 2);
    struct timespec pause = {0, (it % 5) * 1000000L};
    nanosleep(&pause, NULL);
    dropinExpect(A, A->ncclCommAbort(comms[0]), ncclSuccess, "abort under a collective");
    waitCalls(&h, 2);
    stopHammer(&h, t, "collective racing abort");
    A->ncclCommAbort(comms[1]);

    /* Destroy (both ranks, in a group as one thread drives both) while another thread queries rank 0. */
    initTwo(comms);
    /* ncclInvalidArgument: "not ready" while the grouped finalize runs in the background (as NCCL). */
    const ncclResult_t countOk[] = {ncclSuccess, ncclInvalidUsage, ncclInvalidArgument};
    startHammer(&h, &t, comms[0], kCount, countOk, 3);
    waitCalls(&h, 5);
    dropinExpect(A, A->ncclGroupStart(), ncclSuccess, "finalize group");
    for (int r = 0; r < 2; ++r) dropinExpect(A, A->ncclCommFinalize(comms[r]), ncclSuccess, "finalize");
    dropinExpect(A, A->ncclGroupEnd(), ncclSuccess, "finalize group");
    for (int r = 0; r < 2; ++r) dropinExpect(A, A->ncclCommDestroy(comms[r]), ncclSuccess, "destroy under queries");
    waitCalls(&h, atomic_load(&h.calls) + 5);
    stopHammer(&h, t, "queries racing destroy");
    expectDead(comms[0], "calls after destroy");
    if (dropinFailures()) break;
  }
  if (dropinFailures()) {
    fprintf(stderr, "abort_race: %d failure(s)\n", dropinFailures());
    return 1;
  }
  printf("abort_race: %d iterations passed\n", iterations);
  return 0;
}
