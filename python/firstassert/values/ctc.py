"""ctc_loss: targets against the classes and the blank label.

PyTorch's conditions (2.15):
- The lengths are checked on the host by PyTorch itself on CUDA too (LossCTC.cu ctc_loss_gpu_template, after
  copying length tensors to the host): "Expected input_lengths to have value at most 5, but got value 6", "Expected
  target_lengths to have value at least 0", the targets' size. Not repeated here.
- The targets' values are checked nowhere: LossCTC.cu's kernels (ctc_loss_gpu_kernel and the backward ones) have
  no device assert and read log_probs at each target's class, so a target outside [0, num_classes) reads out of
  bounds (an illegal address, or garbage), on the CPU too; and a target equal to blank, which PyTorch's CTCLoss
  documents as not allowed ("the target index cannot be blank"), gives a wrong loss silently. Only the first
  target_lengths[b] targets of each sample count (padded targets beyond are never read).
Raised as RuntimeError, what ctc_loss raises for its other argument errors.
"""

import torch

from . import errors
from .errors import ValuesRuntimeError
from .ops import Check
from .scan import Condition, as_long, reduced


def _lengths(lengths, device):
    if isinstance(lengths, torch.Tensor):
        return as_long(reduced(lengths)).to(device)
    return torch.tensor(list(lengths), dtype=torch.int64, device=device)


def conditions(args):
    log_probs, targets, blank = args["log_probs"], args["targets"], args["blank"]
    classes = log_probs.size(-1)
    values = as_long(reduced(targets))
    lengths = _lengths(args["target_lengths"], values.device)
    if values.dim() == 2:  # (batch, longest target), padded
        counted = torch.arange(values.size(1), device=values.device)[None, :] < lengths[:, None]
    else:  # the targets of the batch, concatenated
        counted = torch.arange(values.numel(), device=values.device) < lengths.sum()
    bound = "num_classes = log_probs.shape[%d] = %d" % (log_probs.dim() - 1, classes)
    dtype = str(targets.dtype)

    def out_of_range(where):
        return errors.found(ValuesRuntimeError, "Expected targets to be class indices in [0, %d), but got %d" % (
            classes, where.value), "ctc_loss", "targets", where, "is outside [0, %d)" % classes,
            ("target", "targets", "out of range"), bound=bound, dtype=dtype,
            notes=["CUDA's ctc_loss would read log_probs out of bounds for it (it has no assert)"])

    def is_blank(where):
        return errors.found(ValuesRuntimeError, "Expected targets not to contain the blank label %d (the target "
                            "index cannot be blank), but got %d" % (blank, where.value), "ctc_loss", "targets",
                            where, "is the blank label (blank = %d)" % blank, ("target", "targets", "blank"),
                            bound=bound, dtype=dtype, notes=["the loss would be wrong, silently"])

    return [Condition(counted & ((values < 0) | (values >= classes)), values, out_of_range),
            Condition(counted & (values == blank), values, is_blank)]


CHECKS = [Check(("_ctc_loss", "_cudnn_ctc_loss"), "log_probs", conditions, reads=("targets", "target_lengths"))]
