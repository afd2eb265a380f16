#include "native_stack.h"

#include <dlfcn.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <link.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "core/thread_block.h"
#include "stack_memo.h"

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

namespace {

// Whether pc lies in the object that holds this code (the recorder, a test): a frame compiled with this build, whose
// frames keep their CFA from rsp or from rbp + 16 (-fomit-frame-pointer or not), never at another offset of rbp.
bool in_own_object(uintptr_t pc) {
  Dl_info own{}, of_pc{};
  return dladdr(reinterpret_cast<const void*>(&capture_native_stack_signal_safe), &own) != 0 &&
         dladdr(reinterpret_cast<const void*>(pc), &of_pc) != 0 && own.dli_fbase == of_pc.dli_fbase;
}

// The checks a learned walk is repeated under (stack_memo.h): a word and the value it held during the walk.
struct WalkChecks {
  stack_memo::Entry& e;
  size_t count = 0;
  bool add(uintptr_t address, uintptr_t value) {
    if (count == stack_memo::kMaxChecks) return false;
    e.checks[count++] = {address, value};
    return true;
  }
};

// A frame whose rbp points into it (sp <= rbp < cfa): its CFA may come from rbp (a frame pointer's at CFA - 16,
// libffi's at CFA - 32) or from the word below it (GCC's realigned frames keep the CFA at rbp - 8), so both are part
// of the walk. Only a slot outside the capturing function's frame is checked, or its frame pointer's: another save of
// its own may not have happened yet when a check runs. An rbp that can only have come from the capturing function
// (its register or a save of its own) makes the walk uncheckable, unless the frame is one of this build's own (the
// capture's caller) and its CFA is none rbp gives: then rbp is a pointer the caller holds to a local, and the CFA
// came from rsp. False when the walk cannot be checked.
inline bool check_frame_pointer(WalkChecks& checks, uintptr_t own_rbp_slot, uintptr_t ip, uintptr_t sp, uintptr_t rbp,
                                const unw_save_loc_t& rbp_from, uintptr_t cfa) {
  bool outside = rbp_from.type == UNW_SLT_MEMORY &&
                 (rbp_from.u.addr >= checks.e.cfa || rbp_from.u.addr == own_rbp_slot);
  if (!outside) {
    const uintptr_t below = rbp - sizeof(uintptr_t);
    bool cfa_from_rbp = cfa == rbp + 2 * sizeof(uintptr_t) || cfa == rbp + 4 * sizeof(uintptr_t) || below < sp ||
                        *reinterpret_cast<const uintptr_t*>(below) == cfa;
    return !cfa_from_rbp && in_own_object(ip);
  }
  if (!checks.add(rbp_from.u.addr, rbp)) return false;
  if (cfa == rbp + 2 * sizeof(uintptr_t)) return true;
  uintptr_t below = rbp - sizeof(uintptr_t);
  return below >= sp && checks.add(below, *reinterpret_cast<const uintptr_t*>(below));
}

// The walk libunwind's cursor makes from the capturing function, with where each value it depended on came from
// (stack_memo.h): the frames from its caller outwards into e, and the checks that make it repeatable. False when the
// walk cannot be checked.
__attribute__((always_inline)) inline bool learn_walk(stack_memo::Entry& e, size_t request) {
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return false;
  // The capturing function keeps a frame pointer (a build with -fno-omit-frame-pointer): then its caller's rbp was
  // pushed at CFA - 16 by its first instruction, before any check can run.
  unw_word_t own_rbp = 0;
  if (unw_get_reg(&cursor, UNW_X86_64_RBP, &own_rbp) != 0) return false;
  const uintptr_t own_rbp_slot = own_rbp + 2 * sizeof(uintptr_t) == e.cfa ? e.cfa - 2 * sizeof(uintptr_t) : 0;
  if (unw_step(&cursor) <= 0) return false;  // to the caller: frames[0]
  size_t count = 0;
  WalkChecks checks{e};
  unw_word_t ip = 0, sp = 0;
  if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || unw_get_reg(&cursor, UNW_REG_SP, &sp) != 0) return false;
  // The caller's return address into it, read from the capturing function's CFA - 8.
  if (sp != e.cfa || !checks.add(e.cfa - sizeof(uintptr_t), ip)) return false;
  while (count < request && ip != 0) {
    if (unw_is_signal_frame(&cursor) > 0) return false;
    e.frames[count++] = ip;
    unw_word_t rbp = 0;
    unw_save_loc_t rbp_from{};
    if (unw_get_reg(&cursor, UNW_REG_SP, &sp) != 0 || unw_get_reg(&cursor, UNW_X86_64_RBP, &rbp) != 0 ||
        unw_get_save_loc(&cursor, UNW_X86_64_RBP, &rbp_from) != 0)
      return false;
    // Where the walk ends is decided by the frame's unwind info alone; without any, libunwind guesses from rbp.
    unw_proc_info_t info{};
    bool described = unw_get_proc_info(&cursor, &info) == 0;
    int stepped = unw_step(&cursor);
    if (stepped < 0 || (stepped == 0 && !described)) return false;
    if (stepped == 0) break;
    unw_word_t cfa = 0, next_ip = 0;
    unw_save_loc_t ip_from{};
    if (unw_get_reg(&cursor, UNW_REG_SP, &cfa) != 0 || unw_get_reg(&cursor, UNW_REG_IP, &next_ip) != 0 ||
        unw_get_save_loc(&cursor, UNW_REG_IP, &ip_from) != 0)
      return false;
    if (rbp >= sp && rbp < cfa && !check_frame_pointer(checks, own_rbp_slot, ip, sp, rbp, rbp_from, cfa)) return false;
    // The return address's slot, even when it holds 0 (the end of the stack).
    if (ip_from.type != UNW_SLT_MEMORY || !checks.add(ip_from.u.addr, next_ip)) return false;
    ip = next_ip;
  }
  e.count = count;
  e.check_count = checks.count;
  return true;
}

