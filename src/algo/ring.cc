// Pipelined ring. Messages are listed step-major (all chunks of step k, then step k+1), so each
// connection streams chunk after chunk while the next step's chunks follow as soon as their reduce is done.
#include "algo/patterns.hpp"

#include <algorithm>

namespace hetccl::algo {
namespace {

size_t wrap(long long x, size_t n) { return static_cast<size_t>(((x % (long long)n) + (long long)n) % (long long)n); }

// One ring step, chunk by chunk: send `out` to `next` while receiving `in` from `prev` (accumulated
// into buf when `reduce`, stored otherwise).
void ringStep(const OpContext& ctx, int next, int prev, Location buf, Range out, Range in, bool reduce) {
  const size_t chunk = ctx.chunkElems();
  for (size_t c = 0; c < std::max(chunkCount(out.len, chunk), chunkCount(in.len, chunk)); ++c) {
    if (c * chunk < out.len)
      ctx.builder.send(next, ctx.at(buf, out.begin + c * chunk), ctx.bytes(std::min(chunk, out.len - c * chunk)));
    if (c * chunk >= in.len) continue;
    const Location dst = ctx.at(buf, in.begin + c * chunk);
    const uint64_t bytes = ctx.bytes(std::min(chunk, in.len - c * chunk));
    if (reduce) ctx.builder.recvReduce(prev, dst, bytes, ctx.reduction);
    else ctx.builder.recv(prev, dst, bytes);
  }
}

}  // namespace

void ringReduceScatter(const OpContext& ctx, const std::vector<int>& members, Location buf,
                       const std::vector<Range>& segments) {
  const size_t n = members.size();
  if (n < 2) return;
  const long long p = static_cast<long long>(positionOf(members, ctx.topo.rank));
  const int next = members[wrap(p + 1, n)], prev = members[wrap(p - 1, n)];
  // Step k: send segment p-1-k (partial sum so far), receive-and-reduce segment p-2-k. After n-1 steps the
  // last segment received, p - n = p, is complete here.
  for (size_t k = 0; k + 1 < n; ++k)
    ringStep(ctx, next, prev, buf, segments[wrap(p - 1 - (long long)k, n)], segments[wrap(p - 2 - (long long)k, n)],
             true);
}

void ringAllGather(const OpContext& ctx, const std::vector<int>& members, Location buf,
                   const std::vector<Range>& segments) {
  const size_t n = members.size();
  if (n < 2) return;
  const long long p = static_cast<long long>(positionOf(members, ctx.topo.rank));
  const int next = members[wrap(p + 1, n)], prev = members[wrap(p - 1, n)];
  // Step k: forward segment p-k (own at k = 0), receive segment p-1-k.
  for (size_t k = 0; k + 1 < n; ++k)
    ringStep(ctx, next, prev, buf, segments[wrap(p - (long long)k, n)], segments[wrap(p - 1 - (long long)k, n)], false);
}

}  // namespace hetccl::algo
