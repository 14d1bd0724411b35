// Fuzz target: rank descriptors (what each rank sends the root, and the table the root sends back).
// Property: a descriptor that decodes is canonical (re-encoding gives the same 140 bytes), and the
// stable prefix agrees with the decoded fields.
#include <cstdlib>
#include <cstring>

#include "bootstrap/descriptor.hpp"
#include "core/error.hpp"

using namespace hetccl::bootstrap;

namespace {

void one(const unsigned char* p, size_t n) {
  try {
    DescriptorPrefix prefix = readDescriptorPrefix(p, n);
    RankDescriptor d = decodeDescriptor(p, n);
    if (prefix.rank != d.info.rank || prefix.nranks != d.nranks || prefix.protocolVersion != d.info.protocolVersion)
      std::abort();
    auto again = encodeDescriptor(d);
    if (again.size() != n || std::memcmp(again.data(), p, n) != 0) std::abort();
    (void)d.meshAddress.toString();
  } catch (const hetccl::InvalidArgument&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  one(data, size);
  // As a table: consecutive descriptors (the rank side decodes each entry of the root's answer).
  for (size_t off = 0; off + kDescriptorBytes <= size; off += kDescriptorBytes) one(data + off, kDescriptorBytes);
  return 0;
}
