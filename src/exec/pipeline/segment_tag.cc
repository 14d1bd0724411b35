#include "exec/pipeline/segment_tag.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>

#include "core/error.hpp"

namespace hetccl::stream_exec {

SegmentTag randomSegmentTag() {
  unsigned char raw[16];
  size_t got = 0;
  while (got < sizeof raw) {
    const ssize_t n = ::getrandom(raw + got, sizeof raw - got, 0);
    if (n < 0 && errno != EINTR) throw SystemError::fromErrno("getrandom for a shared-memory segment name", errno);
    if (n > 0) got += static_cast<size_t>(n);
  }
  SegmentTag tag{};
  for (size_t i = 0; i < sizeof raw; ++i) std::snprintf(tag.hex + 2 * i, 3, "%02x", raw[i]);
  return tag;
}

bool validSegmentTag(const SegmentTag& t) {
  for (size_t i = 0; i < 32; ++i)
    if (!((t.hex[i] >= '0' && t.hex[i] <= '9') || (t.hex[i] >= 'a' && t.hex[i] <= 'f'))) return false;
  return t.hex[32] == '\0';
}

}  // namespace hetccl::stream_exec
