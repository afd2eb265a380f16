"""firstassert/compiled_nodes.py without PyTorch: a stand-in torch._inductor.graph whose GraphLowering "compiles" a
graph of FX-like nodes into a wrapper file. Once Inductor is imported (not before), each compile writes
WRAPPER.firstassert-nodes.json beside the wrapper, naming each node as Inductor's comments do; reached through
`import firstassert` and through the sitecustomize `firstassert run` puts first on PYTHONPATH; a failure to write is
one line and the compile goes on.

usage: compiled_nodes_test.py PYTHON_PACKAGE_ROOT [unittest arguments]
"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

PACKAGE_ROOT = os.path.abspath(sys.argv[1])
del sys.argv[1]
SITE = os.path.join(PACKAGE_ROOT, "firstassert", "values", "_site")

# torch._inductor.graph as far as compiled_nodes.py reads it: GraphLowering.orig_gm.graph.nodes (op, name, meta) and
# compile_to_module() returning a module whose __file__ is the wrapper.
STAND_IN_GRAPH = '''
import types

class NodeSource:
    def __init__(self, name):
        self.name = name

class Node:
    def __init__(self, op, name, trace=None, made_from=None):
        self.op, self.name, self.meta = op, name, {}
        if trace:
            self.meta["stack_trace"] = trace
        if made_from:
            self.meta["from_node"] = [NodeSource(made_from)]

class GraphLowering:
    def __init__(self, wrapper, nodes):
        self.wrapper = wrapper
        self.orig_gm = types.SimpleNamespace(graph=types.SimpleNamespace(nodes=nodes))

    def compile_to_module(self):
        with open(self.wrapper, "w") as f:
            f.write("# AOT ID: ['0_forward']\\n")
        module = types.ModuleType("wrapper")
        module.__file__ = self.wrapper
        return module
'''

JOB = """
    import json, os, sys
    {before}
    print('graph imported early:', 'torch._inductor.graph' in sys.modules)
    from torch._inductor import graph
    wrapper = os.path.join({tmp!r}, 'cabc.py')
    nodes = [graph.Node('placeholder', 'primals_1', 'File "m.py", line 1, in f'),
             graph.Node('call_function', 'embedding', '  File "/u/model.py", line 7, in forward\\n    x = emb(t)\\n'),
             graph.Node('call_function', 'sum_2', '  File "/u/model.py", line 8, in forward\\n    x.sum()\\n',
                        made_from='sum_1'),
             graph.Node('call_function', 'view', None)]
    graph.GraphLowering(wrapper, nodes).compile_to_module()
    print(open(wrapper + '.firstassert-nodes.json').read())
"""


def python(code, path, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTASSERT_") and k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(path)
    env.update(env_extra or {})
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=60)
    return done.returncode, done.stdout, done.stderr


class CompiledNodes(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        package = os.path.join(self.tmp.name, "stand_in", "torch", "_inductor")
        os.makedirs(package)
        for directory in (os.path.dirname(package), package):
            open(os.path.join(directory, "__init__.py"), "w").close()
        with open(os.path.join(package, "graph.py"), "w") as f:
            f.write(STAND_IN_GRAPH)
        self.stand_in = os.path.join(self.tmp.name, "stand_in")

    def tearDown(self):
        self.tmp.cleanup()

    def expect_kept(self, out):
        text = out.split("graph imported early: False\n", 1)[1]
        kept = json.loads(text)
        self.assertEqual(kept, {"format": 1, "nodes": {
            "embedding": '  File "/u/model.py", line 7, in forward\n    x = emb(t)\n',
            "sum_1": '  File "/u/model.py", line 8, in forward\n    x.sum()\n'}})

    def test_import_firstassert_keeps_each_compiled_graphs_node_traces(self):
        status, out, err = python(JOB.format(before="import firstassert", tmp=self.tmp.name),
                                  [PACKAGE_ROOT, self.stand_in])
        self.assertEqual((status, err), (0, ""), out)
        self.expect_kept(out)

    def test_the_sitecustomize_keeps_them_without_a_change_to_the_job(self):
        status, out, err = python(JOB.format(before="", tmp=self.tmp.name), [SITE, self.stand_in])
        self.assertEqual((status, err), (0, ""), out)
        self.expect_kept(out)

    def test_a_wrapper_that_cannot_be_written_beside_is_one_line_and_the_compile_goes_on(self):
        job = JOB.format(before="import firstassert", tmp=self.tmp.name).replace(
            "print(open(wrapper + '.firstassert-nodes.json').read())",
            "print('compiled', os.path.isfile(wrapper))")
        os.makedirs(os.path.join(self.tmp.name, "cabc.py.firstassert-nodes.json"))  # a directory where the file goes
        status, out, err = python(job, [PACKAGE_ROOT, self.stand_in])
        self.assertEqual(status, 0, err)
        self.assertTrue(out.endswith("compiled True\n"), out)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertTrue(err.startswith("firstassert: the model's lines of compiled kernels are not kept: "), err)


if __name__ == "__main__":
    unittest.main()
