#!/usr/bin/env bash
# Set up rnn2dfa on a fresh Debian machine: Graphviz, a virtualenv in .venv, the CPU build of
# PyTorch 2.13.0 first (a bare `torch` would pull several GB of CUDA packages), then the project.
# Usage: bash scripts/install.sh [--dev] [--cuda]
#   --dev   adds test and benchmark tools
#   --cuda  a CUDA build of PyTorch instead of the CPU one (from PyTorch's own index;
#           RNN2DFA_CUDA=cu126 picks another CUDA version), for `--device cuda|auto`
set -euo pipefail
cd "$(dirname "$0")/.."

extra=""
torch_index=""
for arg in "$@"; do
    case "$arg" in
        --dev) extra="[dev]" ;;
        --cuda) torch_index="https://download.pytorch.org/whl/${RNN2DFA_CUDA:-cu130}" ;;
        *) echo "install: unknown option '$arg' (known: --dev, --cuda)" >&2; exit 2 ;;
    esac
done

if ! command -v dot >/dev/null 2>&1; then
    echo "install: Graphviz 'dot' not found; installing it from Debian" >&2
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null
    elif command -v sudo >/dev/null 2>&1; then
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null
    else
        echo "install: cannot install graphviz (not root); 'render' will write .dot files only" >&2
    fi
fi

PY=${PYTHON:-python3}
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
    || { echo "install: Python 3.11 or newer is needed ($PY is $("$PY" --version))" >&2; exit 1; }
[ -x .venv/bin/python ] || "$PY" -m venv .venv
if [ -n "$torch_index" ]; then
    .venv/bin/python -m pip install -q --disable-pip-version-check torch==2.13.0 \
        --index-url "$torch_index"
    .venv/bin/python -c 'import torch; print("install: torch", torch.__version__, "CUDA", torch.version.cuda, "- GPU seen:", torch.cuda.is_available())' >&2
else
    .venv/bin/python -m pip install -q --disable-pip-version-check torch==2.13.0
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".${extra}"
echo "install: ready — .venv/bin/rnn2dfa --help" >&2
