"""Resuming reuses a row only when everything that decides the point's result is unchanged:
the factory (name and source, with the kernels it imports), params, overrides, base machine
table (name and contents) and the package version. Rows outside the current spec are not
returned (the file keeps them).

counted_case appends a line to a log file per run, so the tests count what was recomputed."""
import shutil
import sys

import pandas as pd
import pytest

import pypto_sim as pto
import pypto_sim._version
from pypto_sim.timing.machine import resolve_machine

PARAMS = {"n": [64], "reps": [1, 2]}


def _sweep(tmp_path, factory="sweep_factories:counted_case", params=None, **kw):
    """A resumed in-process sweep of counted_case into tmp_path/rows.parquet."""
    params = dict(params or PARAMS, log=[str(tmp_path / "log")])
    return pto.sweep(factory, params=params, engine="serial", timeout=None,
                     out=tmp_path / "rows.parquet", resume=True, **kw)


def _runs(tmp_path):
    """How many points have run so far (lines in the log)."""
    log = tmp_path / "log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_an_unchanged_sweep_recomputes_nothing(tmp_path):
    """Two points run once; the same sweep resumed runs none and returns the same rows."""
    first = _sweep(tmp_path)
    again = _sweep(tmp_path)
    assert _runs(tmp_path) == 2
    assert again["total_cycles"].tolist() == first["total_cycles"].tolist()


def test_another_factory_recomputes(tmp_path):
    """counted_case_other(n, reps) runs counted_case(n, reps + 1): resuming with it must give
    its cycles (one more dependent multiply-add per element), not counted_case's rows."""
    first = _sweep(tmp_path)
    other = _sweep(tmp_path, "sweep_factories:counted_case_other")
    assert _runs(tmp_path) == 4
    assert other["total_cycles"].iloc[0] == first["total_cycles"].iloc[1]     # reps 1+1 == 2
    assert len(pd.read_parquet(tmp_path / "rows.parquet")) == 4                # nothing lost


def test_an_edited_factory_file_recomputes(tmp_path):
    """A factory given by path: editing its file (reps doubled) changes the identity."""
    src = tmp_path / "cases.py"
    src.write_text("from sweep_factories import counted_case as case\n")
    _sweep(tmp_path, f"{src}:case")
    _sweep(tmp_path, f"{src}:case")
    assert _runs(tmp_path) == 2
    src.write_text("from sweep_factories import counted_case\n"
                   "def case(log, n, reps):\n    return counted_case(log, n, 2 * reps)\n")
    _sweep(tmp_path, f"{src}:case")
    assert _runs(tmp_path) == 4


def test_an_edited_kernel_in_another_module_recomputes(tmp_path, monkeypatch):
    """The factory in cases.py launches a kernel imported from edited_kernel.py: editing only
    the kernel's file (x * 1.5 -> x * 2.5) changes the identity, so the resumed point runs
    again; an unchanged resume runs nothing."""
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "edited_kernel.py").write_text(
        "import pypto_sim as pto\n\n@pto.kernel\ndef scale(a, o, n):\n    i = pto.get_global_id()\n"
        "    if i < n:\n        pto.store(o + i, pto.load(a + i) * 1.5)\n")
    (tmp_path / "cases.py").write_text(
        "import numpy as np\nimport pypto_sim as pto\nfrom edited_kernel import scale\n\n"
        "def case(log, n):\n    open(log, 'a').write('run\\n')\n"
        "    a, o = pto.to_device(np.ones(n, np.float32)), pto.alloc_tensor(n * 4)\n"
        "    return pto.SweepCase(scale, grid=(1, 1, 1), block=(n, 1, 1), args=(a, o, n), outputs={'o': o})\n")
    try:
        _sweep(tmp_path, f"{tmp_path / 'cases.py'}:case", params={"n": [64]})
        _sweep(tmp_path, f"{tmp_path / 'cases.py'}:case", params={"n": [64]})
        assert _runs(tmp_path) == 1
        kernel = tmp_path / "edited_kernel.py"
        kernel.write_text(kernel.read_text().replace("* 1.5", "* 2.5"))
        _sweep(tmp_path, f"{tmp_path / 'cases.py'}:case", params={"n": [64]})
        assert _runs(tmp_path) == 2
    finally:
        sys.modules.pop("edited_kernel", None)


