"""Build hooks of the hetccl Python package (metadata: pyproject.toml).

  pip install --no-build-isolation ./python
      builds libhetccl.so, the GPU plugins whose compilers are found (libhetccl-cuda.so: nvcc;
      libhetccl-hip.so: clang-16), the NCCL-ABI drop-ins (libnccl.so.2, librccl.so) and the tools
      (hetccl-run, hetccl-perf, hetccl-info) with CMake + Ninja from the checkout that python/ sits in, and
      ships them inside the package:
          hetccl/_lib/     libhetccl.so.0, libhetccl-cuda.so, libhetccl-hip.so
          hetccl/_bin/     hetccl-run, hetccl-perf, hetccl-info (RUNPATH $ORIGIN/../_lib)
          hetccl/dropin/   libnccl.so.2, librccl.so and the plugins (hetccl-run --preload nccl looks in
                           <its folder>/../dropin)
      The console scripts hetccl-run / hetccl-perf / hetccl-info (hetccl/_tools.py) exec the bundled binaries.
  HETCCL_CMAKE_ARGS="-DHETCCL_BUILD_CUDA=OFF ..."   extra CMake arguments (shell words), after the defaults
  HETCCL_PIP_BUILD_DIR=DIR   build in DIR and keep it (a later install rebuilds only what changed; CMake's
                             cache keeps earlier -D values); default: a temporary folder, removed afterwards
  HETCCL_SOURCE_ROOT=DIR     the hetccl checkout to build (default: the folder above this file)
  HETCCL_PIP_BUILD=0         no build: the pure-Python package, which finds libhetccl.so at run time
                             ($HETCCL_LIBRARY, the loader's search path, or <checkout>/build/libhetccl.so)
  HETCCL_BUNDLE_LIBRARY=build/libhetccl.so   no build: ships that prebuilt libhetccl.so (and the GPU plugins
                             next to it) as hetccl/_lib/
CMAKE_BUILD_PARALLEL_LEVEL=N limits the build's parallelism (CMake's own variable; Ninja's default otherwise).
An editable install (pip install -e) ships nothing and needs HETCCL_PIP_BUILD=0.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # no wheel package: pip cannot build wheels anyway
    bdist_wheel = None

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGINS = ("libhetccl-cuda.so", "libhetccl-hip.so")
TOOLS = ("hetccl-run", "hetccl-perf", "hetccl-info")
BUNDLED_DIRS = ("_lib", "_bin", "dropin")  # what a bundling build adds to the package
MIN_CMAKE = (3, 25)
HOW_TO_INSTALL = ("bash scripts/install-deps.sh (as root) installs them; on Debian 12 the build alone needs "
                  "apt-get install cmake ninja-build g++ libssl-dev. Or install the pure-Python package with "
                  "HETCCL_PIP_BUILD=0 and point HETCCL_LIBRARY at a libhetccl.so built elsewhere.")


class BuildError(SystemExit):
    """Stops the build with a message (pip prints it under 'error')."""

    def __init__(self, msg):
        super().__init__("hetccl: " + msg)


def mode():
    """'prebuilt' (HETCCL_BUNDLE_LIBRARY), 'cmake' (the default) or 'none' (HETCCL_PIP_BUILD=0)."""
    if os.environ.get("HETCCL_BUNDLE_LIBRARY"):
        return "prebuilt"
    v = os.environ.get("HETCCL_PIP_BUILD", "1").strip().lower()
    if v in ("0", "off", "no", "false"):
        return "none"
    if v in ("", "1", "on", "yes", "true"):
        return "cmake"
    raise BuildError(f"HETCCL_PIP_BUILD={v!r}: 1 builds libhetccl.so with CMake (the default), 0 does not")


def source_root():
    return os.path.abspath(os.environ.get("HETCCL_SOURCE_ROOT") or os.path.dirname(HERE))


def base_version():
    with open(os.path.join(HERE, "hetccl", "__init__.py")) as f:
        return re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)


def package_version():
    """The base version, with the local label +bundled when the package ships libhetccl.so."""
    return base_version() + ("" if mode() == "none" else "+bundled")


def bundled_library():
    lib = os.environ.get("HETCCL_BUNDLE_LIBRARY")
    if not lib:
        return None
    if not os.path.isfile(lib):
        raise BuildError(f"HETCCL_BUNDLE_LIBRARY={lib}: no such file")
    return os.path.realpath(lib)


def _log(msg):
    print(f"hetccl: {msg}", file=sys.stderr, flush=True)


def _run(cmd, what, env=None):
    _log(" ".join(shlex.quote(c) for c in cmd))
    r = subprocess.run(cmd, env=env)
    if r.returncode != 0:
        raise BuildError(f"{what} failed (exit status {r.returncode}; its output is above: pip -v shows it all; "
                         "HETCCL_PIP_BUILD_DIR=DIR keeps the build folder). Missing packages? " + HOW_TO_INSTALL)


def _which_compiler(env_var, names):
    if os.environ.get(env_var):
        words = shlex.split(os.environ[env_var])
        return shutil.which(words[0]) if words else None
    for n in names:
        if shutil.which(n):
            return shutil.which(n)
    return None


def check_build_tools():
    """(cmake, ninja) paths; a BuildError naming every missing tool."""
    missing = []
    cmake = shutil.which("cmake")
    if not cmake:
        missing.append(f"cmake >= {'.'.join(map(str, MIN_CMAKE))}")
    else:
        out = subprocess.run([cmake, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"version (\d+)\.(\d+)", out)
        if m and (int(m.group(1)), int(m.group(2))) < MIN_CMAKE:
            missing.append(f"cmake >= {'.'.join(map(str, MIN_CMAKE))} (found {m.group(0)} at {cmake})")
    ninja = shutil.which("ninja") or shutil.which("ninja-build")
    if not ninja:
        missing.append("ninja (Debian: ninja-build)")
    if not _which_compiler("CXX", ("c++", "g++", "clang++")):
        missing.append("a C++20 compiler (Debian: g++)" + (f"; CXX={os.environ['CXX']} not found"
                                                          if os.environ.get("CXX") else ""))
    if not _which_compiler("CC", ("cc", "gcc", "clang")):
        missing.append("a C compiler (Debian: gcc)" + (f"; CC={os.environ['CC']} not found"
                                                       if os.environ.get("CC") else ""))
    if missing:
        raise BuildError("pip install builds libhetccl.so and its tools from source, which needs "
                         + ", ".join(missing) + " on PATH. " + HOW_TO_INSTALL)
    return cmake, ninja


def cmake_build(root, dest):
    """Configures, builds and installs (into a staging prefix) the checkout at `root`, then copies the
    libraries and tools into the package folder `dest`. Returns a one-line description."""
    if not os.path.isfile(os.path.join(root, "CMakeLists.txt")) or not os.path.isfile(
            os.path.join(root, "src", "abi", "libhetccl.map")):
        raise BuildError(f"no hetccl source tree at {root} (python/ must be inside a hetccl checkout to build "
                         "libhetccl.so; or set HETCCL_SOURCE_ROOT=/path/to/checkout, or HETCCL_PIP_BUILD=0 for the "
                         "pure-Python package)")
    cmake, ninja = check_build_tools()
    keep = os.environ.get("HETCCL_PIP_BUILD_DIR")
    bdir = os.path.abspath(keep) if keep else tempfile.mkdtemp(prefix="hetccl-pip-build-")
    extra = shlex.split(os.environ.get("HETCCL_CMAKE_ARGS", ""))
    # The compilers' temporary files go inside the build folder: clang-16 leaves empty folders in TMPDIR for
    # the HIP plugin's kernels (kernels_rtc-*, probe-*), which then go with it.
    tmp = os.path.join(bdir, "tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    env = dict(os.environ, TMPDIR=tmp)
    start = time.monotonic()
    try:
        # Release, no tests or benchmarks; the install layout of the package (the tools' install RPATH is
        # $ORIGIN/../<libdir>: cmake/install.cmake). HETCCL_CMAKE_ARGS come last, so they can override these.
        _run([cmake, "-S", root, "-B", bdir, "-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}",
              "-DCMAKE_BUILD_TYPE=Release", "-DHETCCL_BUILD_TESTS=OFF", "-DHETCCL_BUILD_BENCH=OFF",
              "-DCMAKE_INSTALL_LIBDIR=_lib", "-DCMAKE_INSTALL_BINDIR=_bin", "-DCMAKE_INSTALL_INCLUDEDIR=include",
              *extra], "CMake configuration of " + root, env)
        _run([cmake, "--build", bdir], "the build of libhetccl.so and its tools", env)
        stage = os.path.join(bdir, "pip-stage")
        shutil.rmtree(stage, ignore_errors=True)
        _run([cmake, "--install", bdir, "--prefix", stage, "--strip"], "cmake --install into " + stage)

        def copy(src, dst_dir, name=None):
            os.makedirs(dst_dir, exist_ok=True)
            shutil.copy2(os.path.realpath(src), os.path.join(dst_dir, name or os.path.basename(src)))

        lib = os.path.join(stage, "_lib", "libhetccl.so.0")
        if not os.path.exists(lib):
            raise BuildError(f"the build installed no {lib}")
        copy(lib, os.path.join(dest, "_lib"))
        built = ["libhetccl.so.0"]
        for name in PLUGINS:
            p = os.path.join(stage, "_lib", name)
            if os.path.exists(p):
                copy(p, os.path.join(dest, "_lib"))
                built.append(name)
        for tool in TOOLS:
            p = os.path.join(stage, "_bin", tool)
            if not os.path.exists(p):
                raise BuildError(f"the build installed no {tool} ({p})")
            copy(p, os.path.join(dest, "_bin"))
            built.append(tool)
        dropin = os.path.join(stage, "_lib", "hetccl", "dropin")
        if os.path.isdir(dropin):
            for name in sorted(os.listdir(dropin)):
                copy(os.path.join(dropin, name), os.path.join(dest, "dropin"))
                built.append("dropin/" + name)
        shutil.rmtree(stage, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    finally:
        if not keep:
            shutil.rmtree(bdir, ignore_errors=True)
    secs = time.monotonic() - start
    _log(f"built and bundled in {secs:.0f} s: {' '.join(built)}" + ("" if keep else f" ({bdir} removed)"))
    return "built by pip with CMake from " + root + (f" (HETCCL_CMAKE_ARGS={' '.join(extra)})" if extra else "")


class BuildPy(build_py):
    def run(self):
        pkg = os.path.join(self.build_lib, "hetccl")
        for d in BUNDLED_DIRS:  # nothing of an earlier build of another kind
            shutil.rmtree(os.path.join(pkg, d), ignore_errors=True)
        super().run()
        how = None
        m = mode()
        if getattr(self, "editable_mode", False):  # the package is the checkout's python/hetccl: nothing to add
            if m != "none":
                raise BuildError("an editable install cannot ship libhetccl.so: HETCCL_PIP_BUILD=0 pip install "
                                 "--no-build-isolation -e ./python; the package then loads <checkout>/build/libhetccl.so "
                                 "(cmake --build build) or $HETCCL_LIBRARY")
            return
        if m == "cmake":
            how = cmake_build(source_root(), pkg)
        elif m == "prebuilt":
            lib = bundled_library()
            dest = os.path.join(pkg, "_lib")
            os.makedirs(dest, exist_ok=True)
            shutil.copy2(lib, os.path.join(dest, "libhetccl.so.0"))
            src_dir = os.path.dirname(os.path.abspath(os.environ["HETCCL_BUNDLE_LIBRARY"]))
            for name in PLUGINS:
                p = os.path.join(src_dir, name)
                if os.path.isfile(p):
                    shutil.copy2(os.path.realpath(p), os.path.join(dest, name))
            how = "prebuilt, copied from " + lib
        with open(os.path.join(pkg, "_build_info.py"), "w") as f:
            f.write('"""Written by setup.py at build time."""\n')
            f.write(f"SOURCE_ROOT = {source_root()!r}  # the checkout the package was built from (its build/ is searched)\n")
            f.write(f"BUNDLED = {how is not None!r}  # libhetccl.so shipped in hetccl/_lib/\n")
            f.write(f"BUNDLE_HOW = {how!r}\n")
            f.write(f"VERSION = {package_version()!r}\n")


class BinaryDistribution(Distribution):
    def has_ext_modules(self):  # a bundled .so makes the wheel platform-specific
        return mode() != "none"


cmdclass = {"build_py": BuildPy}
if bdist_wheel is not None:
    class BdistWheel(bdist_wheel):
        """A bundling wheel is tagged py3-none-<platform> (ctypes: any CPython 3, one platform), and the
        bundled binaries are removed from setuptools' build/lib once the wheel holds them."""

        def finalize_options(self):
            super().finalize_options()
            if mode() != "none":
                self.root_is_pure = False

        def get_tag(self):
            python, abi, plat = super().get_tag()
            return ("py3", "none", plat) if mode() != "none" else (python, abi, plat)

        def run(self):
            try:
                super().run()
            finally:
                build_lib = self.get_finalized_command("build").build_lib
                for d in BUNDLED_DIRS:
                    shutil.rmtree(os.path.join(build_lib, "hetccl", d), ignore_errors=True)

    cmdclass["bdist_wheel"] = BdistWheel

setup(version=package_version(), cmdclass=cmdclass, distclass=BinaryDistribution)
