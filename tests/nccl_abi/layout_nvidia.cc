// The ABI facts of NVIDIA's nccl.h (layout_fields.h); built only where nccl.h is installed.
#include <nccl.h>

#include "layout_fields.h"

LAYOUT_TABLE(layoutNvidia)
