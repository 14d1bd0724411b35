/* Freestanding <stddef.h> for the hiprtc text of libhetccl-hip.so's kernels (see stdint.h here). */
#pragma once
typedef __SIZE_TYPE__ hetccl_size_t;
typedef __PTRDIFF_TYPE__ hetccl_ptrdiff_t;
#define size_t hetccl_size_t
#define ptrdiff_t hetccl_ptrdiff_t
#ifndef NULL
#define NULL nullptr
#endif
