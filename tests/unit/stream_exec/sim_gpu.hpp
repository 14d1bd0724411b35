// A simulated GPU behind the device plugin interface, so that the stream pipeline (src/exec/pipeline) runs
// for real on a machine without a GPU: "device" memory is host memory, and one device thread executes the
// operations queued on every stream in order, each stream blocked only by its own head (flag waits on
// 64-bit counters, event waits, stream operations of the v2 interface), exactly the ordering rules of a
// real runtime. Copies, reductions, flag writes and events take effect when the device thread reaches
// them, never at enqueue time, so a missing wait in the compiled program shows up as wrong data or a
// stall, as it would on a GPU.
// The order between streams is adversarial: at every step the device runs the head of a stream chosen
// at random among those that can run, and for stretches of random length it pauses a random half of the
// streams (they run only when nothing else can), so one stream falls far behind or races far ahead.
// The seed comes from HETCCL_SIM_SEED (test-only), else from the system; it is printed on stderr at
// start and by dump(). Host threads' timing matters too: a seed makes a failure likely, not certain, to
// repeat.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "device/base/gpu_plugin.h"

namespace hetccl::test::sim {

/// The process-wide simulated device (started on first use).
const hetcclGpuPlugin_t& plugin();

/// Operations queued but not yet executed, over every stream (0 when the device is idle).
size_t pendingOps();

/// The head of every non-empty stream (for diagnosing a stall).
std::string dump();

/// The scheduler's seed.
uint64_t seed();

/// Waits until nothing is queued on any stream, at most `bound`; returns whether the device is idle.
/// (Tests call it before reading and freeing buffers that queued work may still write.)
bool waitIdle(std::chrono::milliseconds bound);

/// What deviceBusId answers on every rank: "" (the default) fails (unknown, so ranks count as on GPUs of
/// their own); anything else makes every rank report the same GPU.
void setDeviceBusId(const std::string& busId);
/// Makes the `n`-th following memcpyAsync call fail (n >= 1); 0 disables.
void failMemcpyAfter(int n);
/// From now on a call that queues an operation on a stream already holding `n` blocks until the device
/// has run some (as CUDA blocks a launch into a full queue), failing after 10 s; 0 (the default): no limit.
void setStreamQueueLimit(size_t n);

/// Work of a host-side model of a device library (the simulated vendor collectives, sim_vendor.hpp) queued
/// on `stream`: `run` executes on the device thread once every earlier operation of the stream is done and
/// `ready()` holds (null: at once). Until then the stream waits, as on a flag, while the others go on: no
/// device thread ever blocks. Both are called under the device's lock, so they must not block nor call the
/// plugin; `describe` (may be null) says what the operation waits for in dump(). Throws std::logic_error
/// when `stream` is being captured (the model has no graph replays).
void enqueueHostOp(void* stream, std::function<bool()> ready, std::function<void()> run,
                   std::function<std::string()> describe = nullptr);

/// CUDA graphs, modelled as CUDA captures streams: between beginCapture and endCapture, the operations
/// queued on `stream`, and on every stream that waits for an event recorded in the capture (it joins the
/// capture until it ends), are recorded instead of run; a capturing stream may not wait for an event
/// recorded outside the capture, nor be queried or synchronised (the plugin call fails, as in CUDA).
/// launch() queues one replay: the recorded operations, with their original arguments, on fresh streams,
/// after earlier work on `stream`; later work on `stream` waits for all of it. Misuse throws.
struct Graph;
void beginCapture(void* stream);
/// Throws when a stream that joined was not joined back (cudaErrorStreamCaptureUnjoined). The graph is
/// owned by the device (kept until the process exits).
Graph* endCapture(void* stream);
void launch(Graph* graph, void* stream);

}  // namespace hetccl::test::sim
