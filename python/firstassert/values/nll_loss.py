"""cross_entropy, nll_loss, nll_loss2d: class labels against the number of classes.

cross_entropy with class-index targets is log_softmax + nll_loss at the aten level (nll_loss_nd reshapes a 3-D or
5-D input into nll_loss2d's 4-D form), so these two ops cover all of them.

PyTorch's conditions (2.15):
- CUDA, Loss.cu nll_loss_forward_reduce_cuda_kernel_2d / _no_reduce_cuda_kernel and NLLLoss2d.cu
  nll_loss2d_forward_kernel: every target other than ignore_index satisfies `t >= 0 && t < n_classes` (for uint8
  targets `t < n_classes`), n_classes = input.size(1), or input.size(0) for a 1-D input (one sample, no batch).
- CPU, LossNLL.cpp and LossNLL2d.cpp: the same condition, as TORCH_CHECK_INDEX: IndexError "Target 10 is out of
  bounds.".
Checked on the host by PyTorch on CUDA too, so not here: the target dtype (int64 or uint8), the class weights'
shape ("weight tensor should be defined either for all 10 classes or no classes") and the shapes.
"""

import math

from .bounds import in_range
from .errors import ValuesIndexError
from .ops import Check


def as_the_user_shaped_it(target, logits):
    """The target in the user's shape. For an input of 3 or more dimensions (N, C, d1, ...), nll_loss_nd
    (LossNLL.cpp) calls nll_loss2d with the input viewed as (N, C, 1, d1 * ...) and the target as (N, 1, d1 * ...):
    indices the user's tensor does not have. The input's view keeps the user's input as its base (or the contiguous
    copy nll_loss_nd made of it), whose shape gives the target's: (N, d1, ...)."""
    user = logits._base
    if (target.dim() == 3 and target.size(1) == 1 and logits.dim() == 4 and logits.size(2) == 1
            and user is not None and user.numel() == logits.numel() and user.dim() >= 3
            and user.size(0) == target.size(0) and user.size(1) == logits.size(1)):
        shape = (user.size(0),) + tuple(user.shape[2:])
        if math.prod(shape) == target.numel():
            return target.reshape(shape)
    return target


def conditions(args):
    logits, ignore_index = args["self"], args["ignore_index"]
    target = as_the_user_shaped_it(args["target"], logits)
    where = 0 if logits.dim() == 1 else 1
    classes = logits.size(where)
    op = "nll_loss2d" if logits.dim() == 4 else "nll_loss"
    return [in_range(op, "target", target, 0, classes, "classes = input.shape[%d] = %d" % (where, classes),
                     lambda where: "Target %d is out of bounds." % where.value, ValuesIndexError,
                     noun=("target", "targets", "out of range"), skip=ignore_index,
                     notes=["ignore_index = %d (skipped)" % ignore_index,
                            "cross_entropy reaches the GPU as log_softmax + %s" % op])]


CHECKS = [Check(("nll_loss_forward", "nll_loss2d_forward"), "self", conditions, reads=("target",))]
