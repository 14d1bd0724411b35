#include "sim_device.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "core/error.hpp"

namespace hetccl::test::sim {
namespace {

constexpr int kMaxPhaseOps = 256;  // a phase lasts 1..kMaxPhaseOps picks
constexpr int kSleepOneIn = 128;   // how often the device sleeps after an op
constexpr int kMaxSleepUs = 200;

uint64_t chooseSeed() {
  if (const char* s = std::getenv("HETCCL_SIM_SEED"); s && *s) return std::strtoull(s, nullptr, 0);
  return std::random_device{}() ^ (uint64_t{std::random_device{}()} << 32);
}

}  // namespace

void Event::complete(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (id != doneUpTo_ + 1) {
    doneAbove_.insert(id);
    return;
  }
  ++doneUpTo_;
  while (doneAbove_.erase(doneUpTo_ + 1)) ++doneUpTo_;
}

bool Event::done(uint64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return id <= doneUpTo_ || doneAbove_.count(id) != 0;
}

Device::Device() : seed_(chooseSeed()), rng_(seed_) {
  legacy_.name = "legacy";
  std::fprintf(stderr, "[sim gpu] scheduler seed %llu (HETCCL_SIM_SEED=%llu repeats its choices)\n",
               static_cast<unsigned long long>(seed_), static_cast<unsigned long long>(seed_));
  thread_ = std::thread([this] { loop(); });
  thread_.detach();
}

Device::Stream* Device::find(void* stream) { return stream ? static_cast<Stream*>(stream) : &legacy_; }

void Device::push(void* stream, Op op) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    find(stream)->ops.push_back(std::move(op));
  }
  cv_.notify_all();
}

void* Device::createStream() {
  auto s = std::make_unique<Stream>();
  Stream* raw = s.get();
  std::lock_guard<std::mutex> lock(mu_);
  s->name = concat("stream ", ++created_);
  owned_.push_back(std::move(s));
  return raw;
}

void Device::destroyStream(void* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = owned_.begin(); it != owned_.end(); ++it)
    if (it->get() == stream) {
      owned_.erase(it);
      return;
    }
}

bool Device::idle(void* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  return find(stream)->ops.empty();  // an executing op leaves the queue only once it has run
}

void Device::synchronize(void* stream) {
  while (!idle(stream)) std::this_thread::sleep_for(std::chrono::microseconds(100));
}

size_t Device::pending() {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = legacy_.ops.size();
  for (auto& s : owned_) n += s->ops.size();
  return n;
}

std::string Device::dump() {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out = concat("sim gpu seed ", seed_, "\n");
  auto one = [&](Stream& s) {
    if (s.ops.empty()) return;
    const Op& h = s.ops.front();
    out += concat(s.name, ": ", s.ops.size(), " ops, head ", h.what, h.describe ? " " + h.describe() : "",
                  h.ready && !h.ready() ? " (waiting)" : "", "\n");
  };
  one(legacy_);
  for (auto& s : owned_) one(*s);
  return out;
}

void Device::newPhase() {
  phaseLeft_ = 1 + static_cast<int>(rng_() % kMaxPhaseOps);
  legacy_.paused = rng_() % 2;
  for (auto& s : owned_) s->paused = rng_() % 2;
}

// A runnable stream chosen uniformly among the unpaused ones, else among the paused ones (so pausing
// delays a stream but never stops the device).
Device::Stream* Device::pick() {
  if (--phaseLeft_ <= 0) newPhase();
  Stream* chosen[2] = {};
  uint64_t seen[2] = {};
  auto consider = [&](Stream& s) {
    if (s.ops.empty()) return;
    const Op& head = s.ops.front();
    if (head.ready && !head.ready()) return;
    const int group = s.paused ? 1 : 0;
    if (rng_() % ++seen[group] == 0) chosen[group] = &s;  // reservoir sampling: uniform over the group
  };
  consider(legacy_);
  for (auto& s : owned_) consider(*s);
  return chosen[0] ? chosen[0] : chosen[1];
}

void Device::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    Stream* s = pick();
    if (!s) {
      // Flags may change from the host without a notification: poll.
      cv_.wait_for(lock, std::chrono::microseconds(100));
      continue;
    }
    const Op& op = s->ops.front();
    if (op.run) op.run();
    s->ops.pop_front();
    if (rng_() % kSleepOneIn == 0) {  // host threads run (and enqueue) meanwhile
      const auto us = std::chrono::microseconds(rng_() % kMaxSleepUs);
      lock.unlock();
      std::this_thread::sleep_for(us);
      lock.lock();
    }
  }
}

Device& device() {
  static Device* d = new Device;  // never destroyed: its thread runs until exit
  return *d;
}

}  // namespace hetccl::test::sim
