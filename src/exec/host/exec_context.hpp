// What the engine needs besides the schedule and the connections: limits, cancellation, failure
// detection and names for error messages.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/peer_info.hpp"
#include "exec/host/call_stamps.hpp"
#include "exec/host/idle_spin.hpp"
#include "exec/host/local_ops.hpp"
#include "exec/host/scratch_arena.hpp"

namespace hetccl::engine {

struct ExecContext {
  /// A wait with no progress at all for this long throws TimeoutError (HETCCL_TIMEOUT).
  int64_t timeoutMs = 300'000;
  /// When set and true, execution stops with AbortedError (hetcclCommAbort).
  const std::atomic<bool>* abortFlag = nullptr;
  /// Called periodically while waiting; throws (e.g. PeerError) when the caller knows a peer failed
  /// (the communicator asks the bootstrap). May be empty.
  std::function<void()> checkFailure;
  /// Every rank's descriptor, indexed by rank, for naming peers in errors (may be empty: ranks only).
  std::vector<PeerInfo> peers;
  /// Local data operations; nullptr means host memory (hostLocalOps()).
  const LocalOps* local = nullptr;
  /// Scratch reused across calls (the communicator's); nullptr: each call allocates its own.
  ScratchArena* scratch = nullptr;
  /// The communicator's call counters behind the messages' call stamps; nullptr: every group counts
  /// from zero (tests that run single groups).
  CallSequence* calls = nullptr;
  /// How long an idle executor polls before it backs off with short sleeps (exec/host/idle_spin.hpp:
  /// chooseIdleSpin picks it per communicator).
  std::chrono::microseconds idleSpin = kShortIdleSpin;
};

}  // namespace hetccl::engine
