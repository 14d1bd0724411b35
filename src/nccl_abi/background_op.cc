#include "nccl_abi/background_op.hpp"

#include <system_error>
#include <utility>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "device/loader.hpp"

namespace hetccl::nccl_abi {

struct BackgroundOp::Shared {
  std::mutex mu;
  std::atomic<bool> finished{false};
  bool abandoned = false;
  OpOutcome outcome;
};

namespace {

const hetcclGpuPlugin_t* gpuPlugin() noexcept {
  try {
    return device::chooseGpu().plugin;
  } catch (const std::exception&) {  // a bad HETCCL_DEVICE: the communicator's creation reports it
    return nullptr;
  }
}

}  // namespace

int currentDevice() noexcept {
  const hetcclGpuPlugin_t* gpu = gpuPlugin();
  int device = -1;
  if (!gpu || gpu->getDevice(&device) != HETCCL_GPU_OK) return -1;
  return device;
}

std::unique_ptr<BackgroundOp> BackgroundOp::start(Body body, int device) {
  auto shared = std::make_shared<Shared>();
  std::unique_ptr<BackgroundOp> op(new BackgroundOp(shared));
  try {
    op->thread_ = std::thread([shared, body = std::move(body), device] {
      OpOutcome out;
      const hetcclGpuPlugin_t* gpu = device >= 0 ? gpuPlugin() : nullptr;
      if (gpu && gpu->setDevice(device) != HETCCL_GPU_OK) {
        out.result = hetcclUnhandledCudaError;
        out.message = concat("cannot make device ", device, " current on the background thread: ", gpu->lastError());
      } else {
        out = body();
      }
      std::unique_lock<std::mutex> lock(shared->mu);
      shared->outcome = std::move(out);
      shared->finished.store(true, std::memory_order_release);
      if (shared->abandoned && shared->outcome.produced) {
        hetcclComm_t orphan = std::exchange(shared->outcome.produced, nullptr);
        lock.unlock();
        hetcclCommAbort(orphan);  // nobody will ever use it
        return;
      }
    });
  } catch (const std::system_error& e) {
    throw SystemError(concat("cannot start a thread for a non-blocking communicator operation: ", e.what()));
  }
  return op;
}

BackgroundOp::~BackgroundOp() {
  if (thread_.joinable()) thread_.join();
}

bool BackgroundOp::finished() const noexcept { return shared_->finished.load(std::memory_order_acquire); }

OpOutcome BackgroundOp::wait() {
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(shared_->mu);
  return std::exchange(shared_->outcome, OpOutcome{});
}

void BackgroundOp::abandon() noexcept {
  std::unique_lock<std::mutex> lock(shared_->mu);
  if (shared_->finished.load()) {
    hetcclComm_t done = std::exchange(shared_->outcome.produced, nullptr);
    lock.unlock();
    if (thread_.joinable()) thread_.join();
    if (done) hetcclCommAbort(done);
    return;
  }
  shared_->abandoned = true;
  lock.unlock();
  if (thread_.joinable()) thread_.detach();
  HETCCL_INFO(log::kInit, "a communicator operation still running was abandoned; its result will be aborted");
}

}  // namespace hetccl::nccl_abi
