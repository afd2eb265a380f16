"""The randomized-schedule property on a GPU (scripts/gpu-check): tests/gpu/schedule_property.cu carries out the plans
of tests/e2e/programs/schedule_plan.h (the simulator's schedule_test runs the same plans) with real kernels. Each seed
runs in each mode in a fresh process under the shim, and its report is judged against the oracle the program printed
(the asserting launch: its stream and shared_mem), as tests/e2e/schedule_test.cpp judges the simulator's:
  - a claim (confidence exact or likely) names the asserting launch;
  - a window holds it, and its reason counts its candidates ("one of N launch..."); with breadcrumbs on, the report
    lists every candidate of the window;
  - unknown only when the launch ring dropped what may have failed;
  - exact where the mode can know: breadcrumbs on and one busy stream, or FIRSTASSERT_SYNC=all and one launching
    thread.
Also, each run must end as the plan does: the oracle printed, the final sync cudaErrorAssert, one report whose first
error is 710. A run that did not run (the time budget spent, no nvcc) is counted apart and fails the step too."""
import re
from dataclasses import dataclass, field

from gpu_check_table import Case

PROGRAM = Case("schedule_property", "schedule_property.cu", nvcc_flags=("-cudart", "shared"))
LONG_TIMEOUT = 180  # seconds the long seed may take (the others: gpu-check's --timeout)


@dataclass(frozen=True)
class Seed:
    seed: int
    launches: int = 0     # 0: as many as the seed draws (20 to 1,500)
    what: str = ""        # what its plan is, for the reader (the suite holds the stream counts true)

    @property
    def name(self):
        return f"{self.seed}" + (f"x{self.launches}" if self.launches else "")

    def argv(self, program):
        return [program, str(self.seed)] + ([str(self.launches)] if self.launches else [])


# A few plans on one stream (where breadcrumbs must make the answer exact), most on several, one long: its assert
# comes after the ring (4,096 launches by default) has wrapped a dozen times.
ONE_STREAM = (Seed(23, what="1 stream, the assert in a graph's node, legacy stream, anonymous line"),
              Seed(55, what="1 stream, 2 threads"),
              Seed(63, what="1 stream, anonymous line"),
              Seed(110, what="1 stream"))
SEVERAL_STREAMS = (Seed(1, what="2 streams, 2 threads, graphs"),
                   Seed(2, what="8 streams, the assert in a graph's node, legacy stream"),
                   Seed(3, what="5 streams, 2 threads"),
                   Seed(5, what="6 streams, 2 threads"),
                   Seed(6, what="7 streams, legacy stream"),
                   Seed(9, what="5 streams, graphs"),
                   Seed(12, what="2 streams, the assert in a graph's node"),
                   Seed(14, what="6 streams, 2 threads, the assert in a graph's node"),
                   Seed(18, what="4 streams, legacy stream"),
                   Seed(20, what="6 streams, the assert in a graph's node, legacy stream"),
                   Seed(27, what="8 streams"),
                   Seed(33, what="3 streams, 2 threads"))
LONG = Seed(7, 60000, what="7 streams, 60,000 launches")
SEEDS = ONE_STREAM + SEVERAL_STREAMS + (LONG,)


@dataclass(frozen=True)
class Mode:
    name: str
    env: dict = field(default_factory=dict)
    breadcrumbs: bool = True     # the shim's stream breadcrumbs are on (its default)
    forced_syncs: bool = False   # FIRSTASSERT_SYNC=all: a sync after each launch


MODES = (Mode("default"),
         Mode("sync=all", {"FIRSTASSERT_SYNC": "all"}, breadcrumbs=False, forced_syncs=True),
         Mode("breadcrumbs=0", {"FIRSTASSERT_BREADCRUMBS": "0"}, breadcrumbs=False))


@dataclass(frozen=True)
class Step:
    """What gpu-check runs of the property: its seeds, its modes, and the program (a path, or "": PROGRAM built with
    the toolkit's nvcc). The suite gives it a program built for the simulator and a few seeds."""
    seeds: tuple = SEEDS
    modes: tuple = MODES
    program: str = ""


@dataclass(frozen=True)
class Oracle:
    """What the program printed of its plan."""
    stream: str
    shared: int
    busy_one: bool
    threads: int
    sync: str


def oracle_of(stdout):
    """The oracle the program printed, or None when it printed none (it died before, or is not the program)."""
    asserting = re.search(r"^asserting: stream (\S+) shared_mem (\d+)", stdout, re.M)
    if not asserting:
        return None
    busy = re.search(r"^busy: (\d+)", stdout, re.M)
    plan = re.search(r"^plan: streams \d+ threads (\d+)", stdout, re.M)
    sync = re.search(r"^sync: (\S+)", stdout, re.M)
    return Oracle(asserting.group(1), int(asserting.group(2)), bool(busy and busy.group(1) == "1"),
                  int(plan.group(1)) if plan else 0, sync.group(1) if sync else "")


def is_it(launch, oracle):
    return isinstance(launch, dict) and launch.get("stream") == oracle.stream and \
        launch.get("shared_mem") == oracle.shared


@dataclass
class Verdict:
    seed: str
    mode: str
    confidence: str = ""      # the report's decision.confidence
    claim: bool = None        # a claim (exact, likely): whether it names the asserting launch
    window: bool = None       # a window: whether its listed candidates hold it (None: not a window, or unverified)
    unverified: bool = False  # a window longer than the report lists, without it among those listed
    failed: list = field(default_factory=list)  # what went wrong, each a phrase
    not_run: str = ""         # why it did not run

    @property
    def result(self):
        return "SKIP" if self.not_run else ("FAIL" if self.failed else "PASS")


