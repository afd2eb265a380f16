// Kernel names as launches see them (pointers the driver owns), interned into copies that outlive the driver's
// modules. The first launch of a kernel copies its name under a lock (warm-up); every later launch finds the copy
// with a lock-free probe keyed by the driver's pointer, confirmed by comparing the whole name (the driver may reuse
// a buffer for another kernel, and generated names such as Triton's share long prefixes).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>

namespace firstassert {

class NameTable {
 public:
  explicit NameTable(size_t capacity = 16384);
  NameTable(const NameTable&) = delete;
  NameTable& operator=(const NameTable&) = delete;

  // A stable copy of name; nullptr for nullptr. When the table is full: a fixed placeholder. Inline for every launch
  // after a kernel's first, whose name sits in its first slot unless another name's pointer collided with it.
  const char* intern(const char* name) {
    if (name == nullptr) return nullptr;
    const Entry& e = entries_[first_slot(name)];
    if (e.key.load(std::memory_order_acquire) == name) {
      const char* copy = e.copy.load(std::memory_order_acquire);
      if (copy != nullptr && std::strcmp(copy, name) == 0) return copy;
    }
    return find_or_insert(name);
  }
  size_t size() const { return used_.load(std::memory_order_relaxed); }

  static const char* const kTableFull;

 private:
  struct Entry {
    std::atomic<const char*> key{nullptr};   // the driver's pointer
    std::atomic<const char*> copy{nullptr};  // ours, published after key
  };
  size_t first_slot(const char* name) const { return reinterpret_cast<uintptr_t>(name) & (capacity_ - 1); }
  const char* find_or_insert(const char* name);
  const char* insert(const char* name);

  size_t capacity_;  // a power of two
  std::unique_ptr<Entry[]> entries_;
  std::atomic<size_t> used_{0};
  std::mutex insert_mutex_;
};

}  // namespace firstassert
