#!/usr/bin/env bash
# The package built with HETCCL_BUNDLE_LIBRARY ships libhetccl.so inside itself and loads that copy when
# HETCCL_LIBRARY is not set (library_source() says so); a 1-rank all-reduce runs through it.
# Usage: check_bundled.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
target=$build/python-bundled
rm -rf "$target"
HETCCL_BUNDLE_LIBRARY=$build/libhetccl.so "$build/python-venv/bin/pip" install -q --no-build-isolation --no-index \
  --no-deps --disable-pip-version-check --target "$target" "$build/python-src"
cd /
env -u HETCCL_LIBRARY -u LD_LIBRARY_PATH PYTHONPATH="$target" "$build/python-venv/bin/python" - "$target" <<'PY'
import os, sys
import numpy as np
import hetccl
target = sys.argv[1]
print("loaded", hetccl.library_path(), "--", hetccl.library_source())
assert hetccl.library_source() == "bundled in the package", hetccl.library_source()
assert hetccl.library_path().startswith(os.path.realpath(target)), hetccl.library_path()
with hetccl.Communicator(hetccl.get_unique_id(), 1, 0) as c:
    x = np.arange(4, dtype=np.float32)
    c.all_reduce(x)
    assert (x == np.arange(4)).all()
print("ok: bundled library used")
PY
