#!/usr/bin/env bash
# Runs its arguments where UCX's libucp.so.0 is installed; exit status 77 (ctest: skipped) elsewhere.
if ! ldconfig -p 2>/dev/null | grep -q 'libucp\.so\.0 '; then
  echo "ucx_or_skip: libucp.so.0 is not installed (Debian: libucx0): skipped"
  exit 77
fi
exec "$@"
