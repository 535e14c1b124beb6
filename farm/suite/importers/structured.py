"""A GPU MODE problem's data as a flat list of tensors plus the structure that rebuilds it.

GPU MODE's `generate_input` may return any nesting of tuples, lists, dicts, dataclasses and
torch modules (a KV cache) holding tensors, ints, floats, strings and config dicts, and a
submission's `custom_kernel(data)` receives exactly that. The harness moves, clones, checks and
times tensors only, so the data is flattened (torch.utils._pytree) into its tensors and a
`Structure`: the tree definition and the non-tensor leaves, kept as constants. `unflatten`
rebuilds an equal object around (possibly other) tensors of the same shapes.

This file is copied verbatim beside each imported GPU MODE problem's reference.py (which may
import only torch and its own files); the importer uses it to describe the data.
"""

import copy
import dataclasses

import torch
from torch.utils import _pytree as pytree


class _Template:
    """A tree node's context: the object to copy when rebuilding (compared by identity, so that
    a dataclass holding tensors is never compared field by field)."""

    def __init__(self, obj, names):
        self.obj = obj
        self.names = names

    def __repr__(self):
        return type(self.obj).__name__ + "(" + ", ".join(map(str, self.names)) + ")"


def _dataclass_flatten(obj):
    names = [f.name for f in dataclasses.fields(obj)]
    template = copy.copy(obj)  # without its children, so that it holds no tensor alive
    for name in names:
        object.__setattr__(template, name, None)
    return [getattr(obj, n) for n in names], _Template(template, names)


def _dataclass_unflatten(values, template):
    new = copy.copy(template.obj)
    for name, value in zip(template.names, values):
        object.__setattr__(new, name, value)
    return new


_MODULE_SLOTS = ("_parameters", "_buffers", "_modules")


def _module_flatten(module):
    names = [(slot, key) for slot in _MODULE_SLOTS for key in getattr(module, slot)]
    template = copy.copy(module)  # without its children, so that it holds no tensor alive
    template.__dict__ = dict(module.__dict__)
    for slot in _MODULE_SLOTS:
        kept = getattr(module, slot)
        setattr(
            template,
            slot,
            {k: _Slot(type(v), getattr(v, "requires_grad", False)) for k, v in kept.items()},
        )
    return [getattr(module, slot)[key] for slot, key in names], _Template(template, names)


class _Slot:
    """What a module's child was: its type (Parameter or not) and requires_grad."""

    def __init__(self, kind, requires_grad):
        self.kind = kind
        self.requires_grad = requires_grad


def _module_unflatten(values, template):
    new = copy.copy(template.obj)
    new.__dict__ = dict(template.obj.__dict__)
    for slot in _MODULE_SLOTS:
        setattr(new, slot, dict(getattr(template.obj, slot)))
    for (slot, key), value in zip(template.names, values):
        was = getattr(template.obj, slot)[key]
        if (
            issubclass(was.kind, torch.nn.Parameter)
            and isinstance(value, torch.Tensor)
            and not isinstance(value, torch.nn.Parameter)
        ):
            value = torch.nn.Parameter(value, requires_grad=was.requires_grad)
        getattr(new, slot)[key] = value
    return new


def _register(value):
    """Make the dataclass and module types inside `value` tree nodes (once per type)."""
    if isinstance(value, torch.Tensor):
        return
    if isinstance(value, tuple | list):
        children = list(value)
    elif isinstance(value, dict):
        children = list(value.values())
    else:
        kind = type(value)
        if kind not in pytree.SUPPORTED_NODES:
            if dataclasses.is_dataclass(value) and not isinstance(value, type):
                pytree.register_pytree_node(kind, _dataclass_flatten, _dataclass_unflatten)
            elif isinstance(value, torch.nn.Module):
                pytree.register_pytree_node(kind, _module_flatten, _module_unflatten)
            else:
                return
        children, _ = pytree.SUPPORTED_NODES[kind].flatten_fn(value)
    for child in children:
        _register(child)


class _Tensor:
    def __repr__(self):
        return "T"


class Structure:
    """How to rebuild data from its tensors: the tree and its non-tensor leaves."""

    def __init__(self, spec, constants):
        self.spec = spec
        self.constants = constants  # leaf position -> value, for every non-tensor leaf

    def describe(self):
        """The tree with each tensor leaf as `T` and each constant as its value (for people)."""
        leaves = [self.constants.get(i, _Tensor()) for i in range(self.spec.num_leaves)]
        return _describe(pytree.tree_unflatten(leaves, self.spec))


def _describe(value):
    if isinstance(value, tuple | list):
        inner = ", ".join(_describe(v) for v in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_describe(v)}" for k, v in value.items()) + "}"
    if isinstance(value, torch.nn.Module):
        return type(value).__name__ + "(module)"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return type(value).__name__ + "(" + ", ".join(f.name for f in fields) + ")"
    return repr(value)


def flatten(data):
    """(tensors in order, Structure) of `data`."""
    _register(data)
    leaves, spec = pytree.tree_flatten(data)
    tensors = [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)]
    constants = {i: leaf for i, leaf in enumerate(leaves) if not isinstance(leaf, torch.Tensor)}
    return tensors, Structure(spec, constants)


def unflatten(structure, tensors):
    """The data of `structure` around `tensors` (as many, in the order flatten gave them)."""
    given = iter(tensors)
    leaves = [
        structure.constants[i] if i in structure.constants else next(given)
        for i in range(structure.spec.num_leaves)
    ]
    return pytree.tree_unflatten(leaves, structure.spec)


def kind(data):
    """ "tensor", "tuple" (a flat tuple of tensors) or "structured" (a list of tensors too: it
    is rebuilt as a list)."""
    if isinstance(data, torch.Tensor):
        return "tensor"
    if isinstance(data, tuple) and all(isinstance(t, torch.Tensor) for t in data):
        return "tuple"
    return "structured"
