// Streams as the device sees them. Handle 0 is the legacy default stream, or the calling thread's own stream for the
// per-thread (_ptsz) entry points; CU_STREAM_LEGACY is the legacy stream too; CU_STREAM_PER_THREAD names a
// different stream on each thread. The key folds those into one number per real stream.
#pragma once

#include <cstdint>

namespace firstassert {

inline constexpr uintptr_t kLegacyStreamHandle = 0x1;     // cudaStreamLegacy / CU_STREAM_LEGACY
inline constexpr uintptr_t kPerThreadStreamHandle = 0x2;  // cudaStreamPerThread / CU_STREAM_PER_THREAD

inline uint64_t stream_key(uintptr_t stream, bool per_thread_default_stream, int32_t thread) {
  if (stream == 0 && per_thread_default_stream) stream = kPerThreadStreamHandle;
  if (stream == kLegacyStreamHandle) stream = 0;
  if (stream == kPerThreadStreamHandle)
    return kPerThreadStreamHandle | (static_cast<uint64_t>(static_cast<uint32_t>(thread)) << 32);
  return stream;
}

// Whether the key names a default stream (the legacy one, or a thread's own): each device (context) has its own under
// the same key, unlike a created stream, whose handle is its own everywhere.
inline bool is_default_stream_key(uint64_t key) {
  return key == 0 || (key & 0xffffffffu) == kPerThreadStreamHandle;
}

// The handle that names the same stream from the launching thread in a legacy-stream driver call.
inline uintptr_t explicit_stream_handle(uintptr_t stream, bool per_thread_default_stream) {
  if (stream == 0 && per_thread_default_stream) return kPerThreadStreamHandle;
  return stream;
}

}  // namespace firstassert
