"""What decides a sweep point's result, as one hash: the factory (its name and the hash of its
source file and the program files it reaches, factory.code_sha256), the parameters, the
machine overrides, the base machine (its name and a digest of every number in it) and the
package version. Resuming reuses a row only when its identity is the point's."""
from __future__ import annotations

import dataclasses
import hashlib
import json


def _canonical(value):
    """A JSON-able form of a table value (dataclasses, tuples, dicts with tuple keys, paths)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return sorted(([_canonical(k), _canonical(v)] for k, v in value.items()), key=repr)
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


# fields of Machine that do not decide a simulation's result
_NOT_RESULT = {"path", "description", "pipe_index"}


def machine_digest(machine) -> str:
    """sha256 of every field of a Machine that can change a result (values, pipes, instruction
    timings, fusions, vector formulas, their sources and the ISA version): a table edited in
    place, or a formulas CSV changed, gives another digest."""
    body = {f.name: _canonical(getattr(machine, f.name)) for f in dataclasses.fields(machine)
            if f.name not in _NOT_RESULT}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def point_identity(factory, params: dict, overrides: dict, machine_name: str, digest: str,
                   version: str) -> str:
    """The identity of one point: sha256 over the factory (label and source hash), params,
    overrides, base machine name and digest, and the package version."""
    body = {"factory": factory.label, "factory_sha256": factory.sha256, "params": params,
            "overrides": overrides, "machine": machine_name, "machine_sha256": digest,
            "version": version}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
