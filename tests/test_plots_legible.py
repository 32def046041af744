"""Plots say all they have to say legibly: a long title is wrapped whole inside the figure
(never cut with "..."), and log axes are labelled 2, 3, 10, 1,000 rather than 2×10⁰."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from rnn2dfa.render import plots

#: A verdict as `verify` writes them (about 300 characters).
VERDICT = ("t3.json is equivalent to tomita3; it agrees with the network on at least 99% of "
           "the words the network accepts and of those it rejects, in each of the 7 length "
           "buckets from 1 to 1000 (3,776 words of lengths 1-998, of which the network "
           "accepts 1,166 and rejects 2,610; it agrees on every one)")

PLAIN = re.compile(r"^\d{1,3}(,\d{3})*(\.\d+)?$|^0\.\d+$")


@pytest.fixture
def saved(monkeypatch, tmp_path):
    """The figures the plot functions save, kept for inspection (and written, as usual)."""
    figures = []
    real = plots.save_figure

    def keep(fig, fmt, path):
        real(fig, fmt, path)
        fig.canvas.draw()
        figures.append(fig)

    monkeypatch.setattr(plots, "save_figure", keep)
    return figures


def labels(axis) -> list[str]:
    found = [t.get_text() for t in axis.get_majorticklabels() + axis.get_minorticklabels()]
    return [t for t in found if t]


def test_a_long_verdict_is_wrapped_whole_inside_the_figure(saved, tmp_path) -> None:
    truth = SimpleNamespace(by_length=[SimpleNamespace(length=n, rate=0.0) for n in range(1, 7)])
    report = SimpleNamespace(network=None, truth=truth, verdict=VERDICT)
    plots.plot_agreement(report, tmp_path / "a.png")
    assert (tmp_path / "a.png").stat().st_size > 0
    fig = saved[0]
    ax = fig.axes[0]
    title = ax.title.get_text()
    assert "..." not in title and "…" not in title
    assert " ".join(title.split("\n")) == VERDICT  # every word, in order
    assert title.count("\n") >= 2
    box = ax.title.get_window_extent(fig.canvas.get_renderer())
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width and box.y1 <= fig.bbox.height
    # the plot keeps its room: the figure grew by the title's extra lines
    assert fig.get_figheight() > 4.2


def test_log_axes_read_as_plain_numbers(saved, tmp_path) -> None:
    plots.plot_size_error([[2, 0.3], [3, 0.2], [5, 0.1], [8, 0.02]], tmp_path / "s.png", 0.05)
    shown = labels(saved[0].axes[0].xaxis)
    assert {"2", "3"} <= set(shown), shown  # less than a decade: the minor ticks are labelled
    assert all(PLAIN.match(t) for t in shown), shown
    plots.plot_size_error([[1, 0.3], [40, 0.1], [3000, 0.01]], tmp_path / "w.png")
    shown = labels(saved[1].axes[0].xaxis)
    assert {"1", "10", "100", "1,000"} <= set(shown), shown
    assert all(PLAIN.match(t) for t in shown), shown


def test_without_the_helper_matplotlib_writes_powers_of_ten() -> None:
    """The control: what the helper changes (so the test above can fail)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure()
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.plot([2, 3, 5, 8], [1, 2, 3, 4])
    ax.set_xscale("log")
    fig.canvas.draw()
    assert any("times" in t or "×" in t for t in labels(ax.xaxis)), labels(ax.xaxis)
    plots.plain_log_ticks(ax)
    fig.canvas.draw()
    assert labels(ax.xaxis) and all(PLAIN.match(t) for t in labels(ax.xaxis))


@pytest.mark.parametrize(("value", "text"), [(2.0, "2"), (1000.0, "1,000"), (0.01, "0.01"),
                                             (0.5, "0.5"), (1e6, "1,000,000")])
def test_plain_numbers(value, text) -> None:
    assert plots.plain_number(value) == text
