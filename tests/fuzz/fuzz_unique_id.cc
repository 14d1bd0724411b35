// Fuzz target: the 128-byte unique id (UniqueId::decode) and its hex form (UniqueId::fromHex), as handed
// to every rank by the application or the launcher (HETCCL_UNIQUE_ID).
// Property: whatever decodes is canonical (encode() gives back the same bytes), and the hex form of
// that id decodes to the same id.
#include <cstdlib>
#include <cstring>
#include <string>

#include "bootstrap/unique_id.hpp"
#include "core/error.hpp"

using hetccl::bootstrap::UniqueId;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    UniqueId id = UniqueId::decode(data, size);
    auto again = id.encode();
    if (size != again.size() || std::memcmp(again.data(), data, size) != 0) std::abort();  // not canonical
    UniqueId fromHex = UniqueId::fromHex(id.toHex());
    if (fromHex.encode() != again) std::abort();
  } catch (const hetccl::InvalidArgument&) {
  }
  try {
    UniqueId id = UniqueId::fromHex(std::string_view(reinterpret_cast<const char*>(data), size));
    (void)id.toHex();
  } catch (const hetccl::InvalidArgument&) {
  }
  return 0;
}
