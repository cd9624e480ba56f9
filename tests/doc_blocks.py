"""The code blocks of README.md and docs/*.md, how each is checked, and the runner that runs them.

Rules (tests/test_docs.py enforces them; a block that fits none is an error naming its line):

- a ```python block runs; a doc's python blocks run in order in one namespace (they build on
  each other), each doc in a fresh namespace, device and machine, in its own temporary working
  directory that holds links to the repository's ``examples/``, ``latency_tables/`` and
  ``tests/``, so a doc's relative paths work and the files it writes are thrown away;
- a ```sh block runs with bash -e in the same directory (``pypto-sim`` and ``python`` see this
  checkout); a shell command that installs packages is marked not-run;
- a block with no language (or ``text``, ``output``, ``json``) right after a block that runs,
  with only blank lines between them, is that block's *output*: what the block prints must
  match it (``matches`` says what may differ); a ```json output is compared as parsed JSON;
- a block with no language whose first line starts with ``>>>`` is a doctest session, run in
  the doc's namespace (ELLIPSIS on);
- a ```toml block must parse; a ```json block that is nobody's output must parse;
- ``<!-- not-run: REASON -->`` on the line above a block (blank lines allowed between) skips it,
  and the output block after it; the reason is required. ``<!-- checked-by: TEST -->`` skips it
  here because the named test (``tests/FILE.py::NAME``) runs it and compares the output block
  that follows with what it prints.

Run as a script (``python tests/doc_blocks.py RESULTS.json DOC...``) it runs the docs' python,
sh and doctest blocks and writes what each printed; tests/test_docs.py starts it once.
"""
from __future__ import annotations

import contextlib
import contextvars
import doctest
import io
import json
import os
import re
import runpy
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT_LANGS = ("", "text", "output", "json")
MARK = re.compile(r"^<!--\s*(not-run|checked-by):(.*?)-->\s*$")
LINKED = ("examples", "latency_tables", "tests")


class DocBlockError(Exception):
    """A block the rules do not cover (no language, not an output, not marked), or a bad mark."""


@dataclass
class Block:
    """One fenced block: where it is, its language, its text and how it is checked."""
    doc: str
    line: int                 # 1-based line of the opening fence
    lang: str
    text: str
    kind: str = ""            # python, sh, doctest, output, toml, json, not-run, checked-by
    reason: str = ""          # the mark's reason (not-run, checked-by)
    output: "Block | None" = field(default=None, repr=False)   # the output block after it

    @property
    def where(self) -> str:
        """doc:line, for messages."""
        return f"{self.doc}:{self.line}"


def docs_with_blocks(root: Path = ROOT) -> list:
    """README.md and every docs/*.md, as paths relative to root."""
    return ["README.md"] + sorted(f"docs/{p.name}" for p in (root / "docs").glob("*.md"))


def parse_blocks(text: str, doc: str) -> list:
    """The doc's blocks, classified by the rules of this module's docstring, in order. Output
    blocks are attached to the block they follow (``Block.output``) and also listed."""
    lines = text.splitlines()
    blocks, i, prev_end, prev_nonblank = [], 0, -2, ""
    while i < len(lines):
        line = lines[i]
        if not line.startswith("```"):
            if line.strip():
                if MARK.match(prev_nonblank):
                    raise DocBlockError(f"{doc}:{i}: a {prev_nonblank.split(':')[0][4:].strip()} mark that is "
                                        "not right above a code block (only blank lines may come between)")
                prev_nonblank = line.strip()
            i += 1
            continue
        start, lang = i, line[3:].strip()
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise DocBlockError(f"{doc}:{start + 1}: a code block that is never closed")
        block = Block(doc, start + 1, lang, "\n".join(body) + "\n")
        gap = lines[prev_end + 1:start] if prev_end >= 0 else None
        follows = blocks[-1] if blocks and gap is not None and not any(s.strip() for s in gap) else None
        mark = MARK.match(prev_nonblank)
        if mark:
            block.kind, block.reason = mark.group(1), mark.group(2).strip()
            if not block.reason:
                raise DocBlockError(f"{block.where}: a {block.kind} mark needs its reason "
                                    f"(<!-- {block.kind}: why -->)")
        elif follows is not None and lang in OUTPUT_LANGS and follows.kind != "output":
            block.kind = "output"
            follows.output = block
        elif lang == "python":
            block.kind = "python"
        elif lang == "sh":
            block.kind = "sh"
        elif lang in ("toml", "json"):
            block.kind = lang
        elif lang == "" and body and body[0].startswith(">>>"):
            block.kind = "doctest"
        else:
            raise DocBlockError(
                f"{block.where}: a ```{lang} block that is neither run nor the output of the block "
                "before it: give it a language that runs (python, sh), put it right after the "
                "block whose output it is, or mark it <!-- not-run: why --> on the line above")
        blocks.append(block)
        prev_end, prev_nonblank = i, ""
        i += 1
    return blocks


