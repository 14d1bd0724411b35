// Collectives, point-to-point, groups and reduction operators: shims onto hetccl's C API. ncclGather and
// ncclScatter (no hetccl call of their own) are grouped sends and receives.
#include <vector>

#include "core/types.hpp"
#include "nccl_abi/comm_handle.hpp"
#include "nccl_abi/entry.hpp"
#include "nccl_abi/nccl_group.hpp"

using hetccl::nccl_abi::movedType;
using hetccl::nccl_abi::ready;
using hetccl::nccl_abi::reducedType;
using hetccl::nccl_abi::run;

namespace {

hetcclRedOp_t toHetccl(ncclRedOp_t op) { return static_cast<hetcclRedOp_t>(op); }

/// Checks what hetccl's send/recv would only notice half-way through a group (root range, buffers, type),
/// so that a rejected gather/scatter queues nothing.
void checkRooted(hetcclComm_t comm, int root, const void* mine, const void* rootBuffer, size_t count,
                 ncclDataType_t type, int* nranks, int* rank) {
  if (hetcclCommCount(comm, nranks) != hetcclSuccess || hetcclCommUserRank(comm, rank) != hetcclSuccess)
    throw hetccl::InternalError(hetccl::abi::lastError());
  if (root < 0 || root >= *nranks)
    throw hetccl::InvalidArgument(hetccl::concat("root ", root, " is outside [0, ", *nranks, ")"));
  if (static_cast<int>(type) < 0 || static_cast<int>(type) >= ncclNumTypes)
    throw hetccl::InvalidArgument(hetccl::concat("invalid data type ", static_cast<int>(type)));
  if (count > 0 && !mine) throw hetccl::InvalidArgument("the buffer of this rank is NULL");
  if (count > 0 && *rank == root && !rootBuffer) throw hetccl::InvalidArgument("the root's buffer is NULL");
}

const char* at(const void* base, size_t index, size_t count, hetcclDataType_t type) {
  return static_cast<const char*>(base) + index * count * hetccl::dataTypeSize(static_cast<hetccl::DataType>(type));
}

/// Gather (toRoot) or scatter: the root exchanges block p with every rank p, itself included unless the
/// call is in place; everything is queued in one hetccl group.
hetcclResult_t rooted(bool toRoot, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                      int root, ncclComm_t comm, void* stream) {
  hetcclComm_t c = ready(comm);
  int n = 0, me = 0;
  checkRooted(c, root, toRoot ? sendbuff : recvbuff, toRoot ? recvbuff : sendbuff, count, datatype, &n, &me);
  const hetcclDataType_t t = movedType(datatype);
  const void* rootBlock = toRoot ? static_cast<const void*>(recvbuff) : sendbuff;
  const bool inPlace = (toRoot ? sendbuff : static_cast<const void*>(recvbuff)) == at(rootBlock, root, count, t);
  hetcclGroupStart();
  hetcclResult_t r = hetcclSuccess;
  if (me == root)
    for (int p = 0; p < n && r == hetcclSuccess; ++p) {
      if (p == me && inPlace) continue;
      void* block = const_cast<char*>(at(rootBlock, p, count, t));
      r = toRoot ? hetcclRecv(block, count, t, p, c, stream) : hetcclSend(block, count, t, p, c, stream);
    }
  if (r == hetcclSuccess && !(me == root && inPlace))
    r = toRoot ? hetcclSend(sendbuff, count, t, root, c, stream) : hetcclRecv(recvbuff, count, t, root, c, stream);
  hetcclResult_t end = hetcclGroupEnd();
  return r != hetcclSuccess ? r : end;
}

}  // namespace

HETCCL_NCCL_EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                              ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, void* stream) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclAllReduce, sendbuff, recvbuff, count, datatype, op, comm, stream);
  return run("ncclAllReduce", [&] {
    return hetcclAllReduce(sendbuff, recvbuff, count, reducedType(datatype), toHetccl(op), ready(comm), stream);
  });
}
HETCCL_NCCL_TWIN(ncclAllReduce)

HETCCL_NCCL_EXPORT ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                           ncclRedOp_t op, int root, ncclComm_t comm, void* stream) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclReduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
  return run("ncclReduce", [&] {
    return hetcclReduce(sendbuff, recvbuff, count, reducedType(datatype), toHetccl(op), root, ready(comm), stream);
  });
}
HETCCL_NCCL_TWIN(ncclReduce)

HETCCL_NCCL_EXPORT ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                                  ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                                  void* stream) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
  return run("ncclReduceScatter", [&] {
    return hetcclReduceScatter(sendbuff, recvbuff, recvcount, reducedType(datatype), toHetccl(op), ready(comm), stream);
  });
}
HETCCL_NCCL_TWIN(ncclReduceScatter)

