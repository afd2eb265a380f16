// Where the modelled asserts are in the device code of each PyTorch wheel the simulator runs. The models' sites
// (AssertSite) are torch 2.15.0's; an older wheel's cubins print another __FILE__ prefix (where it was built) and,
// where its sources differ, other lines. Read from each wheel's cubins (sm_90) with cubin_facts.py. The wheel running
// is the one whose libtorch_cuda.so the process has loaded (its torch/version.py), as a real GPU runs the device code
// of the wheel that launched it.
#pragma once

#include <string>
#include <string_view>

#include "aten_device.h"

namespace simaten {

struct PrintedSite {
  std::string file;
  unsigned line;
  const char* condition;
};

// The site as the wheel of torch_version ("2.8.0+cu128") prints it; torch 2.15.0's for a version not listed.
PrintedSite printed_site(const AssertSite& site, std::string_view torch_version);

// The site as the running wheel prints it.
PrintedSite printed_site(const AssertSite& site);

// torch.__version__ of the loaded libtorch_cuda.so's package; "" when none is loaded.
const std::string& running_torch_version();

}  // namespace simaten
