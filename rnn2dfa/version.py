"""The library's version (written into model files; pyproject.toml holds the same)."""

__version__ = "0.1.0"
