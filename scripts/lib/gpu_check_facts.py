"""Probes 7 to 9 of scripts/gpu-check, one program (tests/gpu/probe_facts.cu): its sections, each from the program's
own lines for that probe, and what stopped it where a probe said nothing or gave no answer.

  7  is pinned host memory that kernels wrote before a device assert readable, as written, after the fault
  8  what CUPTI itself costs per call with the runtime and driver API domains enabled (an empty callback)
  9  does cuStreamWriteValue64 in a capturing stream leave a memop node that writes its value on replay
"""
import gpu_check_print as printing
from gpu_check_probes import program_lines

PROGRAM = "probe_facts"
ANSWER = "answer: "
SECTIONS = (
    ("probe7: ", "7. is pinned host memory that kernels wrote before a device assert readable, as written, after "
                 "the fault?"),
    ("probe8: ", "8. what does CUPTI itself cost per call with the runtime and driver API domains enabled (an empty "
                 "callback)?"),
    ("probe9: ", "9. does cuStreamWriteValue64 in a capturing stream leave a memop node that writes its value on "
                 "replay?"),
)


def probe_lines(outcome, prefix):
    """The program's lines for one probe; a run that ended well but gave this probe no answer says so."""
    lines = program_lines(outcome, prefix)
    finished = outcome is not None and not outcome.not_run and outcome.returncode == 0
    if finished and not any(line.startswith(ANSWER) for line in lines):
        lines.append("no answer: the program printed none for this probe")
    return lines


def sections(outcome):
    """outcome: the run of probe_facts (None when it was not among the jobs)."""
    lines = []
    for prefix, title in SECTIONS:
        lines += printing.section(title, probe_lines(outcome, prefix))
    return lines
