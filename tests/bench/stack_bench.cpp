// What a launch pays for its host stack: native capture at several depths, from a call chain deep enough to fill
// them, against recording a launch without one; and the ring's memory. CPU time per capture; run with `meson test -C build --benchmark
// --suite bench` (or the binary itself for its options).
#include <benchmark/benchmark.h>

#include "core/tracker.h"
#include "stack/native_stack.h"

namespace {

using firstassert::capture_native_stack;

// A chain of `depth` real frames, then fn at the bottom.
template <typename Fn>
__attribute__((noinline)) size_t at_depth(int depth, Fn& fn) {
  if (depth <= 0) return fn();
  size_t r = at_depth(depth - 1, fn);
  benchmark::DoNotOptimize(r);
  return r;
}

void BM_CaptureNativeStack(benchmark::State& state) {
  const auto depth = static_cast<size_t>(state.range(0));
  uintptr_t frames[firstassert::kMaxStackFrames + 32];
  size_t captured = 0;
  auto capture = [&] {
    for (auto _ : state) {
      captured = capture_native_stack(frames, depth);
      benchmark::DoNotOptimize(frames);
    }
    return captured;
  };
  at_depth(80, capture);
  state.counters["frames"] = static_cast<double>(captured);
}
BENCHMARK(BM_CaptureNativeStack)->Arg(16)->Arg(32)->Arg(64);

const char* const kKernel =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_";

void BM_RecordLaunchWithoutStack(benchmark::State& state) {
  firstassert::Tracker tracker(4096);
  firstassert::LaunchEvent launch;
  launch.grid = {64, 1, 1};
  launch.block = {256, 1, 1};
  for (auto _ : state) {
    launch.kernel = kKernel;  // as the driver gives it: record_launch leaves the interned copy there
    benchmark::DoNotOptimize(tracker.record_launch(launch));
  }
}
BENCHMARK(BM_RecordLaunchWithoutStack);

void BM_RecordLaunchWithStack32(benchmark::State& state) {
  firstassert::Tracker tracker(4096);
  firstassert::LaunchEvent launch;
  uintptr_t frames[firstassert::kMaxStackFrames + 32];
  auto record = [&] {
    for (auto _ : state) {
      launch.kernel = kKernel;
      launch.native_stack = frames;
      launch.stack_depth = static_cast<uint8_t>(capture_native_stack(frames, 32));
      benchmark::DoNotOptimize(tracker.record_launch(launch));
    }
    return size_t{0};
  };
  at_depth(80, record);
}
BENCHMARK(BM_RecordLaunchWithStack32);

// The ring's memory at the default and a large FIRSTASSERT_RING, and what building it costs at activation.
void BM_RingMemory(benchmark::State& state) {
  const auto capacity = static_cast<size_t>(state.range(0));
  size_t bytes = 0;
  for (auto _ : state) {
    firstassert::Tracker tracker(capacity);
    bytes = tracker.ring().bytes();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["ring_bytes"] = static_cast<double>(bytes);
  state.counters["bytes_per_entry"] = static_cast<double>(bytes) / static_cast<double>(capacity);
}
BENCHMARK(BM_RingMemory)->Arg(4096)->Arg(65536);

}  // namespace

BENCHMARK_MAIN();
