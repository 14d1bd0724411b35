// One operation of a group as the planner sees it: NCCL's collectives plus point-to-point send/recv.
// Counts and displacements are in elements of `type`; buffers are the caller's (host or device) pointers.
#pragma once

#include <cstddef>
#include <vector>

#include "core/types.hpp"

namespace hetccl::algo {

enum class CollKind : int {
  AllReduce,
  Broadcast,
  Reduce,
  AllGather,      ///< recvbuff holds nranks * count; rank r's sendbuff lands at recvbuff + r * count
  ReduceScatter,  ///< sendbuff holds nranks * count; rank r receives block r (count elements)
  AllToAll,       ///< block of count elements for/from every rank
  AllToAllv,      ///< per-rank counts and displacements (elements) below
  Send,           ///< count elements from sendbuff to `peer`
  Recv,           ///< count elements from `peer` into recvbuff
};

/// "allreduce", "broadcast", ... (for logs and error messages).
const char* collKindName(CollKind k) noexcept;

struct CollOp {
  CollKind kind = CollKind::AllReduce;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  size_t count = 0;
  DataType type = DataType::Float32;
  ReduceOp op;    ///< reductions only; PreMulSum carries this rank's scalar
  int root = 0;   ///< Broadcast, Reduce
  int peer = -1;  ///< Send, Recv
  std::vector<size_t> sendcounts, sdispls, recvcounts, rdispls;  ///< AllToAllv only, one entry per rank
};

}  // namespace hetccl::algo
