#include "exec/base/exec_path.hpp"

namespace hetccl {

const char* execPathName(ExecPath path) noexcept {
  switch (path) {
    case ExecPath::HostOnly:
      return "host only";
    case ExecPath::VendorDelegation:
      return "vendor delegation";
    case ExecPath::PipelineWithDomainVendor:
      return "stream pipeline + vendor in domains";
    case ExecPath::Pipeline:
      return "stream pipeline";
    case ExecPath::Staged:
      return "host staging";
  }
  return "unknown";
}

}  // namespace hetccl
