#include <stdexcept>

#include "collective.hpp"

namespace hetccl::perf {

std::unique_ptr<Collective> makeCollective(const std::string& name) {
  if (name == "all_reduce") return makeAllReduce();
  if (name == "reduce") return makeReduce();
  if (name == "reduce_scatter") return makeReduceScatter();
  if (name == "all_gather") return makeAllGather();
  if (name == "broadcast") return makeBroadcast();
  if (name == "alltoall") return makeAlltoall();
  if (name == "alltoallv") return makeAlltoallv();
  if (name == "sendrecv") return makeSendRecv();
  throw std::invalid_argument("unknown collective '" + name + "'");
}

}  // namespace hetccl::perf
