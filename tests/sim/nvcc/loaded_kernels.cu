// Kernels compiled by nvcc into a cubin (-cubin -arch=sm_90) that cubin_loading_test.cpp loads with cuModuleLoad,
// cuModuleLoadData and cuLibraryLoadData: the driver must find them by their symbols and size their parameters from
// the cubin's own tables. Their code is never run (the simulator cannot run SASS).
extern "C" __global__ void scale_rows(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}

extern "C" __global__ void mixed_parameters(char c, double d, const long* p, short s) {
  if (threadIdx.x == 0 && p != nullptr) ((long*)p)[0] = c + static_cast<long>(d) + s;
}
