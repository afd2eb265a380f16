#include "native_stack.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <link.h>

#include <cstring>
#include <string_view>

namespace firstassert {
namespace {

// Per-thread caching: repeated unwinds through the same code reuse their unwind info, without locks.
const bool cache_per_thread = [] {
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  return true;
}();

// Frame by frame from the calling function's frame (inlined, so that the first step leaves the caller's frame).
__attribute__((always_inline)) inline size_t walk_from_caller(uintptr_t* frames, size_t max_frames, size_t skip) {
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return 0;
  size_t count = 0, seen = 0;
  while (count < max_frames && unw_step(&cursor) > 0) {
    unw_word_t pc = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &pc) != 0 || pc == 0) break;
    if (seen++ < skip) continue;
    frames[count++] = static_cast<uintptr_t>(pc);
  }
  return count;
}

}  // namespace

size_t capture_native_stack(uintptr_t* frames, size_t max_frames, size_t skip) {
  (void)cache_per_thread;
#if defined(__SANITIZE_THREAD__)
  // unw_backtrace keeps a per-thread trace cache that frees itself in a thread-exit destructor which runs after
  // ThreadSanitizer has torn the exiting thread down (a crash in __tsan::MutexPreLock under libunwind's
  // trace_cache_free). Under ThreadSanitizer the stack is walked frame by frame instead: the same frames, slower.
  return walk_from_caller(frames, max_frames, skip);
#endif
  constexpr size_t kBuffer = 128;
  void* buffer[kBuffer];
  size_t want = std::min(kBuffer, max_frames + skip + 1);  // +1: this function's own frame
  int n = unw_backtrace(buffer, static_cast<int>(want));
  size_t count = 0;
  for (int i = static_cast<int>(skip) + 1; i < n && count < max_frames; ++i)
    frames[count++] = reinterpret_cast<uintptr_t>(buffer[i]);
  return count;
}

size_t capture_native_stack_signal_safe(uintptr_t* frames, size_t max_frames, size_t skip) {
  return walk_from_caller(frames, max_frames, skip);
}

void MachineryRanges::collect(const void* self) {
  struct Search {
    MachineryRanges* ranges;
    uintptr_t self;
  } search{this, reinterpret_cast<uintptr_t>(self)};
  count_ = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        std::string_view path(info->dlpi_name != nullptr ? info->dlpi_name : "");
        std::string_view file = path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
        bool machinery = file.starts_with("libcupti.so") || file.starts_with("libcudart.so") ||
                         file.starts_with("libcuda.so");
        bool holds_self = false;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          uintptr_t low = info->dlpi_addr + ph.p_vaddr, high = low + ph.p_memsz;
          if (ph.p_type == PT_LOAD && s->self >= low && s->self < high) holds_self = true;
        }
        if (!machinery && !holds_self) return 0;
        for (int i = 0; i < info->dlpi_phnum && s->ranges->count_ < kMaxRanges; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
          s->ranges->low_[s->ranges->count_] = info->dlpi_addr + ph.p_vaddr;
          s->ranges->high_[s->ranges->count_] = info->dlpi_addr + ph.p_vaddr + ph.p_memsz;
          ++s->ranges->count_;
        }
        return 0;
      },
      &search);
}

bool MachineryRanges::contains(uintptr_t pc) const {
  for (size_t i = 0; i < count_; ++i) {
    if (pc >= low_[i] && pc < high_[i]) return true;
  }
  return false;
}

size_t MachineryRanges::leading(const uintptr_t* frames, size_t count) const {
  size_t first = 0;
  while (first < count && contains(frames[first])) ++first;
  return first;
}

}  // namespace firstassert
