#include "forced_sync.h"

#include <cuda.h>

#include <atomic>

#include "call_guards.h"
#include "core/log.h"
#include "device/driver_calls.h"

namespace firstassert::source {
namespace {

std::atomic<bool> said_capture_skip{false};

}  // namespace

void synchronize_after_launch(Tracker& tracker, const LaunchEvent& launch, uint64_t seq, uintptr_t stream_handle) {
  const DriverCalls* calls = driver_calls();
  if (calls == nullptr || calls->stream_synchronize == nullptr) return;
  CUresult r;
  {
    OurCall guard;
    r = calls->stream_synchronize(reinterpret_cast<CUstream>(stream_handle));
  }
  ApiCall sync;
  sync.domain = ApiDomain::driver;
  sync.api = "cuStreamSynchronize (forced by firstassert after the launch)";
  sync.code = r;
  sync.kind = CallKind::sync_stream;
  sync.stream = launch.stream;
  sync.per_thread_default_stream = launch.per_thread_default_stream;
  sync.context = launch.context;
  sync.launches_at_entry = seq + 1;
  tracker.record_call(sync);
}

void no_sync_while_capturing() {
  if (!said_capture_skip.exchange(true))
    info("FIRSTASSERT_SYNC: no forced synchronization while a stream is capturing a CUDA graph");
}

}  // namespace firstassert::source
