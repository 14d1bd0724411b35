// The latency path's protocol (hetcclGpuLlAllReduce_t in device/base/gpu_plugin.h): one all-reduce of a few
// KiB among the GPU ranks of one host, run by ONE kernel per rank over the ranks' boards in pinned host
// memory. Written once for the GPU kernels (ll_kernels.cuh, CUDA and HIP) and for the test doubles of a GPU
// (the unit tests' simulated GPU, the fake HIP runtime), which run this very code on a host thread
// (tests/support/ll_host_kernel.hpp), so that removing one of its waits makes a test fail
// (scripts/mutate-stream-waits.sh: each wait is marked with a trailing wait comment).
//
// A board set is HETCCL_GPU_LL_HEADER_WORDS header words and then one *line* (two words) per 8 bytes of
// data. Every word is 32 bits of payload | the call's sequence number << 32, stored as one 64-bit store and
// read as one 64-bit load, so a word that shows the sequence number holds that call's payload (no separate
// flag, nothing to order between data and flag). Header word h carries half h % 2 of stamp word h / 2.
//
// One call, on every rank (seq = the last sequence number + 1, never 0; set = seq % 2):
//   1. write: this rank's stamp (word 1 = seq) and its data into set `set` of its own board;
//   2. headers: one thread per peer waits until the peer's header words show seq and compares them with
//      its own stamp; a difference (another call, type, operator or count) is recorded in the report and
//      ends the call on this rank (the peer finds the same difference in this rank's header);
//   3. data, at the same time: every line of every rank, in rank order (this rank's own from its input),
//      waited for and reduced: the same order on every rank, so every rank gets the same bits (a line
//      reduced before a stamp difference was seen is garbage: the outputs of a failed call are undefined);
//   4. the new sequence number is stored (device memory: a CUDA graph replays the kernel and the kernel
//      advances it, so replays and eager calls interleave freely).
// Two sets alternate, so a rank may start call k + 1 while a peer still reads its call-k words: a rank
// writes set k % 2 again only at call k + 2, which needs every peer's call-k + 1 words, written after that
// peer finished reading call k. Every wait also polls the abort word (the host's monitor sets it after a
// failure), so no kernel spins forever.
#pragma once

#include <stdint.h>

#include "device/base/gpu_plugin.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define HETCCL_LL_FN __host__ __device__ inline
#else
#define HETCCL_LL_FN inline
#endif

