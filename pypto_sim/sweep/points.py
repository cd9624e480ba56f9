"""The points of a sweep: the cartesian product of kernel parameters and machine overrides
(or explicit lists of either), each value checked, each point with a readable key."""
from __future__ import annotations

import itertools
import json

import numpy as np

from ..errors import SweepError

_SCALARS = (bool, int, float, str)


def _scalar(what: str, name, value):
    """A parameter value as a plain Python scalar (numpy scalars converted), or SweepError."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, _SCALARS):
        return value
    raise SweepError(f"{what} {name!r}: value {value!r} ({type(value).__name__}) is not a "
                     "bool, int, float or str", hint="give each point's value as a scalar; "
                     "several values as a list, tuple, range or 1-D numpy array")


def _values(what: str, name, value) -> list:
    """A parameter's values: a list, tuple, range or 1-D array expands to one point each; a
    scalar is one point."""
    if not isinstance(name, str) or not name:
        raise SweepError(f"{what} name {name!r} must be a non-empty str")
    if isinstance(value, np.ndarray) and value.ndim > 1:
        raise SweepError(f"{what} {name!r}: a {value.ndim}-D array of shape {value.shape}; "
                         "values must be a 1-D sequence", hint="flatten it, or pass a list")
    if isinstance(value, (list, tuple, range, np.ndarray)):
        values = [_scalar(what, name, v) for v in value]
        if not values:
            raise SweepError(f"{what} {name!r} has no values", hint="give at least one value")
        return values
    return [_scalar(what, name, value)]


def _product(what: str, spec) -> list:
    """{name: values} -> every combination as a dict; a list of dicts is taken as it is."""
    if spec is None:
        return [{}]
    if isinstance(spec, (list, tuple)):
        points = []
        for i, p in enumerate(spec):
            if not isinstance(p, dict):
                raise SweepError(f"{what} point {i} is a {type(p).__name__}, not a dict")
            for name in p:
                if not isinstance(name, str) or not name:
                    raise SweepError(f"{what} point {i}: name {name!r} must be a non-empty str")
            points.append({k: _scalar(what, k, v) for k, v in p.items()})
        if not points:
            raise SweepError(f"{what} is an empty list: no points to run")
        return points
    if not isinstance(spec, dict):
        raise SweepError(f"{what} must be a dict {{name: values}} or a list of dicts, not "
                         f"{type(spec).__name__}")
    names = list(spec)
    values = [_values(what, name, spec[name]) for name in names]
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def expand_points(params=None, machine_overrides=None) -> list:
    """Every (params, overrides) point, params varying fastest (as itertools.product); a
    value that is not a scalar, or a point given twice, is a SweepError naming it."""
    points, seen = [], set()
    for o in _product("machine override", machine_overrides):
        for p in _product("parameter", params):
            key = point_key(p, o)
            if key in seen:
                raise SweepError(f"the point {key} is given twice",
                                 hint="remove the repeated value: each point runs once")
            seen.add(key)
            points.append({"params": p, "overrides": o, "key": key})
    return points


def point_key(params: dict, overrides: dict) -> str:
    """A readable text key of a point (its parameters and overrides, sorted, as JSON)."""
    return json.dumps({"params": params, "overrides": overrides}, sort_keys=True)
