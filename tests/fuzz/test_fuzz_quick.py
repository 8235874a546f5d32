"""Quick fuzzing of every decoder (CI): hypothesis, a few dozen examples per
target, random bytes and mutated fixture bytes.  Only the decoders'
documented errors may come out (see targets.py); ``DBXRAY_FUZZ_EXAMPLES``
raises the count, and tests/fuzz/README.md describes the 1M-input campaign.

Targets with a known, not yet fixed finding are xfail (strict=False) with the
finding; see KNOWN.
"""
from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
import targets as T  # noqa: E402
from strategies import mutated  # noqa: E402

EXAMPLES = int(os.environ.get("DBXRAY_FUZZ_EXAMPLES", "60"))
PER_EXAMPLE_S = 5

#: target -> finding still open in a parser this session may not edit
KNOWN: dict[str, str] = {}


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"an example ran longer than {PER_EXAMPLE_S} s")


@pytest.mark.parametrize("name", list(T.BY_NAME))
def test_fuzz_target(name, request):
    if name in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=False, reason=KNOWN[name]))
    seeds = T.seeds(name)

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(mutated(seeds))
    def run(data):
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, PER_EXAMPLE_S)
        try:
            finding = T.run_one(name, data)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        assert finding is None, f"{name}: {finding} on {len(data)} bytes {data[:64].hex()}"
    run()


def test_seeds_found_for_the_format_targets():
    """Fuzzing from real bytes reaches past the magic checks: most targets have seeds."""
    with_seeds = [n for n in T.BY_NAME if T.seeds(n)]
    assert len(with_seeds) >= 14, with_seeds
