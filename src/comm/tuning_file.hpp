// HETCCL_TUNING_FILE's all-reduce bands for a communicator's layout (algo/tuning_table.hpp): the part of
// its host calls' tuning that is not in the process configuration (algo::Tuning::fromConfig).
#pragma once

#include <string>
#include <vector>

#include "algo/topology.hpp"
#include "algo/tuning.hpp"
#include "algo/tuning_table.hpp"
#include "core/peer_info.hpp"

namespace hetccl {

struct TuningFileBands {
  std::vector<algo::TuningBand> bands;
  /// What the ranks compare at creation: the bands in one line (algo::describeBands; "none" without a
  /// file or without rows for this layout), or "unreadable" when the file could not be used.
  std::string bandsText;
  /// Why the file could not be used (empty when it could): thrown once the ranks have compared bandsText.
  std::string fileError;
};

/// The layout key of a tuning table row for this communicator: its ranks, domains, distinct hosts
/// (PeerInfo::hostId) and transport setting.
algo::TuningLayout tuningLayoutOf(const algo::Topology& topology, const std::vector<PeerInfo>& peers,
                                  const std::string& transport);

/// The bands of HETCCL_TUNING_FILE (when set) for this layout. Never throws: an unreadable or malformed
/// file is reported in fileError.
TuningFileBands tuningFileBandsFor(const algo::Topology& topology, const std::vector<PeerInfo>& peers,
                         const std::string& transport);

}  // namespace hetccl
