"""The generalisation benchmark's parts (``benchmarks/bench_generalize.py``):
document kinds with their truth parsers (``kinds``), the scoring
(``scoring``), and one plain schema module per kind (``dpkg_status``,
``python_metadata``, ``systemd_unit``, ``dep5_copyright``)."""
