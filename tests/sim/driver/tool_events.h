// The driver's side of the tool interface: the sink libcupti installs, correlation ids, resource events, and the
// private export table that libcudart and libcupti obtain through cuGetExportTable.
#pragma once

#include <cuda.h>
#include <cupti_callbacks.h>

#include "../common/private_table.h"

namespace simcuda {

const PrivateTable& private_table();
void emit_context_resource_event(CUpti_CallbackIdResource cbid, CUcontext context);
void emit_stream_resource_event(CUpti_CallbackIdResource cbid, CUstream stream);
// The synchronize domain: a stream or the context finished synchronizing (stream is nullptr for the context).
void emit_synchronize_event(CUpti_CallbackIdSync cbid, CUstream stream);

}  // namespace simcuda
