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

The torch suite's jobs (tests/torch/jobs, TORCH_JOBS) run here as they are, so that the same jobs are judged on the
simulator (tests/torch/torch_test.py) and on a GPU: each is a case whose program lives there (Case.directory), lets
its error go uncaught as a user's job does (Case.uncaught), and marks the line its report must name `# the culprit`
(Case.marker), which the shim's summary on stderr must name too (Case.summary). The device assertion's condition
(Case.condition) and the confidences its evidence allows (Case.confidence, within the mode's, for the reason in
Case.why) are the torch suite's, but where a GPU may decide otherwise for a reason named there (timing, alignment),
which then allows more, never another kernel's. What the torch suite checks of the simulator's own model is not
asked here: the device line's block and thread, and the cuBLAS stand-in's kernel names in the profile. Three jobs
are not cases: two_threads_bad_label.py is the values probe's job (tests/torch/probe_test.py judges the values its
report carries, which no mode here turns on), and its honest decision may be a window of both threads' identical
launches, which no mode here allows; plain_loop_bad_label.py, which PyTorch ends, by timing alone, either at the main
thread's next call (exit 1) or by std::terminate from autograd's thread (SIGABRT, before the device printed its
line), so that its ending against a bare run's says nothing of the shim (tests/torch/torch_test.py accepts both);
and torchrun_rank1_bad_label.py, whose two ranks both use the one GPU (neither sets its device), is judged by merging the
ranks' reports (`firstassert merge`, the CLI, which the pack does not carry), not by one process's report.
"""
import os
import re
from dataclasses import dataclass, field

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASE_DIR = os.path.join(REPO_ROOT, "tests", "gpu")
JOB_DIR = os.path.join(REPO_ROOT, "tests", "torch", "jobs")  # the torch suite's jobs, run here as they are
JOB_MARKER = "# the culprit"  # the comment a job puts on the line its report must name (tests/torch/sim_job.py)


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
    captures_after: bool = True  # a graph case captures kernels after that node (they show the breadcrumbs' reset)
    notebook: bool = False       # its cells run in a Jupyter kernel, which loads the shim itself
    modes: tuple = ()            # the modes it runs in; empty: every mode
    directory: str = CASE_DIR    # where program is
    marker: str = ""             # ends the line the Python frames must name; "": gpucase's FAILING_OP (CAPTURED_OP)
    condition: tuple = ()        # substrings, any of which the culprit's device assertion condition must hold
    confidence: tuple = ()       # the culprit.confidence values its evidence allows, within the mode's; (): the mode's
    why: str = ""                # the evidence that confidence rests on, and what a GPU may do otherwise
    uncaught: bool = False       # it lets the error go uncaught, as a user's job does: Python's exit 1, a traceback
    summary: bool = False        # the shim's summary on stderr must name the marked line (`job.py:L in`)
    profile_line: str = ""       # what starts its line of the profile's kernel count; "": gpucase.PROFILER_KERNELS
    may_keep_cupti: bool = False  # its profiler may never subscribe to CUPTI: then no hand-over, the mode's backend

    def runs_in(self, mode):
        return not self.modes or mode.name in self.modes

    @property
    def source(self):
        return os.path.join(self.directory, self.program)

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
        allowed = ("exact",) if self.graph else mode.confidence
        return tuple(c for c in allowed if c in self.confidence) if self.confidence else allowed


@dataclass(frozen=True)
class Mode:
    name: str
    env: dict = field(default_factory=dict)
    shim: bool = True
    backend: str = ""            # the report's tool.backend
    confidence: tuple = ()       # the culprit.confidence values accepted


# A shim that the kernel loads (not preloaded) records through CUPTI alone: interposition needs the preload.
NOTEBOOK_MODES = ("bare", "default", "sync=all")

# The torch suite's jobs, run from tests/torch/jobs as they are, judged as tests/torch/torch_test.py judges them on the
# simulator: the kernel, its device assertion's condition, the confidence the evidence allows (the reasons are the
# torch suite's, and where a GPU may differ, why), the job's `# the culprit` line in the frames and in the summary.
# Only bare and default: each run imports torch, and the session's budget holds about twenty more such runs.
JOB_MODES = ("bare", "default")
ONE_STREAM = ("one launching thread on one stream at the fault (autograd's thread has not run backward for the "
              "failing step): the breadcrumbs leave one candidate")


def job(program, expect, condition, confidence, why, **fields):
    """A case that runs tests/torch/jobs/<program> as it is, under the shim as a user runs it."""
    return Case(program[:-3], program, expect, "|".join(expect), directory=JOB_DIR, marker=JOB_MARKER,
                condition=condition, confidence=confidence, why=why, uncaught=True, summary=True, modes=JOB_MODES,
                **fields)


TORCH_JOBS = (
    job("mlp_bad_label.py", ("nll_loss_forward_reduce_cuda_kernel_2d",), ("t >= 0 && t < n_classes",), ("exact",),
        ONE_STREAM),
    # The embedding's index_select is a gather of whole rows: the simulator's torch ran the elementwise kernel; where
    # the rows are 16-byte aligned 2.15 runs vectorized_gather_kernel instead (tests/sim/aten/README.md), so either,
    # each with its own condition, is the embedding's own kernel.
    job("token_model_side_stream.py", ("_scatter_gather_elementwise_kernel", "vectorized_gather_kernel"),
        ("idx_dim >= 0 && idx_dim < index_size", "ind >=0 && ind < ind_dim_size"), ("exact", "likely"),
        "the side stream's matmuls were still queued when the gather asserted, so two launches could have failed and "
        "the assertion line's block and thread fit only the gather (likely, on the simulator); on a GPU they may all "
        "have completed by then, which leaves the breadcrumbs one candidate (exact): timing"),
    job("graph_replay_bad_label.py", ("nll_loss_forward_reduce_cuda_kernel_2d",), ("t >= 0 && t < n_classes",),
        ("exact",), "the graph breadcrumbs say which node of the replay completed and which did not", graph=True,
        captures_after=False),  # the loss is the captured step's last kernel
    job("profiler_mid_job.py", ("nll_loss_forward_reduce_cuda_kernel_2d",), ("t >= 0 && t < n_classes",), ("exact",),
        ONE_STREAM, profiled=True, profile_line="PROFILED_KERNELS",
        # The torch suite asks nothing of the hand-over: on the simulator torch 2.15's profiler never subscribes, and
        # the shim keeps CUPTI; on a GPU Kineto may subscribe, and the shim hands CUPTI over (profiler_late's case).
        may_keep_cupti=True),
    job("gather_bad_index.py", ("_scatter_gather_elementwise_kernel",), ("idx_dim >= 0 && idx_dim < index_size",),
        ("exact",), "one stream, one launching thread: the breadcrumbs leave one candidate"),
    # Which vectorized_elementwise_kernel<N> serves it depends on the build and the alignment: the loss names it.
    job("bce_out_of_range.py", ("binary_cross_entropy_out_cuda",),
        ("input_val >= zero && input_val <= one",), ("exact",),
        "one stream, one launching thread, and the step's .item() reads the error back: one candidate"),
    job("multinomial_negative_weight.py", ("renormRowsL1",), ("!(val < zero)",), ("exact",),
        "one stream, one launching thread, and each step's .item() reads the error back: one candidate"),
    Case("healthy_job", "healthy.py", shows="no report, same output", healthy=True, directory=JOB_DIR,
         modes=JOB_MODES),
)

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
) + TORCH_JOBS

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
