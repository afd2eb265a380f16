// Runtime entry points for streams beyond creation and synchronization: priorities, callbacks, capture queries and
// the thread's capture mode, event records with flags, and user objects (what graphs keep alive).
#include <atomic>

#include "runtime_call.h"

using namespace simcuda::runtime;

namespace {

thread_local cudaStreamCaptureMode capture_mode = cudaStreamCaptureModeGlobal;

struct StreamCallback {
  cudaStream_t stream;
  cudaStreamCallback_t callback;
  void* user_data;
};

// Runs when the stream reaches the callback; work on a stream runs only while the device is healthy, so the status
// handed over is success.
void run_stream_callback(void* data) {
  auto* call = static_cast<StreamCallback*>(data);
  call->callback(call->stream, cudaSuccess, call->user_data);
  delete call;
}

struct UserObject {
  void* pointer;
  cudaHostFn_t destroy;
  std::atomic<unsigned> references;
};

}  // namespace

extern "C" {

cudaError_t CUDARTAPI cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  return TRACED(cudaDeviceGetStreamPriorityRange, v5050, leastPriority, greatestPriority) {
    return via_driver([&] { return driver().legacy.ctx_get_stream_priority_range(leastPriority, greatestPriority); });
  }));
}

cudaError_t CUDARTAPI cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags, int priority) {
  return TRACED(cudaStreamCreateWithPriority, v5050, pStream, flags, priority) {
    if (pStream == nullptr) return cudaErrorInvalidValue;
    return via_driver([&] { return driver().legacy.stream_create_with_priority(pStream, flags, priority); });
  }));
}

cudaError_t CUDARTAPI cudaStreamGetPriority(cudaStream_t hStream, int* priority) {
  return TRACED(cudaStreamGetPriority, v5050, hStream, priority) {
    return via_driver([&] { return driver().legacy.stream_get_priority(hStream, priority); });
  }));
}

cudaError_t CUDARTAPI cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* userData,
                                            unsigned int flags) {
  return TRACED(cudaStreamAddCallback, v5000, stream, callback, userData, flags) {
    if (callback == nullptr || flags != 0) return cudaErrorInvalidValue;
    auto* call = new StreamCallback{stream, callback, userData};
    cudaError_t e = via_driver([&] { return driver().legacy.launch_host_func(stream, run_stream_callback, call); });
    if (e != cudaSuccess) delete call;
    return e;
  }));
}

#if CUDART_VERSION >= 13000
cudaError_t CUDARTAPI cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus* captureStatus_out,
                                               unsigned long long* id_out, cudaGraph_t* graph_out,
                                               const cudaGraphNode_t** dependencies_out,
                                               const cudaGraphEdgeData** edgeData_out,
                                               size_t* numDependencies_out) {
  return TRACED(cudaStreamGetCaptureInfo, v12030, stream, captureStatus_out, id_out, graph_out, dependencies_out,
                edgeData_out, numDependencies_out) {
    return via_driver([&] {
      return driver().legacy.stream_get_capture_info(
          stream, reinterpret_cast<CUstreamCaptureStatus*>(captureStatus_out), reinterpret_cast<cuuint64_t*>(id_out),
          graph_out, dependencies_out,
          reinterpret_cast<const CUgraphEdgeData**>(edgeData_out), numDependencies_out);
    });
  }));
}
#else
// What CUDA 12's headers call cudaStreamGetCaptureInfo (PyTorch's CUDA 12 builds import it): no edge data.
cudaError_t CUDARTAPI cudaStreamGetCaptureInfo_v2(cudaStream_t stream,
                                                  enum cudaStreamCaptureStatus* captureStatus_out,
                                                  unsigned long long* id_out, cudaGraph_t* graph_out,
                                                  const cudaGraphNode_t** dependencies_out,
                                                  size_t* numDependencies_out) {
  return TRACED(cudaStreamGetCaptureInfo_v2, v11030, stream, captureStatus_out, id_out, graph_out, dependencies_out,
                numDependencies_out) {
    return via_driver([&] {
      return driver().legacy.stream_get_capture_info(
          stream, reinterpret_cast<CUstreamCaptureStatus*>(captureStatus_out), reinterpret_cast<cuuint64_t*>(id_out),
          graph_out, dependencies_out, nullptr, numDependencies_out);
    });
  }));
}
#endif

// The thread's capture mode is kept and exchanged; the simulator does not refuse calls by it during a capture.
cudaError_t CUDARTAPI cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode* mode) {
  return TRACED(cudaThreadExchangeStreamCaptureMode, v10010, mode) {
    if (mode == nullptr) return cudaErrorInvalidValue;
    cudaStreamCaptureMode previous = capture_mode;
    capture_mode = *mode;
    *mode = previous;
    return cudaSuccess;
  }));
}

cudaError_t CUDARTAPI cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
  return TRACED(cudaEventRecordWithFlags, v11010, event, stream, flags) {
    if ((flags & ~cudaEventRecordExternal) != 0) return cudaErrorInvalidValue;
    return via_driver([&] { return driver().legacy.event_record(event, stream); });
  }));
}

cudaError_t CUDARTAPI cudaUserObjectCreate(cudaUserObject_t* object_out, void* ptr, cudaHostFn_t destroy,
                                           unsigned int initialRefcount, unsigned int flags) {
  return TRACED(cudaUserObjectCreate, v11030, object_out, ptr, destroy, initialRefcount, flags) {
    if (cudaError_t e = ready(); e != cudaSuccess) return e;
    if (object_out == nullptr || destroy == nullptr || initialRefcount == 0 ||
        flags != cudaUserObjectNoDestructorSync)
      return cudaErrorInvalidValue;
    *object_out = reinterpret_cast<cudaUserObject_t>(new UserObject{ptr, destroy, initialRefcount});
    return cudaSuccess;
  }));
}

// The destructor runs when the last reference goes, on the releasing thread (CUDA allows any thread of its own).
cudaError_t CUDARTAPI cudaUserObjectRelease(cudaUserObject_t object, unsigned int count) {
  return TRACED(cudaUserObjectRelease, v11030, object, count) {
    if (object == nullptr || count == 0) return cudaErrorInvalidValue;
    auto* user_object = reinterpret_cast<UserObject*>(object);
    if (user_object->references.fetch_sub(count) == count) {
      user_object->destroy(user_object->pointer);
      delete user_object;
    }
    return cudaSuccess;
  }));
}

// A graph's references are taken and never given back: graphs of the simulator do not release user objects when
// destroyed, so the object's destructor does not run (its memory stays, nothing is freed early).
cudaError_t CUDARTAPI cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count,
                                                unsigned int flags) {
  return TRACED(cudaGraphRetainUserObject, v11030, graph, object, count, flags) {
    if (graph == nullptr || object == nullptr || count == 0) return cudaErrorInvalidValue;
    if (flags & cudaGraphUserObjectMove) return cudaSuccess;  // the caller's references become the graph's
    reinterpret_cast<UserObject*>(object)->references.fetch_add(count);
    return cudaSuccess;
  }));
}

}  // extern "C"
