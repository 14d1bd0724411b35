#include "cross_mapping_sync.hpp"

#include <functional>
#include <string>

namespace hetccl::transport::shm {

namespace {
// 64 Ki keys: two rings hashing to one byte only add an edge TSan would otherwise not have (it could hide
// a race between those two rings' users, never report a false one).
constexpr size_t kKeys = size_t{1} << 16;
char syncBytes[kKeys];
}  // namespace

CrossMappingSync::CrossMappingSync(std::string_view key)
    : addr_(&syncBytes[std::hash<std::string_view>{}(key) % kKeys]) {}

}  // namespace hetccl::transport::shm
