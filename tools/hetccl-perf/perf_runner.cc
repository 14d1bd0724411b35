#include "perf_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "data_pattern.hpp"

namespace hetccl::perf {
namespace {

bool gInjected = false;  // the one wrong element of HETCCL_TEST_WRONG_RANK is in

bool injectingHere(int rank) {
  const char* wrongRank = std::getenv("HETCCL_TEST_WRONG_RANK");
  return wrongRank && *wrongRank && std::to_string(rank) == wrongRank;
}

}  // namespace

void checkResult(hetcclResult_t result, const char* what, hetcclComm_t comm) {
  if (result == hetcclSuccess) return;
  throw std::runtime_error(std::string(what) + " failed: " + hetcclGetErrorString(result) + ": " +
                           hetcclGetLastError(comm));
}

PerfRunner::PerfRunner(const PerfOptions& options, const Collective& collective, const RunContext& ctx,
                       GpuRuntimeApi* gpu)
    : options_(options), collective_(collective), ctx_(ctx), gpu_(gpu) {
  const Layout largest = collective.layout(options.maxBytes / ctx.type.size, ctx.nranks);
  const size_t elements = std::max(largest.sendCount, largest.recvCount);
  const size_t bytes = std::max<size_t>(elements * ctx.type.size, 1);
  sendBuffer_.resize(bytes);
  recvBuffer_.resize(bytes);
  if (gpu_) {
    sendDevice_ = DeviceMemory(*gpu_, bytes);
    recvDevice_ = DeviceMemory(*gpu_, bytes);
  }
}

void PerfRunner::upload(const Layout& layout, bool inPlace) {
  if (!gpu_) return;
  const size_t eltSize = ctx_.type.size;
  if (inPlace) {  // one buffer holds both the inputs and the sentinels
    gpu_->copyToDevice(recvDevice_.data(), recvBuffer_.data(), std::max(layout.sendCount, layout.recvCount) * eltSize);
    return;
  }
  gpu_->copyToDevice(sendDevice_.data(), sendBuffer_.data(), layout.sendCount * eltSize);
  gpu_->copyToDevice(recvDevice_.data(), recvBuffer_.data(), layout.recvCount * eltSize);
}

void PerfRunner::waitForStream() {
  if (gpu_) gpu_->synchronizeStream(ctx_.stream);
}

void PerfRunner::runOnce(const void* send, void* recv, const Layout& layout) {
  checkResult(collective_.run(ctx_, send, recv, layout), collective_.name(), ctx_.comm);
}

void PerfRunner::prepare(void* send, void* recv, const Layout& layout) {
  // Sentinels first: in place, the send region lies inside the receive buffer and must hold the inputs.
  fillElements(ctx_.type, recv, layout.recvCount, [](size_t) { return kSentinel; });
  collective_.fillInput(ctx_, send, layout);
}

double PerfRunner::maxOverRanks(double value) {
  double result = 0;
  checkResult(hetcclAllReduce(&value, &result, 1, hetcclFloat64, hetcclMax, ctx_.comm, nullptr),
              "all-reduce (max) of the times", ctx_.comm);
  return result;
}

int64_t PerfRunner::sumOverRanks(int64_t value) {
  int64_t result = 0;
  checkResult(hetcclAllReduce(&value, &result, 1, hetcclInt64, hetcclSum, ctx_.comm, nullptr),
              "all-reduce (sum) of the wrong-element counts", ctx_.comm);
  return result;
}

PlaceResult PerfRunner::measurePlace(const Layout& layout, bool inPlace, size_t bytes) {
  PlaceResult r;
  r.ran = true;
  const size_t rank = static_cast<size_t>(ctx_.rank), eltSize = ctx_.type.size;
  const size_t sendOffset = inPlace ? layout.sendInPlaceOffset * rank * eltSize : 0;
  const size_t recvOffset = inPlace ? layout.recvInPlaceOffset * rank * eltSize : 0;
  // Host buffers: where inputs are made and outputs checked. Call buffers: what hetccl gets.
  unsigned char* hostSend = (inPlace ? recvBuffer_.data() : sendBuffer_.data()) + sendOffset;
  unsigned char* hostRecv = recvBuffer_.data() + recvOffset;
  unsigned char* send = hostSend;
  unsigned char* recv = hostRecv;
  if (gpu_) {
    send = (inPlace ? recvDevice_.data() : sendDevice_.data()) + sendOffset;
    recv = recvDevice_.data() + recvOffset;
  }

  prepare(hostSend, hostRecv, layout);
  upload(layout, inPlace);
  for (int i = 0; i < options_.warmupIters; ++i) runOnce(send, recv, layout);
  waitForStream();
  checkResult(hetcclBarrier(ctx_.comm, nullptr), "barrier before timing", ctx_.comm);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < options_.iters; ++i) runOnce(send, recv, layout);
  waitForStream();
  const std::chrono::duration<double, std::micro> elapsed = std::chrono::steady_clock::now() - start;
  r.timeUs = maxOverRanks(elapsed.count() / options_.iters);
  r.algBw = r.timeUs > 0 ? static_cast<double>(bytes) / (r.timeUs * 1e3) : 0;  // bytes/us/1e3 = GB/s
  r.busBw = r.algBw * collective_.busFactor(ctx_.nranks);

  if (options_.check) {  // fresh inputs, one more call, exact comparison
    prepare(hostSend, hostRecv, layout);
    upload(layout, inPlace);
    runOnce(send, recv, layout);
    waitForStream();
    if (gpu_) gpu_->copyToHost(hostRecv, recv, layout.recvCount * eltSize);
    const size_t counted = injectWrong(hostRecv, layout, collective_.countWrong(ctx_, hostRecv, layout));
    r.wrongHere = static_cast<int64_t>(counted);
    r.wrong = sumOverRanks(injectingHere(ctx_.rank) ? 0 : r.wrongHere);
  }
  return r;
}

size_t PerfRunner::injectWrong(unsigned char* recv, const Layout& layout, size_t counted) {
  if (gInjected || !injectingHere(ctx_.rank) || layout.recvCount == 0) return counted;
  recv[0] ^= 0x5A;
  const size_t again = collective_.countWrong(ctx_, recv, layout);
  if (again <= counted) {  // element 0 is not checked on this rank (say, a reduce's non-root): next time
    recv[0] ^= 0x5A;
    return counted;
  }
  gInjected = true;
  std::fprintf(stderr, "hetccl-perf: rank %d: HETCCL_TEST_WRONG_RANK: one element made wrong\n", ctx_.rank);
  return again;
}

SizeResult PerfRunner::measure(size_t bytes) {
  const Layout layout = collective_.layout(bytes / ctx_.type.size, ctx_.nranks);
  SizeResult s;
  s.count = std::max(layout.sendCount, layout.recvCount);
  s.bytes = s.count * ctx_.type.size;
  s.outOfPlace = measurePlace(layout, false, s.bytes);
  if (collective_.supportsInPlace()) s.inPlace = measurePlace(layout, true, s.bytes);
  return s;
}

}  // namespace hetccl::perf
