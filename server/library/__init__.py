"""Library."""
