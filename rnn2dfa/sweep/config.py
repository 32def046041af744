"""Reading a sweep from a TOML file (`--config sweep.toml`) and from comma-separated lists.

    # sweep.toml: the grid at the top level, shared settings in [settings]
    preset = "weiss2018"            # optional starting point; the keys below override it
    languages = ["tomita1", "tomita3", "parity"]
    cells = ["gru", "lstm"]
    hidden = [16, 32]
    layers = [1]
    seeds = [0, 1, 2]               # or "0-9"
    methods = ["lstar", "kmeans"]

    [settings]
    epochs = 400
    train_time_limit = 120.0

Every problem is an InputError naming the file and the key, in one line.
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import fields
from typing import Any

from rnn2dfa.errors import InputError, shown
from rnn2dfa.fileio import read_text
from rnn2dfa.limits import MAX_SWEEP_CONFIG_BYTES, MAX_SWEEP_POINTS
from rnn2dfa.sweep.grid import Grid, Settings, Sweep, preset

_STR_AXES = ("languages", "cells", "methods")


def parse_ints(text: str, name: str, path: str | None = None) -> list[int]:
    """`"0,1,2"` or `"0-4"` (inclusive range) or a mix, as a list of ints."""
    out: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part:
                lo, hi = part.split("-", 1)
                a, b = int(lo), int(hi)
                if b < a:
                    raise ValueError
                if b - a >= MAX_SWEEP_POINTS:
                    raise InputError(f"{name}: range {part} is too long (a grid holds at most "
                                     f"{MAX_SWEEP_POINTS:,} points)", path=path)
                out.extend(range(a, b + 1))
            else:
                out.append(int(part))
        except ValueError:
            raise InputError(f"{name}: {part[:40]!r} is not a whole number >= 0 or a range "
                             "like 0-4", path=path) from None
        if len(out) > MAX_SWEEP_POINTS:
            raise InputError(f"{name}: more than {MAX_SWEEP_POINTS:,} values (a grid holds at "
                             "most that many points)", path=path)
    return out


def parse_names(text: str) -> list[str]:
    """`"tomita1, tomita3"` as a list of names (blanks dropped)."""
    return [p.strip() for p in str(text).split(",") if p.strip()]


def _axis(value: Any, key: str, path: str) -> list[Any]:
    if key in _STR_AXES:
        if isinstance(value, str):
            return parse_names(value)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [v.strip() for v in value]
        raise InputError(f"{key} must be a list of names, like [\"tomita1\", \"tomita3\"] "
                         f"(got {shown(value)})", path=path)
    if isinstance(value, bool):
        raise InputError(f"{key} must be a list of whole numbers (got {shown(value)})",
                         path=path)
    if isinstance(value, int):
        return [value]
    if isinstance(value, str):
        return parse_ints(value, key, path)
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool)
                                       for v in value):
        return list(value)
    raise InputError(f"{key} must be a list of whole numbers, like [0, 1, 2] "
                     f"(got {shown(value)})", path=path)


def _settings(table: Any, base: Settings, path: str) -> Settings:
    if not isinstance(table, dict):
        raise InputError("[settings] must be a table", path=path)
    known = {f.name: f for f in fields(Settings) if f.name != "device"}  # not recorded
    values = {**base.to_dict(), "task": base.task, "objective": base.objective}
    for key, value in table.items():
        if key not in known:
            raise InputError(f"unknown key {shown(key)} in [settings] (known: "
                             f"{', '.join(known)})", path=path)
        if key in ("task", "objective"):  # a name (Settings.check reads it)
            if not isinstance(value, str):
                raise InputError(f"settings.{key} must be a name (got {shown(value)})",
                                 path=path)
            values[key] = value
            continue
        want = type(values[key])
        ok = (isinstance(value, int) and not isinstance(value, bool)) if want is int else (
            isinstance(value, int | float) and not isinstance(value, bool))
        if ok and want is float:
            try:
                ok = math.isfinite(value)
            except OverflowError:  # an integer beyond any float
                ok = False
        if not ok:
            kind = "a whole number" if want is int else "a finite number"
            raise InputError(f"settings.{key} must be {kind} (got {shown(value)})", path=path)
        values[key] = want(value)
    return Settings(**values)


def sweep_from_dict(data: dict[str, Any], path: str = "<config>") -> Sweep:
    """A Sweep from the parsed TOML document (checked: names, ranges, empty lists)."""
    base = Sweep()
    if "preset" in data:
        if not isinstance(data["preset"], str):
            raise InputError(f"preset must be a name (got {shown(data['preset'])})", path=path)
        try:
            base = preset(data["preset"])
        except InputError as exc:
            raise InputError(exc.message, path=path) from None
    axes = {f.name: list(getattr(base.grid, f.name)) for f in fields(Grid)}
    settings = base.settings
    for key, value in data.items():
        if key == "preset":
            continue
        if key == "settings":
            settings = _settings(value, settings, path)
        elif key in axes:
            axes[key] = _axis(value, key, path)
        else:
            known = ["preset", *axes, "settings"]
            raise InputError(f"unknown key {shown(key)} (known: {', '.join(known)})",
                             path=path)
    sweep = Sweep(Grid(**axes), settings)
    sweep.check(path)
    return sweep


def load_config(path: str | os.PathLike[str]) -> Sweep:
    """Read a sweep TOML file (at most MAX_SWEEP_CONFIG_BYTES); a missing file, bad TOML,
    nesting too deep for the parser or a bad value is a one-line error."""
    path = str(path)
    text = read_text(path, "a sweep config (TOML)", limit=MAX_SWEEP_CONFIG_BYTES)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", path=path) from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise InputError(f"not a sweep config: {' '.join(str(exc).split())[:100]}",
                         path=path) from None
    except RecursionError:
        raise InputError("not a sweep config: its arrays or tables are nested too deeply",
                         path=path) from None
    return sweep_from_dict(doc, path)
