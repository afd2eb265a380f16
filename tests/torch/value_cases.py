"""The covered op families' cases, each a bad call and a good one, shared by the values tests (check mode in
values_test.py, probe mode in probe_test.py). Each bad call is on one line of its own: the line an error, or a
report, must point at."""
import torch
import torch.nn.functional as F


def data(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def labels(count, classes, at=None, value=None, dtype=torch.int64):
    made = (torch.arange(count) * 7 % classes).to(dtype)
    if at is not None:
        made[at] = value
    return made


def ids(*values):
    return torch.tensor(values)


class Case:
    """bad(device) calls the op with a bad value on one line (the line the error must point at), good(device) with
    good ones. cpu: the exception class PyTorch's CPU op raises (None: it raises nothing); expect: what our message
    must name (the first offending element); same_words: whether PyTorch's CPU message can be ours word for word;
    or_else: how another torch version's op names the same element, where versions dispatch the call to other ops."""

    def __init__(self, name, bad, good, cpu, expect, same_words=True, or_else=None):
        self.name, self.bad, self.good, self.cpu, self.expect, self.same_words = name, bad, good, cpu, expect, \
            same_words
        self.or_else = or_else

    def named_in(self, text):
        """Whether text names the offending element (expect, or the other version's words)."""
        return self.expect in text or (self.or_else is not None and self.or_else in text)


W = data(10, 3, seed=1)  # an embedding table / a matrix: 10 rows, 3 columns
X = data(64, 10, seed=2)  # logits of 64 samples over 10 classes
LP = data(5, 2, 4, seed=3).log_softmax(2)  # ctc log_probs: 5 steps, batch 2, 4 classes (blank 0)


def on(device, *tensors):
    moved = [t.to(device) for t in tensors]
    return moved[0] if len(moved) == 1 else moved


CASES = [
    Case("cross_entropy: a label equal to the number of classes",
         lambda d: F.cross_entropy(*on(d, X, labels(64, 10, 17, 10))),
         lambda d: F.cross_entropy(*on(d, X, labels(64, 10))), IndexError, "target[17] = 10"),
    Case("cross_entropy: a label of -1 (ignore_index is -100)",
         lambda d: F.cross_entropy(*on(d, X, labels(64, 10, 3, -1))),
         lambda d: F.cross_entropy(*on(d, X, labels(64, 10, 3, -100))), IndexError, "target[3] = -1"),
    Case("cross_entropy over a segmentation map (nll_loss2d), ignore_index 255 present",
         lambda d: F.cross_entropy(*on(d, data(2, 5, 4, 4), labels(32, 5, 9, 7).view(2, 4, 4)), ignore_index=255),
         lambda d: F.cross_entropy(*on(d, data(2, 5, 4, 4), labels(32, 5, 9, 255).view(2, 4, 4)), ignore_index=255),
         IndexError, "target[0, 2, 1] = 7"),
    Case("nll_loss of one sample (1-D input), no reduction",
         lambda d: F.nll_loss(*on(d, data(10), torch.tensor(12)), reduction="none"),
         lambda d: F.nll_loss(*on(d, data(10), torch.tensor(2)), reduction="none"), IndexError, "target = 12"),
    Case("nll_loss with uint8 targets",
         lambda d: F.nll_loss(*on(d, X, labels(64, 10, 5, 12, dtype=torch.uint8))),
         lambda d: F.nll_loss(*on(d, X, labels(64, 10, dtype=torch.uint8))), IndexError, "torch.uint8"),
    Case("embedding: an id past the vocabulary",
         lambda d: F.embedding(*on(d, labels(32, 10, 21, 1000).view(4, 8), W)),
         lambda d: F.embedding(*on(d, labels(32, 10).view(4, 8), W)), IndexError, "indices[2, 5] = 1000"),
    Case("embedding: a negative id",
         lambda d: F.embedding(*on(d, ids(1, -1, 2), W)),
         lambda d: F.embedding(*on(d, ids(1, 9, 2), W)), IndexError, "indices[1] = -1"),
    Case("embedding with max_norm (embedding_renorm_ runs first)",
         lambda d: F.embedding(*on(d, ids(1, 10), W.clone()), max_norm=1.0),
         lambda d: F.embedding(*on(d, ids(1, 9), W.clone()), max_norm=1.0), IndexError, "indices[1] = 10"),
    Case("embedding_bag: an id past the vocabulary",
         lambda d: F.embedding_bag(*on(d, ids(1, 10, 2), W, ids(0, 2))),
         lambda d: F.embedding_bag(*on(d, ids(1, 9, 2), W, ids(0, 2))), RuntimeError, "input[1] = 10"),
    Case("embedding_bag: offsets[0] is not 0",
         lambda d: F.embedding_bag(*on(d, ids(1, 9, 2), W, ids(1, 2))),
         lambda d: F.embedding_bag(*on(d, ids(1, 9, 2), W, ids(0, 2))), RuntimeError, "offsets[0] = 1"),
    Case("embedding_bag: offsets decrease",
         lambda d: F.embedding_bag(*on(d, ids(1, 9, 2), W, ids(0, 2, 1))),
         lambda d: F.embedding_bag(*on(d, ids(1, 9, 2), W, ids(0, 1, 2))), RuntimeError, "offsets[2] = 1",
         same_words=False),
    Case("embedding_bag: offsets[-1] past the ids",
         lambda d: F.embedding_bag(*on(d, ids(1, 9, 2), W, ids(0, 5))),
         lambda d: F.embedding_bag(*on(d, ids(1, 9, 2), W, ids(0, 3))), RuntimeError, "offsets[1] = 5"),
    Case("index_select: an index equal to the size",
         lambda d: torch.index_select(on(d, W), 0, on(d, ids(1, 10))),
         lambda d: torch.index_select(on(d, W), 0, on(d, ids(1, 9))), IndexError, "index[1] = 10"),
    Case("index_select: a negative index (no wrap)",
         lambda d: torch.index_select(on(d, W), 0, on(d, ids(-1, 2))),
         lambda d: torch.index_select(on(d, W), 0, on(d, ids(0, 2))), IndexError, "index[0] = -1"),
    Case("x[idx]: an index equal to the size",
         lambda d: on(d, W)[on(d, ids(1, 10))],
         lambda d: on(d, W)[on(d, ids(1, -10))], IndexError, "indices[0][1] = 10"),
    Case("x[idx]: a negative index below -size",
         lambda d: on(d, W)[on(d, ids(1, -11))],
         lambda d: on(d, W)[on(d, ids(1, -1))], IndexError, "indices[0][1] = -11"),
    # PyTorch's CPU message says "dimension 0" here (the dimension among the indexed ones); ours says 1.
    Case("x[:, idx]: the second dimension",
         lambda d: on(d, W)[:, on(d, ids(0, 3))],
         lambda d: on(d, W)[:, on(d, ids(0, 2))], IndexError, "indices[1][1] = 3", same_words=False),
    Case("x[idx] = tensor (index_put_)",
         lambda d: on(d, W.clone()).__setitem__(on(d, ids(1, 10)), on(d, torch.ones(2, 3))),
         lambda d: on(d, W.clone()).__setitem__(on(d, ids(1, 9)), on(d, torch.ones(2, 3))), IndexError,
         "indices[0][1] = 10"),
    Case("x[idx] = scalar (index_fill_)",
         lambda d: on(d, W.clone()).__setitem__(on(d, ids(1, 10)), 1.0),
         lambda d: on(d, W.clone()).__setitem__(on(d, ids(1, -1)), 1.0), IndexError, "index[1] = 10",
         or_else="indices[0][1] = 10"),  # torch 2.4 and 2.8 run x[idx] = scalar as index_put_
    Case("index_put_ with accumulate",
         lambda d: on(d, W.clone()).index_put_((on(d, ids(1, 10)),), on(d, torch.ones(2, 3)), accumulate=True),
         lambda d: on(d, W.clone()).index_put_((on(d, ids(1, 9)),), on(d, torch.ones(2, 3)), accumulate=True),
         IndexError, "indices[0][1] = 10"),
    Case("take: an index equal to numel",
         lambda d: torch.take(*on(d, W, ids(1, 30))),
         lambda d: torch.take(*on(d, W, ids(1, -30))), IndexError, "index[1] = 30"),
    Case("put_: an index equal to numel",
         lambda d: on(d, W.clone()).put_(*on(d, ids(1, 30), torch.ones(2))),
         lambda d: on(d, W.clone()).put_(*on(d, ids(1, 29), torch.ones(2))), IndexError, "index[1] = 30"),
    Case("index_copy_",
         lambda d: on(d, W.clone()).index_copy_(0, *on(d, ids(1, 10), torch.ones(2, 3))),
         lambda d: on(d, W.clone()).index_copy_(0, *on(d, ids(1, 9), torch.ones(2, 3))), IndexError,
         "index[1] = 10"),
    Case("index_add_",
         lambda d: on(d, W.clone()).index_add_(0, *on(d, ids(1, 10), torch.ones(2, 3))),
         lambda d: on(d, W.clone()).index_add_(0, *on(d, ids(1, 9), torch.ones(2, 3))), RuntimeError,
         "index[1] = 10"),
    Case("gather: an index equal to the size along dim",
         lambda d: torch.gather(on(d, X), 1, on(d, labels(64, 10, 7, 10).view(32, 2))),
         lambda d: torch.gather(on(d, X), 1, on(d, labels(64, 10).view(32, 2))), RuntimeError, "index[3, 1] = 10"),
    Case("gather: a negative index (no wrap)",
         lambda d: torch.gather(on(d, X), 1, on(d, labels(64, 10, 0, -1).view(32, 2))),
         lambda d: torch.gather(on(d, X), 1, on(d, labels(64, 10).view(32, 2))), RuntimeError, "index[0, 0] = -1"),
    Case("scatter_ of a tensor",
         lambda d: on(d, torch.zeros(4, 10)).scatter_(1, *on(d, ids(1, 10, 2, 3).view(4, 1), torch.ones(4, 1))),
         lambda d: on(d, torch.zeros(4, 10)).scatter_(1, *on(d, ids(1, 9, 2, 3).view(4, 1), torch.ones(4, 1))),
         RuntimeError, "index[1, 0] = 10"),
    Case("scatter of a value",
         lambda d: on(d, torch.zeros(4, 10)).scatter(1, on(d, ids(1, 10, 2, 3).view(4, 1)), 1.0),
         lambda d: on(d, torch.zeros(4, 10)).scatter(1, on(d, ids(1, 9, 2, 3).view(4, 1)), 1.0),
         RuntimeError, "index[1, 0] = 10"),
    Case("scatter_add",
         lambda d: on(d, torch.zeros(4, 10)).scatter_add(1, *on(d, ids(1, 2, 2, 11).view(4, 1), torch.ones(4, 1))),
         lambda d: on(d, torch.zeros(4, 10)).scatter_add(1, *on(d, ids(1, 2, 2, 9).view(4, 1), torch.ones(4, 1))),
         RuntimeError, "index[3, 0] = 11"),
    Case("scatter_reduce",
         lambda d: on(d, torch.zeros(4, 10)).scatter_reduce(1, *on(d, ids(10, 2, 2, 3).view(4, 1), torch.ones(4, 1)),
                                                            "amax"),
         lambda d: on(d, torch.zeros(4, 10)).scatter_reduce(1, *on(d, ids(0, 2, 2, 3).view(4, 1), torch.ones(4, 1)),
                                                            "amax"), RuntimeError, "index[0, 0] = 10"),
    Case("binary_cross_entropy: an input above 1",
         lambda d: F.binary_cross_entropy(*on(d, torch.tensor([0.5, 1.5, 0.2]), torch.tensor([0., 1., 1.]))),
         lambda d: F.binary_cross_entropy(*on(d, torch.tensor([0.5, 0.9, 0.2]), torch.tensor([0., 1., 1.]))),
         RuntimeError, "input[1] = 1.5"),
    Case("binary_cross_entropy: a NaN input",
         lambda d: F.binary_cross_entropy(*on(d, torch.tensor([0.5, 0.1, float("nan")]), torch.tensor([0., 1., 1.]))),
         lambda d: F.binary_cross_entropy(*on(d, torch.tensor([0.5, 0.1, 0.3]), torch.tensor([0., 1., 1.]))),
         RuntimeError, "input[2] = nan"),
    Case("binary_cross_entropy: a target of 2",
         lambda d: F.binary_cross_entropy(*on(d, torch.tensor([0.5, 0.5]), torch.tensor([0., 2.]))),
         lambda d: F.binary_cross_entropy(*on(d, torch.tensor([0.5, 0.5]), torch.tensor([0., 1.]))),
         RuntimeError, "target[1] = 2.0"),
    Case("multinomial: a negative probability",
         lambda d: torch.multinomial(on(d, torch.tensor([[0.5, 0.5], [0.7, -0.1]])), 1),
         lambda d: torch.multinomial(on(d, torch.tensor([[0.5, 0.5], [0.7, 0.1]])), 1), RuntimeError,
         "input[1, 1] = -0.1"),
    Case("multinomial: NaN",
         lambda d: torch.multinomial(on(d, torch.tensor([0.5, float("nan")])), 2, replacement=True),
         lambda d: torch.multinomial(on(d, torch.tensor([0.5, 0.5])), 2, replacement=True), RuntimeError,
         "input[1] = nan"),
    Case("multinomial: inf",
         lambda d: torch.multinomial(on(d, torch.tensor([[float("inf"), 0.5]])), 1),
         lambda d: torch.multinomial(on(d, torch.tensor([[1.0, 0.5]])), 1), RuntimeError, "input[0, 0] = inf"),
    Case("multinomial: a row of zeros",
         lambda d: torch.multinomial(on(d, torch.tensor([[0.5, 0.5], [0., 0.], [0.2, 0.8]])), 1),
         lambda d: torch.multinomial(on(d, torch.tensor([[0.5, 0.5], [0., 1.], [0.2, 0.8]])), 1), RuntimeError,
         "input.sum(-1)[1] = 0.0"),
    Case("one_hot: a value equal to num_classes",
         lambda d: F.one_hot(on(d, labels(8, 10, 6, 10)), 10),
         lambda d: F.one_hot(on(d, labels(8, 10)), 10), RuntimeError, "tensor[6] = 10"),
    Case("one_hot: a negative value, num_classes inferred",
         lambda d: F.one_hot(on(d, labels(8, 10, 2, -3))),
         lambda d: F.one_hot(on(d, labels(8, 10)), 10), RuntimeError, "tensor[2] = -3"),
    Case("ctc_loss: a target equal to the blank label",
         lambda d: F.ctc_loss(*on(d, LP, ids(1, 2, 1, 0).view(2, 2), ids(5, 5), ids(2, 2))),
         lambda d: F.ctc_loss(*on(d, LP, ids(1, 2, 1, 3).view(2, 2), ids(5, 5), ids(2, 2))), None,
         "targets[1, 1] = 0"),
    Case("ctc_loss: a target past the classes, lengths as lists, padding beyond the length ignored",
         lambda d: F.ctc_loss(*on(d, LP, ids(1, 4, 3, 9).view(2, 2)), [5, 5], [2, 1]),
         lambda d: F.ctc_loss(*on(d, LP, ids(1, 3, 3, 9).view(2, 2)), [5, 5], [2, 1]), None, "targets[0, 1] = 4"),
    Case("cross_entropy over sequences (3-D input): the label is named at its place in the user's target",
         lambda d: F.cross_entropy(*on(d, data(2, 10, 4), labels(8, 10, 7, 10).view(2, 4))),
         lambda d: F.cross_entropy(*on(d, data(2, 10, 4), labels(8, 10).view(2, 4))), IndexError, "target[1, 3] = 10"),
    # Two index tensors: each copy has a place of its own in the probe's memory.
    Case("x[i, j]: the second of two index tensors past its dimension",
         lambda d: on(d, W)[on(d, ids(1, 2)), on(d, ids(0, 3))],
         lambda d: on(d, W)[on(d, ids(1, 2)), on(d, ids(0, 2))], IndexError, "indices[1][1] = 3", same_words=False),
]
