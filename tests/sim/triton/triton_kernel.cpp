// TritonKernel over a TTGIR module: parse (ir_text.cpp), choose each op's evaluation (interpreter.cpp), then run
// the grid on demand.
#include "triton_kernel.h"

#include "interpreter.h"
#include "ir_text.h"

namespace simtriton {

namespace {

class InterpretedKernel final : public TritonKernel {
 public:
  explicit InterpretedKernel(std::unique_ptr<Module> module) : module_(std::move(module)) {}

  const std::string& name() const override { return module_->func.name; }

  std::vector<size_t> parameter_sizes() const override {
    std::vector<size_t> sizes;
    for (int slot : module_->func.params) sizes.push_back(byte_size(module_->func.slot_types[slot]->elem.kind));
    return sizes;
  }

  unsigned threads_per_block() const override { return module_->num_warps * module_->threads_per_warp; }

  bool run(void* const* args, dim3 grid, const DeviceHooks& hooks, std::string* error) const override {
    std::string why;
    if (run_grid(*module_, args, grid, hooks, &why) == Outcome::Error) {
      if (error != nullptr) *error = module_->func.name + ": " + why;
      return false;
    }
    return true;
  }

 private:
  std::unique_ptr<Module> module_;
};

}  // namespace

std::unique_ptr<TritonKernel> TritonKernel::parse(std::string_view ttgir, std::string* error) {
  std::string why;
  auto module = std::make_unique<Module>();
  if (!parse_module(ttgir, module.get(), &why) || !prepare_module(module.get(), &why)) {
    if (error != nullptr) *error = why;
    return nullptr;
  }
  return std::make_unique<InterpretedKernel>(std::move(module));
}

}  // namespace simtriton
