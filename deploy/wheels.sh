#!/usr/bin/env bash
# Downloads into .whl/ the wheels deploy/gpu.sh installs on a machine without network access:
# what clfuzz needs beyond the packages that machine already has (Python 3.12, numpy, hypothesis,
# mpmath, rich, click: the device tool's KINDS.md lists them), at the versions of this .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
py="${PYTHON_VERSION:-3.12}"
for name in pyopencl sqlite-utils pytools platformdirs siphash24 click-default-group sqlite-fts4; do
  version="$(.venv/bin/pip show "$name" 2>/dev/null | sed -n 's/^Version: //p')"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$py" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform any -d .whl "$name${version:+==$version}"
done
ls .whl
