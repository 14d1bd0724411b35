/* Stand-ins for PyTorch's libtorch_cuda.so in hetccl-info --torch tests, one source, three builds:
 *   dynamic:  imports NCCL names, linked against libnccl.so.2 (DT_NEEDED), as pip wheels are;
 *   missing:  as dynamic, plus a name no NCCL exports;
 *   static:   carries its own (hidden) NCCL, as a build with NCCL linked in statically does. */
#include <stddef.h>

#if defined(FAKE_TORCH_STATIC)
/* Kept in .rodata whatever the optimisation (a real static NCCL prints it): folded away, only -g's debug
 * information held it, and hetccl-info's check passed for that reason alone (it failed at -g1). */
__attribute__((used)) static const char kBanner[] = "NCCL version 2.28.9+cuda13.0";
__attribute__((visibility("hidden"))) int ncclAllReduce(void) { return kBanner[0]; }
int fakeTorchCollective(void) { return ncclAllReduce(); }
#else
int ncclGetVersion(int* version);
int ncclCommInitRankConfig(void** comm, int nranks, char id[128], int rank, void* config);
int ncclAllReduce(const void* s, void* r, size_t n, int t, int op, void* comm, void* stream);
int fakeTorchCollective(void) {
  int v = 0;
  ncclGetVersion(&v);
  char id[128] = {0};
  void* comm = NULL;
  return ncclCommInitRankConfig(&comm, 1, id, 0, NULL) + ncclAllReduce(NULL, NULL, 0, 0, 0, comm, NULL);
}
#if defined(FAKE_TORCH_MISSING)
int ncclNotInAnyNccl(void);
int fakeTorchMissing(void) { return ncclNotInAnyNccl(); }
#endif
#endif
