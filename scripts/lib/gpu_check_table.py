"""The matrix scripts/gpu-check runs: each case of tests/gpu in each mode, as data.

A case names its program, the kernel its report must blame (any of a few case-insensitive substrings of the
kernel's demangled or mangled name: real PyTorch kernel names are long templated strings, and which kernel serves an
op changes between versions), and whether the report's Python frames must name its `# FAILING_OP` line. A profiled
case also says how many kernels the torch.profiler profile it took held (gpucase.PROFILER_KERNELS), and expects the
report's tool object to show what a profiler subscribing to CUPTI after the shim leads to (Case.tool_in). A graph
case's culprit is a kernel node of a replayed CUDA graph: the report must name that node (culprit.graph_node, against
culprit.graph_nodes), exactly in every mode (Case.confidence_in), captured at the case's `# CAPTURED_OP` line, which
its Python frames must name instead of the `# FAILING_OP` line (the replay, which launched the whole graph). A
notebook case runs its cells in a real Jupyter kernel that loads the shim itself (`%load_ext firstassert`, never
preloaded): what its failing cell shows (the culprit at `Cell In[n], line L`) and what the cell after it shows
(secondary) are judged, and it runs only in the modes a shim loaded in-process can record in (Case.modes).
"""
import os
import re
from dataclasses import dataclass, field

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASE_DIR = os.path.join(REPO_ROOT, "tests", "gpu")


@dataclass(frozen=True)
class Case:
    name: str
    program: str                 # a file in tests/gpu: NAME.py runs with Python, NAME.cu is built by nvcc first
    expect: tuple = ()           # kernel-name substrings, any of which names the right culprit
    shows: str = ""              # what the table prints as the expected culprit
    healthy: bool = False        # no report, and the same output as without the shim
    nvcc_flags: tuple = ()       # for .cu programs
    toolkit_cupti: bool = False  # name the toolkit's CUPTI in FIRSTASSERT_CUPTI (no libcudart is loaded to find it by)
    args: tuple = ()
    profiled: bool = False       # starts torch.profiler once the shim records; its profile must hold kernels
    graph: bool = False          # the expected kernel asserts as a node of a CUDA graph replay
    notebook: bool = False       # its cells run in a Jupyter kernel, which loads the shim itself
    modes: tuple = ()            # the modes it runs in; empty: every mode

    def runs_in(self, mode):
        return not self.modes or mode.name in self.modes

    @property
    def source(self):
        return os.path.join(CASE_DIR, self.program)

    @property
    def python(self):
        return self.program.endswith(".py")

    @property
    def slug(self):
        """The name as a file name: of the nvcc-built program (one source is built two ways), of the run's files."""
        return re.sub(r"[^A-Za-z0-9_]+", "_", self.name).strip("_")

    def tool_in(self, mode):
        """(the report's tool.backend, its tool.cupti_handed_over or None where that is not checked) in mode.

        A profiled case's profiler subscribes to CUPTI after the shim began recording (issue 18), so:
          default, sync=all  (the mode's backend is cupti) the shim held CUPTI and hands it over at the profiler's
                             cuptiSubscribe, then records on through its interposition hooks: backend interpose,
                             cupti_handed_over true. FIRSTASSERT_SYNC changes nothing there: the forced syncs follow
                             each launch whichever source recorded it, so sync=all still wants "exact".
          interpose          firstassert never subscribed, so the profiler's subscription is no hand-over: backend
                             interpose, cupti_handed_over false (true would say it held CUPTI against the setting).
        Any other case keeps its mode's backend and is not asked about the hand-over.
        """
        if not self.profiled:
            return mode.backend, None
        if mode.backend == "cupti":
            return "interpose", True
        return mode.backend, False

    def confidence_in(self, mode):
        """The culprit.confidence values accepted in mode. A graph case wants "exact" in every mode: no mode can
        tell the nodes of one replay apart by the launch (a graph launch is one launch, and FIRSTASSERT_SYNC cannot
        synchronize inside it), but the graph breadcrumbs, a leaf write after each captured kernel node reset before
        each launch, say which node completed and which did not, whichever source recorded the launch."""
        return ("exact",) if self.graph else mode.confidence


@dataclass(frozen=True)
class Mode:
    name: str
    env: dict = field(default_factory=dict)
    shim: bool = True
    backend: str = ""            # the report's tool.backend
    confidence: tuple = ()       # the culprit.confidence values accepted


