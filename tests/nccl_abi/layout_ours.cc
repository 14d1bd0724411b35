// The ABI facts of hetccl's header (layout_fields.h).
#include "hetccl/nccl_abi.h"
#include "layout_fields.h"

LAYOUT_TABLE(layoutOurs)
