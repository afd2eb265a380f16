"""Two threads train their own classifiers on 10 classes at once, each on its own stream; one of them (argv[1]:
main or worker) gets the label 10 at step 3. Only the main thread turned the values modes on (their modes are per
thread), so under --values=probe its calls are probed and the worker's are not, while the launches of both are
numbered in one sequence. The report's values must be the bad call's when the main thread asserts, and say that no
probed call made the launch when the worker does: a worker's kernel numbered inside a main thread's call is not
that call's."""
import sys
import threading

import torch
import torch.nn as nn

classes = 10
culprit_thread = sys.argv[1]
failed = threading.Event()
worker_started = threading.Event()
culprit_done = threading.Event()  # the other thread trains until then, so that the two interleave


def batch(step, bad):
    y = torch.randint(0, classes, (32,))
    if bad and step == 3:
        y[5] = classes  # the bad value: target[5] = 10
    return torch.randn(32, 16).cuda(), y.cuda()


def train(name):
    bad = culprit_thread == name
    torch.manual_seed(len(name))
    model = nn.Linear(16, classes).cuda()
    with torch.cuda.stream(torch.cuda.Stream()):
        try:
            for step in range(6 if bad else 1000):
                if not bad and culprit_done.is_set():
                    break
                worker_started.set()
                x, y = batch(step, bad)
                for _ in range(5):
                    loss = nn.functional.cross_entropy(model(x), y)  # the culprit
                print(name, step, round(loss.item(), 3), flush=True)
        except Exception:
            failed.set()
            raise
        finally:
            if bad:
                culprit_done.set()


worker = threading.Thread(target=train, args=("worker",), daemon=True)
worker.start()
worker_started.wait()
try:
    train("main")
finally:
    culprit_done.set()
worker.join()
if failed.is_set():
    raise SystemExit(1)
