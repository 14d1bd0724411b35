// Collective, point-to-point, group and reduction-operator entry points: thin shims that build one
// algo::CollOp, validate it against the communicator and hand it to the group queue.
#include <vector>

#include "abi/guard.hpp"
#include "comm/group.hpp"

using hetccl::abi::guarded;
using hetccl::abi::guardedComm;
using hetccl::algo::CollKind;
using hetccl::algo::CollOp;

namespace {

hetccl::DataType checkedType(hetcclDataType_t t) {
  if (!hetccl::isValidDataType(static_cast<int>(t)))
    throw hetccl::InvalidArgument(hetccl::concat("invalid data type ", static_cast<int>(t)));
  return static_cast<hetccl::DataType>(t);
}

CollOp makeOp(CollKind kind, const void* sendbuff, void* recvbuff, size_t count, hetcclDataType_t type) {
  CollOp op;
  op.kind = kind;
  op.sendbuff = sendbuff;
  op.recvbuff = recvbuff;
  op.count = count;
  op.type = checkedType(type);
  return op;
}

void submit(hetccl::Communicator& comm, CollOp op, hetcclStream_t stream) {
  comm.validate(op);
  hetccl::group::submit(comm, std::move(op), stream);
}

}  // namespace

extern "C" {

HETCCL_API hetcclResult_t hetcclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                          hetcclDataType_t datatype, hetcclRedOp_t op, hetcclComm_t comm,
                                          hetcclStream_t stream) {
  return guardedComm("hetcclAllReduce", comm, [&](hetccl::Communicator& c) {
    CollOp o = makeOp(CollKind::AllReduce, sendbuff, recvbuff, count, datatype);
    o.op = c.resolveOp(op, o.type);
    submit(c, std::move(o), stream);
  });
}

HETCCL_API hetcclResult_t hetcclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                          hetcclDataType_t datatype, int root, hetcclComm_t comm, hetcclStream_t stream) {
  return guardedComm("hetcclBroadcast", comm, [&](hetccl::Communicator& c) {
    CollOp o = makeOp(CollKind::Broadcast, sendbuff, recvbuff, count, datatype);
    o.root = root;
    submit(c, std::move(o), stream);
  });
}

HETCCL_API hetcclResult_t hetcclBcast(void* buff, size_t count, hetcclDataType_t datatype, int root,
                                      hetcclComm_t comm, hetcclStream_t stream) {
  return hetcclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

HETCCL_API hetcclResult_t hetcclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                       hetcclDataType_t datatype, hetcclRedOp_t op, int root, hetcclComm_t comm,
                                       hetcclStream_t stream) {
  return guardedComm("hetcclReduce", comm, [&](hetccl::Communicator& c) {
    CollOp o = makeOp(CollKind::Reduce, sendbuff, recvbuff, count, datatype);
    o.op = c.resolveOp(op, o.type);
    o.root = root;
    submit(c, std::move(o), stream);
  });
}

HETCCL_API hetcclResult_t hetcclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                          hetcclDataType_t datatype, hetcclComm_t comm, hetcclStream_t stream) {
  return guardedComm("hetcclAllGather", comm, [&](hetccl::Communicator& c) {
    submit(c, makeOp(CollKind::AllGather, sendbuff, recvbuff, sendcount, datatype), stream);
  });
}

HETCCL_API hetcclResult_t hetcclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                              hetcclDataType_t datatype, hetcclRedOp_t op, hetcclComm_t comm,
                                              hetcclStream_t stream) {
  return guardedComm("hetcclReduceScatter", comm, [&](hetccl::Communicator& c) {
    CollOp o = makeOp(CollKind::ReduceScatter, sendbuff, recvbuff, recvcount, datatype);
    o.op = c.resolveOp(op, o.type);
    submit(c, std::move(o), stream);
  });
}

HETCCL_API hetcclResult_t hetcclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                         hetcclDataType_t datatype, hetcclComm_t comm, hetcclStream_t stream) {
  return guardedComm("hetcclAlltoAll", comm, [&](hetccl::Communicator& c) {
    submit(c, makeOp(CollKind::AllToAll, sendbuff, recvbuff, count, datatype), stream);
  });
}

