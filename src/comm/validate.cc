// Communicator::validate: argument checks of one operation, before anything is queued or sent.
#include <cstdint>

#include "comm/communicator.hpp"

namespace hetccl {
namespace {

using algo::CollKind;
using algo::CollOp;

// Bytes of `elements` elements of `elem` bytes each, or throws when it overflows.
uint64_t checkedBytes(const CollOp& op, uint64_t elements, size_t elem, const char* what) {
  constexpr uint64_t kMaxBytes = uint64_t{1} << 56;  // far beyond any real buffer; keeps arithmetic safe
  if (elem == 0 || elements > kMaxBytes / elem)
    throw InvalidArgument(concat(algo::collKindName(op.kind), ": ", what, " of ", elements, " ",
                                 dataTypeName(op.type), " elements overflows"));
  return elements * elem;
}

void checkBuffer(const CollOp& op, const void* p, uint64_t bytes, const char* name) {
  if (bytes == 0) return;
  if (p == nullptr)
    throw InvalidArgument(concat(algo::collKindName(op.kind), ": ", name, " is null but ", bytes, " bytes are needed"));
  auto addr = reinterpret_cast<uintptr_t>(p);
  if (addr + bytes < addr)
    throw InvalidArgument(concat(algo::collKindName(op.kind), ": ", name, " + ", bytes, " bytes wraps the address space"));
}

void checkRank(const CollOp& op, int r, int n, const char* what) {
  if (r < 0 || r >= n)
    throw InvalidArgument(concat(algo::collKindName(op.kind), ": ", what, " ", r, " is outside [0, ", n, ")"));
}

void checkAllToAllv(const CollOp& op, int n, size_t elem) {
  const std::vector<size_t>* tables[] = {&op.sendcounts, &op.sdispls, &op.recvcounts, &op.rdispls};
  const char* names[] = {"sendcounts", "sdispls", "recvcounts", "rdispls"};
  for (int i = 0; i < 4; ++i)
    if (tables[i]->size() != static_cast<size_t>(n))
      throw InvalidArgument(concat("alltoallv: ", names[i], " has ", tables[i]->size(), " entries, expected ", n));
  for (int p = 0; p < n; ++p) {
    for (bool sending : {true, false}) {
      size_t count = sending ? op.sendcounts[p] : op.recvcounts[p];
      size_t displ = sending ? op.sdispls[p] : op.rdispls[p];
      uint64_t end = checkedBytes(op, static_cast<uint64_t>(displ) + count, elem, sending ? "send block" : "recv block");
      if (displ > SIZE_MAX - count) throw InvalidArgument(concat("alltoallv: displacement + count overflows for peer ", p));
      checkBuffer(op, sending ? op.sendbuff : op.recvbuff, count ? end : 0, sending ? "sendbuff" : "recvbuff");
    }
  }
}

}  // namespace

void Communicator::validate(const CollOp& op) const {
  const int n = size();
  const size_t elem = dataTypeSize(op.type);
  if (elem == 0) throw InvalidArgument(concat("invalid data type ", static_cast<int>(op.type)));
  const uint64_t one = checkedBytes(op, op.count, elem, "count");
  if (op.count > (uint64_t{1} << 56) / static_cast<uint64_t>(n))
    throw InvalidArgument(concat(algo::collKindName(op.kind), ": count ", op.count, " x ", n, " ranks overflows"));
  const uint64_t all = checkedBytes(op, static_cast<uint64_t>(op.count) * static_cast<uint64_t>(n), elem, "count x nranks");
  switch (op.kind) {
    case CollKind::AllReduce:
      checkBuffer(op, op.sendbuff, one, "sendbuff");
      checkBuffer(op, op.recvbuff, one, "recvbuff");
      break;
    case CollKind::Broadcast:
      checkRank(op, op.root, n, "root");
      if (rank() == op.root) checkBuffer(op, op.sendbuff, one, "sendbuff");
      checkBuffer(op, op.recvbuff, one, "recvbuff");
      break;
    case CollKind::Reduce:
      checkRank(op, op.root, n, "root");
      checkBuffer(op, op.sendbuff, one, "sendbuff");
      if (rank() == op.root) checkBuffer(op, op.recvbuff, one, "recvbuff");
      break;
    case CollKind::AllGather:
      checkBuffer(op, op.sendbuff, one, "sendbuff");
      checkBuffer(op, op.recvbuff, all, "recvbuff");
      break;
    case CollKind::ReduceScatter:
      checkBuffer(op, op.sendbuff, all, "sendbuff");
      checkBuffer(op, op.recvbuff, one, "recvbuff");
      break;
    case CollKind::AllToAll:
      checkBuffer(op, op.sendbuff, all, "sendbuff");
      checkBuffer(op, op.recvbuff, all, "recvbuff");
      break;
    case CollKind::AllToAllv:
      checkAllToAllv(op, n, elem);
      break;
    case CollKind::Send:
      checkRank(op, op.peer, n, "peer");
      checkBuffer(op, op.sendbuff, one, "sendbuff");
      break;
    case CollKind::Recv:
      checkRank(op, op.peer, n, "peer");
      checkBuffer(op, op.recvbuff, one, "recvbuff");
      break;
    default:
      throw InvalidArgument(concat("unknown operation kind ", static_cast<int>(op.kind)));
  }
}

}  // namespace hetccl
