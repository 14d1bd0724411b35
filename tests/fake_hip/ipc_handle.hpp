// What the fake puts in a hipIpcMemHandle_t (64 opaque bytes to the caller): enough for another process on
// the same machine to reopen the exporter's memfd through /proc and to tell a stale handle from a live one.
// api_ipc.cc makes and reads it; tests read it to stage stale handles (a reused fd number).
#pragma once

#include <cstdint>
#include <cstring>

#include "hip_types.hpp"

namespace fakehip {

struct IpcHandlePayload {
  static constexpr uint64_t kMagic = 0x6370692d70696866ull;  // "fhip-ipc": a handle this fake made
  uint64_t magic;
  int64_t pid;     // the exporting process
  int64_t fd;      // the allocation's memfd there (open until its hipFree)
  uint64_t inode;  // the memfd's st_ino / st_dev: an fd number reused for another file after hipFree
  uint64_t dev;    // names a different inode, so the handle is known stale
  uint64_t size;   // the allocation's size (the memfd holds mappedBytes(size))
};
static_assert(sizeof(IpcHandlePayload) <= sizeof(hipIpcMemHandle_t));

inline IpcHandlePayload readIpcHandle(const hipIpcMemHandle_t& h) {
  IpcHandlePayload p;
  std::memcpy(&p, h.reserved, sizeof p);
  return p;
}
inline hipIpcMemHandle_t makeIpcHandle(const IpcHandlePayload& p) {
  hipIpcMemHandle_t h{};
  std::memcpy(h.reserved, &p, sizeof p);
  return h;
}

}  // namespace fakehip
