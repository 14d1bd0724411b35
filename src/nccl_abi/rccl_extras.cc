// What librccl.so has beyond libnccl.so.2: RCCL's names beyond NCCL's API (all-to-all under RCCL's
// spelling and the variable-size all-to-all), and the preference of a ROCm application for HIP ranks.
#include "device/loader.hpp"
#include "nccl_abi/comm_handle.hpp"
#include "nccl_abi/entry.hpp"

namespace {

// A process that loads librccl.so is a ROCm application: HETCCL_DEVICE=auto tries the HIP plugin first
// (and still takes the CUDA plugin where no HIP device is found).
__attribute__((constructor)) void preferHipRanks() { hetccl::device::preferVendorFirst(hetccl::DeviceKind::Hip); }

}  // namespace

using hetccl::nccl_abi::movedType;
using hetccl::nccl_abi::ready;
using hetccl::nccl_abi::run;

HETCCL_NCCL_EXPORT ncclResult_t ncclAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                                             ncclDataType_t datatype, ncclComm_t comm, void* stream) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclAllToAll, sendbuff, recvbuff, count, datatype, comm, stream);
  return run("ncclAllToAll",
             [&] { return hetcclAlltoAll(sendbuff, recvbuff, count, movedType(datatype), ready(comm), stream); });
}
HETCCL_NCCL_TWIN(ncclAllToAll)

HETCCL_NCCL_EXPORT ncclResult_t ncclAllToAllv(const void* sendbuff, const size_t sendcounts[], const size_t sdispls[],
                                              void* recvbuff, const size_t recvcounts[], const size_t rdispls[],
                                              ncclDataType_t datatype, ncclComm_t comm, void* stream) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclAllToAllv, sendbuff, sendcounts, sdispls, recvbuff, recvcounts, rdispls, datatype, comm,
                           stream);
  return run("ncclAllToAllv", [&] {
    return hetcclAlltoAllv(sendbuff, sendcounts, sdispls, recvbuff, recvcounts, rdispls, movedType(datatype),
                           ready(comm), stream);
  });
}
HETCCL_NCCL_TWIN(ncclAllToAllv)
