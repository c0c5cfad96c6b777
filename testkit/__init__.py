"""The neutral test kit: helpers that tests/, e2e/ and bench/ share (tests/ and e2e/ never import
each other; see tests/test_import_cycles.py)."""
