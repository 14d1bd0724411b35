// Results of a hetccl-perf run, as printed, written to JSON and plotted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hetccl::perf {

/// One placement (out-of-place or in-place) of one size.
struct PlaceResult {
  bool ran = false;     ///< false: the collective has no in-place form (printed N/A)
  double timeUs = 0;    ///< wall time per iteration, averaged over -n iterations, max over ranks
  double algBw = 0;     ///< GB/s: size / time
  double busBw = 0;     ///< GB/s: algBw * bus factor
  int64_t wrong = -1;   ///< wrong elements summed over ranks (through hetccl: the table only); -1 unchecked (-c 0)
  int64_t wrongHere = -1;  ///< wrong elements this rank found itself (its verdict); -1 when not checked
};

struct SizeResult {
  size_t bytes = 0;   ///< the size column: max(send, recv) buffer bytes of one rank
  size_t count = 0;   ///< bytes / element size
  PlaceResult outOfPlace;
  PlaceResult inPlace;
};

/// Everything rank 0 reports.
struct PerfRun {
  std::string collective;
  std::string typeName;
  std::string opName;       ///< "none" for collectives without a reduction
  int root = -1;            ///< -1 for collectives without a root
  int nranks = 0;
  std::string buffers = "host";  ///< where the buffers live: "host", "cuda", "hip" (-G resolved)
  std::string buffersName;       ///< "CUDA" / "HIP" for device buffers
  std::string buffersChoice;     ///< -G / --device gpu: why this vendor ("--device gpu: HETCCL_DEVICE=..."); else empty
  std::vector<std::string> rankLines;  ///< "#  Rank  0 ..." lines
  std::vector<std::string> rankHosts;    ///< every rank's host name
  std::vector<std::string> rankDomains;  ///< every rank's domain
  std::vector<SizeResult> sizes;

  /// Mean bus bandwidth over every placement that ran, as nccl-tests' "# Avg bus bandwidth".
  double averageBusBw() const;
  /// Sum of wrong elements over all sizes and placements (0 when unchecked).
  int64_t totalWrong() const;
  /// Wrong elements this rank found itself over all sizes and placements: the rank's verdict.
  int64_t wrongHere() const;
};

}  // namespace hetccl::perf
