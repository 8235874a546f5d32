"""The compressor layer: "if this data were stored with codec X, how big would
it be on disk, and how fast?" -- with error bars and storage granularity.

* :mod:`compress.registry`  codecs by stable name (``zstd:3``, ``Delta(4),ZSTD(1)``)
* :mod:`compress.sampling`  seeded uniform / owner-stratified samples of units
* :mod:`compress.estimate`  stratified ratio estimator and its 95% interval
* :mod:`compress.models`    storage models (InnoDB page compression, ROW_FORMAT=COMPRESSED
  estimate, larger pages approximation, ClickHouse blocks, TokuDB partitions, ZFS, btrfs)
* :mod:`compress.sources`   where units come from (engine parsers' ``payloads.py``)
* :mod:`compress.projector` sample, encode on all cores, estimate
* :mod:`compress.speed`     compress / decompress MB/s
* :mod:`compress.advisor`   smallest, fastest within 5%, current, with DDL
* :mod:`compress.whatif`    ``run_whatif(dataset, codecs, ...)`` -> the ``whatif`` JSON

No Qt here, and nothing from ``viz`` or ``app``.
"""
