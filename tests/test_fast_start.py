"""Fast start: the automata side of the library, the automata-only commands and every
command's --help never import torch, scikit-learn or matplotlib (importing torch alone takes
over a second).

Each check runs in a fresh interpreter, since this test process has imported torch already.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rnn2dfa.automata import DFA, save_dfa

HEAVY = ("torch", "sklearn", "matplotlib")

#: Runs the real entry point in-process, then prints which heavy modules got imported.
RUN_CLI = """
import json, sys
from rnn2dfa_cli.main import cli
try:
    cli.main(args=sys.argv[1:], prog_name="rnn2dfa")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print(json.dumps({{"code": code, "heavy": heavy}}), file=sys.stderr)
"""


def heavy_after(code: str, *args: str, cwd: str | None = None) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd,
        timeout=120,
    )
    last = proc.stderr.strip().splitlines()[-1]
    return json.loads(last)


def test_importing_the_automata_side_leaves_out_heavy_packages():
    code = (
        "import json, sys\n"
        "import rnn2dfa.automata, rnn2dfa.languages, rnn2dfa.render, rnn2dfa.verify.truth\n"
        "import rnn2dfa.automata.regex, rnn2dfa.verify.exact\n"
        f"print(json.dumps({{'heavy': sorted(m for m in {HEAVY!r} if m in sys.modules)}}),"
        " file=sys.stderr)\n"
    )
    assert heavy_after(code)["heavy"] == []


def test_the_verify_package_still_gives_every_name():
    import rnn2dfa.verify as v

    for name in v.__all__:
        assert getattr(v, name) is not None
    with pytest.raises(AttributeError):
        v.no_such_name  # noqa: B018


@pytest.fixture(scope="module")
def dfa_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fast")
    ends_in_1 = DFA(("0", "1"), [[0, 1], [0, 1]], [False, True])
    ends_in_0 = DFA(("0", "1"), [[1, 0], [1, 0]], [False, True])
    save_dfa(ends_in_1, folder / "a.json")
    save_dfa(ends_in_0, folder / "b.json")
    return folder


@pytest.mark.parametrize(
    ("args", "exit_code"),
    [
        (["languages"], 0),
        (["truth", "tomita3", "-o", "t3.json"], 0),
        (["show", "a.json"], 0),
        (["minimize", "a.json", "-o", "m.json"], 0),
        (["equiv", "a.json", "b.json"], 1),
        (["--threads", "2", "equiv", "a.json", "a.json"], 0),
        (["render", "a.json", "-o", "a.dot"], 0),
        (["convert", "a.json", "-o", "a.dot"], 0),
        (["pdfa-random", "-o", "p.json"], 0),
        (["pdfa-sample", "rpdfa-6-3-0", "-n", "20", "-o", "s.txt"], 0),
    ],
    ids=lambda x: " ".join(x) if isinstance(x, list) else str(x),
)
def test_automata_commands_leave_out_heavy_packages(dfa_files, args, exit_code):
    result = heavy_after(RUN_CLI.format(heavy=HEAVY), *args, cwd=str(dfa_files))
    assert result["code"] == exit_code
    assert result["heavy"] == []


#: Every command's --help, one after the other in one interpreter: the first whose help
#: imports a heavy package is named.
EVERY_HELP = """
import json, sys
import click
from rnn2dfa_cli.main import cli

def run(args):
    try:
        cli.main(args=args, prog_name="rnn2dfa")
    except SystemExit as exc:
        return exc.code
    return 0

found = {"top": run(["--help"])}
names = cli.list_commands(click.Context(cli))
found["names"] = names
for name in names:
    found[name] = run([name, "--help"])
    heavy = sorted(m for m in HEAVY_NAMES if m in sys.modules)
    if heavy:
        found["heavy_after"] = [name, heavy]
        break
found["usage_error"] = run(["train", "--no-such-option"])
found["heavy"] = sorted(m for m in HEAVY_NAMES if m in sys.modules)
print(json.dumps(found), file=sys.stderr)
"""


def test_every_commands_help_leaves_out_heavy_packages(tmp_path):
    result = heavy_after(EVERY_HELP.replace("HEAVY_NAMES", repr(HEAVY)), cwd=str(tmp_path))
    assert result.get("heavy_after") is None
    assert result["heavy"] == []
    assert {"train", "extract", "verify", "run", "pdfa-train", "sweep"} <= set(result["names"])
    assert result["top"] == 0 and result["usage_error"] == 2
    assert all(result[name] == 0 for name in result["names"])


@pytest.mark.parametrize("args", [["--help"], ["extract", "--help"], ["train", "-h"]])
def test_help_of_the_entry_point_leaves_out_heavy_packages(args, tmp_path):
    result = heavy_after(RUN_CLI.format(heavy=HEAVY), *args, cwd=str(tmp_path))
    assert result == {"code": 0, "heavy": []}


def test_every_command_has_its_module_as_home():
    import importlib

    from rnn2dfa_cli.main import COMMAND_HOMES, COMMAND_MODULES

    found = {}
    for module in COMMAND_MODULES:
        for command in importlib.import_module(f"rnn2dfa_cli.{module}").COMMANDS:
            found[command.name] = module
    assert COMMAND_HOMES == found


def test_a_command_imports_its_own_module_alone(tmp_path):
    code = (
        "import json, sys\n"
        "import click\n"
        "from rnn2dfa_cli.main import cli\n"
        "cli.get_command(click.Context(cli), 'extract')\n"
        "mods = sorted(m for m in sys.modules if m.startswith('rnn2dfa_cli.cmd_'))\n"
        "print(json.dumps({'modules': mods}), file=sys.stderr)\n"
    )
    assert heavy_after(code, cwd=str(tmp_path))["modules"] == ["rnn2dfa_cli.cmd_extract"]
