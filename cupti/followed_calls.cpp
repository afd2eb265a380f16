#include "followed_calls.h"

#include "source/api_table.h"

namespace firstassert::cupti {

const std::vector<CUpti_CallbackId>& unfollowed_runtime_calls() {
#define FIRSTASSERT_RUNTIME_CBID(name) CUPTI_RUNTIME_TRACE_CBID_##name,
  static const std::vector<CUpti_CallbackId> calls = {
      FIRSTASSERT_RUNTIME_CBID(cudaGetDevice_v3020) FIRSTASSERT_RUNTIME_CBID(cudaSetDevice_v3020)
      FIRSTASSERT_RUNTIME_CBID(cudaGetDeviceCount_v3020) FIRSTASSERT_RUNTIME_CBID(cudaGetDeviceFlags_v7000)
      FIRSTASSERT_RUNTIME_CBID(cudaGetDeviceProperties_v3020) FIRSTASSERT_RUNTIME_CBID(cudaGetDeviceProperties_v12000)
      FIRSTASSERT_RUNTIME_CBID(cudaDeviceGetAttribute_v5000) FIRSTASSERT_RUNTIME_CBID(cudaDeviceGetLimit_v3020)
      FIRSTASSERT_RUNTIME_CBID(cudaDeviceGetStreamPriorityRange_v5050)
      FIRSTASSERT_RUNTIME_CBID(cudaDeviceGetPCIBusId_v4010) FIRSTASSERT_RUNTIME_CBID(cudaDeviceCanAccessPeer_v4000)
      FIRSTASSERT_RUNTIME_CBID(cudaDeviceGetDefaultMemPool_v11020) FIRSTASSERT_RUNTIME_CBID(cudaChooseDevice_v3020)
      FIRSTASSERT_RUNTIME_CBID(cudaDriverGetVersion_v3020) FIRSTASSERT_RUNTIME_CBID(cudaRuntimeGetVersion_v3020)
      FIRSTASSERT_RUNTIME_CBID(cudaStreamIsCapturing_v10000) FIRSTASSERT_RUNTIME_CBID(cudaStreamIsCapturing_ptsz_v10000)
      FIRSTASSERT_RUNTIME_CBID(cudaStreamGetCaptureInfo_v10010)
      FIRSTASSERT_RUNTIME_CBID(cudaStreamGetCaptureInfo_ptsz_v10010)
      FIRSTASSERT_RUNTIME_CBID(cudaStreamGetCaptureInfo_v2_v11030)
      FIRSTASSERT_RUNTIME_CBID(cudaStreamGetCaptureInfo_v2_ptsz_v11030)
      FIRSTASSERT_RUNTIME_CBID(cudaStreamGetCaptureInfo_v12030)
      FIRSTASSERT_RUNTIME_CBID(cudaStreamGetCaptureInfo_ptsz_v12030)
      FIRSTASSERT_RUNTIME_CBID(cudaThreadExchangeStreamCaptureMode_v10010)
      FIRSTASSERT_RUNTIME_CBID(cudaStreamGetPriority_v5050) FIRSTASSERT_RUNTIME_CBID(cudaStreamGetPriority_ptsz_v7000)
      FIRSTASSERT_RUNTIME_CBID(cudaStreamGetFlags_v5050) FIRSTASSERT_RUNTIME_CBID(cudaStreamGetFlags_ptsz_v7000)
      FIRSTASSERT_RUNTIME_CBID(cudaStreamGetId_v12000) FIRSTASSERT_RUNTIME_CBID(cudaStreamGetId_ptsz_v12000)
      FIRSTASSERT_RUNTIME_CBID(cudaStreamGetDevice_v12080) FIRSTASSERT_RUNTIME_CBID(cudaStreamGetDevice_ptsz_v12080)
      FIRSTASSERT_RUNTIME_CBID(cudaPointerGetAttributes_v4000) FIRSTASSERT_RUNTIME_CBID(cudaFuncGetAttributes_v3020)
      FIRSTASSERT_RUNTIME_CBID(cudaFuncSetAttribute_v9000) FIRSTASSERT_RUNTIME_CBID(cudaFuncGetName_v12030)
      FIRSTASSERT_RUNTIME_CBID(cudaGetFuncBySymbol_v11000) FIRSTASSERT_RUNTIME_CBID(cudaGetKernel_v12000)
      FIRSTASSERT_RUNTIME_CBID(__cudaGetKernel_v13000) FIRSTASSERT_RUNTIME_CBID(cudaGetSymbolAddress_v3020)
      FIRSTASSERT_RUNTIME_CBID(cudaMemGetInfo_v3020)
      FIRSTASSERT_RUNTIME_CBID(cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6000)
      FIRSTASSERT_RUNTIME_CBID(cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6050)
      FIRSTASSERT_RUNTIME_CBID(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000)
      FIRSTASSERT_RUNTIME_CBID(cudaOccupancyAvailableDynamicSMemPerBlock_v10200)
      FIRSTASSERT_RUNTIME_CBID(cudaOccupancyMaxPotentialClusterSize_v11070)
      FIRSTASSERT_RUNTIME_CBID(cudaOccupancyMaxActiveClusters_v11070)
      FIRSTASSERT_RUNTIME_CBID(cudaGetDriverEntryPoint_v11030) FIRSTASSERT_RUNTIME_CBID(cudaGetDriverEntryPoint_ptsz_v11030)
      FIRSTASSERT_RUNTIME_CBID(cudaGetDriverEntryPointByVersion_v12050)
      FIRSTASSERT_RUNTIME_CBID(cudaGetDriverEntryPointByVersion_ptsz_v12050)
      FIRSTASSERT_RUNTIME_CBID(cudaGetErrorString_v3020) FIRSTASSERT_RUNTIME_CBID(cudaGetErrorName_v6050)
      FIRSTASSERT_RUNTIME_CBID(cudaCreateChannelDesc_v3020)};
#undef FIRSTASSERT_RUNTIME_CBID
  return calls;
}

std::vector<CUpti_CallbackId> followed_driver_calls() {
  std::vector<CUpti_CallbackId> calls;
  for (CUpti_CallbackId cbid = 0; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
    if (source::call_meaning(CUPTI_CB_DOMAIN_DRIVER_API, cbid) != source::kErrorOnly) calls.push_back(cbid);
  }
  for (CUpti_CallbackId cbid :
       {CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
        CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
        CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz, CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2, CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc,
        CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
        CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
        CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz, CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
        CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,
        CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2, CUPTI_DRIVER_TRACE_CBID_cuEventQuery,
        CUPTI_DRIVER_TRACE_CBID_cuStreamCreate, CUPTI_DRIVER_TRACE_CBID_cuStreamCreateWithPriority,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc, CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc_ptsz})
    calls.push_back(cbid);
  return calls;
}

}  // namespace firstassert::cupti