@pytest.mark.parametrize("how", ["dict", "local import"])
def test_a_kernel_reached_through_a_dict_or_an_import_in_the_body_is_hashed(tmp_path, monkeypatch, how):
    """The factory's module holds its kernels in a dict (KERNELS = {"one": add_one}), or the
    factory imports the kernel's module inside its body (which has not run when the identity is
    taken): editing only the kernel's file (+ 1.0 -> + 10.0) changes the factory's code hash."""
    from pypto_sim.sweep.factory import factory_ref
    monkeypatch.syspath_prepend(str(tmp_path))
    name = "dict_kernels" if how == "dict" else "body_kernels"
    kernel = tmp_path / f"{name}.py"
    kernel.write_text("import pypto_sim as pto\n\n@pto.kernel\ndef add_one(a, o):\n"
                      "    i = pto.get_global_id()\n    pto.store(o + i, pto.load(a + i) + 1.0)\n")
    reach = (f"from {name} import add_one\nKERNELS = {{'one': add_one}}\n\ndef case(n):\n    return KERNELS\n"
             if how == "dict" else f"def case(n):\n    from {name} import add_one\n    return add_one\n")
    (tmp_path / f"factory_{name}.py").write_text(reach)
    spec = f"{tmp_path / f'factory_{name}.py'}:case"
    try:
        before = factory_ref(spec)[0].sha256
        kernel.write_text(kernel.read_text().replace("+ 1.0", "+ 10.0"))
        assert factory_ref(spec)[0].sha256 != before
    finally:
        sys.modules.pop(name, None)


def test_an_edited_or_renamed_machine_table_recomputes(tmp_path):
    """The identity holds the table's name and contents, not its path: a byte-for-byte copy
    of ascend910b reuses its rows. Editing the copy in place (MUL latency 7 -> 17) reruns
    both points, and each dependent MUL costs 10 more: reps=1 does one (+10), reps=2 two
    (+20). Renaming the table (name = "mine") reruns them again."""
    table = tmp_path / "mine.toml"
    shutil.copy(resolve_machine("ascend910b").path, table)
    before = _sweep(tmp_path, machine="ascend910b")
    _sweep(tmp_path, machine=str(table))
    assert _runs(tmp_path) == 2
    text = table.read_text()
    assert "\nMUL = { latency = 7," in text
    table.write_text(text.replace("\nMUL = { latency = 7,", "\nMUL = { latency = 17,"))
    after = _sweep(tmp_path, machine=str(table))
    assert _runs(tmp_path) == 4
    assert (after["total_cycles"] - before["total_cycles"]).tolist() == [10, 20]
    table.write_text(table.read_text().replace('name = "ascend910b"', 'name = "mine"'))
    _sweep(tmp_path, machine=str(table))
    assert _runs(tmp_path) == 6


def test_another_package_version_recomputes(tmp_path, monkeypatch):
    """Rows of another pypto_sim version are not reused."""
    _sweep(tmp_path)
    monkeypatch.setattr(pypto_sim._version, "__version__", "0.0.0-other")
    _sweep(tmp_path)
    assert _runs(tmp_path) == 4


def test_other_overrides_recompute_and_a_narrower_spec_returns_only_its_points(tmp_path):
    """An override is part of the point; a resumed sweep of fewer points returns just those
    (reusing them) while the file keeps every row."""
    _sweep(tmp_path, params={"n": [64, 128], "reps": [1, 2]})
    narrow = _sweep(tmp_path, params={"n": [128], "reps": [2]})
    assert _runs(tmp_path) == 4 and len(narrow) == 1
    assert narrow["param.n"].tolist() == [128] and narrow["param.reps"].tolist() == [2]
    _sweep(tmp_path, params={"n": [128], "reps": [2]},
           machine_overrides={"instruction.MUL.latency": [9]})
    assert _runs(tmp_path) == 5
    assert len(pd.read_parquet(tmp_path / "rows.parquet")) == 5
