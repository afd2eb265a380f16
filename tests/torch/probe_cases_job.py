"""The job probe_test.py runs under `firstassert run --values=probe` on the simulated GPU without ATen's device code
(no kernel asserts, so one process can try every case): each case's bad call and good call, the launches each made
(the shim's launch count before and after), and what values_of_launch() finds for them once the stream is done
(both read after both ran).
Prints one JSON line, with each case's expectations."""
import json
import sys

import torch

from value_cases import CASES


def attempt(call, device):
    try:
        call(device)
    except Exception as error:
        return "%s: %s" % (type(error).__name__, str(error).splitlines()[0] if str(error) else "")
    return None


def main():
    from firstassert import library, values  # imported by firstassert's sitecustomize once torch was

    torch.zeros(1, device="cuda")  # CUDA up, and with it the recorder, before the first count
    count = library.launch_counter()
    out = {"mode": values.mode(), "cases": []}
    for case in CASES:
        row = {"name": case.name, "expect": case.expect, "cpu_raises": case.cpu is not None,
               "same_words": case.same_words, "cpu": attempt(case.bad, "cpu")}
        # Both calls first, then both read: the good call's copies go in after the bad call's, and must not land on
        # them.
        launched = {}
        for which, call in (("bad", case.bad), ("good", case.good)):
            before = count()
            raised = attempt(call, "cuda")
            launched[which] = (before, count(), raised)
        torch.cuda.synchronize()  # the copies are read after a fault in use; here, once they have landed
        for which, (before, after, raised) in launched.items():
            found = [values.values_of_launch(seq) for seq in range(before, after)]
            found = [v for v in found if v is not None]
            row[which] = {"launches": after - before, "raised": raised, "values": found[0] if found else None}
        out["cases"].append(row)
    print(json.dumps(out))


if __name__ == "__main__":
    sys.exit(main())
