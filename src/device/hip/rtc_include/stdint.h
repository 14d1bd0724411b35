/* Freestanding <stdint.h> for the hiprtc text of libhetccl-hip.so's kernels (kernels_rtc.hip): every name
   is a macro for a hetccl_-prefixed typedef, so the preprocessed text never redeclares what a hiprtc
   prelude declares (hiprtc before 7.0 defines int64_t etc., 7.0 does not). */
#pragma once
typedef __INT8_TYPE__ hetccl_int8_t;
typedef __UINT8_TYPE__ hetccl_uint8_t;
typedef __INT16_TYPE__ hetccl_int16_t;
typedef __UINT16_TYPE__ hetccl_uint16_t;
typedef __INT32_TYPE__ hetccl_int32_t;
typedef __UINT32_TYPE__ hetccl_uint32_t;
typedef __INT64_TYPE__ hetccl_int64_t;
typedef __UINT64_TYPE__ hetccl_uint64_t;
typedef __UINTPTR_TYPE__ hetccl_uintptr_t;
typedef __INTPTR_TYPE__ hetccl_intptr_t;
#define int8_t hetccl_int8_t
#define uint8_t hetccl_uint8_t
#define int16_t hetccl_int16_t
#define uint16_t hetccl_uint16_t
#define int32_t hetccl_int32_t
#define uint32_t hetccl_uint32_t
#define int64_t hetccl_int64_t
#define uint64_t hetccl_uint64_t
#define uintptr_t hetccl_uintptr_t
#define intptr_t hetccl_intptr_t
#define INT64_MAX __INT64_MAX__
#define UINT64_MAX __UINT64_MAX__
#define INT32_MAX __INT32_MAX__
