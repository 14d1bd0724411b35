#include "rma/window.hpp"

#include <cstring>

#include "core/error.hpp"
#include "device/gpu_runtime.hpp"

namespace hetccl::rma {

using transport::shm::ShmSegment;

namespace {

size_t windowDataOffset(uint32_t) { return (sizeof(WindowHeader) + 4095) / 4096 * 4096; }

/// The window as a kind of shared-memory segment: up to 1024 slots of up to 1 GiB.
const transport::shm::SegmentKind kWindowKind{"RMA window", kWindowMagic, kWindowVersion, 1024, uint64_t{1} << 30,
                                              &windowDataOffset};

}  // namespace

size_t Window::slotsOffset() { return windowDataOffset(0); }

Window::Window(ShmSegment segment, device::GpuRuntime* gpu)
    : segment_(std::move(segment)), published_(segment_.name()) {
  const WindowHeader* h = header();
  slots_ = h->segment.slots;
  slotBytes_ = h->segment.slotBytes;
  data_ = static_cast<unsigned char*>(segment_.data()) + slotsOffset();
  if (gpu) {
    gpu->registerHost(segment_.data(), segment_.size());  // throws naming the runtime's error
    gpu_ = gpu;
  }
}

Window::~Window() {
  if (gpu_) gpu_->unregisterHost(segment_.data());
}

std::unique_ptr<Window> Window::create(const std::string& name, int from, int to, uint32_t slots, uint64_t slotBytes,
                                       device::GpuRuntime* gpu) {
  if (slots == 0 || slotBytes == 0 || slotBytes % 64 != 0)
    throw InvalidArgument(concat("RMA window geometry ", slots, " x ", slotBytes, " bytes is invalid"));
  ShmSegment seg = ShmSegment::create(name, kWindowKind.totalBytes(slots, slotBytes),
                                     "RMA windows: HETCCL_RMA_WINDOW_SLOTS x HETCCL_RMA_WINDOW_BYTES "
                                     "per direction and pair of ranks of one host (HETCCL_RMA_WINDOW=off: none)");
  auto* h = static_cast<WindowHeader*>(seg.data());
  transport::shm::describeSegment(h->segment, kWindowKind, slots, slotBytes, from, to);
  h->head.store(0, std::memory_order_relaxed);
  h->tail.store(0, std::memory_order_relaxed);
  transport::shm::publishSegment(h->segment, kWindowKind);
  return std::unique_ptr<Window>(new Window(std::move(seg), gpu));
}

std::unique_ptr<Window> Window::open(const std::string& name, int from, int to, device::GpuRuntime* gpu) {
  std::optional<ShmSegment> seg = ShmSegment::tryOpen(name, sizeof(WindowHeader));
  ShmSegment::unlink(name);
  auto bad = [&](const std::string& why) {
    return SystemError(concat("RMA window from rank ", from, ": segment ", name, " ", why));
  };
  if (!seg) throw bad("does not exist");
  const auto* h = static_cast<const WindowHeader*>(seg->data());
  const std::string problem = transport::shm::segmentProblem(h->segment, kWindowKind, seg->size(), from, to);
  if (!problem.empty()) throw bad(problem);
  return std::unique_ptr<Window>(new Window(std::move(*seg), gpu));
}

unsigned char* Window::freeSlotAhead(uint64_t ahead) {
  const uint64_t released = header()->tail.load(std::memory_order_acquire);
  const uint64_t chunk = sent_ + ahead;
  // (a tail beyond sent_ wraps to a huge value: no slot either)
  if (chunk - released >= slots_ || sent_ - released > slots_) return nullptr;
  return data_ + (chunk % slots_) * slotBytes_;
}

void Window::publish() {
  published_.release();
  header()->head.store(++sent_, std::memory_order_release);
}

const unsigned char* Window::fullSlotAhead(uint64_t ahead, std::string& problem) {
  const uint64_t published = header()->head.load(std::memory_order_acquire);
  published_.acquire();
  if (published - taken_ > slots_) {
    problem = concat("the sender published chunk ", published, " while chunk ", taken_, " was not released (", slots_,
                     " slots)");
    return nullptr;
  }
  if (published - taken_ <= ahead) return nullptr;
  return data_ + ((taken_ + ahead) % slots_) * slotBytes_;
}

void Window::release() { header()->tail.store(++taken_, std::memory_order_release); }

}  // namespace hetccl::rma
