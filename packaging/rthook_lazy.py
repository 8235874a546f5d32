# PyInstaller runtime hook of the dbxray bundle (packaging/dbxray.spec): PyInstaller's own
# runtime hooks for PySide6, multiprocessing, inspect and pkgutil, which import their module
# and patch it at every start (~150 ms of every command on the 2-core machine, `dbxray --help`
# 0.21 s against 0.06 s without them), run instead right after their module is first imported,
# so that `dbxray scan` pays for none of them and the window for what it uses.  The spec copies
# those hook files unchanged into `dbxray_rthooks/` with `order.txt` (module, hook file, in
# PyInstaller's order).  A process that multiprocessing started from this executable
# (`-c` in its arguments: the fork server, the resource tracker) runs them all first, as
# PyInstaller would.


def _dbxray_lazy_runtime_hooks():
    import os
    import sys

    folder = os.path.join(sys._MEIPASS, "dbxray_rthooks")
    try:
        with open(os.path.join(folder, "order.txt"), encoding="utf-8") as fh:
            order = [tuple(line.split()) for line in fh if line.strip()]
    except OSError:
        return

    def run(hook):
        path = os.path.join(folder, hook)
        with open(path, encoding="utf-8") as fh:
            code = compile(fh.read(), path, "exec")
        exec(code, {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__})

    if "-c" in sys.argv[1:]:
        for _, hook in order:
            run(hook)
        return

    pending = {}
    for module, hook in order:
        pending.setdefault(module, []).append(hook)

    class _RunHooksAfter:
        """The module's own loader, with its hooks run once the module has executed."""

        def __init__(self, loader, hooks):
            self._loader = loader
            self._hooks = hooks

        def __getattr__(self, name):
            return getattr(self._loader, name)

        def create_module(self, spec):
            return self._loader.create_module(spec)

        def exec_module(self, module):
            try:
                self._loader.exec_module(module)
            finally:
                # no trace of this wrapper is left on the module
                module.__loader__ = self._loader
                if getattr(module, "__spec__", None) is not None:
                    module.__spec__.loader = self._loader
            for hook in self._hooks:
                run(hook)

    class _LazyRuntimeHooks:
        """Meta path finder: the first import of a hooked module gets its hooks after it."""

        def find_spec(self, name, path=None, target=None):
            hooks = pending.pop(name, None)
            if hooks is None:
                return None
            if not pending and self in sys.meta_path:
                sys.meta_path.remove(self)
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    if spec.loader is not None:
                        spec.loader = _RunHooksAfter(spec.loader, hooks)
                    return spec
            return None

        def invalidate_caches(self):
            pass

    for module in list(pending):
        if module in sys.modules:          # already imported by the bootstrap: at once
            for hook in pending.pop(module):
                run(hook)
    if pending:
        sys.meta_path.insert(0, _LazyRuntimeHooks())


_dbxray_lazy_runtime_hooks()
del _dbxray_lazy_runtime_hooks
