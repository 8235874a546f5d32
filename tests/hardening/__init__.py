"""The corrupt-input matrix (tests/hardening_util.py runs it): targets, mutations, cases, the worker pool, probes."""
