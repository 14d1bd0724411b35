#include "exec/vendor/vendor_route.hpp"

#include <vector>

namespace hetccl {
namespace {

using algo::CollKind;

const void* at(const void* base, size_t elements, size_t elemSize) {
  return static_cast<const char*>(base) + elements * elemSize;
}
void* at(void* base, size_t elements, size_t elemSize) { return static_cast<char*>(base) + elements * elemSize; }

void issue(domain::DomainComm& c, const algo::CollOp& op, void* stream) {
  const size_t es = dataTypeSize(op.type);
  const int n = c.size();
  switch (op.kind) {
    case CollKind::AllReduce: return c.allReduce(op.sendbuff, op.recvbuff, op.count, op.type, op.op, stream);
    case CollKind::Broadcast: return c.broadcast(op.sendbuff, op.recvbuff, op.count, op.type, op.root, stream);
    case CollKind::Reduce: return c.reduce(op.sendbuff, op.recvbuff, op.count, op.type, op.op, op.root, stream);
    case CollKind::AllGather: return c.allGather(op.sendbuff, op.recvbuff, op.count, op.type, stream);
    case CollKind::ReduceScatter: return c.reduceScatter(op.sendbuff, op.recvbuff, op.count, op.type, op.op, stream);
    case CollKind::AllToAll:
      for (int p = 0; p < n; ++p) {
        c.send(at(op.sendbuff, p * op.count, es), op.count, op.type, p, stream);
        c.recv(at(op.recvbuff, p * op.count, es), op.count, op.type, p, stream);
      }
      return;
    case CollKind::AllToAllv:
      for (int p = 0; p < n; ++p) {
        c.send(at(op.sendbuff, op.sdispls[p], es), op.sendcounts[p], op.type, p, stream);
        c.recv(at(op.recvbuff, op.rdispls[p], es), op.recvcounts[p], op.type, p, stream);
      }
      return;
    case CollKind::Send: return c.send(op.sendbuff, op.count, op.type, op.peer, stream);
    case CollKind::Recv: return c.recv(op.recvbuff, op.count, op.type, op.peer, stream);
  }
}

bool isReduction(CollKind kind) {
  return kind == CollKind::AllReduce || kind == CollKind::Reduce || kind == CollKind::ReduceScatter;
}

/// dst = src * scalar on the GPU (one rank's PreMulSum).
void scaleOnGpu(const hetcclGpuPlugin_t* gpu, const algo::CollOp& op, void* stream) {
  if (!gpu) throw InvalidUsage("a PreMulSum on a one-rank vendor communicator needs the GPU plugin");
  if (op.count == 0) return;
  if (gpu->scale(op.recvbuff, op.sendbuff, op.count, static_cast<int>(op.type), op.op.scalar, stream) != HETCCL_GPU_OK)
    throw Error(Result::UnhandledCudaError, concat(gpu->name, " scale (one rank's PreMulSum): ", gpu->lastError()));
}

}  // namespace

void runOnVendor(domain::DomainComm& comm, std::span<const algo::CollOp> ops, void* stream,
                 const hetcclGpuPlugin_t* gpu) {
  const bool oneRank = comm.size() == 1;
  std::vector<const algo::CollOp*> scaled;  // one rank's PreMulSums, run after the group
  comm.grouped([&] {
    for (const auto& op : ops) {
      if (oneRank && isReduction(op.kind) && op.op.kind == RedOpKind::PreMulSum) {
        scaled.push_back(&op);
      } else if (oneRank && isReduction(op.kind) && op.op.kind == RedOpKind::Avg) {
        algo::CollOp sum = op;  // the average of one input is that input
        sum.op = ReduceOp{};
        issue(comm, sum, stream);
      } else {
        issue(comm, op, stream);
      }
    }
  });
  for (const algo::CollOp* op : scaled) scaleOnGpu(gpu, *op, stream);
}

std::optional<Error> vendorAsyncError(domain::DomainComm& comm, const std::string& domain) {
  try {
    comm.checkAsyncError();
    return std::nullopt;
  } catch (const Error& e) {
    return Error(e.code(), concat("domain '", domain, "': its vendor communicator reported an asynchronous error: ",
                                  e.what()));
  }
}

}  // namespace hetccl
