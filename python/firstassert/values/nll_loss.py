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

from .bounds import in_range
from .errors import ValuesIndexError
from .ops import Check


def as_the_user_shaped_it(target):
    """The target in the user's shape. For a 3-D or 5-D input, nll_loss_nd reshapes the target into a view of shape
    (N, 1, L) (LossNLL.cpp), whose indices the user's tensor does not have: the view's base, when it holds the same
    elements with the same batch size, is the tensor the user passed (or its contiguous copy, of the same shape)."""
    base = target._base
    if (base is not None and target.dim() == 3 and target.size(1) == 1 and base.numel() == target.numel()
            and base.dim() >= 2 and base.size(0) == target.size(0) and base.is_contiguous()):
        return target.reshape(base.shape)
    return target


def conditions(args):
    logits, target, ignore_index = args["self"], as_the_user_shaped_it(args["target"]), args["ignore_index"]
    where = 0 if logits.dim() == 1 else 1
    classes = logits.size(where)
    op = "nll_loss2d" if logits.dim() == 4 else "nll_loss"
    return [in_range(op, "target", target, 0, classes, "classes = input.shape[%d] = %d" % (where, classes),
                     lambda where: "Target %d is out of bounds." % where.value, ValuesIndexError,
                     noun=("target", "targets", "out of range"), skip=ignore_index,
                     notes=["ignore_index = %d (skipped)" % ignore_index,
                            "cross_entropy reaches the GPU as log_softmax + %s" % op])]


CHECKS = [Check(("nll_loss_forward", "nll_loss2d_forward"), "self", conditions, reads=("target",))]
