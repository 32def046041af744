"""CLI commands of the run step (filled in by the issue that builds it)."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
