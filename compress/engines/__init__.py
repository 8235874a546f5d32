"""The what-if engines: each engine's targets, storage models and DDL
(one module per engine, one line each here; see base.py).

The engine modules are imported when first asked for (``WHATIF_ENGINES``, ``get``, or a
name below): a command that needs one of them (``dbxray advise``: clickhouse.py) does not
import the others (their row models and parsers, ~0.1 s of every start)."""
from __future__ import annotations

from .base import WhatIfEngine

#: in the parser registry's order (parsers/engines.py): (module, its name here)
_ORDER = (("innodb", "INNODB"), ("clickhouse", "CLICKHOUSE"), ("tokudb", "TOKUDB"), ("rocksdb", "ROCKSDB"),
          ("archive", "ARCHIVE"), ("myisam", "MYISAM"), ("aria", "ARIA"))
_NAMES = {name: module for module, name in _ORDER}


def _load(module: str) -> WhatIfEngine:
    """One engine module's ``WHATIF``, imported now (each named here, none looked up by string)."""
    if module == "innodb":
        from . import innodb as mod
    elif module == "clickhouse":
        from . import clickhouse as mod
    elif module == "tokudb":
        from . import tokudb as mod
    elif module == "rocksdb":
        from . import rocksdb as mod
    elif module == "archive":
        from . import archive as mod
    elif module == "myisam":
        from . import myisam as mod
    elif module == "aria":
        from . import aria as mod
    else:
        raise ValueError(f"no what-if engine module {module!r}")
    return mod.WHATIF


def _engines() -> tuple[WhatIfEngine, ...]:
    return tuple(_load(m) for m, _ in _ORDER)


def __getattr__(attr: str):
    if attr == "WHATIF_ENGINES":
        value = _engines()
    elif attr in _NAMES:
        value = _load(_NAMES[attr])
    elif attr == "_BY_NAME":
        value = {w.name: w for w in _engines()}
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
    globals()[attr] = value
    return value


#: engine name -> its module (each what-if engine is named as its module; checked by
#: tests/test_whatif_engine_loading.py)
_MODULES = {module: module for module, _name in _ORDER}


def get(name: str | None) -> WhatIfEngine | None:
    """The what-if engine of a parser engine name, importing its module alone."""
    if not name or name not in _MODULES:
        return None
    return _load(_MODULES[name])


def present(names) -> tuple[WhatIfEngine, ...]:
    """The what-if engines of the parser engines ``names`` (a dataset's ``engines``), in
    :data:`_ORDER`, imported alone: a data dir of InnoDB files does not import the row models
    and parsers of the others (~70 ms of the what-if's start)."""
    wanted = set(names or ())
    return tuple(_load(m) for m, _ in _ORDER if m in wanted)


__all__ = ["WHATIF_ENGINES", "WhatIfEngine", "get", "present"]
