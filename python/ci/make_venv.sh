#!/usr/bin/env bash
# Creates BUILD_DIR/python-venv (a venv over Debian's packages: --system-site-packages) and installs the hetccl
# package into it the documented way (pip install --no-build-isolation), from a copy of python/ in
# BUILD_DIR/python-src so that the checkout stays clean. The ctest fixture of the Python tests. HETCCL_PIP_BUILD=0:
# the pure-Python package (no CMake build by pip; the tests load BUILD_DIR's libhetccl.so through
# HETCCL_LIBRARY). The build by pip itself is checked by check_pip_build.sh.
# Usage: make_venv.sh BUILD_DIR SOURCE_DIR [PYTHON]
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
python=${3:-/usr/bin/python3}
venv=$build/python-venv

missing=()
"$python" -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
"$python" -c 'import numpy' 2>/dev/null || missing+=(python3-numpy)
"$python" -c 'import pytest' 2>/dev/null || missing+=(python3-pytest)
"$python" -c 'import setuptools, wheel' 2>/dev/null || missing+=(python3-setuptools python3-wheel)
if ((${#missing[@]})); then
  echo "make_venv: $python lacks ${missing[*]} (Debian packages; bash scripts/install-deps.sh installs them)" >&2
  exit 1
fi
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import numpy, pytest' 2>/dev/null; then
  rm -rf "$venv"
  "$python" -m venv --system-site-packages "$venv"
fi
rm -rf "$build/python-src"
mkdir -p "$build/python-src"
(cd "$src/python" && tar --exclude=./build --exclude='./*.egg-info' --exclude=__pycache__ --exclude=./hetccl/_lib \
  --exclude=./hetccl/_bin --exclude=./hetccl/dropin --exclude=./hetccl/_build_info.py -cf - .) | tar -C "$build/python-src" -xf -
start=$SECONDS
HETCCL_PIP_BUILD=0 HETCCL_SOURCE_ROOT=$src "$venv/bin/pip" install -q --no-build-isolation --no-index --no-deps \
  --disable-pip-version-check --force-reinstall "$build/python-src"
"$venv/bin/python" - <<PY
import hetccl, numpy, pytest
print(f"make_venv: hetccl {hetccl.__version__} installed in $venv in $((SECONDS - start)) s "
      f"(numpy {numpy.__version__}, pytest {pytest.__version__}); HETCCL_LIBRARY={__import__('os').environ.get('HETCCL_LIBRARY')}")
PY
