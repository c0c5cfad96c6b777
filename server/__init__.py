"""Wherefrom companion server."""

__version__ = "0.1.0"
