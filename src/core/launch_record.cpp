#include "launch_record.h"

namespace firstassert {

const char* launch_api_name(LaunchApi api) {
  switch (api) {
    case LaunchApi::cudaLaunchKernel: return "cudaLaunchKernel";
    case LaunchApi::cudaLaunchKernelExC: return "cudaLaunchKernelExC";
    case LaunchApi::cudaLaunchCooperativeKernel: return "cudaLaunchCooperativeKernel";
    case LaunchApi::cudaLaunchKernelNvcc: return "__cudaLaunchKernel";
    case LaunchApi::cudaGraphLaunch: return "cudaGraphLaunch";
    case LaunchApi::cuLaunchKernel: return "cuLaunchKernel";
    case LaunchApi::cuLaunchKernelEx: return "cuLaunchKernelEx";
    case LaunchApi::cuLaunchCooperativeKernel: return "cuLaunchCooperativeKernel";
    case LaunchApi::cuGraphLaunch: return "cuGraphLaunch";
  }
  return "unknown";
}

}  // namespace firstassert
