// A simulated GPU behind the device plugin interface, so that the stream pipeline (src/stream_exec) runs
// for real on a machine without a GPU: "device" memory is host memory, and the operations queued on every
// stream execute in their stream's order, each stream blocked only by its own head (flag waits on 64-bit
// counters, event waits), exactly the ordering rules of a real runtime, while the order between streams
// is chosen by an adversarial random scheduler (sim_device.hpp: seeded, streams paused for random
// stretches). Copies, reductions, flag writes and events take effect when executed, never at enqueue
// time, so a missing wait in the compiled program shows up as wrong data or a stall, as it would on a GPU.
// Plugin functions are in sim_gpu.cc; a new kind of operation is a closure pushed on a stream there.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "device/base/gpu_plugin.h"

namespace hetccl::test::sim {

/// The process-wide simulated device (started on first use).
const hetcclGpuPlugin_v1_t& plugin();

/// Operations queued but not yet executed, over every stream (0 when the device is idle).
size_t pendingOps();

/// Waits until nothing is queued on any stream, at most `bound`; returns whether the device is idle.
/// (Tests call it before reading and freeing buffers that queued work may still write.)
bool waitIdle(std::chrono::milliseconds bound);

/// The head of every non-empty stream (for diagnosing a stall).
std::string dump();

/// The scheduler's seed (HETCCL_SIM_SEED, else random; printed on stderr at start).
uint64_t seed();

/// Makes the `n`-th following memcpyAsync call fail (n >= 1); 0 disables.
void failMemcpyAfter(int n);

}  // namespace hetccl::test::sim
