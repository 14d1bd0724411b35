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
  /// domains (a vendor call per phase and chunk; mid-size operations use smaller chunks, >= minChunkBytes).
  size_t hierChunkBytes = size_t{8} << 20;
  /// All-reduce between exactly two ranks up to this size (bytes): both exchange everything and reduce
  /// (one round trip, recursive doubling) instead of reduce-scatter + all-gather, whatever the domains.
  /// Moves the same bytes; pays off where every hop is costly (the GPU stream pipeline). 0: never.
  size_t pairExchangeBytes = 0;

  /// The values of the process configuration (src/core/config).
  static Tuning fromConfig();
  /// Elements per chunk for elements of `elemSize` bytes (at least 1).
  size_t chunkElems(size_t elemSize) const { return chunkBytes / elemSize > 0 ? chunkBytes / elemSize : 1; }
};

}  // namespace hetccl::algo
