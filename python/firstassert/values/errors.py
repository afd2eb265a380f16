"""The exceptions check mode raises, and their messages.

Each is firstassert's (ValuesError) and also what PyTorch raises on the CPU for the same bad value (IndexError for a
class label, an embedding id or an advanced index; RuntimeError for gather, scatter, binary_cross_entropy,
multinomial...), so code that catches PyTorch's error catches ours. The message starts with PyTorch's own CPU words where PyTorch has
some for the case ("Target 10 is out of bounds."; for ctc_loss's targets, embedding_bag's decreasing offsets and an
index past another dimension than 0, the words are firstassert's) and goes on with firstassert's: the op, the argument, the first offending element
and its value, how many there are, the bound and where it comes from, the dtype, and the user's line.
"""

import os
import sys


class ValuesError(Exception):
    """A value a CUDA op was handed breaks a condition its kernel asserts, PyTorch checks on the CPU, or its
    documentation requires (ctc_loss: no target equal to the blank), found
    before the op ran: nothing asserted and CUDA still works.

    Attributes: op, argument, index (a tuple: the first offending element), value, count (offending elements),
    total (elements checked), bound (where the bound comes from, e.g. 'classes = input.shape[1] = 10'), dtype,
    problem ('is outside [0, 10)'), torch_words (the message's first line: PyTorch's own CPU words where it has some)
    and detail (firstassert's facts after them, one line)."""

    def __init__(self, message, **facts):
        super().__init__(message)
        self.op = facts.get("op")
        self.argument = facts.get("argument")
        self.index = facts.get("index")
        self.value = facts.get("value")
        self.count = facts.get("count")
        self.total = facts.get("total")
        self.bound = facts.get("bound")
        self.dtype = facts.get("dtype")
        self.torch_words = facts.get("torch_words")
        self.detail = facts.get("detail")  # the facts after torch_words, as one line
        self.problem = facts.get("problem")  # what is wrong with the value: 'is outside [0, 10)'


class ValuesIndexError(ValuesError, IndexError):
    """Where PyTorch's CPU op raises IndexError (nll_loss, embedding, index_select, advanced indexing, take)."""


class ValuesRuntimeError(ValuesError, RuntimeError):
    """Where PyTorch's CPU op raises RuntimeError (gather, scatter, embedding_bag, binary_cross_entropy,
    multinomial, one_hot, ctc_loss)."""


_package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _user_line():
    """'file:line' of the innermost frame that is neither firstassert's nor torch's: the line that called the op."""
    torch_dir = os.path.dirname(getattr(sys.modules.get("torch"), "__file__", None) or "/nonexistent/") + os.sep
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith(_package_dir) or name.startswith(torch_dir) or name.startswith("<frozen")):
            return "%s:%d" % (name, frame.f_lineno)
        frame = frame.f_back
    return None


def element(argument, index):
    """'target[17]', 'weight[1, 3]', or the argument alone for a 0-dim tensor."""
    return argument + ("[%s]" % ", ".join(str(i) for i in index) if index else "")


def number(value):
    """A value as a person reads it: 10, -1, 2.0, -0.1 (a float32's -0.10000000149 to 8 digits), nan, inf."""
    if isinstance(value, float):
        return repr(value) if value.is_integer() and abs(value) < 1e16 else "%.8g" % value
    return str(value)


def found(error_class, torch_words, op, argument, where, problem, noun, bound=None, dtype=None, notes=()):
    """The exception for the first offending element `where` (scan.Where) of `argument`.

    problem: what is wrong with it ('is outside [0, 10)'); noun: (singular, plural, what they are) for the count,
    e.g. ('target', 'targets', 'out of range'); bound: where the bound comes from; notes: more facts, each a phrase."""
    singular, plural, state = noun
    parts = ["%s: %s = %s %s" % (op, element(argument, where.index), number(where.value), problem)
             + (" (%s)" % bound if bound else ""),
             "%d of %d %s %s %s" % (where.count, where.total, singular if where.total == 1 else plural,
                                    "is" if where.count == 1 else "are", state)]
    if dtype is not None:
        parts.append("%s dtype %s" % (argument, dtype))
    parts.extend(notes)
    detail = "; ".join(parts)
    line = _user_line()
    tail = ". Raised before the CUDA kernel ran%s: nothing asserted and CUDA still works." % (
        " (called at %s)" % line if line else "")
    return error_class(torch_words + "\nfirstassert: " + detail + tail, op=op, argument=argument,
                       index=where.index, value=where.value, count=where.count, total=where.total, bound=bound,
                       dtype=dtype, torch_words=torch_words, detail=detail, problem=problem)
