import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixtures_util import MISSING, fixtures_dir, make_sparse_copy  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "artifacts"


@pytest.fixture(scope="session")
def fixtures_root() -> Path:
    """The read-only shared fixtures (never write here)."""
    root = fixtures_dir()
    if root is None:
        pytest.fail(MISSING, pytrace=False)
    return root


@pytest.fixture(scope="session")
def sparse_fixtures(tmp_path_factory) -> Path:
    """A temp copy of every fixture folder with the manifests' holes re-punched."""
    if fixtures_dir() is None:
        pytest.fail(MISSING, pytrace=False)
    return make_sparse_copy(tmp_path_factory.mktemp("fx"))


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
