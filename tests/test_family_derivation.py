"""A tile family is its descriptor and its kernels (issue 27, docs/design.md "Adding a tile
family"): the executors, the replay's dispatch, the reference executor, the ISA's family
groups and the ALU and roofline flags all read isa/tile_roles.py, so no package module may name
a family that one kernel runs, except

- isa/, where the descriptors and the ISA table live;
- the frontend module that registers the lowering of the family's builtins (its compile-time
  checks, found through the builtin registry, not by a list here);
- for the families the article's tile API runs too (``lane``), the modules of that path,
  whose runners and cost rules are written per family (LANE_PATH, each with its reason).

A family the AI core alone runs therefore needs nothing outside isa/, its kernels and its
lowering; the failure message names the module and line of every other place."""
import ast
import inspect
from pathlib import Path

import pypto_sim
from pypto_sim.frontend.registry import LOWERINGS
from pypto_sim.isa import load_isa
from pypto_sim.isa.tile_roles import FAMILY_ROLES, KERNEL_FAMILIES
from pypto_sim.exec import family_source, reference_tiles
from pypto_sim.exec.lane import executor

PACKAGE = Path(pypto_sim.__file__).parent

# the article's tile API (pto.alloc_local tiles) runs the lane families with code of its own
LANE_PATH = {
    "timing/tiles.py": "the article's tile costs and footprints, per family",
    "timing/row_reduce_paths.py": "the row reductions' A2/A3 paths (TRowReduceOps.hpp)",
    "exec/tile_loops.py": "the generated ALU loops of the fold and expand families",
    "calibrate/kernels.py": "the lane path's microbenchmarks",
    "frontend/operand_forms.py": "the lane path's operand forms (a tile or a row of words)",
    "frontend/aicore_builtins.py": "the lane families' typed-tile shape checks in lower_tile_op",
    "frontend/value_builtins.py": "the families lower_tile_op lowers",
}


def _family_literals(path: Path):
    """(line, family) of every string constant in path naming a family one kernel runs."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in KERNEL_FAMILIES:
            yield node.lineno, node.value


def _lowering_modules() -> dict:
    """family -> the package-relative files registering its builtins' lowerings."""
    out: dict = {}
    for entry in LOWERINGS.entries.values():
        family = entry.builtin.specs[0].family
        module = entry.lowering.fn.__module__.removeprefix("pypto_sim.").replace(".", "/") + ".py"
        out.setdefault(family, set()).add(module)
    return out


def test_no_module_names_a_family_its_descriptor_derives():
    lowerings = _lowering_modules()
    places = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("isa/"):
            continue
        for line, family in _family_literals(path):
            if rel in lowerings.get(family, ()):
                continue
            if FAMILY_ROLES[family].lane and rel in LANE_PATH:
                continue
            places.append(f"pypto_sim/{rel}:{line} names {family!r}")
    assert not places, ("derive these from the family's descriptor (isa/tile_roles.py), or move "
                        "them into the lowering of its builtins:\n  " + "\n  ".join(places))


def test_every_lane_path_module_still_names_a_lane_family():
    """The allowance is no wider than what is used: each LANE_PATH module names one."""
    unused = [rel for rel in LANE_PATH
              if not any(FAMILY_ROLES[f].lane for _, f in _family_literals(PACKAGE / rel))]
    assert not unused, f"LANE_PATH lists modules that name no lane family: {unused}"


def test_every_family_kernel_exists_in_both_executors_with_one_signature():
    """The descriptor's kernel is an @njit function of exec/compiled/ and a numpy function of
    exec/reference_tiles.py, and both take the descriptor's args, in order."""
    ex = executor()
    for family in KERNEL_FAMILIES:
        roles = FAMILY_ROLES[family]
        compiled, reference = getattr(ex, roles.kernel), reference_tiles.TILE_KERNELS[roles.kernel]
        n_compiled = len(inspect.signature(compiled.py_func).parameters)
        n_reference = len(inspect.signature(reference).parameters)
        assert n_compiled == n_reference == len(roles.args), (family, roles.kernel)
        family_source.kernel_module(roles.kernel)       # defined in exactly one compiled module


def test_the_family_groups_are_the_descriptors():
    """The ISA's family groups come from the descriptors: every family an ISA record names
    that moves tile data has a descriptor, and every vector family's record runs on V."""
    isa = load_isa()
    for spec in isa.specs:
        if spec.family.startswith("tile_") and spec.family != "tile_sync":
            assert spec.family in FAMILY_ROLES, spec.name
        if spec.family in KERNEL_FAMILIES:
            assert spec.pipe == "vector", spec.name
