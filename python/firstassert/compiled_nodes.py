"""Where in the model each op of a torch.compile graph was written, kept beside the code Inductor generates for it.

A Triton kernel that asserts is launched from Inductor's generated module (its wrapper), whose comments name the FX
nodes fused into the kernel but not the model's file and line; Dynamo records those on each node
(node.meta["stack_trace"]) and they are gone once the graph is compiled. So when Inductor writes a graph's wrapper,
this writes WRAPPER.firstassert-nodes.json beside it: for each node as the wrapper's comments name it, its stack
trace. The report reads it when a kernel launched from that wrapper asserts (src/report/compiled_kernel.h). A later
process that loads the same wrapper from Inductor's cache finds the file already there; where it is not (the graph
was compiled by a run without firstassert, the usual case of a job rerun under it), the wrapper loaded from the cache
while Inductor compiles a Dynamo graph gets that graph's nodes: the forward's "Source Nodes" are Dynamo's node names
(a backward's are its own, which Dynamo's graph does not hold: those stay unknown).

Loaded by firstassert's sitecustomize by its path, before the package is importable, and by `import firstassert`:
standard library only. Nothing happens before torch._inductor.graph is imported (a job that does not compile pays
nothing), and a failure here is one line on stderr: the job compiles as it would have.
"""

import os
import sys
import threading

# json is imported when a graph is compiled, not here: every Python a job starts loads this file.

SUFFIX = ".firstassert-nodes.json"
_state = {"installed": False, "said": False}


def install(when_imported):
    """Wraps Inductor's GraphLowering.compile_to_module (a graph compiled), compile_fx (the Dynamo graph being
    compiled) and CompiledFxGraph.after_deserialization (a graph loaded from the cache) once each module is imported.
    when_imported: firstassert.values._hook.when_imported (passed in: this module imports nothing of firstassert)."""
    if _state["installed"]:
        return
    _state["installed"] = True
    for name, wrap in (("torch._inductor.graph", _wrap), ("torch._inductor.compile_fx", _wrap_compile_fx),
                       ("torch._inductor.output_code", _wrap_cache_loads)):
        module = sys.modules.get(name)
        if module is not None:
            wrap(module)
        else:
            when_imported(name, wrap)


def _say_once(what, error):
    if not _state["said"]:
        _state["said"] = True
        sys.stderr.write("firstassert: the model's lines of compiled kernels are not kept: %s: %s: %s\n" % (
            what, type(error).__name__, error))


def _replace(owner, name, make_wrapper):
    """owner.name := make_wrapper(owner.name), once (a second install, from another copy of this file, finds it
    wrapped); nothing when the name is not there (a torch without it)."""
    original = getattr(owner, name, None)
    if original is None or getattr(original, "_firstassert_wrapped", False):
        return
    wrapper = make_wrapper(original)
    wrapper._firstassert_wrapped = True
    wrapper.__wrapped__ = original
    wrapper.__doc__ = original.__doc__
    wrapper.__name__ = original.__name__
    setattr(owner, name, wrapper)


def _wrap(graph_module):
    def make_wrapper(original):
        def compile_to_module(self, *args, **kwargs):
            module = original(self, *args, **kwargs)
            try:
                write_node_traces(self, getattr(module, "__file__", None))
            except Exception as error:  # never break the job's compile
                _say_once("writing them beside the generated code", error)
            return module

        return compile_to_module

    _replace(getattr(graph_module, "GraphLowering", None), "compile_to_module", make_wrapper)


_compiling = threading.local()  # .graphs: the Dynamo graphs being compiled on this thread, innermost last


def _wrap_compile_fx(compile_fx_module):
    def make_wrapper(original):
        def compile_fx(model_, *args, **kwargs):
            graphs = getattr(_compiling, "graphs", None)
            if graphs is None:
                graphs = _compiling.graphs = []
            graphs.append(model_)
            try:
                return original(model_, *args, **kwargs)
            finally:
                graphs.pop()

        return compile_fx

    _replace(compile_fx_module, "compile_fx", make_wrapper)


def _wrap_cache_loads(output_code_module):
    def make_wrapper(original):
        def after_deserialization(self, *args, **kwargs):
            wrapper_file = original(self, *args, **kwargs)
            try:
                graphs = getattr(_compiling, "graphs", None)
                if graphs and isinstance(wrapper_file, str) and not os.path.exists(wrapper_file + SUFFIX):
                    write_traces(node_traces(graphs[-1].graph.nodes), wrapper_file)
            except Exception as error:  # never break the job's compile
                _say_once("writing them beside the cached code", error)
            return wrapper_file

        return after_deserialization

    _replace(getattr(output_code_module, "CompiledFxGraph", None), "after_deserialization", make_wrapper)


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
    """{source name: stack trace} for the nodes of ops that carry one (a Dynamo graph also calls methods and
    modules)."""
    traces = {}
    for node in nodes:
        if node.op not in ("call_function", "call_method", "call_module"):
            continue
        trace = node.meta.get("stack_trace")
        if trace:
            traces.setdefault(_source_name(node), trace)
    return traces


def write_node_traces(lowering, wrapper_file):
    if not wrapper_file:
        return
    graph_module = getattr(lowering, "orig_gm", None) or getattr(lowering, "module", None)
    if graph_module is not None:
        write_traces(node_traces(graph_module.graph.nodes), wrapper_file)


def write_traces(traces, wrapper_file):
    """Written even when no node carries a trace (a compiled module of torch's own): the report then says that."""
    import json

    path = wrapper_file + SUFFIX
    temporary = "%s.%d.tmp" % (path, os.getpid())
    with open(temporary, "w", encoding="utf-8") as out:
        json.dump({"format": 1, "nodes": traces}, out, indent=1, sort_keys=True)
    os.replace(temporary, path)  # whole or not at all, for a report read while another rank compiles
