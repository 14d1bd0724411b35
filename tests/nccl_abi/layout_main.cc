// layout_vs_nccl_h: every ABI fact of layout_fields.h is the same in hetccl's header and in nccl.h.
#include <cstdio>

#define LAYOUT_LABEL(label, expr) label,
#include "hetccl/nccl_abi.h"
#include "layout_fields.h"

extern const long long layoutOurs[], layoutNvidia[];
extern const int layoutOursCount, layoutNvidiaCount;

int main() {
  static const char* const labels[] = {LAYOUT_FIELDS(LAYOUT_LABEL)};
  const int n = sizeof labels / sizeof labels[0];
  if (layoutOursCount != n || layoutNvidiaCount != n) return std::fprintf(stderr, "FAIL: table sizes differ\n"), 1;
  int failures = 0;
  for (int i = 0; i < n; ++i)
    if (layoutOurs[i] != layoutNvidia[i]) {
      std::fprintf(stderr, "FAIL: %s: hetccl %lld, nccl.h %lld\n", labels[i], layoutOurs[i], layoutNvidia[i]);
      ++failures;
    }
  std::printf("layout_vs_nccl_h: %d facts compared, %d differ\n", n, failures);
  return failures ? 1 : 0;
}
