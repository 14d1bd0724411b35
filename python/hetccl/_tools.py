"""The console scripts hetccl-run, hetccl-perf and hetccl-info (pyproject.toml's [project.scripts]).

Each execs the binary of that name that `pip install ./python` built and bundled in hetccl/_bin/, passing
its arguments through. The bundled layout needs no variable: the binaries' RUNPATH is $ORIGIN/../_lib, where
libhetccl.so.0 and the GPU plugins are (hetccl-perf links the library; hetccl-info's dlopen of a plugin
searches that RUNPATH), and hetccl-run --preload nccl|rccl finds hetccl/dropin/ as <its folder>/../dropin.

A package installed without the build (HETCCL_PIP_BUILD=0, HETCCL_BUNDLE_LIBRARY) has no hetccl/_bin/: the
scripts then exec the first other program of that name on PATH, else <checkout>/build/tools/<name> of the
checkout the package was installed from, else fail saying so.
"""

from __future__ import annotations

import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_MARK = b"hetccl._tools"  # in pip's console-script wrappers of these functions: never exec one of them


def _is_wrapper(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(1024)
    except OSError:
        return False
    return head.startswith(b"#!") and _MARK in head


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find(name: str):
    """(path, where) of the binary `name` the script runs, or (None, why not)."""
    bundled = os.path.join(_PACKAGE_DIR, "_bin", name)
    if _executable(bundled):
        return bundled, "bundled"
    for d in os.environ.get("PATH", "").split(os.pathsep):
        p = os.path.join(d or ".", name)
        if _executable(p) and not _is_wrapper(p):
            return p, "PATH"
    try:
        from ._build_info import SOURCE_ROOT
    except ImportError:
        SOURCE_ROOT = os.path.normpath(os.path.join(_PACKAGE_DIR, "..", ".."))
    p = os.path.join(SOURCE_ROOT, "build", "tools", name)
    if _executable(p):
        return p, "build tree"
    return None, (f"{name} is not bundled in this hetccl package ({bundled} missing: installed with "
                  f"HETCCL_PIP_BUILD=0 or HETCCL_BUNDLE_LIBRARY?), not on PATH and not in {os.path.dirname(p)}; "
                  "reinstall with `pip install --no-build-isolation ./python` (builds it) or build the checkout "
                  "(cmake --build build)")


def _exec(name: str):
    path, where = find(name)
    if path is None:
        sys.stderr.write(f"{name}: {where}\n")
        sys.exit(127)
    os.execv(path, [sys.argv[0] if sys.argv and sys.argv[0] else name] + sys.argv[1:])


def hetccl_run():
    _exec("hetccl-run")


def hetccl_perf():
    _exec("hetccl-perf")


def hetccl_info():
    _exec("hetccl-info")
