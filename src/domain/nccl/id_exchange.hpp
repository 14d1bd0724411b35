// Distribution of the vendor's 128-byte unique id over hetccl's authenticated bootstrap: the domain's
// first member creates it and sends it to the other members (never through the environment or a file).
//
// Message (Bootstrap::send, tag kVendorIdTag, fixed kIdMessageBytes bytes):
//   0 u32 status (0 = ok, 1 = the creator failed)   4 u32 error text length (<= 256)
//   8 u8[128] the id (zero when failed)            136 u8[256] error text (UTF-8, not terminated)
// Messages of one tag between two ranks arrive in send order, so successive domain communicators
// created in the same order on every member get matching ids.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "domain/nccl/nccl_abi.hpp"

namespace hetccl::bootstrap {
class Bootstrap;
}

namespace hetccl::domain::nccl {

/// Bootstrap tag of the id message: the bytes 'N','C','I','D' read big-endian.
inline constexpr uint32_t kVendorIdTag = 0x4E434944;
inline constexpr size_t kIdMessageBytes = 8 + abi::kUniqueIdBytes + 256;

/// Checks `members` (non-empty, distinct bootstrap ranks, including the caller) and returns the caller's
/// index among them. Throws InvalidArgument saying what is wrong.
int memberIndex(const bootstrap::Bootstrap& bootstrap, const std::vector<int>& members);

/// On members[0]: runs `create`, sends its id (or the text of what it threw) to every other member,
/// and returns the id (or rethrows). On the others: waits (HETCCL_TIMEOUT) for members[0]'s message
/// and returns the id, or throws PeerError naming members[0] (rank and host) with its error text.
abi::ncclUniqueId shareUniqueId(bootstrap::Bootstrap& bootstrap, const std::vector<int>& members,
                                const std::function<abi::ncclUniqueId()>& create);

}  // namespace hetccl::domain::nccl
