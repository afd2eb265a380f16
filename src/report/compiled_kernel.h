// What a launch from a torch.compile graph was made of. Inductor writes each compiled graph as a Python module
// (its wrapper: /tmp/torchinductor_<user>/xx/cXX.py, or under TORCHINDUCTOR_CACHE_DIR) whose call() launches each
// Triton kernel as `NAME.run(...)` under a comment naming the FX nodes and ATen ops fused into it, and which defines
// NAME under a `# kernel path:` comment naming the kernel's own file. Those files stay on disk after the job, so the
// report reads them when it is written; nothing here runs on the launch path.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/launch_record.h"

namespace firstassert {

// Where in the model a fused FX node was written: the innermost frame of the user's code in the node's stack trace,
// which Dynamo records and firstassert's Python package keeps beside the wrapper (python/firstassert/
// compiled_nodes.py) as WRAPPER.firstassert-nodes.json.
struct ModelLine {
  std::string node;
  std::string file;
  int line = 0;
  std::string function;
  std::string code;         // the line's text as Dynamo recorded it
  bool file_agrees = true;  // the file holds that text on that line today (false: it was edited since the compile)
};

struct CompiledLaunch {
  std::string wrapper_file;  // the generated module whose call() launched the kernel
  int wrapper_line = 0;      // the line of the launch (`NAME.run(...)`)
  std::string kernel;        // NAME: the Triton kernel's name, as the device knows it
  std::string kernel_file;   // where the kernel's Triton code is (where its tl.device_assert lines are)
  std::vector<std::string> source_nodes;  // the FX nodes fused into the kernel ("embedding", "sum_1")
  std::vector<std::string> aten_ops;      // and the ATen ops they were ("aten.embedding", "aten.sum")
  // The source nodes' lines in the model, one per distinct line in the nodes' order; empty when no stack traces
  // were kept beside the wrapper (model_lines_missing says why).
  std::vector<ModelLine> model_lines;
  std::string model_lines_missing;
};

// The model's line in one FX node's stack trace ("  File \"m.py\", line 7, in forward\n    code\n", outermost first):
// its innermost frame in the user's code; nullopt when none is.
std::optional<ModelLine> model_line_of_trace(std::string_view trace);

// What to do for the bad value: the values modes (python/firstassert/values) check eager ops, never the inside of a
// compiled graph, and TORCH_COMPILE_DISABLE=1 (torch/_dynamo/config.py) runs the same model eagerly.
inline constexpr const char* kCompiledValuesAdvice =
    "the values modes do not reach inside torch.compile graphs: rerun with TORCH_COMPILE_DISABLE=1 and "
    "firstassert run --values=check, and the eager op names the bad value";

// True when the first line of text is Inductor's mark of a generated module ("# AOT ID: ...").
bool is_inductor_module_text(std::string_view text);
// What the wrapper's text says of the launch on its line `line` (1-based); nullopt when that line launches no kernel.
std::optional<CompiledLaunch> compiled_launch_in(std::string_view wrapper_text, int line);
// The innermost frame of r's Python stack in an Inductor module, read from disk; nullopt when there is none.
std::optional<CompiledLaunch> compiled_launch_of(const LaunchRecord& r);

}  // namespace firstassert
