"""The points of a sweep: the cartesian product of kernel parameters and machine overrides
(or explicit lists of either), each with a stable key for resuming."""
from __future__ import annotations

import itertools
import json


def _product(spec) -> list:
    """{name: [values]} -> every combination as a dict; a list of dicts is taken as it is."""
    if spec is None:
        return [{}]
    if isinstance(spec, (list, tuple)):
        return [dict(p) for p in spec]
    names = list(spec)
    values = [v if isinstance(v, (list, tuple)) else [v] for v in spec.values()]
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def expand_points(params=None, machine_overrides=None) -> list:
    """Every (params, overrides) point, params varying fastest last (as itertools.product)."""
    return [{"params": p, "overrides": o, "key": point_key(p, o)}
            for o in _product(machine_overrides) for p in _product(params)]


def point_key(params: dict, overrides: dict) -> str:
    """A stable text key of a point (its parameters and overrides, sorted, as JSON)."""
    return json.dumps({"params": params, "overrides": overrides}, sort_keys=True, default=str)
