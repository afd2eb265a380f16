// CUPTI 12's event and metric API, which PyTorch 2.4's Kineto imports (and CUPTI 13 removed). NVIDIA's CUPTI answers
// CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED to it on devices of compute capability 7.5 and later (CUPTI's
// documentation, "Event API" and "Metric API"), which the simulated H100-class device is: so do these, silently as it.
#include <cupti.h>

#if CUPTI_API_VERSION < 130000

#define SIMCUDA_LEGACY_PROFILER(name, params) \
  CUptiResult CUPTIAPI name params { return CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED; }

extern "C" {

SIMCUDA_LEGACY_PROFILER(cuptiSetEventCollectionMode, (CUcontext, CUpti_EventCollectionMode))
SIMCUDA_LEGACY_PROFILER(cuptiEventGetIdFromName, (CUdevice, const char*, CUpti_EventID*))
SIMCUDA_LEGACY_PROFILER(cuptiEventGetAttribute, (CUpti_EventID, CUpti_EventAttribute, size_t*, void*))
SIMCUDA_LEGACY_PROFILER(cuptiEventGroupGetAttribute, (CUpti_EventGroup, CUpti_EventGroupAttribute, size_t*, void*))
SIMCUDA_LEGACY_PROFILER(cuptiEventGroupSetAttribute, (CUpti_EventGroup, CUpti_EventGroupAttribute, size_t, void*))
SIMCUDA_LEGACY_PROFILER(cuptiEventGroupReadEvent, (CUpti_EventGroup, CUpti_ReadEventFlags, CUpti_EventID, size_t*,
                                                   uint64_t*))
SIMCUDA_LEGACY_PROFILER(cuptiEventGroupSetsCreate, (CUcontext, size_t, CUpti_EventID*, CUpti_EventGroupSets**))
SIMCUDA_LEGACY_PROFILER(cuptiEventGroupSetsDestroy, (CUpti_EventGroupSets*))
SIMCUDA_LEGACY_PROFILER(cuptiEventGroupSetEnable, (CUpti_EventGroupSet*))
SIMCUDA_LEGACY_PROFILER(cuptiEventGroupSetDisable, (CUpti_EventGroupSet*))
SIMCUDA_LEGACY_PROFILER(cuptiMetricGetIdFromName, (CUdevice, const char*, CUpti_MetricID*))
SIMCUDA_LEGACY_PROFILER(cuptiMetricGetAttribute, (CUpti_MetricID, CUpti_MetricAttribute, size_t*, void*))
SIMCUDA_LEGACY_PROFILER(cuptiMetricGetNumEvents, (CUpti_MetricID, uint32_t*))
SIMCUDA_LEGACY_PROFILER(cuptiMetricEnumEvents, (CUpti_MetricID, size_t*, CUpti_EventID*))
SIMCUDA_LEGACY_PROFILER(cuptiMetricGetValue, (CUdevice, CUpti_MetricID, size_t, CUpti_EventID*, size_t, uint64_t*,
                                              uint64_t, CUpti_MetricValue*))

}  // extern "C"
#endif
