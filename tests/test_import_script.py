"""`rnn2dfa import --trust-code --code train.py`: a module pickled by a training script.

`python train.py` makes the script `__main__`, so `torch.save(model)` records its class as
`__main__.Net`; no folder on the import path can give that back, the script can. Every
expected output here is the script's own forward, computed by the script when it ran.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from cli_checks import assert_bad_input
from click.testing import CliRunner

from rnn2dfa.errors import InputError, ModelFileError
from rnn2dfa.models.acceptor import accept_logits
from rnn2dfa.models.checkpoint import read_checkpoint
from rnn2dfa.models.io import load_model
from rnn2dfa_cli.main import cli

pytestmark = pytest.mark.usefixtures("one_thread")

#: Words over {a, b} the script answers itself (a = token 1, b = token 2 after a start 0).
WORDS = ["a", "b", "ab", "ba", "abba", "bbbab", "aaaaaa", "babab"]

#: The class and a constant it reads, then what a script does when run: train (here: seed
#: and build), save the whole module, and write its own answers on WORDS.
CLASSES = '''
import json
import sys

import torch
from torch import nn

VOCAB = 3  # read by the class: the script's assignments must run


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 4)
        self.rnn = nn.GRU(4, 6, batch_first=True)
        self.fc = nn.Linear(6, 1)

    def forward(self, x):
        out, _ = self.rnn(self.emb(x))
        return self.fc(out[:, -1]).squeeze(-1)


def answers(net, words):
    with torch.no_grad():
        return [float(net(torch.tensor([[0] + ["ab".index(c) + 1 for c in w]]))[0])
                for w in words]
'''

GUARDED = CLASSES + '''

if __name__ == "__main__":
    torch.manual_seed(0)
    net = Net().eval()
    torch.save(net, sys.argv[1])
    with open(sys.argv[2], "w") as fh:
        json.dump(answers(net, json.loads(sys.argv[3])), fh)
'''

#: A notebook turned into a script: it trains and saves at its top level, with no guard.
UNGUARDED = CLASSES + '''

torch.manual_seed(0)
net = Net().eval()
print("training")
for epoch in range(1):
    open(sys.argv[1] + ".trained-again", "w").close()
torch.save(net, sys.argv[1])
with open(sys.argv[2], "w") as fh:
    json.dump(answers(net, json.loads(sys.argv[3])), fh)
'''


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def saved_by_script(tmp_path: Path, source: str) -> tuple[Path, Path, np.ndarray]:
    """Run the script as users do (`python train.py ...`): (the script, the pickled module,
    the script's own logits on WORDS)."""
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(source))
    model, answers = tmp_path / "model.pt", tmp_path / "answers.json"
    subprocess.run([sys.executable, str(script), str(model), str(answers), json.dumps(WORDS)],
                   check=True, cwd=tmp_path, capture_output=True, timeout=120)
    (tmp_path / "model.pt.trained-again").unlink(missing_ok=True)
    return script, model, np.array(json.loads(answers.read_text()))


def import_args(model: Path, out: Path) -> list[object]:
    return ["import", model, "-o", out, "--alphabet", "a,b", "--start-token", "0",
            "--trust-code"]


def test_the_script_gives_back_the_classes_pickled_under_main(tmp_path: Path) -> None:
    script, model, own = saved_by_script(tmp_path, GUARDED)
    out = tmp_path / "m.pt"
    r = run(*import_args(model, out), "--code", script, "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["import"]["forward_check"].startswith(
        "agrees with the module's own forward")
    imported, _ = load_model(out)
    words = [tuple("ab".index(c) for c in w) for w in WORDS]
    np.testing.assert_allclose(accept_logits(imported, words), own, atol=1e-5)


def test_without_the_script_the_error_says_to_give_it(tmp_path: Path) -> None:
    _, model, _ = saved_by_script(tmp_path, GUARDED)
    out = tmp_path / "m.pt"
    line = assert_bad_input(run(*import_args(model, out)), model, "__main__.Net",
                            "give the script", "--code DIR|FILE.py")
    assert "Can't get attribute" not in line
    # a folder cannot hold __main__, even the script's own: the error says so
    assert_bad_input(run(*import_args(model, out), "--code", tmp_path), "__main__.Net",
                     "not a folder", "--code DIR|FILE.py")
    assert not out.exists()


def test_a_script_without_the_class_is_named(tmp_path: Path) -> None:
    _, model, _ = saved_by_script(tmp_path, GUARDED)
    other = tmp_path / "other.py"
    other.write_text("import torch\nclass Other(torch.nn.Module):\n    pass\n")
    assert_bad_input(run(*import_args(model, tmp_path / "m.pt"), "--code", other),
                     "__main__.Net", f"{other} defines no 'Net'", "--code DIR|FILE.py")


def test_an_unguarded_script_is_read_without_training_again(tmp_path: Path) -> None:
    script, model, own = saved_by_script(tmp_path, UNGUARDED)
    before = hashlib.sha256(model.read_bytes()).hexdigest()
    out = tmp_path / "m.pt"
    r = run(*import_args(model, out), "--code", script, "--json")
    assert r.exit_code == 0, r.stderr
    json.loads(r.stdout)  # the document alone on stdout: the script's print did not run
    assert "training" not in r.stdout + r.stderr
    assert not (tmp_path / "model.pt.trained-again").exists()  # its loop did not run
    assert hashlib.sha256(model.read_bytes()).hexdigest() == before  # nor its torch.save
    imported, _ = load_model(out)
    words = [tuple("ab".index(c) for c in w) for w in WORDS]
    np.testing.assert_allclose(accept_logits(imported, words), own, atol=1e-5)


def test_library_takes_a_script_as_code_dir(tmp_path: Path) -> None:
    script, model, own = saved_by_script(tmp_path, GUARDED)
    ck = read_checkpoint(model, trust_code=True, code_dir=script)
    assert ck.format == "pickled module"
    assert type(ck.module).__name__ == "Net"
    with pytest.raises(ModelFileError) as info:
        read_checkpoint(model, trust_code=True)
    assert info.value.param == "code"
    assert "__main__.Net" in info.value.message
    notes = tmp_path / "notes.txt"
    notes.write_text("not code")
    with pytest.raises(InputError) as info:
        read_checkpoint(model, trust_code=True, code_dir=notes)
    assert info.value.param == "code"
    assert "nor a Python script" in info.value.message


def test_a_script_that_fails_to_define_its_classes_is_one_line(tmp_path: Path) -> None:
    _, model, _ = saved_by_script(tmp_path, GUARDED)
    broken = tmp_path / "broken.py"
    broken.write_text("import torch\nfor i in range(3):\n    n = i\nWIDTH = n + 1\n")
    line = assert_bad_input(run(*import_args(model, tmp_path / "m.pt"), "--code", broken),
                            broken, "line 4", "NameError", "--code DIR|FILE.py")
    assert "not its calls, loops or main block" in line
    bad = tmp_path / "syntax.py"
    bad.write_text("class Net(:\n")
    assert_bad_input(run(*import_args(model, tmp_path / "m.pt"), "--code", bad), bad,
                     "line 1", "--code DIR|FILE.py")
