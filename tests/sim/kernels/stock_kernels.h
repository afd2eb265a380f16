// libsimkernels.so: stock kernels for programs that run on the simulator, modelled on the PyTorch kernels whose
// device asserts users meet most. Each host stub has the kernel's mangled name, as nvcc's stubs do, so it is found
// by host stub (cudaLaunchKernel), by name (cuModuleGetFunction) or from Python via ctypes.
#ifndef SIMKERNELS_STOCK_KERNELS_H
#define SIMKERNELS_STOCK_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/* The host stub of a stock kernel by short name, or NULL:
 *   "nll_loss"        at::native::nll_loss_forward_reduce_cuda_kernel_2d<float, long>
 *                     (float* output, float* total_weight, const float* input, const long* target,
 *                      const float* weights, bool size_average, long nframe, long ndim, long n_classes,
 *                      long ignore_index); asserts `t >= 0 && t < n_classes` for a bad label
 *   "index_select"    at::native::indexSelectLargeIndex<float, long>
 *                     (float* dst, const float* src, const long* indices, long num_indices, long inner_size,
 *                      long srcSelectDimSize); asserts `srcIndex < srcSelectDimSize`
 *   "elementwise_add" at::native::elementwise_add_kernel<float>(float* out, const float* a, const float* b,
 *                      float alpha, long n): out = a + alpha * b
 *   "busy"            simkernels::busy_kernel(unsigned long long microseconds): keeps its stream busy
 *   "fault"           simkernels::fault_kernel(int cuda_error): a device fault such as 700 illegal address */
const void* simkernels_host_stub(const char* short_name);

#ifdef __cplusplus
}
#endif
#endif
