#include "core/log.hpp"

#include <strings.h>
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

// Case-insensitive, as NCCL's (NCCL_DEBUG=info is what NCCL users type); init refuses other values
// (Config::checkValues), a value read before init falls back to WARN.
Level parseLevel(const std::string& v) {
  const char* s = v.c_str();
  if (strcasecmp(s, "NONE") == 0) return Level::None;
  if (strcasecmp(s, "VERSION") == 0) return Level::Version;
  if (strcasecmp(s, "INFO") == 0) return Level::Info;
  if (strcasecmp(s, "TRACE") == 0) return Level::Trace;
  return Level::Warn;
}

unsigned parseMask(const std::string& v) {
  bool exclude = !v.empty() && v[0] == '^';
  unsigned mask = 0;
  std::stringstream ss(exclude ? v.substr(1) : v);
  std::string item;
  while (std::getline(ss, item, ','))
    for (const auto& s : kSubsys)
      if (item.size() == s.name.size() && strncasecmp(item.data(), s.name.data(), item.size()) == 0) mask |= s.bit;
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
