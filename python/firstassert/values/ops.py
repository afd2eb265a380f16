"""Which aten ops are checked, and their arguments by name.

A family module lists its checks (Check); table() turns them into a lookup from each overload of the named aten ops
(aten.scatter_.src, aten.scatter_.value, ...) to the check and that overload's argument names and defaults, read from
its schema, so that a check reads args["target"] whatever the overload and however the op was called.
"""

import torch


class Check:
    """ops: the aten op names (packets) it covers; on: the argument whose device decides whether the op is checked
    (only CUDA ops are: on the CPU PyTorch names the value itself); conditions(args) -> [scan.Condition], args by
    name; reads: the arguments whose values the conditions read (a tensor, or a list of them): probe mode keeps
    copies of those, and only the shapes of the others."""

    __slots__ = ("ops", "on", "conditions", "reads")

    def __init__(self, ops, on, conditions, reads):
        self.ops, self.on, self.conditions, self.reads = ops, on, conditions, frozenset(reads)


class Entry:
    """A check bound to one overload: its argument names in order and its defaults."""

    __slots__ = ("check", "names", "defaults")

    def __init__(self, check, overload):
        self.check = check
        arguments = overload._schema.arguments
        self.names = [argument.name for argument in arguments]
        self.defaults = {argument.name: argument.default_value for argument in arguments
                         if argument.has_default_value()}

    def arguments(self, args, kwargs):
        bound = dict(self.defaults)
        bound.update(zip(self.names, args))
        bound.update(kwargs)
        return bound


def table(checks):
    """{OpOverload: Entry} for every overload whose schema has the check's `on` argument, and the names of the ops
    this torch does not have (an older one: those go unchecked)."""
    found, missing = {}, []
    for check in checks:
        for name in check.ops:
            try:
                packet = getattr(torch.ops.aten, name)
                overloads = [getattr(packet, overload) for overload in packet.overloads()]
            except (AttributeError, RuntimeError):
                missing.append(name)
                continue
            for overload in overloads:
                if any(argument.name == check.on for argument in overload._schema.arguments):
                    found[overload] = Entry(check, overload)
    return found, missing
