// The driver's side of the tool interface: the sink libcupti installs, correlation ids, resource events, and the
// private export table that libcudart and libcupti obtain through cuGetExportTable.
#pragma once

#include <cuda.h>
#include <cupti_callbacks.h>

#include <cstdint>

#include "../common/private_table.h"

namespace simcuda {

struct Stream;
struct Work;

// What a piece of device work carries for CUPTI's activity records, filled in when it is queued while libcupti
// records device activity (ActivitySink): nothing is filled, and nothing is told, otherwise.
struct ActivityTag {
  bool wanted = false;
  uint8_t copy_kind = 0, src_kind = 0, dst_kind = 0;  // copies: CUpti_ActivityMemcpyKind and memory kinds
  uint32_t correlation_id = 0;
  uint32_t runtime_correlation_id = 0;
  uint32_t stream_id = 0;
  uint32_t device_id = 0;  // the ordinal of the stream's device
};

const PrivateTable& private_table();
void emit_context_resource_event(CUpti_CallbackIdResource cbid, CUcontext context);
void emit_stream_resource_event(CUpti_CallbackIdResource cbid, CUstream stream);
// The synchronize domain: a stream or the context finished synchronizing (stream is nullptr for the context).
void emit_synchronize_event(CUpti_CallbackIdSync cbid, CUstream stream);

// CUPTI activity. wanted: one relaxed load, true while libcupti records device activity. tag: at enqueue (under the
// device's lock; takes only leaf locks), fills work.activity for kernels, copies and fills. emit: on the worker thread
// once tagged work ran from start_ns to end_ns (the device's steady clock).
bool device_activity_wanted();
void tag_device_activity(Work& work, const Stream& stream);
void emit_device_activity(const Work& work, int64_t start_ns, int64_t end_ns);

}  // namespace simcuda
