// Reading Inductor's generated wrapper and the nodes' stack traces kept beside it (src/report/compiled_kernel.h), over
// text in the shape torch 2.15's Inductor writes.
#include "report/compiled_kernel.h"

#include <gtest/gtest.h>

#include <string>

namespace firstassert {
namespace {

// A wrapper as Inductor writes it: a kernel defined under its comments, then launched from call() under the comment
// naming its source nodes.
const std::string kWrapper =
    "# AOT ID: ['0_forward']\n"                                                                      // 1
    "from ctypes import c_void_p, c_long, c_int\n"                                                    // 2
    "# kernel path: /tmp/torchinductor_ada/ab/cabkernel.py\n"                                         // 3
    "# Topologically Sorted Source Nodes: [embedding, pooled], Original ATen: [aten.embedding, aten.mean]\n"  // 4
    "# Source node to ATen node mapping:\n"                                                           // 5
    "#   embedding => embedding\n"                                                                    // 6
    "triton_poi_fused_embedding_mean_0 = async_compile.triton('triton_poi_fused_embedding_mean_0', '''\n"  // 7
    "@triton.jit\n"                                                                                   // 8
    "''', device_str='cuda')\n"                                                                       // 9
    "class Runner:\n"                                                                                 // 10
    "    def call(self, args):\n"                                                                     // 11
    "        with torch.cuda._DeviceGuard(0):\n"                                                      // 12
    "            buf0 = empty_strided_cuda((8, 16), (16, 1), torch.float32)\n"                        // 13
    "            # Topologically Sorted Source Nodes: [embedding, pooled], Original ATen: [aten.embedding, aten.mean]\n"  // 14
    "            raw_stream0 = get_raw_stream(0)\n"                                                   // 15
    "            triton_poi_fused_embedding_mean_0.run(arg0_1, arg1_1, buf0, 128, stream=raw_stream0)\n"  // 16
    "            extern_kernels.mm(buf0, arg2_1, out=buf1)\n"                                         // 17
    "            triton_poi_fused_relu_1.run(buf1, 64, stream=raw_stream0)\n"                         // 18
    "        return (buf1, )\n";                                                                      // 19

TEST(CompiledKernel, TheLaunchLineNamesTheKernelItsNodesAndItsFile) {
  EXPECT_TRUE(is_inductor_module_text(kWrapper));
  EXPECT_FALSE(is_inductor_module_text("import torch\n# AOT ID: x\n"));
  auto launch = compiled_launch_in(kWrapper, 16);
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->kernel, "triton_poi_fused_embedding_mean_0");
  EXPECT_EQ(launch->wrapper_line, 16);
  EXPECT_EQ(launch->kernel_file, "/tmp/torchinductor_ada/ab/cabkernel.py");
  EXPECT_EQ(launch->source_nodes, (std::vector<std::string>{"embedding", "pooled"}));
  EXPECT_EQ(launch->aten_ops, (std::vector<std::string>{"aten.embedding", "aten.mean"}));
}

TEST(CompiledKernel, ALaunchWithoutItsOwnCommentClaimsNoNodes) {
  // Line 18's kernel has no comment between it and the previous launch: the earlier comment is not its.
  auto launch = compiled_launch_in(kWrapper, 18);
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->kernel, "triton_poi_fused_relu_1");
  EXPECT_TRUE(launch->source_nodes.empty());
  EXPECT_TRUE(launch->kernel_file.empty()) << "its definition is not in this text";
}

TEST(CompiledKernel, LinesThatLaunchNothingAreNotLaunches) {
  EXPECT_FALSE(compiled_launch_in(kWrapper, 13).has_value());
  EXPECT_FALSE(compiled_launch_in(kWrapper, 17).has_value());
  EXPECT_FALSE(compiled_launch_in(kWrapper, 0).has_value());
  EXPECT_FALSE(compiled_launch_in(kWrapper, 400).has_value());
}

TEST(CompiledKernel, TheModelsLineIsTheInnermostFrameOfTheUsersCode) {
  // Dynamo's stack traces list frames outermost first, each with its code and a caret line.
  std::string trace =
      "  File \"/home/ada/train.py\", line 40, in forward\n"
      "    x = self.block(x)\n"
      "        ^^^^^^^^^^^^^\n"
      "  File \"/home/ada/model.py\", line 12, in forward\n"
      "    pooled = self.embed(tokens).mean(dim=1)\n"
      "  File \"/usr/lib/python3/dist-packages/torch/nn/functional.py\", line 2500, in embedding\n"
      "    return torch.embedding(weight, input)\n";
  auto line = model_line_of_trace(trace);
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->file, "/home/ada/model.py");
  EXPECT_EQ(line->line, 12);
  EXPECT_EQ(line->function, "forward");
  EXPECT_EQ(line->code, "pooled = self.embed(tokens).mean(dim=1)");
  EXPECT_FALSE(model_line_of_trace("  File \"/x/site-packages/torch/y.py\", line 3, in f\n    g()\n").has_value());
  EXPECT_FALSE(model_line_of_trace("").has_value());
}

}  // namespace
}  // namespace firstassert
