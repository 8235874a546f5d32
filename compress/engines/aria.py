"""Aria what-if: as MyISAM's (compress/engines/myisam.py), one target per data file
(``.MAD``): the InnoDB page_compressed conversion and an aria_pack copy, both labelled
estimates; MariaDB's own ``mysql.*`` tables get no advice."""
from __future__ import annotations

from .myisam import MyisamWhatIf


class AriaWhatIf(MyisamWhatIf):
    name = "aria"
    pack_label = "aria_pack_estimate"


WHATIF = AriaWhatIf()
