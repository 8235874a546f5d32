"""The bundle's lazy runtime hooks (packaging/rthook_lazy.py): PyInstaller's hook files for a
module run once, in their order, right after that module's first import (not at start), the
module keeps its own loader, and a helper process multiprocessing starts (``-c``) runs them
all first.  Exercised in a plain interpreter with a stand-in ``sys._MEIPASS`` and hook files
that log what they see; the built bundle itself is checked by packaging/build.sh in CI
(screenshot, scan and what-if of the demo)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

HOOK = Path(__file__).resolve().parents[1] / "packaging" / "rthook_lazy.py"

LOGGING_HOOK = textwrap.dedent("""
    import json, sys
    mod = sys.modules.get({module!r})
    with open({log!r}, "a") as fh:
        fh.write(json.dumps([{name!r}, mod is not None and hasattr(mod, {attr!r})]) + "\\n")
""")


def _bundle(tmp_path: Path) -> Path:
    root = tmp_path / "meipass"
    hooks = root / "dbxray_rthooks"
    hooks.mkdir(parents=True)
    log = tmp_path / "log.jsonl"
    plan = [("colorsys", "pyi_rth_a.py", "rgb_to_hsv"), ("colorsys", "pyi_rth_b.py", "hsv_to_rgb"),
            ("wave", "pyi_rth_c.py", "open")]
    for module, name, attr in plan:
        (hooks / name).write_text(LOGGING_HOOK.format(module=module, log=str(log), name=name, attr=attr))
    (hooks / "order.txt").write_text("".join(f"{m} {n}\n" for m, n, _ in plan))
    return root


def _run(tmp_path: Path, body: str, *argv: str) -> list:
    root = _bundle(tmp_path)
    code = textwrap.dedent(f"""
        import json, sys
        sys._MEIPASS = {str(root)!r}
        sys.argv = ["dbxray", *{list(argv)!r}]
        exec(compile(open({str(HOOK)!r}).read(), "rthook_lazy", "exec"), {{"__name__": "__main__"}})
        def log():
            try:
                return [json.loads(l) for l in open({str(tmp_path / "log.jsonl")!r})]
            except FileNotFoundError:
                return []
        out = []
    """) + textwrap.dedent(body) + "\nprint(json.dumps(out))\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_hooks_run_after_their_module_once_and_in_order(tmp_path):
    out = _run(tmp_path, """
        out.append(log())                                   # nothing at start
        import colorsys
        out.append(log())
        import colorsys                                     # a second import runs nothing
        out.append(log())
        out.append([type(colorsys.__loader__).__name__, type(colorsys.__spec__.loader).__name__])
        out.append(sum(type(f).__name__ == "_LazyRuntimeHooks" for f in sys.meta_path))
        import wave
        out.append(log())
        out.append(sum(type(f).__name__ == "_LazyRuntimeHooks" for f in sys.meta_path))
    """)
    start, after_colorsys, again, loaders, finders_left, after_wave, finders_end = out
    assert start == []
    # both colorsys hooks, in order, each seeing the module fully executed
    assert after_colorsys == [["pyi_rth_a.py", True], ["pyi_rth_b.py", True]]
    assert again == after_colorsys
    assert loaders == ["SourceFileLoader", "SourceFileLoader"]      # the wrapper left no trace
    assert finders_left == 1
    assert after_wave == after_colorsys + [["pyi_rth_c.py", True]]
    assert finders_end == 0                                  # gone once every hook ran


def test_a_multiprocessing_helper_runs_every_hook_first(tmp_path):
    out = _run(tmp_path, """
        out.append(log())
        out.append(sum(type(f).__name__ == "_LazyRuntimeHooks" for f in sys.meta_path))
    """, "-c", "from multiprocessing.forkserver import main; main()")
    ran, finders = out
    assert [name for name, _ in ran] == ["pyi_rth_a.py", "pyi_rth_b.py", "pyi_rth_c.py"]
    assert finders == 0


def test_a_module_imported_before_the_hook_gets_its_hooks_at_once(tmp_path):
    root = _bundle(tmp_path)
    (root / "dbxray_rthooks" / "order.txt").write_text("json pyi_rth_a.py\n")
    code = textwrap.dedent(f"""
        import json, sys
        sys._MEIPASS = {str(root)!r}
        exec(compile(open({str(HOOK)!r}).read(), "rthook_lazy", "exec"), {{"__name__": "__main__"}})
        print(open({str(tmp_path / "log.jsonl")!r}).read().count("pyi_rth_a.py"))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1"
