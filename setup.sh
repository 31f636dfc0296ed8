#!/usr/bin/env bash
# clfuzz set-up: installs the local OpenCL drivers (Debian packages) and the Python package
# into .venv, each step skipped when nothing changed, then runs the job asked for.
#   bash setup.sh campaign [clfuzz run options]   short campaign on every local driver
#   bash setup.sh test [pytest options]           the test suite
#   bash setup.sh releases [SUITE ...]            also mmdebstrap, then the driver releases' roots
#                                                 (default trixie, testing, unstable: docs/releases.md)
set -euo pipefail
cd "$(dirname "$0")"
job="${1:-}"; shift || true
case "$job" in campaign|test|releases) ;; *) echo "usage: bash setup.sh campaign|test|releases [options]" >&2; exit 2 ;; esac

# Debian packages: the three drivers, the ICD loader, clinfo, the SPIR-V tools, the clang of each
# translator's LLVM (a report checks whether a translated route's bug is the driver's), Python,
# chromium (the dashboard's test opens the page in it) and piglit (its cl-program-tester runs the
# tests `clfuzz export --format piglit` writes); the releases job adds mmdebstrap, which builds the
# release roots.
pkgs="pocl-opencl-icd oclgrind mesa-opencl-icd ocl-icd-libopencl1 clinfo spirv-tools spirv-headers
      llvm-spirv-15 llvm-spirv-14 clang-15 clang-14 python3 python3-venv python3-pip chromium piglit"
if [ "$job" = releases ]; then pkgs="$pkgs mmdebstrap"; fi
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q $missing >/dev/null
fi

# Python environment: reinstalled only when pyproject.toml changes.
stamp=.venv/.clfuzz-installed
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  python3 -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e '.[dev]'
  echo "$want" > "$stamp"
fi

if [ "$job" = campaign ]; then
  mkdir -p out
  .venv/bin/clfuzz drivers
  exec .venv/bin/clfuzz run --minutes "${CLFUZZ_MINUTES:-2}" --corpus out/campaign.db "$@"
elif [ "$job" = releases ]; then
  .venv/bin/clfuzz releases install "$@"   # one line per suite that failed (and why), exit 2
  exec .venv/bin/clfuzz drivers --releases
else
  # one process per core, at most 4, each test file in one of them (some files' tests share state in order)
  exec .venv/bin/python -m pytest -q -n auto --maxprocesses 4 --dist loadfile "$@"
fi
