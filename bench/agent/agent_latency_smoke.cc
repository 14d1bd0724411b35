// Agent smoke test and host-memory latency/bandwidth probe (two agents in one process, 127.0.0.1): a write of
// three ranges with a notification, a read back with one, an out-of-bounds prepare refused, then 2000
// 64-byte write round trips (post + wait), bursts of 32 writes of 64 B / 4 KiB / 256 KiB posted together then
// waited (each checked), and 20 reads of 16 MiB. Run with HETCCL_AGENT_WINDOW=off for tcp.
//   g++ -O2 -Iinclude bench/agent/agent_latency_smoke.cc -Lbuild -lhetccl -o agent_smoke
#include <hetccl/hetccl_agent.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <time.h>
#include <algorithm>
#include <string>
#define CK(x) do { hetcclResult_t r_ = (x); if (r_ != hetcclSuccess) { printf("%s:%d %s -> %d %s\n", __FILE__, __LINE__, #x, r_, hetcclGetLastError(NULL)); exit(1);} } while(0)
int main() {
  hetcclAgentOptions_t o; CK(hetcclAgentOptionsInit(&o));
  const char* sec = "0123456789abcdef0123456789abcdef";
  o.secret = sec; o.secretBytes = 32; o.listenAddress = "127.0.0.1:0"; o.timeoutSeconds = 5;
  hetcclAgent_t a, b; CK(hetcclAgentCreate("A", &o, &a)); CK(hetcclAgentCreate("B", &o, &b));
  std::vector<unsigned char> ba(1<<24), bb(1<<24);
  for (size_t i=0;i<ba.size();++i) ba[i]=(unsigned char)(i*7+1);
  hetcclAgentMem_t ma, mb; uint32_t ia, ib;
  CK(hetcclAgentRegister(a, ba.data(), ba.size(), &ma, &ia));
  CK(hetcclAgentRegister(b, bb.data(), bb.size(), &mb, &ib));
  size_t n = 4096; std::vector<unsigned char> blob(n);
  CK(hetcclAgentGetMetadata(b, blob.data(), &n));
  char name[64]; CK(hetcclAgentLoadRemote(a, blob.data(), n, name)); printf("loaded %s (%zu B)\n", name, n);
  hetcclAgentRange_t r[3] = {{ia, ib, 0, 0, 100}, {ia, ib, 1000, 5000, 70000}, {ia, ib, 100000, 200000, 9000000}};
  hetcclAgentXfer_t x; CK(hetcclAgentPrepXfer(a, hetcclAgentWrite, "B", r, 3, "hello", 5, &x));
  CK(hetcclAgentPostXfer(x)); CK(hetcclAgentWaitXfer(x));
  int got=0; char from[64]; char msg[4096]; size_t mbytes=0;
  CK(hetcclAgentGetNotif(b, from, msg, sizeof msg, &mbytes, &got));
  printf("notif got=%d from=%s msg=%.*s\n", got, from, (int)mbytes, msg);
  if (memcmp(bb.data(), ba.data(), 100) || memcmp(bb.data()+5000, ba.data()+1000, 70000) || memcmp(bb.data()+200000, ba.data()+100000, 9000000)) { printf("DATA MISMATCH write\n"); return 1; }
  // read back into another place
  std::fill(ba.begin(), ba.end(), 0);
  hetcclAgentRange_t rr[1] = {{ia, ib, 0, 200000, 9000000}};
  hetcclAgentXfer_t y; CK(hetcclAgentPrepXfer(a, hetcclAgentRead, "B", rr, 1, "done", 4, &y));
  CK(hetcclAgentPostXfer(y)); CK(hetcclAgentWaitXfer(y));
  for (size_t i=0;i<9000000;++i) if (ba[i] != (unsigned char)((i+100000)*7+1)) { printf("DATA MISMATCH read at %zu\n", i); return 1; }
  CK(hetcclAgentGetNotif(b, from, msg, sizeof msg, &mbytes, &got));
  printf("notif got=%d from=%s msg=%.*s\n", got, from, (int)mbytes, msg);
  // out of bounds remote
  hetcclAgentRange_t bad[1] = {{ia, ib, 0, (1<<24)-10, 100}};
  hetcclAgentXfer_t z; printf("oob prep -> %d %s\n", hetcclAgentPrepXfer(a, hetcclAgentWrite, "B", bad, 1, NULL, 0, &z), hetcclGetLastError(NULL));
  // timing of small writes
  hetcclAgentRange_t s1[1] = {{ia, ib, 0, 0, 64}};
  hetcclAgentXfer_t w; CK(hetcclAgentPrepXfer(a, hetcclAgentWrite, "B", s1, 1, NULL, 0, &w));
  timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i=0;i<2000;++i) { CK(hetcclAgentPostXfer(w)); CK(hetcclAgentWaitXfer(w)); }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("64 B write: %.1f us\n", ((t1.tv_sec-t0.tv_sec)*1e9+(t1.tv_nsec-t0.tv_nsec))/2000/1e3);
  // bursts: 32 prepared writes (distinct slices of 256 KiB) posted together, then all waited, per size
  for (uint64_t bytes : {uint64_t{64}, uint64_t{4096}, uint64_t{262144}}) {
    const int kBurst = 32, rounds = bytes > 4096 ? 20 : 100;
    std::vector<hetcclAgentXfer_t> xs(kBurst);
    for (int k = 0; k < kBurst; ++k) {
      hetcclAgentRange_t s[1] = {{ia, ib, uint64_t(k) << 18, (uint64_t(k) << 18) + 7, bytes}};
      CK(hetcclAgentPrepXfer(a, hetcclAgentWrite, "B", s, 1, NULL, 0, &xs[k]));
    }
    for (size_t i = 0; i < ba.size(); ++i) ba[i] = (unsigned char)(i * 11 + bytes);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < rounds; ++i) {
      for (int k = 0; k < kBurst; ++k) CK(hetcclAgentPostXfer(xs[k]));
      for (int k = 0; k < kBurst; ++k) CK(hetcclAgentWaitXfer(xs[k]));
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    for (int k = 0; k < kBurst; ++k) {
      if (memcmp(bb.data() + (uint64_t(k) << 18) + 7, ba.data() + (uint64_t(k) << 18), bytes)) { printf("DATA MISMATCH burst %d\n", k); return 1; }
      CK(hetcclAgentReleaseXfer(xs[k]));
    }
    const double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
    printf("burst of %d writes of %llu B: %.1f us per write, %.2f GB/s\n", kBurst, (unsigned long long)bytes,
           ns / (rounds * kBurst) / 1e3, double(bytes) * rounds * kBurst / ns);
  }
  hetcclAgentRange_t big[1] = {{ia, ib, 0, 0, 1<<24}};
  hetcclAgentXfer_t g; CK(hetcclAgentPrepXfer(a, hetcclAgentRead, "B", big, 1, NULL, 0, &g));
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i=0;i<20;++i) { CK(hetcclAgentPostXfer(g)); CK(hetcclAgentWaitXfer(g)); }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("16 MiB read: %.2f GB/s\n", 20.0*(1<<24)/((t1.tv_sec-t0.tv_sec)*1e9+(t1.tv_nsec-t0.tv_nsec)));
  CK(hetcclAgentReleaseXfer(x)); CK(hetcclAgentDeregister(ma));
  CK(hetcclAgentDestroy(a)); CK(hetcclAgentDestroy(b));
  printf("OK\n");
}
