// Per-thread scratch memory for the launch path, too large for static TLS: a T allocated on the thread's first use
// (its warm-up) and freed when the thread exits. Header-only: each T gets its own thread-locals and thread key.
#pragma once

#include <pthread.h>

#include <cstdlib>
#include <new>
#include <type_traits>

#include "fast_tls.h"

namespace firstassert {

template <typename T>
class ThreadBlock {
  static_assert(std::is_trivially_destructible_v<T>, "freed without running a destructor");

 public:
  // The calling thread's T (default-initialized in zeroed memory), or nullptr when memory or a thread key is short,
  // and from then on for this thread (its captures do without).
  static T* get() {
    if (block_ != nullptr || failed_) return block_;
    return make();
  }
  // The calling thread's T if get() has made it, else nullptr: never allocates.
  static T* existing() { return block_; }

 private:
  static T* make() {
    pthread_once(&key_once_, [] { key_made_ = pthread_key_create(&key_, release) == 0; });  // before any initializer
    void* memory = std::calloc(1, sizeof(T));
    if (memory == nullptr || !key_made_ || pthread_setspecific(key_, memory) != 0) {
      std::free(memory);
      failed_ = true;
      return nullptr;
    }
    block_ = new (memory) T;
    return block_;
  }

  // At the thread's exit; a use later in its exit (another thread-local's destructor) gets nullptr.
  static void release(void* memory) {
    block_ = nullptr;
    failed_ = true;
    std::free(memory);
  }

  static inline constinit FIRSTASSERT_FAST_TLS thread_local T* block_ = nullptr;
  static inline constinit FIRSTASSERT_FAST_TLS thread_local bool failed_ = false;
  static inline pthread_key_t key_;
  static inline bool key_made_ = false;
  static inline pthread_once_t key_once_ = PTHREAD_ONCE_INIT;
};

}  // namespace firstassert
