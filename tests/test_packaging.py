"""The explicit package list in pyproject.toml must name every package folder on disk."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_listed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    on_disk = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "rnn2dfa").rglob("__init__.py")
    }
    on_disk.add("rnn2dfa_cli")
    assert on_disk == listed


def test_library_has_no_cli_imports() -> None:
    offenders = []
    for path in (ROOT / "rnn2dfa").rglob("*.py"):
        for line in path.read_text().splitlines():
            stripped = line.strip()
            if stripped.startswith(("import click", "from click", "import rich", "from rich")):
                offenders.append(f"{path.relative_to(ROOT)}: {stripped}")
    assert offenders == []
