// CRC32C (Castagnoli, the iSCSI/ext4 checksum) for HETCCL_CHECKSUM: the shm and tcp transports checksum
// every piece they move between ranks. Uses the SSE4.2 crc32 instruction where the CPU has it (about
// 8 bytes per 3 cycles), a table otherwise; both give the same values.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hetccl::transport {

/// CRC32C of `bytes` bytes at `data`, continuing from `crc` (the CRC of what came before; 0 to start):
/// crc32c(crc32c(0, a), b) == crc32c(0, a followed by b). crc32c(0, "123456789", 9) == 0xE3069283.
uint32_t crc32c(uint32_t crc, const void* data, size_t bytes) noexcept;

/// The table implementation (tests compare the two).
uint32_t crc32cPortable(uint32_t crc, const void* data, size_t bytes) noexcept;

}  // namespace hetccl::transport
