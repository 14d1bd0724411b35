// The ways a communicator's device-buffer calls can run: one DeviceExecutor (device_executor.hpp) per
// path but HostOnly. The path selector (comm/path_selector.hpp) picks one at init.
#pragma once

namespace hetccl {

/// The ways device-buffer calls run (one DeviceExecutor implementation each, but HostOnly).
enum class ExecPath {
  HostOnly,                  ///< no rank has a GPU: every call has host buffers (host engine)
  VendorDelegation,          ///< single all-GPU domain: every device call goes to the vendor library
  PipelineWithDomainVendor,  ///< stream pipeline between domains, the vendor library inside each domain
  Pipeline,                  ///< stream pipeline only (src/stream_exec)
  Staged,                    ///< device buffers staged through pinned host memory, host engine (DevicePath)
};
/// "host only", "vendor delegation", "stream pipeline + vendor in domains", "stream pipeline", "host staging".
const char* execPathName(ExecPath path) noexcept;

}  // namespace hetccl
