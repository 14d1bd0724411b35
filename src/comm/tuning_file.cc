#include "comm/tuning_file.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include "algo/tuning_table.hpp"
#include "core/config.hpp"
#include "core/error.hpp"

namespace hetccl {

algo::TuningLayout tuningLayoutOf(const algo::Topology& topology, const std::vector<PeerInfo>& peers,
                                  const std::string& transport) {
  std::set<std::string> hosts;
  for (const PeerInfo& p : peers) hosts.insert(p.hostId);
  return algo::TuningLayout{topology.nranks, topology.numDomains(), static_cast<int>(hosts.size()), transport};
}

TuningFileBands tuningFileBandsFor(const algo::Topology& topology, const std::vector<PeerInfo>& peers,
                         const std::string& transport) {
  TuningFileBands out{{}, "none", ""};
  const std::string path = config().str("HETCCL_TUNING_FILE");
  if (path.empty()) return out;
  std::ifstream in(path);
  std::stringstream text;
  if (in) text << in.rdbuf();
  if (!in || in.bad()) {
    out.bandsText = "unreadable";
    out.fileError = concat("HETCCL_TUNING_FILE=", path, " cannot be read");
    return out;
  }
  try {
    out.bands = algo::bandsFor(algo::parseTuningTable(text.str(), path), tuningLayoutOf(topology, peers, transport));
    out.bandsText = algo::describeBands(out.bands);
  } catch (const InvalidArgument& e) {
    out.bandsText = "unreadable";
    out.fileError = e.what();
  }
  return out;
}

}  // namespace hetccl
