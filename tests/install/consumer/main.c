/* A program built against an installed hetccl (tests/install/check_install.sh): one CPU rank creates a
 * communicator, all-reduces, checks the result and prints the library's version. Exit 0 only when exact. */
#include <hetccl/hetccl.h>
#include <stdio.h>

#define OK(call)                                                                       \
  do {                                                                                 \
    hetcclResult_t r_ = (call);                                                        \
    if (r_ != hetcclSuccess) {                                                         \
      fprintf(stderr, "%s: %s (%s)\n", #call, hetcclGetErrorString(r_), hetcclGetLastError(NULL)); \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

int main(void) {
  int version = 0;
  OK(hetcclGetVersion(&version));
  hetcclUniqueId id;
  OK(hetcclGetUniqueId(&id));
  hetcclComm_t comm;
  OK(hetcclCommInitRank(&comm, 1, id, 0));
  float x[5] = {1, 2, 3, 4, 5}, y[5] = {0};
  OK(hetcclAllReduce(x, y, 5, hetcclFloat32, hetcclSum, comm, NULL));
  OK(hetcclCommDestroy(comm));
  for (int i = 0; i < 5; ++i)
    if (y[i] != x[i]) {
      fprintf(stderr, "element %d is %g, expected %g\n", i, y[i], x[i]);
      return 1;
    }
  printf("installed hetccl %d: all-reduce exact\n", version);
  return 0;
}