# A shim that the kernel loads (not preloaded) records through CUPTI alone: interposition needs the preload.
NOTEBOOK_MODES = ("bare", "default", "sync=all")

CASES = (
    Case("nll_loss", "nll_loss.py", ("nll_loss",), "nll_loss_forward_reduce_cuda_kernel_2d"),
    Case("embedding", "embedding.py", ("indexselect", "index_select", "vectorized_gather", "embedding"),
         "indexSelect*Index|vectorized_gather"),
    Case("gather", "gather.py", ("scatter_gather", "vectorized_gather"),
         "_scatter_gather_elementwise|vectorized_gather"),
    Case("scatter_", "scatter.py", ("scatter_gather",), "_scatter_gather_elementwise_kernel"),
    Case("bce_loss", "bce_loss.py", ("binary_cross_entropy",), "elementwise<binary_cross_entropy_out_cuda>"),
    Case("multinomial", "multinomial.py", ("multinomial",), "sampleMultinomialWithReplacement"),
    Case("triton", "triton_assert.py", ("gpu_check_ids_kernel",), "gpu_check_ids_kernel"),
    Case("nvcc_shared", "nvcc_assert.cu", ("gpu_check_labels_kernel",), "gpu_check_labels_kernel",
         nvcc_flags=("-cudart", "shared")),
    Case("nvcc_static", "nvcc_assert.cu", ("gpu_check_labels_kernel",), "gpu_check_labels_kernel",
         nvcc_flags=("-cudart", "static"), toolkit_cupti=True),
    Case("two_streams", "two_streams.py", ("nll_loss",), "nll_loss_forward_reduce_cuda_kernel_2d"),
    Case("graph_replay", "graph_replay.py", ("nll_loss",), "graph node nll_loss_forward_reduce_cuda_kernel_2d",
         graph=True),
    Case("profiler_late", "profiler_late.py", ("nll_loss",), "nll_loss_forward_reduce_cuda_kernel_2d", profiled=True),
    Case("notebook_armed", "notebook_case.py", ("nll_loss",), "nll_loss_forward_reduce_cuda_kernel_2d",
         args=("armed",), notebook=True, modes=NOTEBOOK_MODES),
    Case("notebook_late", "notebook_case.py", ("nll_loss",), "nll_loss_forward_reduce_cuda_kernel_2d",
         args=("late",), notebook=True, modes=NOTEBOOK_MODES),
    Case("healthy_loop", "healthy_loop.py", shows="no report, same output", healthy=True),
)

# "bare" runs each case without the shim: it proves the case provokes its assert on its own, and is the reference
# for how the job ends and, for the healthy loop, what it prints.
MODES = (
    Mode("bare", shim=False),
    Mode("default", backend="cupti", confidence=("exact", "likely")),
    Mode("sync=all", {"FIRSTASSERT_SYNC": "all"}, backend="cupti", confidence=("exact",)),
    Mode("interpose", {"FIRSTASSERT_BACKEND": "interpose"}, backend="interpose", confidence=("exact", "likely")),
)

# Programs that are not cases: the probes (tests/gpu/probe_*.cu, profiler_probe.py: probe 5, whose late order with the
# profiler stopped before the assert is the profiler_late case; probe_graph_breadcrumbs.cu: probe 6, the mechanism the
# graph_replay case's reports rest on; probe_facts.cu: probes 7 to 9) and the first look at the machine.
PROBE_PROGRAMS = {
    "probe_cupti": Case("probe_cupti", "probe_cupti.cu", nvcc_flags=("-cudart", "shared")),
    "probe_breadcrumbs": Case("probe_breadcrumbs", "probe_breadcrumbs.cu", nvcc_flags=("-cudart", "shared")),
    "probe_graph_breadcrumbs": Case("probe_graph_breadcrumbs", "probe_graph_breadcrumbs.cu",
                                    nvcc_flags=("-cudart", "shared")),
    "probe_facts": Case("probe_facts", "probe_facts.cu", nvcc_flags=("-cudart", "shared")),
}
PROFILER_PROBE = "profiler_probe.py"
PREFLIGHT = "preflight.py"


def find(names, table, what):
    """The entries of table named in the comma-separated names (all when names is empty); ValueError names an
    unknown one."""
    if not names:
        return list(table)
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    known = {entry.name: entry for entry in table}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise ValueError(f"unknown {what} {', '.join(repr(n) for n in unknown)} (known: {', '.join(known)})")
    return [known[n] for n in wanted]
