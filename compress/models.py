"""Storage models: how many bytes a unit takes on disk once encoded with a codec.

Every model maps (codec, decoded unit bytes) to the bytes the engine or the
filesystem would really allocate for that unit, with the engine's own
framing and rounding.  Sources are cited per model.  Models whose numbers
are not an exact re-implementation of the engine carry the word
``estimate`` or ``approximation`` in their name, which is what the JSON and
the report show.

This module holds the base and the helpers; the models themselves live with
what they model: the engines' storage granularity in ``compress/engines/<engine>.py``,
the filesystems' in ``compress/fsmodels.py``.
"""
from __future__ import annotations

import numpy as np

from dataclasses import dataclass

from .registry import Codec, CodecUnavailable


def roundup(n: int, block: int) -> int:
    return -(-n // block) * block


#: all-zero bytes of each length asked (bounded): is_zero compares with them
_ZEROS: dict[int, bytes] = {}


def is_zero(data: bytes) -> bool:
    """Whether every byte is zero: a comparison with zeros of the same length (memcmp, which
    stops at the first byte that is not, where counting the zeros reads every byte)."""
    n = len(data)
    if n < 64:
        return not any(data)
    z = _ZEROS.get(n)
    if z is None:
        if len(_ZEROS) > 64:
            _ZEROS.clear()
        z = _ZEROS[n] = bytes(n)
    return data == z


@dataclass
class Model:
    """Base: ``name`` as in the JSON; ``granularity`` is the rounding step of projections."""

    name: str = "model"
    granularity: int = 1
    #: the DDL that gets to this model rebuilds the table (InnoDB PAGE_COMPRESSED,
    #: ROW_FORMAT=COMPRESSED): free pages and unwritten space are not carried over, so its
    #: projection leaves them out and its saving is compared with the table rebuilt as it
    #: is (``Split``), never with the free space it drops (issue 17 item 1)
    rebuilds = False

    def supports(self, codec: Codec) -> str | None:
        """None when the model can project ``codec``, else the reason why not."""
        return None

    def fixed_by_kind(self, kind_name: str | None) -> int | None:
        """Projected bytes known from the unit's kind alone (no read), else None."""
        return None

    def fixed_by_payload(self, payload: bytes) -> int | None:
        """Projected bytes known without encoding (all-zero page...), else None."""
        return None

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        raise NotImplementedError

    def known_size(self, codec: Codec, payload: bytes, unit: int | None = None) -> int | None:
        """What :meth:`project` would give, when it is known without encoding: the unit is
        stored with this very codec and its stored size is on disk (InnoDB page compression:
        the page's own header).  None: encode.  The projector does not time these."""
        return None

    def max_bytes(self, logical: np.ndarray, codec: Codec | None = None,
                  units: np.ndarray | None = None) -> np.ndarray | None:
        """The most each unit of these logical sizes can take under this model with ``codec``
        (None: whatever the codec), so intervals stay inside what is physically possible: the
        engine's own fallback (InnoDB writes a page that does not compress uncompressed) or
        the codec's worst case with the engine's framing (compress/bounds.py); ``units`` are
        the units' indices in the unit set (models whose bound depends on the unit). None
        when the model knows no such bound."""
        return None

    def speed_coders(self, codec: Codec):
        """(cache key, encode, decode) to time ``codec`` as this model writes it;
        (None, None, None): the codec's own coders, timed per target."""
        return None, None, None


def check_codec_for(model: Model, codec: Codec) -> str | None:
    """The reason a model cannot project a codec (None when it can)."""
    try:
        return model.supports(codec)
    except CodecUnavailable as e:
        return str(e)
