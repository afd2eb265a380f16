// Context-independent loading (cuLibraryLoadData, cuLibraryLoadFromFile; NVIDIA's Driver API, Library Management,
// CUDA 12.0+): a library is loaded as a module is (module_loader.h), a CUkernel is the library's function and
// cuKernelGetFunction gives it for the current context. The simulator has one context, so a library is its own
// module (cuLibraryGetModule) and a CUkernel its own CUfunction, which cuLaunchKernel accepts as NVIDIA documents.
// The JIT and library options steer compiling PTX and lazy loading, neither of which the simulator does.
#include <cuda.h>

#include "api_support.h"  // also CUDA's generated_cuda_meta.h, which has no include guard
#include "module_loader.h"

namespace {

using namespace simcuda::driver_api;

simcuda::Module* module_of(CUlibrary library) { return reinterpret_cast<simcuda::Module*>(library); }

}  // namespace

extern "C" {

CUresult CUDAAPI cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jitOptions,
                                   void** jitOptionsValues, unsigned int numJitOptions,
                                   CUlibraryOption* libraryOptions, void** libraryOptionValues,
                                   unsigned int numLibraryOptions) {
  return TRACED(cuLibraryLoadData, library, code, jitOptions, jitOptionsValues, numJitOptions, libraryOptions,
                libraryOptionValues, numLibraryOptions) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (library == nullptr || code == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *library = reinterpret_cast<CUlibrary>(simcuda::load_module(code, {}));
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary* library, const char* fileName, CUjit_option* jitOptions,
                                       void** jitOptionsValues, unsigned int numJitOptions,
                                       CUlibraryOption* libraryOptions, void** libraryOptionValues,
                                       unsigned int numLibraryOptions) {
  return TRACED(cuLibraryLoadFromFile, library, fileName, jitOptions, jitOptionsValues, numJitOptions,
                libraryOptions, libraryOptionValues, numLibraryOptions) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (library == nullptr || fileName == nullptr) return CUDA_ERROR_INVALID_VALUE;
    simcuda::Module* loaded = nullptr;
    if (CUresult r = simcuda::load_module_file(fileName, &loaded); r != CUDA_SUCCESS) return r;
    *library = reinterpret_cast<CUlibrary>(loaded);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuLibraryUnload(CUlibrary library) {
  return TRACED(cuLibraryUnload, library) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (library == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    delete module_of(library);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name) {
  return TRACED(cuLibraryGetKernel, pKernel, library, name) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (pKernel == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (library == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    simcuda::Kernel* kernel = simcuda::module_function(*module_of(library), name);
    if (kernel == nullptr) return CUDA_ERROR_NOT_FOUND;
    *pKernel = reinterpret_cast<CUkernel>(kernel);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuLibraryGetKernelCount(unsigned int* count, CUlibrary lib) {
  return TRACED(cuLibraryGetKernelCount, count, lib) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (lib == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    *count = static_cast<unsigned>(module_of(lib)->kernels.size());
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuLibraryEnumerateKernels(CUkernel* kernels, unsigned int numKernels, CUlibrary lib) {
  return TRACED(cuLibraryEnumerateKernels, kernels, numKernels, lib) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (kernels == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (lib == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    const auto& all = module_of(lib)->kernels;
    if (numKernels < all.size()) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < all.size(); ++i) kernels[i] = reinterpret_cast<CUkernel>(all[i]);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuLibraryGetModule(CUmodule* pMod, CUlibrary library) {
  return TRACED(cuLibraryGetModule, pMod, library) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (pMod == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (library == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    *pMod = reinterpret_cast<CUmodule>(library);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel) {
  return TRACED(cuKernelGetFunction, pFunc, kernel) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (pFunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!simcuda::is_kernel(kernel)) return CUDA_ERROR_INVALID_HANDLE;
    *pFunc = reinterpret_cast<CUfunction>(kernel);
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