bool same_frames(const stack_memo::Entry& e, const uintptr_t* walked, size_t count) {
  return e.count == count && std::equal(walked, walked + count, e.frames);
}

// After an unwind: frames seen before from the same place are learned (rationed, see stack_memo.h), others kept in
// place of the oldest. Inline: the learning walk must start in the capturing function's own frame.
__attribute__((always_inline)) inline void remember(stack_memo::ThreadMemo& memo, uintptr_t cfa, size_t request,
                                                    size_t skip, const MachineryRanges* machinery, size_t cut,
                                                    const uintptr_t* walked, size_t count) {
  if (memo.since_learning < stack_memo::kLearnEvery) ++memo.since_learning;
  for (stack_memo::Entry& e : memo.entries) {
    if (!e.same_place(cfa, request, skip, machinery) || !same_frames(e, walked, count)) continue;
    // Learned, yet its checks failed on the very same frames: a value the checks hold to changed without changing
    // the walk. Learned again a few times, then left to libunwind.
    if (e.unlearnable || memo.since_learning < stack_memo::kLearnEvery) return;
    if (e.learned && ++e.relearned > stack_memo::kMaxRelearning) {
      e.learned = false;
      e.unlearnable = true;
      return;
    }
    memo.since_learning = 0;
    memo.walking = true;
    bool ok = learn_walk(e, request) && same_frames(e, walked, count);
    memo.walking = false;
    e.learned = ok;
    if (!ok) {
      e.unlearnable = true;  // the cursor disagreed with unw_backtrace, or the walk cannot be checked
      e.count = count;
      std::copy(walked, walked + count, e.frames);
    }
    return;
  }
  stack_memo::Entry& e = memo.entries[memo.next_victim++ % stack_memo::kEntries];
  e.cfa = cfa;
  e.request = request;
  e.skip = skip;
  e.machinery = machinery;
  e.cut = cut;
  e.count = count;
  e.learned = e.unlearnable = false;
  e.relearned = 0;
  e.check_count = 0;
  std::copy(walked, walked + count, e.frames);
}

