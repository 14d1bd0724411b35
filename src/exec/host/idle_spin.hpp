// How long a host executor that found nothing to do keeps polling (yielding its core between rounds)
// before it backs off with short sleeps. A sleep costs a wake-up of 20 us plus the kernel's timer slack
// (~50 us) when the awaited message arrives; a dependent chain of steps (a ring's 2(n-1) steps) pays it
// at every step that waits longer than the window. Polling longer only costs cores nobody else needs
// when the ranks of the host do not outnumber its cores and no transport thread (tcp's socket workers,
// ucx's worker) needs a core to make the progress the executor waits for.
#pragma once

#include <chrono>
#include <string_view>
#include <vector>

namespace hetccl::engine {

/// The short window: an oversubscribed machine (or one whose transport threads move the bytes) gets its
/// cores back soon. Sleeping as soon as 64 rounds found nothing cost tcp links 1.3-2.5x at 64-256 KiB on
/// a 16-core host (bench/results/ucx_auto_probe_h100_2026-11-25).
inline constexpr std::chrono::microseconds kShortIdleSpin{200};
/// The long window, where the ranks have a core each and the peers are reached through shared memory:
/// 8 ranks of one host, ring all-reduce of 512 KiB, 1081 -> 467 us on a 16-core host
/// (bench/results/host_algo_sweep_2026-11-29/diag/spin_n8_d1.md).
inline constexpr std::chrono::microseconds kLongIdleSpin{2000};

/// The window for one rank: `ranksOnHost` ranks of its communicator share a host with `usableCores`
/// cores, and `transports` names the transport to each peer ("self", "none", "shm", "mem", "tcp",
/// "ucx", ...). Long only when ranksOnHost <= usableCores and every transport is one that moves bytes on
/// the ranks' own threads (shm, mem) or none at all (self, none).
std::chrono::microseconds chooseIdleSpin(int ranksOnHost, int usableCores, const std::vector<std::string_view>& transports);

/// The cores this process may run on (its CPU affinity mask; hardware_concurrency where that is unknown).
int usableCores();

}  // namespace hetccl::engine
