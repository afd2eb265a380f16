// FIRSTASSERT_SYNC's forced synchronization: the launch's stream synchronized right after the launch returned, the
// sync's result recorded as a call of its own, so that the launch that faulted is the one just made. Whether a launch
// is synchronized is SyncPolicy's choice (core/sync_policy.h), asked by the observer after every launch.
#pragma once

#include <cstdint>

#include "core/launch_record.h"
#include "core/tracker.h"

namespace firstassert::source {

// Synchronizes stream_handle (the launch's stream as the driver names it) and records the result, as a stream sync
// that began when launch seq and all before it were made.
void synchronize_after_launch(Tracker& tracker, const LaunchEvent& launch, uint64_t seq, uintptr_t stream_handle);

// A launch into a capturing stream is not synchronized (nothing runs, and a sync would break the capture): says so
// once, as information, not a warning: a healthy job that captures graphs under FIRSTASSERT_SYNC=all prints nothing
// of ours.
void no_sync_while_capturing();

}  // namespace firstassert::source