def judge(seed, mode, outcome):
    """The verdict on one run (an Outcome of gpu_check_run) of seed in mode."""
    verdict = Verdict(seed.name, mode.name)
    if outcome.not_run:
        verdict.not_run = outcome.not_run
        return verdict
    oracle = oracle_of(outcome.stdout)
    if oracle is None:
        verdict.failed.append(f"it printed no oracle ({outcome.ended})")
        return verdict
    if oracle.sync != "cudaErrorAssert":
        verdict.failed.append(f"its final sync returned {oracle.sync or 'nothing'} ({outcome.ended}), "
                              "not cudaErrorAssert")
    if len(outcome.reports) != 1 or outcome.report is None:
        verdict.failed.append(f"{len(outcome.reports)} reports, not one" +
                              (f" ({outcome.report_error})" if outcome.report_error else ""))
        return verdict
    report = outcome.report
    if (report.get("first_error") or {}).get("code") != 710:
        verdict.failed.append(f"first error {(report.get('first_error') or {}).get('code')}, not 710")
    decision = report.get("decision") or {}
    confidence, reason = decision.get("confidence", ""), decision.get("reason", "")
    verdict.confidence = confidence
    if confidence in ("exact", "likely"):
        culprit = report.get("culprit") or {}
        verdict.claim = is_it(culprit, oracle)
        if not verdict.claim:
            verdict.failed.append(f"{confidence} claim of {culprit.get('kernel')} on {culprit.get('stream')} "
                                  f"shared_mem {culprit.get('shared_mem')}; the asserting launch is on "
                                  f"{oracle.stream} shared_mem {oracle.shared}")
    elif confidence == "window":
        total = decision.get("candidates", -1)
        listed = report.get("candidates") or []
        if f"one of {total} launch" not in reason:
            verdict.failed.append(f"the window's reason does not count its {total} candidates: {reason!r}")
        holds = any(is_it(c, oracle) for c in listed)
        if isinstance(total, int) and 0 <= total <= len(listed):
            verdict.window = holds
            if not holds:
                verdict.failed.append(f"the window of {total} does not hold the asserting launch")
        elif not holds:
            verdict.unverified = True
            if mode.breadcrumbs:
                verdict.failed.append(f"a window of {total} listed in part ({len(listed)}) with breadcrumbs on")
        else:
            verdict.window = True
    elif confidence == "unknown":
        if "launch ring" not in reason:
            verdict.failed.append(f"unknown, but not because the launch ring dropped launches: {reason!r}")
    else:
        verdict.failed.append(f"confidence {confidence!r}")
    # Forced syncs leave one launch in flight per launching thread; breadcrumbs tell one busy stream's launches apart.
    if ((mode.forced_syncs and oracle.threads == 1) or (mode.breadcrumbs and oracle.busy_one)) and \
            confidence != "exact":
        verdict.failed.append(f"{confidence or 'no decision'} where the mode knows exactly")
    return verdict


def planned_runs(seeds=SEEDS, modes=MODES):
    """(seed, mode) for each run of the step, every seed in every mode."""
    return [(seed, mode) for mode in modes for seed in seeds]


def run_name(seed, mode):
    """Its directory under the harness's runs/."""
    return f"schedule.{seed.name}.{mode.name.replace('=', '_')}"


def timeout_for(seed):
    """Its run's timeout; None: gpu-check's own."""
    return LONG_TIMEOUT if seed.launches else None


def passed(verdicts):
    """Whether the step passed: every planned run ran and passed."""
    return bool(verdicts) and all(v.result == "PASS" for v in verdicts)


def section(verdicts):
    """The lines gpu-check prints for the step."""
    seeds = sorted({v.seed for v in verdicts}, key=lambda name: [int(part) for part in name.split("x")])
    modes = list(dict.fromkeys(v.mode for v in verdicts))
    claims = [v.claim for v in verdicts if v.claim is not None]
    windows = [v.window for v in verdicts if v.window is not None]
    unknown = sum(v.confidence == "unknown" for v in verdicts)
    skipped = [v for v in verdicts if v.not_run]
    failed = [v for v in verdicts if v.failed]
    lines = [f"schedule property ({PROGRAM.program}, seeds {', '.join(seeds)}): {len(seeds)} seeds x "
             f"{len(modes)} modes ({', '.join(modes)}): claims right {sum(claims)}/{len(claims)}, windows holding it "
             f"{sum(windows)}/{len(windows)}, windows too long to check {sum(v.unverified for v in verdicts)}, "
             f"unknown {unknown}, failed {len(failed)}, not run {len(skipped)}: "
             + ("PASS" if passed(verdicts) else "FAIL")]
    for v in failed:
        lines.append(f"  FAIL seed {v.seed} / {v.mode}: {'; '.join(v.failed)} (replay: {PROGRAM.slug} "
                     f"{v.seed.replace('x', ' ')}{' with ' + mode_env(v.mode) if mode_env(v.mode) else ''})")
    for v in skipped:
        lines.append(f"  SKIP seed {v.seed} / {v.mode}: {v.not_run}")
    return lines


def mode_env(name):
    mode = next((m for m in MODES if m.name == name), None)
    return " ".join(f"{k}={v}" for k, v in mode.env.items()) if mode else ""


def describe():
    """What --list says of the step."""
    lines = [f"schedule property: tests/gpu/{PROGRAM.program}, the plans of tests/e2e/programs/schedule_plan.h with "
             "real kernels; each claim must name the asserting launch, each window hold it",
             "  modes: " + ", ".join(m.name + (f" ({mode_env(m.name)})" if m.env else "") for m in MODES),
             "  seeds:"]
    return lines + [f"    {seed.name:<8} {seed.what}" for seed in SEEDS]
