"""Where in the model each op of a torch.compile graph was written, kept beside the code Inductor generates for it.

A Triton kernel that asserts is launched from Inductor's generated module (its wrapper), whose comments name the FX
nodes fused into the kernel but not the model's file and line; Dynamo records those on each node
(node.meta["stack_trace"]) and they are gone once the graph is compiled. So when Inductor writes a graph's wrapper,
this writes WRAPPER.firstassert-nodes.json beside it: for each node as the wrapper's comments name it, its stack
trace. The report reads it when a kernel launched from that wrapper asserts (src/report/compiled_kernel.h). A later
process that loads the same wrapper from Inductor's cache finds the file already there.

Loaded by firstassert's sitecustomize by its path, before the package is importable, and by `import firstassert`:
standard library only. Nothing happens before torch._inductor.graph is imported (a job that does not compile pays
nothing), and a failure here is one line on stderr: the job compiles as it would have.
"""

import os
import sys

# json is imported when a graph is compiled, not here: every Python a job starts loads this file.

SUFFIX = ".firstassert-nodes.json"
_state = {"installed": False, "said": False}


def install(when_imported):
    """Wraps Inductor's GraphLowering.compile_to_module once torch._inductor.graph is imported.
    when_imported: firstassert.values._hook.when_imported (passed in: this module imports nothing of firstassert)."""
    if _state["installed"]:
        return
    _state["installed"] = True
    module = sys.modules.get("torch._inductor.graph")
    if module is not None:
        _wrap(module)
    else:
        when_imported("torch._inductor.graph", _wrap)


def _say_once(what, error):
    if not _state["said"]:
        _state["said"] = True
        sys.stderr.write("firstassert: the model's lines of compiled kernels are not kept: %s: %s: %s\n" % (
            what, type(error).__name__, error))


def _wrap(graph_module):
    lowering = getattr(graph_module, "GraphLowering", None)
    original = getattr(lowering, "compile_to_module", None)
    if original is None or getattr(original, "_firstassert_wrapped", False):
        return

    def compile_to_module(self, *args, **kwargs):
        module = original(self, *args, **kwargs)
        try:
            write_node_traces(self, getattr(module, "__file__", None))
        except Exception as error:  # never break the job's compile
            _say_once("writing them beside the generated code", error)
        return module

    compile_to_module._firstassert_wrapped = True
    compile_to_module.__wrapped__ = original
    compile_to_module.__doc__ = original.__doc__
    lowering.compile_to_module = compile_to_module


def _source_name(node):
    """The name the wrapper's "Source Nodes" comment gives node: the node it was made from, else its own
    (torch/_inductor/utils.py, get_kernel_metadata)."""
    from_node = node.meta.get("from_node")
    if from_node:
        name = getattr(from_node[0], "name", None)
        if name:
            return name
    return node.name


def node_traces(nodes):
    """{source name: stack trace} for the call_function nodes that carry one."""
    traces = {}
    for node in nodes:
        if node.op != "call_function":
            continue
        trace = node.meta.get("stack_trace")
        if trace:
            traces.setdefault(_source_name(node), trace)
    return traces


def write_node_traces(lowering, wrapper_file):
    if not wrapper_file:
        return
    graph_module = getattr(lowering, "orig_gm", None) or getattr(lowering, "module", None)
    if graph_module is None:
        return
    traces = node_traces(graph_module.graph.nodes)
    if not traces:
        return
    import json

    path = wrapper_file + SUFFIX
    temporary = "%s.%d.tmp" % (path, os.getpid())
    with open(temporary, "w", encoding="utf-8") as out:
        json.dump({"format": 1, "nodes": traces}, out, indent=1, sort_keys=True)
    os.replace(temporary, path)  # whole or not at all, for a report read while another rank compiles