def matches(expected: str, actual: str, lang: str = "") -> bool:
    """Whether printed output ``actual`` is what the doc shows (``expected``). Trailing spaces
    and leading or trailing blank lines do not count; a line that is only ``...`` stands for any
    number of lines (rows the doc leaves out); ``...`` inside a line stands for any text on that
    line (a figure that differs between runs, such as a wall time or a temporary path). A json
    output compares as parsed JSON."""
    if lang == "json":
        try:
            return json.loads(expected) == json.loads(actual)
        except ValueError:
            return False
    exp = _lines(expected)
    act = _lines(actual)
    return _match_lines(exp, act)


def _lines(text: str) -> list:
    out = [line.rstrip() for line in text.strip("\n").splitlines()]
    while out and not out[0]:
        out.pop(0)
    while out and not out[-1]:
        out.pop()
    return out


def _match_lines(exp: list, act: list) -> bool:
    if not exp:
        return not act
    if exp[0] == "...":
        return any(_match_lines(exp[1:], act[k:]) for k in range(len(act) + 1))
    if not act:
        return False
    pattern = ".*".join(re.escape(part) for part in exp[0].split("..."))
    return re.fullmatch(pattern, act[0]) is not None and _match_lines(exp[1:], act[1:])


# ------------------------------------------------------------------------------------ the runner
def _workdir(doc: str) -> Path:
    d = Path(tempfile.mkdtemp(prefix="doc_" + Path(doc).stem + "_"))
    for name in LINKED:
        (d / name).symlink_to(ROOT / name)
    return d


def _run_python(block: Block, n: int, ns: dict, work: Path) -> dict:
    path = work / f"{Path(block.doc).stem}_block{n}.py"
    path.write_text(block.text)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(block.text, str(path), "exec"), ns)
    except BaseException:                                     # noqa: BLE001 - reported, not hidden
        return {"ok": False, "stdout": out.getvalue(), "error": traceback.format_exc()}
    return {"ok": True, "stdout": out.getvalue(), "error": ""}


def _run_doctest(block: Block, ns: dict) -> dict:
    test = doctest.DocTestParser().get_doctest(block.text, ns, block.where, block.doc, block.line)
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test, out=out.write, clear_globs=False)
    ok = runner.failures == 0
    return {"ok": ok, "stdout": "", "error": "" if ok else out.getvalue()}


def _in_process_commands(text: str):
    """The block's commands as argv lists when every one is ``python SCRIPT ARGS`` or
    ``pypto-sim ARGS`` with nothing for a shell to do (no pipes, redirections, variables or
    environment assignments), else None."""
    cmds = []
    for line in text.splitlines():
        argv = shlex.split(line, comments=True)
        if not argv:
            continue
        if (argv[0] not in ("python", "pypto-sim") or (argv[0] == "python" and (len(argv) < 2 or argv[1].startswith("-")))
                or any(c in tok for tok in argv for c in "|<>;&$`")):
            return None
        cmds.append(argv)
    return cmds


