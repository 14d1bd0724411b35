// Which sanitizer this test binary is built with, for tests that scale their repetitions to it. A test
// that repeats the same work to widen a race window or to cover more layouts may do less of it under
// ThreadSanitizer, which runs that work 5-15x slower and reports a race from a single interleaving that
// shows it; what the repetitions add (more windows hit, every layout's arithmetic) the normal and ASan
// builds keep. Each use says what it trims and why.
#pragma once

namespace hetccl::test {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kUnderThreadSanitizer = true;
#else
inline constexpr bool kUnderThreadSanitizer = false;
#endif
#else
inline constexpr bool kUnderThreadSanitizer = false;
#endif

// ASan: g++ defines __SANITIZE_ADDRESS__, clang (before 17) only answers __has_feature.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kUnderAddressSanitizer = true;
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif

}  // namespace hetccl::test
