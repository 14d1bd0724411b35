// Knobs the planner reads: pipeline chunk size, the small-message threshold, and a forced algorithm.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace hetccl::algo {

enum class AlgoChoice { Auto, Ring, Tree, RecursiveDoubling, Hier };
/// "auto", "ring", "tree", "rd", "hier".
const char* algoChoiceName(AlgoChoice a) noexcept;
/// Parses the names above; throws InvalidArgument naming HETCCL_ALGO otherwise.
AlgoChoice parseAlgoChoice(std::string_view name);

/// Calls of up to maxBytes bytes (and above the previous band's) take `algo` (a row of a tuning table:
/// algo/tuning_table.hpp).
struct TuningBand {
  static constexpr size_t kAnySize = static_cast<size_t>(-1);
  size_t maxBytes = kAnySize;
  AlgoChoice algo = AlgoChoice::Ring;
  bool operator==(const TuningBand&) const = default;
};

struct Tuning {
  size_t chunkBytes = 512 * 1024;  ///< HETCCL_CHUNK_BYTES: pipeline unit (rounded down to whole elements, min 1)
  size_t minChunkBytes = 64 * 1024;  ///< mid-size operations split into chunks no smaller than this
  /// Mid-size operations (below this many chunks of chunkBytes) are cut into this many chunks, none smaller
  /// than minChunkBytes. The stream pipeline sets 4 (its pieces cost more: StreamExecutor::tuningFromConfig).
  size_t midChunks = 8;
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
  /// Host calls (fromConfig) where every domain has one rank plan an all-reduce as one domain of as many
  /// ranks would (doubling up to smallBytes, then tree or ring): the hierarchical plan has nothing to do
  /// inside such a domain, and the call stamps see the traffic of a one-domain job. Measured on 16 CPU
  /// cores over shm: doubling 1.41-3.85x faster than the hierarchical plan at 8 B - 4 KiB, 0.92-2.77x at
  /// 8-64 KiB, 2-4.4x over tcp (bench/results/host_algo_sweep_2026-11-29); above 64 KiB the ring 1.13-1.23x
  /// (4 ranks) and 1.11-1.79x (8 ranks) ahead of it since the host engine polls 2 ms where ranks have a
  /// core each (bench/results/host_idle_spin_2026-11-29/run3_crossovers). The stream pipeline keeps the
  /// hierarchical plan above smallBytes (StreamExecutor::tuningFromConfig turns this off).
  bool oneRankDomainsAsOneDomain = false;
  /// Host calls of one domain (or planned as one) from 8 ranks up: above smallBytes the tree (reduce to
  /// one rank, broadcast: 2 log2(n) dependent steps) instead of the ring (2 (n-1) steps) up to
  /// treeAllReduceMaxBytes(nranks) (selection.hpp). Off for the stream pipeline.
  bool treeForManyRanks = false;
  /// HETCCL_TUNING_FILE's all-reduce bands for this communicator's layout (algo/tuning_table.hpp), set by
  /// the communicator for host calls; under auto they come before every built-in rule.
  std::vector<TuningBand> allReduceBands;

  /// The values of the process configuration (src/core/config), as host calls (the host engine) use them;
  /// the stream pipeline adjusts them (StreamExecutor::tuningFromConfig).
  static Tuning fromConfig();

  /// Elements per chunk for elements of `elemSize` bytes (at least 1).
  size_t chunkElems(size_t elemSize) const { return chunkBytes / elemSize > 0 ? chunkBytes / elemSize : 1; }
};

}  // namespace hetccl::algo
