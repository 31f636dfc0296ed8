#!/usr/bin/env bash
# Downloads into .whl/ the wheels deploy/gpu.sh installs on a machine without network access:
# what clfuzz needs beyond the packages that machine already has (Python 3.12, numpy, hypothesis,
# mpmath, rich, click: the device tool's KINDS.md lists them), at the versions of this checkout's
# .venv (made by `bash setup.sh test`). Fails, saying which, if any wheel cannot be had.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/pip ]; then
  echo "deploy/wheels.sh: no .venv here to take versions from: run \`bash setup.sh test\` first" >&2
  exit 1
fi
py="${PYTHON_VERSION:-3.12}"
names=(pyopencl sqlite-utils pytools platformdirs siphash24 click-default-group sqlite-fts4)
mkdir -p .whl
for name in "${names[@]}"; do
  version="$(.venv/bin/pip show "$name" 2>/dev/null | sed -n 's/^Version: //p')"
  if [ -z "$version" ]; then
    echo "deploy/wheels.sh: $name is not installed in .venv: run \`bash setup.sh test\` again" >&2
    exit 1
  fi
  if ! .venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version "$py" --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
      --platform any -d .whl "$name==$version"; then
    echo "deploy/wheels.sh: no wheel of $name==$version for CPython $py on x86_64 Linux (PYTHON_VERSION=$py)" >&2
    exit 1
  fi
done
ls .whl