HETCCL_API hetcclResult_t hetcclAlltoAllv(const void* sendbuff, const size_t sendcounts[], const size_t sdispls[],
                                          void* recvbuff, const size_t recvcounts[], const size_t rdispls[],
                                          hetcclDataType_t datatype, hetcclComm_t comm, hetcclStream_t stream) {
  return guardedComm("hetcclAlltoAllv", comm, [&](hetccl::Communicator& c) {
    if (!sendcounts || !sdispls || !recvcounts || !rdispls)
      throw hetccl::InvalidArgument("a count or displacement array is null");
    CollOp o = makeOp(CollKind::AllToAllv, sendbuff, recvbuff, 0, datatype);
    const size_t n = static_cast<size_t>(c.size());
    o.sendcounts.assign(sendcounts, sendcounts + n);
    o.sdispls.assign(sdispls, sdispls + n);
    o.recvcounts.assign(recvcounts, recvcounts + n);
    o.rdispls.assign(rdispls, rdispls + n);
    submit(c, std::move(o), stream);
  });
}

HETCCL_API hetcclResult_t hetcclSend(const void* sendbuff, size_t count, hetcclDataType_t datatype, int peer,
                                     hetcclComm_t comm, hetcclStream_t stream) {
  return guardedComm("hetcclSend", comm, [&](hetccl::Communicator& c) {
    CollOp o = makeOp(CollKind::Send, sendbuff, nullptr, count, datatype);
    o.peer = peer;
    submit(c, std::move(o), stream);
  });
}

HETCCL_API hetcclResult_t hetcclRecv(void* recvbuff, size_t count, hetcclDataType_t datatype, int peer,
                                     hetcclComm_t comm, hetcclStream_t stream) {
  return guardedComm("hetcclRecv", comm, [&](hetccl::Communicator& c) {
    CollOp o = makeOp(CollKind::Recv, nullptr, recvbuff, count, datatype);
    o.peer = peer;
    submit(c, std::move(o), stream);
  });
}

HETCCL_API hetcclResult_t hetcclBarrier(hetcclComm_t comm, hetcclStream_t stream) {
  return guardedComm("hetcclBarrier", comm, [&](hetccl::Communicator& c) {
    if (hetccl::group::active()) throw hetccl::InvalidUsage("hetcclBarrier cannot be called inside a group");
    int32_t token = 0;
    CollOp o = makeOp(CollKind::AllReduce, &token, &token, 1, hetcclInt32);
    c.run({&o, 1}, nullptr);
  });
}

HETCCL_API hetcclResult_t hetcclGroupStart(void) {
  return guarded("hetcclGroupStart", [] { hetccl::group::start(); });
}

HETCCL_API hetcclResult_t hetcclGroupEnd(void) {
  hetcclResult_t r = guarded("hetcclGroupEnd", [] { hetccl::group::end(); });
  if (!hetccl::group::active()) hetccl::abi::releaseHolds();  // queued operations ran (or were dropped)
  return r;
}

HETCCL_API hetcclResult_t hetcclRedOpCreatePreMulSum(hetcclRedOp_t* op, void* scalar, hetcclDataType_t datatype,
                                                     hetcclScalarResidence_t residence, hetcclComm_t comm) {
  return guardedComm("hetcclRedOpCreatePreMulSum", comm, [&](hetccl::Communicator& c) {
    if (!op) throw hetccl::InvalidArgument("op is null");
    if (residence != hetcclScalarHostImmediate)
      throw hetccl::InvalidUsage("only hetcclScalarHostImmediate scalars are supported in this build");
    *op = static_cast<hetcclRedOp_t>(c.createPreMulSum(checkedType(datatype), scalar));
  });
}

HETCCL_API hetcclResult_t hetcclRedOpDestroy(hetcclRedOp_t op, hetcclComm_t comm) {
  return guardedComm("hetcclRedOpDestroy", comm, [&](hetccl::Communicator& c) { c.destroyOp(op); });
}

}  // extern "C"
