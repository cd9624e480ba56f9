"""`pypto-sim cache [--prune]` (runtime/cache.py): the compiled executor's cache folder holds one
numba folder per compiled module and closure digest and one file per generated module; what
the running code loads is current, the rest (other versions' code) is stale, and pruning
removes the stale entries only."""
import sys
from pathlib import Path

from pypto_sim import cli
from pypto_sim.exec.jit_cache import COMPILED_DIR, GENERATED_PREFIX, closure_digest
from pypto_sim.exec.lane import executor
from pypto_sim.runtime.cache import cache_report, prune_cache


# import the compiled modules (and load the generated ones) now, under the session's cache
# folder: numba binds each function's cache folder when its module is imported
executor()


def _fill(folder: Path) -> dict:
    """A cache folder with one current and one stale entry of each kind; their paths by name."""
    alu = next(Path(m.__file__) for n, m in sys.modules.items() if n.startswith(GENERATED_PREFIX + "alu_"))
    paths = {
        "current lane": folder / "numba" / f"lane-{closure_digest(COMPILED_DIR / 'lane.py')}",
        "stale lane": folder / "numba" / "lane-0000000000000000",
        "current alu": folder / "generated" / alu.name,
        "stale alu": folder / "generated" / f"{GENERATED_PREFIX}alu_0123456789abcdef.py",
        "stale alu numba": folder / "numba" / f"{GENERATED_PREFIX}alu_0123456789abcdef-fedcba9876543210",
    }
    for name, path in paths.items():
        if path.suffix == ".py":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x = 1\n")                     # 6 bytes
        else:
            path.mkdir(parents=True)
            (path / "f.nbi").write_bytes(b"0123456789")      # 10 bytes
    return paths


def test_the_report_tells_current_from_stale_and_prune_removes_only_stale(tmp_path, monkeypatch):
    """Two current entries (16 bytes: a 10-byte index and a 6-byte module) and three stale
    ones (26 bytes); after pruning only the current ones remain."""
    monkeypatch.setenv("PYPTO_SIM_CACHE_DIR", str(tmp_path))
    paths = _fill(tmp_path)
    report = cache_report()
    assert report.folder == tmp_path
    assert set(report.current) == {paths["current lane"], paths["current alu"]}
    assert set(report.stale) == {paths["stale lane"], paths["stale alu"], paths["stale alu numba"]}
    assert (report.current_bytes, report.stale_bytes) == (16, 26)
    prune_cache()
    assert {p for p in paths.values() if p.exists()} == {paths["current lane"], paths["current alu"]}
    assert cache_report().stale == []


def test_the_command_shows_the_cache_and_prunes_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PYPTO_SIM_CACHE_DIR", str(tmp_path))
    paths = _fill(tmp_path)
    assert cli.main(["cache"]) == 0
    out = capsys.readouterr().out
    assert f"cache: {tmp_path}" in out and "stale:   3 entries" in out
    assert paths["stale lane"].exists()
    assert cli.main(["cache", "--prune"]) == 0
    assert "removed 3 stale entries" in capsys.readouterr().out
    assert not paths["stale lane"].exists() and paths["current lane"].exists()