HETCCL_NCCL_EXPORT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                              ncclDataType_t datatype, int root, ncclComm_t comm, void* stream) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclBroadcast, sendbuff, recvbuff, count, datatype, root, comm, stream);
  return run("ncclBroadcast", [&] {
    return hetcclBroadcast(sendbuff, recvbuff, count, movedType(datatype), root, ready(comm), stream);
  });
}
HETCCL_NCCL_TWIN(ncclBroadcast)

HETCCL_NCCL_EXPORT ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                                          void* stream) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclBcast, buff, count, datatype, root, comm, stream);
  return run("ncclBcast", [&] { return hetcclBcast(buff, count, movedType(datatype), root, ready(comm), stream); });
}
HETCCL_NCCL_TWIN(ncclBcast)

HETCCL_NCCL_EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                              ncclDataType_t datatype, ncclComm_t comm, void* stream) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclAllGather, sendbuff, recvbuff, sendcount, datatype, comm, stream);
  return run("ncclAllGather",
             [&] { return hetcclAllGather(sendbuff, recvbuff, sendcount, movedType(datatype), ready(comm), stream); });
}
HETCCL_NCCL_TWIN(ncclAllGather)

HETCCL_NCCL_EXPORT ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                             ncclDataType_t datatype, ncclComm_t comm, void* stream) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclAlltoAll, sendbuff, recvbuff, count, datatype, comm, stream);
  return run("ncclAlltoAll",
             [&] { return hetcclAlltoAll(sendbuff, recvbuff, count, movedType(datatype), ready(comm), stream); });
}
HETCCL_NCCL_TWIN(ncclAlltoAll)

HETCCL_NCCL_EXPORT ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                           int root, ncclComm_t comm, void* stream) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclGather, sendbuff, recvbuff, count, datatype, root, comm, stream);
  return run("ncclGather", [&] { return rooted(true, sendbuff, recvbuff, count, datatype, root, comm, stream); });
}
HETCCL_NCCL_TWIN(ncclGather)

HETCCL_NCCL_EXPORT ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                            int root, ncclComm_t comm, void* stream) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclScatter, sendbuff, recvbuff, count, datatype, root, comm, stream);
  return run("ncclScatter", [&] { return rooted(false, sendbuff, recvbuff, count, datatype, root, comm, stream); });
}
HETCCL_NCCL_TWIN(ncclScatter)

HETCCL_NCCL_EXPORT ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                                         ncclComm_t comm, void* stream) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclSend, sendbuff, count, datatype, peer, comm, stream);
  return run("ncclSend", [&] { return hetcclSend(sendbuff, count, movedType(datatype), peer, ready(comm), stream); });
}
HETCCL_NCCL_TWIN(ncclSend)

HETCCL_NCCL_EXPORT ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                                         ncclComm_t comm, void* stream) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclRecv, recvbuff, count, datatype, peer, comm, stream);
  return run("ncclRecv", [&] { return hetcclRecv(recvbuff, count, movedType(datatype), peer, ready(comm), stream); });
}
HETCCL_NCCL_TWIN(ncclRecv)

HETCCL_NCCL_EXPORT ncclResult_t ncclGroupStart() {
  HETCCL_NCCL_ROUTE_VENDOR(ncclGroupStart);
  return run("ncclGroupStart", [] { hetccl::nccl_abi::group::start(); });
}
HETCCL_NCCL_TWIN(ncclGroupStart)

HETCCL_NCCL_EXPORT ncclResult_t ncclGroupEnd() {
  HETCCL_NCCL_ROUTE_VENDOR(ncclGroupEnd);
  return run("ncclGroupEnd", [] { return static_cast<hetcclResult_t>(hetccl::nccl_abi::group::end()); });
}
HETCCL_NCCL_TWIN(ncclGroupEnd)

HETCCL_NCCL_EXPORT ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                                         ncclScalarResidence_t residence, ncclComm_t comm) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclRedOpCreatePreMulSum, op, scalar, datatype, residence, comm);
  return run("ncclRedOpCreatePreMulSum", [&] {
    if (residence == ncclScalarDevice)
      throw hetccl::InvalidUsage(
          "ncclScalarDevice scalars are not supported by hetccl: pass the factor as "
          "ncclScalarHostImmediate (in PyTorch: a Python number, not a tensor)");
    return hetcclRedOpCreatePreMulSum(reinterpret_cast<hetcclRedOp_t*>(op), scalar, reducedType(datatype),
                                      static_cast<hetcclScalarResidence_t>(residence), ready(comm));
  });
}
HETCCL_NCCL_TWIN(ncclRedOpCreatePreMulSum)

HETCCL_NCCL_EXPORT ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclRedOpDestroy, op, comm);
  return run("ncclRedOpDestroy", [&] { return hetcclRedOpDestroy(toHetccl(op), ready(comm)); });
}
HETCCL_NCCL_TWIN(ncclRedOpDestroy)