namespace hetccl::gpu::ll {

/// Polls between two looks at the abort word.
inline constexpr uint32_t kAbortPollSpins = 256;
/// Lines per block (one lane each); blocks at most (a lane takes several lines beyond); lanes per block at
/// most: the line lanes and one lane per header word of every rank after them (checked in parallel).
inline constexpr unsigned kLinesPerBlock = 256;
inline constexpr unsigned kMaxBlocks = 64;
inline constexpr unsigned kMaxBlockThreads = kLinesPerBlock + HETCCL_GPU_LL_HEADER_WORDS * HETCCL_GPU_LL_MAX_RANKS;

/// The grid of a call of `bytes` among `nranks` ranks (every plugin launches this shape).
struct LaunchShape {
  unsigned blocks, threads;
};

/// What the threads of one call share (GPU: shared memory; host: a local).
struct Shared {
  volatile int failed;        // 0: fine, 1: a peer's stamp differs, 2: aborted
  volatile int mismatchPeer;  // a peer whose stamp differs (any one)
};

HETCCL_LL_FN uint32_t nextSeq(uint64_t last) {
  const uint32_t s = static_cast<uint32_t>(last) + 1;
  return s == 0 ? 1 : s;  // 0 is what fresh memory holds
}
HETCCL_LL_FN uint64_t word(uint32_t payload, uint32_t seq) { return uint64_t{payload} | (uint64_t{seq} << 32); }
HETCCL_LL_FN uint32_t seqOf(uint64_t w) { return static_cast<uint32_t>(w >> 32); }
HETCCL_LL_FN uint64_t dataBytes(const hetcclGpuLlAllReduce_t& a, uint64_t elementBytes) { return a.count * elementBytes; }
HETCCL_LL_FN uint64_t lines(uint64_t bytes) { return (bytes + 7) / 8; }
/// Words one set needs for `bytes` of data.
HETCCL_LL_FN uint64_t setWordsFor(uint64_t bytes) { return HETCCL_GPU_LL_HEADER_WORDS + 2 * lines(bytes); }
HETCCL_LL_FN LaunchShape launchShape(uint64_t bytes, int nranks) {
  const uint64_t n = lines(bytes);
  unsigned threads = static_cast<unsigned>(n < kLinesPerBlock ? n : kLinesPerBlock) +
                     HETCCL_GPU_LL_HEADER_WORDS * static_cast<unsigned>(nranks);
  threads = (threads + 31) / 32 * 32;
  const uint64_t wanted = (n + kLinesPerBlock - 1) / kLinesPerBlock;
  return LaunchShape{wanted < 1 ? 1u : wanted > kMaxBlocks ? kMaxBlocks : static_cast<unsigned>(wanted), threads};
}
/// Bytes of one element of hetccl::DataType `dataType` (NCCL's order, int8 .. fp8 e5m2), 0 for another value.
HETCCL_LL_FN uint64_t elementBytes(int dataType) {
  constexpr uint64_t kBytes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  return dataType >= 0 && dataType < 12 ? kBytes[dataType] : 0;
}
/// Why `a` cannot run (null pointers, ranks out of range, premulsum, an unknown type, a count beyond the
/// boards), or nullptr. `elementBytes`: 0 for an unknown type.
inline const char* invalidArgs(const hetcclGpuLlAllReduce_t* a, uint64_t elementBytes) {
  if (!a) return "null arguments";
  if (a->nranks < 2 || a->nranks > HETCCL_GPU_LL_MAX_RANKS || a->rank < 0 || a->rank >= a->nranks)
    return "rank or rank count out of range";
  for (int r = 0; r < a->nranks; ++r)
    if (!a->boards[r]) return "null board";
  if (!a->seq || !a->abortWord || !a->report || (a->count > 0 && (!a->send || !a->recv))) return "null pointer";
  if (a->op < 0 || a->op > 4) return "unsupported operator (sum, prod, max, min, avg)";
  if (elementBytes == 0) return "unknown data type";
  if (setWordsFor(a->count * elementBytes) > a->setWords) return "count beyond the boards";
  return nullptr;
}
/// Set `seq % 2` of `rank`'s board.
HETCCL_LL_FN uint64_t* setOf(const hetcclGpuLlAllReduce_t& a, int rank, uint32_t seq) {
  return a.boards[rank] + (seq & 1u) * a.setWords;
}
/// Stamp word w of this call (word 1 is the sequence number).
HETCCL_LL_FN uint64_t stampWord(const hetcclGpuLlAllReduce_t& a, int w, uint32_t seq) { return w == 1 ? seq : a.stamp[w]; }

/// The 8 bytes of line `i` of `src` (`bytes` long), zero beyond its end.
HETCCL_LL_FN uint64_t loadLine(const void* src, uint64_t bytes, uint64_t i) {
  const unsigned char* p = static_cast<const unsigned char*>(src) + 8 * i;
  if (8 * i + 8 <= bytes && reinterpret_cast<uintptr_t>(p) % 8 == 0) return *reinterpret_cast<const uint64_t*>(p);
  uint64_t v = 0;
  for (uint64_t b = 0; b < 8 && 8 * i + b < bytes; ++b) v |= uint64_t{p[b]} << (8 * b);
  return v;
}
/// Stores the bytes of line `i` that lie inside `dst` (`bytes` long).
HETCCL_LL_FN void storeLine(void* dst, uint64_t bytes, uint64_t i, uint64_t v) {
  unsigned char* p = static_cast<unsigned char*>(dst) + 8 * i;
  if (8 * i + 8 <= bytes && reinterpret_cast<uintptr_t>(p) % 8 == 0) {
    *reinterpret_cast<uint64_t*>(p) = v;
    return;
  }
  for (uint64_t b = 0; b < 8 && 8 * i + b < bytes; ++b) p[b] = static_cast<unsigned char>(v >> (8 * b));
}

/// True (and sh.failed = 2) once the abort word is set; looks at it every kAbortPollSpins calls.
template <class Env>
HETCCL_LL_FN bool aborted(const hetcclGpuLlAllReduce_t& a, uint32_t& spins, Shared& sh) {
  if (++spins % kAbortPollSpins != 0) return false;
  if (Env::load(a.abortWord) == 0) return false;
  sh.failed = 2;
  return true;
}

/// One rank's share of one call, run by every thread of every block of the kernel. Env: static
/// load(const uint64_t*) / store(uint64_t*, uint64_t) (one 64-bit access each, visible to other devices and
/// the host), static loadPair / storePair (a line's two words: one 16-byte access where the device has
/// it, each 8-byte half whole), static pause(), static fence() (earlier writes visible system-wide before later ones); tid /
/// nthreads (this thread and all of them, over the blocks: lines are spread over every thread), lane /
/// laneCount (this thread and all of them in its block), firstBlock, manyBlocks; sync() (the block's barrier) and
/// lastToFinish() (called by lane 0 of each block after the block's work: true in the one block that
/// finishes last, after every block read the sequence number). Reduce: combine(uint64_t& acc, uint64_t in)
/// and finish(uint64_t& acc) on 8 bytes of data. `elementBytes` is the size of one element of a.dataType.
template <class Env, class Reduce>
HETCCL_LL_FN void allReduce(const hetcclGpuLlAllReduce_t& a, uint64_t elementBytes, Env& env, const Reduce& reduce,
                            Shared& sh) {
  const uint32_t seq = nextSeq(a.seq[0]);
  const uint64_t bytes = dataBytes(a, elementBytes), n = lines(bytes);
  if (env.lane == 0) {
    sh.failed = 0;
    sh.mismatchPeer = -1;
    if (env.firstBlock && a.startedWord) Env::store(a.startedWord, a.callNumber);
  }
  // 1. This rank's stamp and data into its own board.
  uint64_t* own = setOf(a, a.rank, seq);
  for (uint64_t h = env.lane; env.firstBlock && h < HETCCL_GPU_LL_HEADER_WORDS; h += env.laneCount) {
    const uint64_t s = stampWord(a, static_cast<int>(h / 2), seq);
    Env::store(own + h, word(static_cast<uint32_t>(h % 2 ? s >> 32 : s), seq));
  }
  for (uint64_t i = env.tid; i < n; i += env.nthreads) {
    const uint64_t v = loadLine(a.send, bytes, i);
    Env::storePair(own + HETCCL_GPU_LL_HEADER_WORDS + 2 * i, word(static_cast<uint32_t>(v), seq),
                   word(static_cast<uint32_t>(v >> 32), seq));
  }
  env.sync();  // sh is set
  // 2. Every peer's stamp, in every block: the k-th lane from the block's end checks word k % 8 of peer k / 8
  //    (one round trip for all; the kernel gives these lanes no line when the call has few). In a call of one
  //    block the lines need not wait for the check (a call that fails leaves its outputs undefined; a
  //    difference stops every waiter); in a larger call they do, so that thousands of threads do not poll
  //    host memory before the peers' words are on their way.
  for (int k = static_cast<int>(env.laneCount - 1 - env.lane); k < a.nranks * HETCCL_GPU_LL_HEADER_WORDS; k += static_cast<int>(env.laneCount)) {
    const int peer = k / HETCCL_GPU_LL_HEADER_WORDS, h = k % HETCCL_GPU_LL_HEADER_WORDS;
    if (peer == a.rank) continue;
    const uint64_t* theirs = setOf(a, peer, seq);
    uint32_t spins = 0;
    uint64_t w = Env::load(theirs + h);
    while (seqOf(w) != seq && sh.failed == 0 && !aborted<Env>(a, spins, sh)) w = (Env::pause(), Env::load(theirs + h));  // wait:ll-header
    const uint64_t s = stampWord(a, h / 2, seq);
    if (seqOf(w) == seq && static_cast<uint32_t>(w) != static_cast<uint32_t>(h % 2 ? s >> 32 : s)) {
      sh.mismatchPeer = peer;
      sh.failed = 1;
    }
  }
  if (env.manyBlocks) env.sync();
  // 3. Every line: the ranks' words in rank order, reduced. Each line's words of every peer are loaded at
  //    once (one round trip to host memory for all of them), then waited for in rank order.
  for (uint64_t i = env.tid; i < n && sh.failed == 0; i += env.nthreads) {
    uint64_t lo[HETCCL_GPU_LL_MAX_RANKS], hi[HETCCL_GPU_LL_MAX_RANKS];
    for (int r = 0; r < a.nranks; ++r) {
      if (r == a.rank) continue;
      Env::loadPair(setOf(a, r, seq) + HETCCL_GPU_LL_HEADER_WORDS + 2 * i, lo[r], hi[r]);
    }
    uint64_t acc = 0;
    for (int r = 0; r < a.nranks && sh.failed == 0; ++r) {
      uint64_t v;
      if (r == a.rank) {
        v = loadLine(a.send, bytes, i);
      } else {
        const uint64_t* line = setOf(a, r, seq) + HETCCL_GPU_LL_HEADER_WORDS + 2 * i;
        uint32_t spins = 0;
        while ((seqOf(lo[r]) != seq || seqOf(hi[r]) != seq) && sh.failed == 0 && !aborted<Env>(a, spins, sh))  // wait:ll-line
          Env::pause(), Env::loadPair(line, lo[r], hi[r]);
        v = (lo[r] & 0xffffffffu) | (hi[r] << 32);
      }
      if (r == 0) acc = v;
      else reduce.combine(acc, v);
    }
    if (sh.failed == 0) {
      reduce.finish(acc);
      storeLine(a.recv, bytes, i, acc);
    }
  }
  env.sync();
  // 4. The report; then, in the block that finishes last, the sequence number and the host's words.
  if (env.lane != 0) return;
  if (sh.failed == 1 && Env::load(a.report) == 0) {
    const uint64_t* theirs = setOf(a, sh.mismatchPeer, seq);
    for (int w = 0; w < 4; ++w) {
      Env::store(a.report + 1 + w, (Env::load(theirs + 2 * w) & 0xffffffffu) | (Env::load(theirs + 2 * w + 1) << 32));
      Env::store(a.report + 5 + w, stampWord(a, w, seq));
    }
    Env::fence();
    Env::store(a.report, static_cast<uint64_t>(sh.mismatchPeer) + 1);
  }
  if (!env.lastToFinish()) return;
  a.seq[0] = seq;
  Env::fence();  // the outputs before the host's words
  if (a.finishedWord) Env::store(a.finishedWord, a.callNumber);
  if (a.doneWord) Env::store(a.doneWord, a.doneValue);
}

}  // namespace hetccl::gpu::ll