size_t copy_out(uintptr_t* frames, const uintptr_t* walked, size_t count, size_t max_frames, size_t skip) {
  size_t n = count > skip ? std::min(count - skip, max_frames) : 0;
  std::memcpy(frames, walked + skip, n * sizeof(uintptr_t));
  return n;
}

}  // namespace

// Noinline, and never a tail call: its CFA (where the memo's checks start) is the same for the check and the walk.
__attribute__((noinline)) size_t capture_native_stack(uintptr_t* frames, size_t max_frames, size_t skip,
                                                      const MachineryRanges* machinery, size_t* cut) {
  (void)cache_per_thread;
  size_t cut_here = 0;
  if (cut == nullptr) cut = &cut_here;
#if defined(__SANITIZE_THREAD__)
  // unw_backtrace keeps a per-thread trace cache that frees itself in a thread-exit destructor which runs after
  // ThreadSanitizer has torn the exiting thread down (a crash in __tsan::MutexPreLock under libunwind's
  // trace_cache_free). Under ThreadSanitizer the stack is walked frame by frame instead: the same frames, slower.
  size_t walked_here = walk_from_caller(frames, max_frames, skip);
  *cut = machinery != nullptr ? machinery->leading(frames, walked_here) : 0;
  return walked_here;
#endif
  const size_t request = std::min(stack_memo::kMaxFrames, max_frames + skip);
  const auto cfa = reinterpret_cast<uintptr_t>(__builtin_dwarf_cfa());
  stack_memo::ThreadMemo* memo = stack_memo::this_thread();
  if (memo != nullptr && !memo->walking) {
    if (const stack_memo::Entry* e = stack_memo::find(*memo, cfa, request, skip, machinery)) {
      size_t n = copy_out(frames, e->frames, e->count, max_frames, skip);
      *cut = std::min(e->cut, n);
      ++memo->reused;
      return n;
    }
  }
  // unw_backtrace's first frame is this function's own.
  void* buffer[stack_memo::kMaxFrames + 1];
  int got = unw_backtrace(buffer, static_cast<int>(request + 1));
  size_t count = got > 1 ? static_cast<size_t>(got - 1) : 0;
  const auto* walked = reinterpret_cast<const uintptr_t*>(buffer + 1);
  size_t n = copy_out(frames, walked, count, max_frames, skip);
  *cut = machinery != nullptr ? machinery->leading(frames, n) : 0;
  if (memo != nullptr && !memo->walking) remember(*memo, cfa, request, skip, machinery, *cut, walked, count);
  return n;
}

namespace stack_memo {

ThreadMemo* this_thread() { return ThreadBlock<ThreadMemo>::get(); }

uint64_t reused_on_this_thread() {
  ThreadMemo* memo = this_thread();
  return memo != nullptr ? memo->reused : 0;
}

}  // namespace stack_memo

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

size_t MachineryRanges::range_of(uintptr_t pc, size_t first_try) const {
  if (first_try < count_ && pc >= low_[first_try] && pc < high_[first_try]) return first_try;
  for (size_t i = 0; i < count_; ++i) {
    if (pc >= low_[i] && pc < high_[i]) return i;
  }
  return count_;
}

bool MachineryRanges::contains(uintptr_t pc) const { return range_of(pc, count_) < count_; }

size_t MachineryRanges::leading(const uintptr_t* frames, size_t count) const {
  // Frames come in runs from one library: the range that held the last one is tried first.
  size_t first = 0;
  for (size_t range = count_; first < count; ++first) {
    range = range_of(frames[first], range);
    if (range == count_) break;
  }
  return first;
}

}  // namespace firstassert
