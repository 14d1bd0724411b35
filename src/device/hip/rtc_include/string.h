/* Freestanding <string.h> for the hiprtc text of libhetccl-hip.so's kernels: the kernels copy with
   __builtin_memcpy; nothing is declared here. */
#pragma once
