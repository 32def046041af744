"""The registry of named languages: get_language(name) and all_languages()."""

from __future__ import annotations

from functools import lru_cache

from rnn2dfa.errors import InputError
from rnn2dfa.languages.base import Language


@lru_cache(maxsize=1)
def _registry() -> dict[str, Language]:
    # Built once on first use: the ground-truth DFAs are small but need minimizing.
    from rnn2dfa.languages.expressivity import expressivity_languages
    from rnn2dfa.languages.nonregular import nonregular_languages
    from rnn2dfa.languages.regular import regular_languages
    from rnn2dfa.languages.tomita import tomita_languages

    langs = (
        tomita_languages() + regular_languages() + nonregular_languages()
        + expressivity_languages()
    )
    return {lang.name: lang for lang in langs}


def all_languages() -> list[Language]:
    """Every registered language, Tomita 1-7 first, then other regular, then non-regular."""
    return list(_registry().values())


def language_names() -> list[str]:
    return list(_registry())


def get_language(name: str) -> Language:
    """The language called `name`; an InputError listing the known names otherwise."""
    reg = _registry()
    try:
        return reg[name]
    except KeyError:
        known = ", ".join(reg)
        raise InputError(f"unknown language {name!r}; known languages: {known}") from None
