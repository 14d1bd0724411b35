#include "algo/tuning.hpp"

#include "core/config.hpp"
#include "core/error.hpp"

namespace hetccl::algo {

const char* algoChoiceName(AlgoChoice a) noexcept {
  switch (a) {
    case AlgoChoice::Auto: return "auto";
    case AlgoChoice::Ring: return "ring";
    case AlgoChoice::Tree: return "tree";
    case AlgoChoice::RecursiveDoubling: return "rd";
    case AlgoChoice::Hier: return "hier";
  }
  return "unknown";
}

AlgoChoice parseAlgoChoice(std::string_view name) {
  for (AlgoChoice a : {AlgoChoice::Auto, AlgoChoice::Ring, AlgoChoice::Tree, AlgoChoice::RecursiveDoubling,
                       AlgoChoice::Hier})
    if (name == algoChoiceName(a)) return a;
  throw InvalidArgument(concat("HETCCL_ALGO='", name, "' is not one of auto, ring, tree, rd, hier"));
}

Tuning Tuning::fromConfig() {
  const Config& c = config();
  Tuning t;
  t.chunkBytes = static_cast<size_t>(c.integer("HETCCL_CHUNK_BYTES", 1, int64_t{1} << 40));
  t.smallBytes = static_cast<size_t>(c.integer("HETCCL_SMALL_BYTES", 0, int64_t{1} << 40));
  t.algo = parseAlgoChoice(c.str("HETCCL_ALGO"));
  t.hierChunkBytes = static_cast<size_t>(c.integer("HETCCL_HIER_CHUNK_BYTES", 1, int64_t{1} << 40));
  t.oneRankDomainsAsOneDomain = true;
  t.treeForManyRanks = true;
  return t;
}

}  // namespace hetccl::algo
