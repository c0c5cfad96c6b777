"""The farm's harness: the real extension in Chromium, the tap, the companion server, the site
health matrix and the shard plan (e2e/ holds the farm's tests; bench/ and tests/ use parts)."""
