/* layout_c: hetccl's NCCL header compiled as C has NCCL 2.28's ABI (x86-64 / aarch64 LP64). Checked at
 * compile time; the program prints the facts it checked. */
#include <stdio.h>

#include "hetccl/nccl_abi.h"

_Static_assert(sizeof(ncclUniqueId) == 128, "ncclUniqueId is 128 bytes");
_Static_assert(sizeof(ncclConfig_t) == 80, "ncclConfig_t of NCCL 2.28 is 80 bytes");
_Static_assert(offsetof(ncclConfig_t, blocking) == 16 && offsetof(ncclConfig_t, netName) == 32 &&
                   offsetof(ncclConfig_t, splitShare) == 40 && offsetof(ncclConfig_t, commName) == 48 &&
                   offsetof(ncclConfig_t, nvlinkCentricSched) == 76,
               "ncclConfig_t field offsets");
_Static_assert(sizeof(ncclResult_t) == 4 && sizeof(ncclDataType_t) == 4 && sizeof(ncclRedOp_t) == 4,
               "the enums are 4 bytes");
_Static_assert(ncclInProgress == 7 && ncclFloat8e5m2 == 11 && ncclNumTypes == 12 && ncclNumOps == 5 &&
                   ncclMaxRedOp == 0x7fffffff && NCCL_SPLIT_NOCOLOR == -1 && NCCL_VERSION_CODE == 22809,
               "NCCL's values");
_Static_assert(sizeof(ncclTeam_t) == 12, "ncclTeam_t is three ints");

int main(void) {
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  if (c.size != sizeof c || c.magic != 0xcafebeef || c.version != 22809 || c.blocking != NCCL_CONFIG_UNDEF_INT ||
      c.netName != NULL || c.nvlinkCentricSched != NCCL_CONFIG_UNDEF_INT) {
    printf("FAIL: NCCL_CONFIG_INITIALIZER\n");
    return 1;
  }
  printf("layout_c: ncclConfig_t %zu bytes, ncclUniqueId %zu bytes, initializer ok\n", sizeof c, sizeof(ncclUniqueId));
  return 0;
}
