// Streams as the device sees them. Handle 0 is the legacy default stream, or the calling thread's own stream for the
// per-thread (_ptsz) entry points; CU_STREAM_LEGACY is the legacy stream too; CU_STREAM_PER_THREAD names a
// different stream on each thread. Each context (device) has its own default streams under those same handles
// (CUDA Runtime API, "Stream synchronization behavior"), while a created stream's handle is its own everywhere. The
// key folds those into one number per real stream: a default stream's key holds its device's ordinal.
#pragma once

#include <cstdint>

namespace firstassert {

inline constexpr uintptr_t kLegacyStreamHandle = 0x1;     // cudaStreamLegacy / CU_STREAM_LEGACY
inline constexpr uintptr_t kPerThreadStreamHandle = 0x2;  // cudaStreamPerThread / CU_STREAM_PER_THREAD

namespace detail {
// A default stream's key, low 32 bits: kind (0 legacy, kPerThreadStreamHandle) | ordinal << 4, below 0x1000, where
// no created stream's handle (a driver object's address) lies. Device 0 (and a device not known, -1) adds nothing.
inline constexpr uint64_t kDefaultKeyLimit = 0x1000;
inline uint64_t device_bits(int32_t device) {
  return device > 0 ? (static_cast<uint64_t>(device) & 0xff) << 4 : 0;
}
}  // namespace detail

inline uint64_t stream_key(uintptr_t stream, bool per_thread_default_stream, int32_t thread, int32_t device) {
  if (stream == 0 && per_thread_default_stream) stream = kPerThreadStreamHandle;
  if (stream == kLegacyStreamHandle) stream = 0;
  if (stream == kPerThreadStreamHandle)
    return kPerThreadStreamHandle | detail::device_bits(device) |
           (static_cast<uint64_t>(static_cast<uint32_t>(thread)) << 32);
  if (stream == 0) return detail::device_bits(device);
  return stream;
}

// Whether the key names a default stream (the legacy one, or a thread's own).
inline bool is_default_stream_key(uint64_t key) {
  uint64_t low = key & 0xffffffffu;
  if (low >= detail::kDefaultKeyLimit) return false;
  return (low & 0xf) == 0 ? key == low : (low & 0xf) == kPerThreadStreamHandle;
}

// Whether the key names a thread's own default stream, which ends with its thread.
inline bool is_per_thread_stream_key(uint64_t key) {
  return is_default_stream_key(key) && (key & 0xf) == kPerThreadStreamHandle;
}

// The handle that names the same stream from the launching thread in a legacy-stream driver call.
inline uintptr_t explicit_stream_handle(uintptr_t stream, bool per_thread_default_stream) {
  if (stream == 0 && per_thread_default_stream) return kPerThreadStreamHandle;
  return stream;
}

}  // namespace firstassert
