#include "algo/coll_op.hpp"
#include "algo/schedule.hpp"

namespace hetccl::algo {

const char* collKindName(CollKind k) noexcept {
  switch (k) {
    case CollKind::AllReduce: return "allreduce";
    case CollKind::Broadcast: return "broadcast";
    case CollKind::Reduce: return "reduce";
    case CollKind::AllGather: return "allgather";
    case CollKind::ReduceScatter: return "reducescatter";
    case CollKind::AllToAll: return "alltoall";
    case CollKind::AllToAllv: return "alltoallv";
    case CollKind::Send: return "send";
    case CollKind::Recv: return "recv";
  }
  return "unknown";
}

const char* stepKindName(StepKind k) noexcept {
  switch (k) {
    case StepKind::Send: return "send";
    case StepKind::Recv: return "recv";
    case StepKind::RecvReduce: return "recv-reduce";
    case StepKind::Copy: return "copy";
    case StepKind::Reduce: return "reduce";
    case StepKind::Scale: return "scale";
    case StepKind::Divide: return "divide";
    case StepKind::DomainCollective: return "domain-collective";
  }
  return "unknown";
}

const char* domainCollName(DomainColl c) noexcept {
  switch (c) {
    case DomainColl::AllReduce: return "domain-allreduce";
    case DomainColl::ReduceScatter: return "domain-reducescatter";
    case DomainColl::AllGather: return "domain-allgather";
    case DomainColl::Broadcast: return "domain-broadcast";
    case DomainColl::Reduce: return "domain-reduce";
    case DomainColl::Exchange: return "domain-exchange";
  }
  return "unknown";
}

}  // namespace hetccl::algo
