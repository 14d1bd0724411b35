#include "algo/selection.hpp"

#include "core/error.hpp"

namespace hetccl::algo {

std::string describeChoice(const Topology& topology, CollKind kind, size_t bytes, const Tuning& tuning) {
  (void)topology;
  (void)bytes;
  (void)tuning;
  return concat(collKindName(kind), ": (selection table not written yet)");
}

}  // namespace hetccl::algo