def _run_command_in_process(argv: list) -> int:
    """Run ``python SCRIPT ARGS`` as the interpreter would (the script's folder first on
    sys.path, run as __main__) or ``pypto-sim ARGS`` through the CLI's main; the exit code."""
    from pypto_sim.cli import main as cli_main
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    try:
        if argv[0] == "pypto-sim":
            sys.argv = argv[:]
            return int(cli_main(argv[1:]) or 0)
        sys.argv = argv[1:]
        sys.path.insert(0, str(Path(argv[1]).resolve().parent))
        runpy.run_path(argv[1], run_name="__main__")
        return 0
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path


def _run_sh(block: Block, work: Path, cache: dict) -> dict:
    """Run a sh block: in this process when it is only python / pypto-sim commands (each in a
    fresh device and machine; saves a second of start-up per command), else with bash -e."""
    if block.text in cache:
        return cache[block.text]
    cmds = _in_process_commands(block.text)
    if cmds is not None:
        out = io.StringIO()
        res = {"ok": True, "stdout": "", "error": ""}
        for argv in cmds:
            try:
                with contextlib.redirect_stdout(out):
                    code = contextvars.copy_context().run(_run_command_in_process, argv)
            except BaseException:                             # noqa: BLE001 - reported, not hidden
                code, res["error"] = 1, traceback.format_exc()
            if code != 0:
                res["ok"] = False
                res["error"] = f"`{shlex.join(argv)}` exited with {code}\n{res['error']}"
                break
        res["stdout"] = out.getvalue()
        cache[block.text] = res
        return res
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env["MPLBACKEND"] = "Agg"
    try:
        r = subprocess.run(["bash", "-e", "-c", block.text], cwd=work, env=env, capture_output=True,
                           text=True, timeout=300)
        res = {"ok": r.returncode == 0, "stdout": r.stdout,
               "error": "" if r.returncode == 0 else f"exit {r.returncode}\n{r.stderr[-4000:]}"}
    except subprocess.TimeoutExpired:
        res = {"ok": False, "stdout": "", "error": "timed out after 300 s"}
    cache[block.text] = res
    return res


def run_doc(doc: str, sh_cache: dict) -> dict:
    """Run one doc's python, sh and doctest blocks in order; {fence line: result}."""
    blocks = parse_blocks((ROOT / doc).read_text(), doc)
    work = _workdir(doc)
    ns = {"__name__": "__main__"}
    results = {}
    old, saved_path, saved_modules = os.getcwd(), sys.path[:], set(sys.modules)
    os.chdir(work)
    try:
        for n, block in enumerate(blocks):
            start = time.perf_counter()
            if block.kind == "python":
                results[block.line] = _run_python(block, n, ns, work)
            elif block.kind == "doctest":
                results[block.line] = _run_doctest(block, ns)
            elif block.kind == "sh":
                results[block.line] = _run_sh(block, work, sh_cache)
            else:
                continue
            results[block.line]["seconds"] = round(time.perf_counter() - start, 2)
    finally:
        os.chdir(old)
        shutil.rmtree(work, ignore_errors=True)       # what the doc wrote goes with it
        sys.path[:] = saved_path
        for key in [k for k in sys.path_importer_cache if not os.path.isabs(k) or k.startswith(str(work))]:
            del sys.path_importer_cache[key]          # finders of relative or removed folders                      # what one doc imports, the next does not see
        for name in set(sys.modules) - saved_modules:
            # llvmlite stays: numba holds its classes, and a compile in a later doc that
            # imported llvmlite.ir again failed isinstance checks (AssertionError in llvmlite's
            # Constant) whenever the executor's numba cache was cold
            if not name.startswith(("pypto_sim", "numba", "llvmlite", "numpy", "matplotlib", "pandas",
                                    "dask")):
                del sys.modules[name]
    return results


def main(argv: list) -> None:
    """Run the docs named in argv[1:] and write {doc: {line: result}} as JSON to argv[0]."""
    out, docs = argv[0], argv[1:]
    sys.path.insert(0, str(ROOT))            # this checkout's pypto_sim, whatever is installed
    sh_cache, results = {}, {}
    for doc in docs:
        # each doc in a copied context: its own device and active machine, none left behind
        results[doc] = contextvars.copy_context().run(run_doc, doc, sh_cache)
    Path(out).write_text(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
