"""Issue 38, sweeps: the folder's lock lives on the folder itself (deleting the lock file lets no
second sweep in), a sweep never replaces files it did not make, and a --ray-address that is
no Ray head is one line before anything starts."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from rnn2dfa.atomic import output_scope, written_outputs
from rnn2dfa.errors import InputError
from rnn2dfa.sweep import Grid, Settings, Sweep, folder_lock, run_sweep
from rnn2dfa.sweep.engines import _check_reachable
from rnn2dfa.sweep.store import LOCK_NAME

SETTINGS = Settings(epochs=3, train_max_length=6)


def _never(*args, **kwargs):  # a point function that must not run
    raise AssertionError("a point ran")


def test_deleting_the_lock_file_lets_no_second_sweep_in(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with folder_lock(out):
        (out / LOCK_NAME).unlink()  # a careless user, mid-sweep
        with pytest.raises(InputError, match="another sweep is writing into it"):
            with folder_lock(out):
                pass
        sweep = Sweep(Grid(languages=["tomita1"], hidden=[4]), SETTINGS)
        with pytest.raises(InputError, match="another sweep"):
            run_sweep(sweep, out, point_fn=_never)
    with folder_lock(out):  # released with the block
        pass


def test_the_lock_note_is_no_output(tmp_path: Path) -> None:
    # an interrupt during a sweep must not report the lock's pid note as a new output
    out = tmp_path / "out"
    out.mkdir()
    with output_scope(), folder_lock(out):
        assert (out / LOCK_NAME).read_text().strip() == str(os.getpid())
        assert written_outputs() == []


@pytest.mark.parametrize("name", ["report.md", "results.csv", "points"])
def test_a_sweep_never_replaces_files_it_did_not_make(tmp_path: Path, name: str) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    theirs = out / name
    if name == "points":
        theirs.mkdir()
    else:
        theirs.write_text("the user's own\n")
    sweep = Sweep(Grid(languages=["tomita1"], hidden=[4]), SETTINGS)
    with pytest.raises(InputError, match=f"holds {name} but no sweep.json"):
        run_sweep(sweep, out, point_fn=_never)
    assert sorted(p.name for p in out.iterdir()) == [name]  # nothing written
    if name != "points":
        assert theirs.read_text() == "the user's own\n"


def _server(reply: bytes) -> tuple[socket.socket, int]:
    """A TCP server on a free local port that answers each connection with `reply`."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                conn.recv(64)
                conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    return srv, srv.getsockname()[1]


def test_a_ray_address_that_is_no_ray_head_is_refused() -> None:
    srv, port = _server(b"HTTP/1.0 400 Bad Request\r\n\r\n")
    try:
        with pytest.raises(InputError, match="not as a Ray head"):
            _check_reachable(f"127.0.0.1:{port}")
    finally:
        srv.close()
    # an HTTP/2 server (as gRPC servers are) answers the preface with a SETTINGS frame
    srv, port = _server(bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))
    try:
        _check_reachable(f"127.0.0.1:{port}")
    finally:
        srv.close()
