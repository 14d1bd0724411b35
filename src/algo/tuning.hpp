// Knobs the planner reads: pipeline chunk size, the small-message threshold, and a forced algorithm.
#pragma once

#include <cstddef>
#include <string_view>

namespace hetccl::algo {

enum class AlgoChoice { Auto, Ring, Tree, RecursiveDoubling, Hier };
/// "auto", "ring", "tree", "rd", "hier".
const char* algoChoiceName(AlgoChoice a) noexcept;
/// Parses the names above; throws InvalidArgument naming HETCCL_ALGO otherwise.
AlgoChoice parseAlgoChoice(std::string_view name);

struct Tuning {
  size_t chunkBytes = 512 * 1024;  ///< HETCCL_CHUNK_BYTES: pipeline unit (rounded down to whole elements, min 1)
  size_t minChunkBytes = 64 * 1024;  ///< mid-size operations split into chunks no smaller than this
  size_t smallBytes = 64 * 1024;   ///< HETCCL_SMALL_BYTES: up to this many bytes use latency-bound algorithms
  AlgoChoice algo = AlgoChoice::Auto;  ///< HETCCL_ALGO
  /// HETCCL_HIER_CHUNK_BYTES: pipeline unit of the hierarchical algorithms with the vendor library in the
  /// domains (a vendor call per phase and chunk): a call is cut into 4 chunks (none below
  /// hierMinChunkBytes) up to this size each. 64 MiB: on 4 H200s (2 domains of 2) 8 MiB, i.e. 8-32 chunks at 64-256 MiB, made
  /// all-reduce 1.2-2x slower (bench/results/hier_hosts_h200x4_2026-11-27).
  size_t hierChunkBytes = size_t{64} << 20;
  /// The smallest chunk of the hierarchical algorithms (at most hierChunkBytes). The stream pipeline sets
  /// it to minChunkBytes on one host and to HETCCL_HIER_NET_MIN_CHUNK_BYTES when its ranks span several
  /// hosts, where each chunk's cross-domain exchange pays network round trips through the ring proxies.
  size_t hierMinChunkBytes = 64 * 1024;
  /// All-reduce between exactly two ranks up to this size (bytes): both exchange everything and reduce
  /// (one round trip, recursive doubling) instead of reduce-scatter + all-gather, whatever the domains.
  /// Moves the same bytes; pays off where every hop is costly (the GPU stream pipeline). 0: never.
  size_t pairExchangeBytes = 0;
  /// All-reduce across domains up to smallBytes by recursive doubling over every rank instead of the
  /// hierarchical plans (with or without the vendor inside the domains). The stream pipeline sets it: on
  /// 2+2 H200/H100 it is 1.45-1.6x faster at 32 B - 64 KiB (bench/results/algo_sweep_2026-11-27). The
  /// host engine keeps the hierarchical plans (CPU ranks measured 1.5-1.8x faster by doubling too): their
  /// traffic meets a disagreeing call's messages on more links, so the call stamps name both calls where
  /// doubling's pattern leaves a stale message unread or two ranks waiting on each other until
  /// HETCCL_TIMEOUT (tests/mp/stamp_check.cc on 3 ranks in 2 domains); see issue 26's note.
  bool smallAllReduceByDoubling = false;
  /// The same, only where every domain has one rank: the hierarchical plan has nothing to do inside such a
  /// domain, and the call stamps see the traffic of a one-domain job, which takes doubling up to smallBytes
  /// too. Host calls (fromConfig) take it. On 2-8 CPU ranks in as many domains over shm it is 1.41-3.85x
  /// faster than the hierarchical plan at 8 B - 4 KiB and 0.92-2.77x at 8-64 KiB, 2-4.4x over tcp
  /// (bench/results/host_algo_sweep_2026-11-29). Above
  /// smallBytes the hierarchical plan stays: the ring, which one domain takes there, is 1.05-1.4x ahead of
  /// it at 2-4 ranks but 1.2-2.1x behind at 8 ranks from 512 KiB to 2 MiB.
  bool smallAllReduceByDoublingOnOneRankDomains = false;

  /// The values of the process configuration (src/core/config), as host calls (the host engine) use them;
  /// the stream pipeline adjusts them (StreamExecutor::tuningFromConfig).
  static Tuning fromConfig();

  /// Elements per chunk for elements of `elemSize` bytes (at least 1).
  size_t chunkElems(size_t elemSize) const { return chunkBytes / elemSize > 0 ? chunkBytes / elemSize : 1; }
};

}  // namespace hetccl::algo
