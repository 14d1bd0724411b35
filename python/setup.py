"""Build hooks of the hetccl Python package (metadata: pyproject.toml).

  pip install --no-build-isolation ./python
      pure-Python package; it finds libhetccl.so at run time ($HETCCL_LIBRARY, the loader's search path,
      or <checkout>/build/libhetccl.so of the checkout it was installed from)
  HETCCL_BUNDLE_LIBRARY=build/libhetccl.so pip install --no-build-isolation ./python
      also ships that libhetccl.so (and the GPU plugins next to it: libhetccl-cuda.so, libhetccl-hip.so)
      inside the package, as hetccl/_lib/
"""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGINS = ("libhetccl-cuda.so", "libhetccl-hip.so")


def bundled_library():
    lib = os.environ.get("HETCCL_BUNDLE_LIBRARY")
    if not lib:
        return None
    if not os.path.isfile(lib):
        raise SystemExit(f"HETCCL_BUNDLE_LIBRARY={lib}: no such file")
    return os.path.realpath(lib)


class BuildPy(build_py):
    def run(self):
        super().run()
        pkg = os.path.join(self.build_lib, "hetccl")
        root = os.environ.get("HETCCL_SOURCE_ROOT") or os.path.dirname(HERE)
        with open(os.path.join(pkg, "_build_info.py"), "w") as f:
            f.write('"""Written by setup.py at build time."""\n')
            f.write(f"SOURCE_ROOT = {root!r}  # the checkout the package was built from (its build/ is searched)\n")
            f.write(f"BUNDLED = {bool(bundled_library())!r}\n")
        lib = bundled_library()
        if lib:
            dest = os.path.join(pkg, "_lib")
            os.makedirs(dest, exist_ok=True)
            shutil.copy2(lib, os.path.join(dest, "libhetccl.so.0"))
            src_dir = os.path.dirname(os.path.abspath(os.environ["HETCCL_BUNDLE_LIBRARY"]))
            for name in PLUGINS:
                p = os.path.join(src_dir, name)
                if os.path.isfile(p):
                    shutil.copy2(os.path.realpath(p), os.path.join(dest, name))


class BinaryDistribution(Distribution):
    def has_ext_modules(self):  # a bundled .so makes the wheel platform-specific
        return bundled_library() is not None


setup(cmdclass={"build_py": BuildPy}, distclass=BinaryDistribution)
