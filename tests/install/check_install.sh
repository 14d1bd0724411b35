#!/usr/bin/env bash
# cmake --install of a build into a fresh prefix, then what a user does with it (issue 28): the layout is
# complete, a C program builds against it through pkg-config and through find_package(hetccl) and runs
# exactly (one CPU rank: tests/install/consumer/main.c), and the installed tools run from bin/ without any
# variable set (a 2-rank all-reduce whose results hetccl-perf checks). Cost: about 5 s.
#   usage: check_install.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
libdir=
for d in lib lib64 lib/*-linux-gnu; do [[ -e $prefix/$d/libhetccl.so ]] && { libdir=$d; break; }; done
[[ -n $libdir ]] || fail "no libhetccl.so under $prefix/lib*"
for f in include/hetccl/hetccl.h include/hetccl/hetccl_rma.h include/hetccl/hetccl_agent.h include/hetccl/nccl_abi.h "$libdir/libhetccl.so" \
         "$libdir/cmake/hetccl/hetcclConfig.cmake" "$libdir/cmake/hetccl/hetcclTargets.cmake" \
         "$libdir/pkgconfig/hetccl.pc" bin/hetccl-run bin/hetccl-perf bin/hetccl-info \
         "$libdir/hetccl/dropin/libnccl.so.2" "$libdir/hetccl/dropin/librccl.so"; do
  [[ -e $prefix/$f ]] || fail "missing $f in the installed tree"
done
# The plugins the build made are installed beside the library and beside the drop-ins.
for plugin in libhetccl-cuda.so libhetccl-hip.so; do
  if [[ -e $build/$plugin ]]; then
    [[ -e $prefix/$libdir/$plugin && -e $prefix/$libdir/hetccl/dropin/$plugin ]] || fail "$plugin not installed"
  fi
done

# pkg-config
cc=${CC:-cc}
PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig pkg-config --exists hetccl || fail "pkg-config does not find hetccl"
# shellcheck disable=SC2046
"$cc" "$here/consumer/main.c" -o "$work/by_pkgconfig" \
  $(PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig pkg-config --cflags --libs hetccl) || fail "build with pkg-config"
LD_LIBRARY_PATH=$prefix/$libdir "$work/by_pkgconfig" || fail "the pkg-config build did not run exactly"

# find_package(hetccl)
CC=$cc cmake -S "$here/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake.log" 2>&1 ||
  { cat "$work/cmake.log"; fail "find_package(hetccl)"; }
cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "build with find_package"; }
"$work/cmake/consumer" || fail "the find_package build did not run exactly (its rpath comes from hetccl::hetccl)"

# The installed tools, nothing set: hetccl-run starts 2 ranks of hetccl-perf, which checks every result.
env -u LD_LIBRARY_PATH "$prefix/bin/hetccl-run" -n 2 --timeout 60 -- "$prefix/bin/hetccl-perf" all_reduce -b 8 -e 64K -f 8 \
  >"$work/perf.log" 2>&1 || { cat "$work/perf.log"; fail "installed hetccl-run / hetccl-perf"; }
grep -q "Out of bounds values : 0 OK" "$work/perf.log" || { cat "$work/perf.log"; fail "hetccl-perf found wrong values"; }
"$prefix/bin/hetccl-info" >/dev/null || fail "installed hetccl-info"
# --preload nccl finds the installed drop-in (lib*/hetccl/dropin), not a build tree's.
env -u LD_LIBRARY_PATH "$prefix/bin/hetccl-run" -n 1 --preload nccl --timeout 30 -- bash -c 'echo "PRELOAD=$LD_PRELOAD"' \
  >"$work/preload.log" 2>&1 || { cat "$work/preload.log"; fail "installed hetccl-run --preload nccl"; }
grep -q "PRELOAD=$prefix/$libdir/hetccl/dropin/libnccl.so.2" "$work/preload.log" ||
  { cat "$work/preload.log"; fail "hetccl-run --preload nccl did not name the installed drop-in"; }
echo "PASS: installed tree complete; C program exact through pkg-config and find_package; installed tools ran"
