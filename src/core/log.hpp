// Logging: a level and a subsystem mask from HETCCL_DEBUG / HETCCL_DEBUG_SUBSYS (or NCCL_DEBUG /
// NCCL_DEBUG_SUBSYS), checked before any formatting. Lines go to stderr as
//   <host>:<pid>:<tid> hetccl <LEVEL> <SUBSYS> [file:line] message
// (file:line on warnings). Secrets are never passed to the logger.
#pragma once

#include <string>

#include "core/error.hpp"

namespace hetccl::log {

enum class Level : int { None = 0, Version = 1, Warn = 2, Info = 3, Trace = 4 };

enum Subsys : unsigned {
  kInit = 1u << 0,
  kBootstrap = 1u << 1,
  kNet = 1u << 2,
  kShm = 1u << 3,
  kColl = 1u << 4,
  kEngine = 1u << 5,
  kAll = ~0u,
};

/// True when a message of this level and subsystem would be printed.
bool enabled(Level level, unsigned subsys) noexcept;
/// Prints one line (use the HETCCL_WARN/INFO/TRACE macros instead).
void write(Level level, unsigned subsys, const char* file, int line, const std::string& msg) noexcept;
/// Re-reads the level and mask (tests only).
void reload() noexcept;

}  // namespace hetccl::log

#define HETCCL_LOG_AT(level, subsys, ...)                                                      \
  do {                                                                                         \
    if (::hetccl::log::enabled(level, subsys))                                                 \
      ::hetccl::log::write(level, subsys, __FILE__, __LINE__, ::hetccl::concat(__VA_ARGS__));  \
  } while (0)
#define HETCCL_WARN(subsys, ...) HETCCL_LOG_AT(::hetccl::log::Level::Warn, subsys, __VA_ARGS__)
#define HETCCL_INFO(subsys, ...) HETCCL_LOG_AT(::hetccl::log::Level::Info, subsys, __VA_ARGS__)
#define HETCCL_TRACE(subsys, ...) HETCCL_LOG_AT(::hetccl::log::Level::Trace, subsys, __VA_ARGS__)
