"""Plain DOT text for a DFA (the render package adds layout options, ranges and highlighting)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rnn2dfa.automata.dfa import DFA


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(dfa: DFA, name: str = "dfa") -> str:
    """DOT text: a start arrow, double circles for accepting states, one edge per symbol set."""
    lines = [f"digraph {_quote(name)} {{", "  rankdir=LR;", '  __start [shape=point, label=""];']
    for q in range(dfa.n_states):
        shape = "doublecircle" if dfa.accepting[q] else "circle"
        lines.append(f"  {q} [shape={shape}];")
    lines.append(f"  __start -> {dfa.start};")
    for q in range(dfa.n_states):
        groups: dict[int, list[str]] = {}
        for i, s in enumerate(dfa.alphabet):
            groups.setdefault(int(dfa.transitions[q, i]), []).append(s)
        for t, syms in groups.items():
            lines.append(f"  {q} -> {t} [label={_quote(','.join(syms))}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
