#include "name_table.h"

#include <cstring>

namespace firstassert {

const char* const NameTable::kTableFull = "<kernel name table full>";

NameTable::NameTable(size_t capacity) : capacity_(1) {
  while (capacity_ < capacity) capacity_ <<= 1;
  entries_.reset(new Entry[capacity_]);
}

const char* NameTable::find_or_insert(const char* name) {
  size_t mask = capacity_ - 1;
  size_t start = first_slot(name);
  for (size_t i = 0; i < capacity_; ++i) {
    const Entry& e = entries_[(start + i) & mask];
    const char* key = e.key.load(std::memory_order_acquire);
    if (key == nullptr) break;  // not interned yet
    if (key == name) {
      const char* copy = e.copy.load(std::memory_order_acquire);
      if (copy != nullptr && std::strcmp(copy, name) == 0) return copy;
    }
  }
  return insert(name);
}

const char* NameTable::insert(const char* name) {
  std::lock_guard lock(insert_mutex_);
  size_t mask = capacity_ - 1;
  size_t start = first_slot(name);
  bool full = used_.load(std::memory_order_relaxed) + 1 >= capacity_;  // one slot stays free: probes always end
  for (size_t i = 0; i < capacity_; ++i) {
    Entry& e = entries_[(start + i) & mask];
    const char* key = e.key.load(std::memory_order_relaxed);
    if (key == name) {
      const char* copy = e.copy.load(std::memory_order_relaxed);
      // The driver reused this pointer for another name: replace the copy (the old one stays valid for readers).
      if (copy != nullptr && std::strcmp(copy, name) == 0) return copy;
      const char* fresh = strdup(name);
      if (fresh == nullptr) return kTableFull;
      e.copy.store(fresh, std::memory_order_release);
      return fresh;
    }
    if (key == nullptr) {
      if (full) return kTableFull;
      const char* fresh = strdup(name);
      if (fresh == nullptr) return kTableFull;
      e.copy.store(fresh, std::memory_order_release);
      e.key.store(name, std::memory_order_release);
      used_.fetch_add(1, std::memory_order_relaxed);
      return fresh;
    }
  }
  return kTableFull;
}

}  // namespace firstassert
