#!/usr/bin/env bash
# clfuzz on a machine where nothing can be installed (the lent NVIDIA GPU machine): the project's
# own wheels, carried in .whl/ (made here by `bash deploy/wheels.sh`), go into a private folder;
# the drivers found there (NVIDIA's libnvidia-opencl.so.1 has no .icd file: fuzz.drivers.icd
# writes one into clfuzz's own OCL_ICD_VENDORS folder) are listed, then a campaign runs.
#   bash deploy/gpu.sh [clfuzz run options]        e.g. --minutes 5 --corpus $OUT/gpu.db
set -euo pipefail
cd "$(dirname "$0")/.."
site="${CLFUZZ_SITE:-/tmp/clfuzz-site}"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" .whl/*.whl
export PYTHONPATH="$site:$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
python3 -m app.cli drivers
exec python3 -m app.cli run "$@"
