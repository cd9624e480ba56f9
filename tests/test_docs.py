"""Docs that cannot go stale: every code block of README.md and docs/*.md runs here (or carries a
mark saying why not), and every output a doc shows is compared with what its block prints.

The rules for blocks, marks and output comparison are in tests/doc_blocks.py's docstring. The
docs run once per session in one subprocess (tests/doc_blocks.py as a script): each doc in a
fresh namespace, device, machine and working directory; sh blocks in their own processes.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from doc_blocks import DocBlockError, ROOT, docs_with_blocks, matches, parse_blocks

DOCS = docs_with_blocks()


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """{doc: {fence line: {ok, stdout, error}}} from one run of every doc's blocks."""
    out = tmp_path_factory.mktemp("docs") / "results.json"
    # the docs show what the defaults give: no PYPTO_CHECK, cycle limit or engine of the caller's
    # (the compile cache's location is kept, so compiled executors are reused)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYPTO_") or k == "PYPTO_SIM_CACHE_DIR"}
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "doc_blocks.py"), str(out), *DOCS],
                       capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stderr[-4000:]
    return {doc: {int(k): v for k, v in by_line.items()} for doc, by_line in json.loads(out.read_text()).items()}


@pytest.mark.parametrize("doc", DOCS)
def test_every_block_runs_and_prints_what_the_doc_shows(doc, results):
    """Each python, sh and doctest block of the doc runs without error, and each output block
    the doc shows after one matches what it printed (doc_blocks.matches)."""
    failures = []
    for block in parse_blocks((ROOT / doc).read_text(), doc):
        if block.kind not in ("python", "sh", "doctest"):
            continue
        res = results[doc][block.line]
        if not res["ok"]:
            failures.append(f"{block.where}: the {block.kind} block failed:\n{res['error']}")
        elif block.output is not None and not matches(block.output.text, res["stdout"], block.output.lang):
            failures.append(f"{block.where}: the output shown at {block.output.where} is not what the "
                            f"block prints:\n--- shown\n{block.output.text}--- printed\n{res['stdout']}")
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("doc", DOCS)
def test_every_data_block_parses(doc):
    """TOML blocks are valid TOML and JSON blocks valid JSON (a doc's example table or trace
    event can be pasted)."""
    try:
        import tomllib
    except ModuleNotFoundError:                                   # Python 3.10
        import tomli as tomllib
    for block in parse_blocks((ROOT / doc).read_text(), doc):
        if block.kind == "toml":
            tomllib.loads(block.text)
        elif block.kind == "json" or (block.kind == "output" and block.lang == "json"):
            json.loads(block.text)


@pytest.mark.parametrize("doc", DOCS)
def test_checked_by_marks_name_a_test_that_reads_the_doc(doc):
    """A block marked <!-- checked-by: tests/FILE.py::NAME --> names a test that exists and whose
    source names this doc, so the output it shows is compared somewhere."""
    for block in parse_blocks((ROOT / doc).read_text(), doc):
        if block.kind != "checked-by":
            continue
        m = re.match(r"(tests/\w+\.py)::(\w+)", block.reason)
        assert m, f"{block.where}: checked-by needs tests/FILE.py::NAME, got {block.reason!r}"
        source = (ROOT / m.group(1)).read_text()
        body = source.split(f"def {m.group(2)}(", 1)
        assert len(body) == 2, f"{block.where}: {m.group(1)} has no test {m.group(2)}"
        assert doc in body[1].split("\ndef ", 1)[0], f"{block.where}: {m.group(2)} does not read {doc}"


# ------------------------------------------------------------------- the rules themselves
def test_an_output_block_follows_its_code_block_directly():
    """A bare block right after a python block is its output; one after prose is an error that
    names its line."""
    doc = "```python\nprint(1)\n```\n\n```\n1\n```\n"
    code, out = parse_blocks(doc, "x.md")
    assert code.kind == "python" and out.kind == "output" and code.output is out
    with pytest.raises(DocBlockError, match=r"x\.md:5: a ``` block that is neither run"):
        parse_blocks("```python\nprint(1)\n```\nsome prose\n```\n1\n```\n", "x.md")


def test_a_not_run_mark_needs_a_reason_and_skips_the_block_and_its_output():
    """<!-- not-run: why --> marks the block below it (and its output); an empty reason is an error."""
    code, out = parse_blocks("<!-- not-run: needs a board -->\n```sh\nnpu-smi\n```\n```\nok\n```\n", "x.md")
    assert (code.kind, code.reason, out.kind) == ("not-run", "needs a board", "output")
    with pytest.raises(DocBlockError, match="x.md:2: a not-run mark needs its reason"):
        parse_blocks("<!-- not-run: -->\n```sh\nls\n```\n", "x.md")
    with pytest.raises(DocBlockError, match="x.md:1: a not-run mark that is not right above a code block"):
        parse_blocks("<!-- not-run: slow -->\nprose\n```sh\nls\n```\n", "x.md")


def test_output_comparison_rule():
    """Exact after trailing spaces and outer blank lines; a `...` line stands for any lines and
    `...` in a line for any text; anything else that differs is a mismatch."""
    assert matches("a  \nb\n", "\na\nb  \n\n")
    assert not matches("total 510\n", "total 511\n")
    assert matches("head\n...\ntail\n", "head\n1\n2\ntail\n") and matches("head\n...\ntail\n", "head\ntail\n")
    assert not matches("head\n...\ntail\n", "head\n1\n")
    assert matches("took ... s, 510 cycles\n", "took 0.31 s, 510 cycles\n")
    assert not matches("took ... s, 510 cycles\n", "took 0.31 s, 512 cycles\n")
    assert matches('{"a": 1,\n "b": [2]}', '{"b": [2], "a": 1}', "json")
    assert not matches('{"a": 1}', '{"a": 2}', "json")


def test_every_doc_the_readme_links_is_a_document():
    """Each docs/*.md the README links opens with a title and holds prose: docs/debugging.md was
    once overwritten with '{}' and no block test noticed, since an empty doc has no blocks."""
    readme = (ROOT / "README.md").read_text()
    linked = sorted(set(re.findall(r"\]\((docs/[\w.-]+\.md)", readme)))
    assert linked
    for doc in linked:
        text = (ROOT / doc).read_text()
        assert text.startswith("# ") and len(text.split()) > 100, f"{doc} is not a document: {text[:60]!r}"
