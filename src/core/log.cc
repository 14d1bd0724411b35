#include "core/log.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string_view>

#include "core/config.hpp"

namespace hetccl::log {
namespace {

struct State {
  std::atomic<int> level{-1};  // -1: not read yet
  std::atomic<unsigned> mask{kAll};
};
State& state() {
  static State s;
  return s;
}

struct Name {
  std::string_view name;
  unsigned bit;
};
constexpr Name kSubsys[] = {{"INIT", kInit}, {"BOOTSTRAP", kBootstrap}, {"NET", kNet}, {"SHM", kShm},
                            {"COLL", kColl}, {"ENGINE", kEngine}, {"ALL", kAll}};

Level parseLevel(const std::string& v) {
  if (v == "NONE") return Level::None;
  if (v == "VERSION") return Level::Version;
  if (v == "INFO") return Level::Info;
  if (v == "TRACE") return Level::Trace;
  return Level::Warn;
}

unsigned parseMask(const std::string& v) {
  bool exclude = !v.empty() && v[0] == '^';
  unsigned mask = 0;
  std::stringstream ss(exclude ? v.substr(1) : v);
  std::string item;
  while (std::getline(ss, item, ','))
    for (const auto& s : kSubsys)
      if (item == s.name) mask |= s.bit;
  return exclude ? ~mask : mask;
}

void load() noexcept {
  try {
    state().mask = parseMask(config().str("HETCCL_DEBUG_SUBSYS"));
    state().level = static_cast<int>(parseLevel(config().str("HETCCL_DEBUG")));
  } catch (...) {
    state().level = static_cast<int>(Level::Warn);
  }
}

const char* levelName(Level l) {
  switch (l) {
    case Level::Version: return "VERSION";
    case Level::Warn: return "WARN";
    case Level::Info: return "INFO";
    case Level::Trace: return "TRACE";
    default: return "";
  }
}

const char* subsysName(unsigned subsys) {
  for (const auto& s : kSubsys)
    if (s.bit == subsys) return s.name.data();
  return "ALL";
}

}  // namespace

bool enabled(Level level, unsigned subsys) noexcept {
  if (state().level.load(std::memory_order_relaxed) < 0) load();
  return static_cast<int>(level) <= state().level.load(std::memory_order_relaxed) &&
         (subsys & state().mask.load(std::memory_order_relaxed)) != 0;
}

void write(Level level, unsigned subsys, const char* file, int line, const std::string& msg) noexcept {
  static std::mutex mu;
  char host[64] = "?";
  gethostname(host, sizeof host - 1);
  const char* base = std::strrchr(file, '/');
  std::lock_guard<std::mutex> lock(mu);
  if (level == Level::Warn)
    std::fprintf(stderr, "%s:%d:%ld hetccl %s %s [%s:%d] %s\n", host, getpid(), syscall(SYS_gettid),
                 levelName(level), subsysName(subsys), base ? base + 1 : file, line, msg.c_str());
  else
    std::fprintf(stderr, "%s:%d:%ld hetccl %s %s %s\n", host, getpid(), syscall(SYS_gettid), levelName(level),
                 subsysName(subsys), msg.c_str());
}

void reload() noexcept { load(); }

}  // namespace hetccl::log
