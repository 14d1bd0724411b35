#!/usr/bin/env bash
# check_exports.sh LIB SONAME LIST... : LIB's dynamic symbol table defines exactly the names listed in the
# LIST files and their pnccl twins, all functions, none versioned, and LIB's SONAME is SONAME.
set -euo pipefail
lib=$1 soname=$2
shift 2
fail() { echo "FAIL ($lib): $*" >&2; exit 1; }

expected=$(grep -hv '^#' "$@" | grep -v '^$' | while read -r n; do echo "$n"; echo "p$n"; done | sort)
actual=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
if [[ "$expected" != "$actual" ]]; then
  echo "expected (<) vs exported (>):" >&2
  diff <(echo "$expected") <(echo "$actual") >&2 || true
  fail "exported names differ from the lists"
fi

# Defined symbols: FUNC, GLOBAL, DEFAULT, no @VERSION.
bad=$(readelf --dyn-syms -W "$lib" | awk '$7 != "UND" && $7 != "Ndx" && NF >= 8 && ($4 != "FUNC" || $5 != "GLOBAL" || $6 != "DEFAULT" || $8 ~ /@/)')
[[ -z "$bad" ]] || fail "symbols that are not plain unversioned global functions:"$'\n'"$bad"
readelf -W -V "$lib" | grep -q "Version definition" && fail "has a version definition section (exports must be unversioned)"

got=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[[ "$got" == "$soname" ]] || fail "SONAME is '$got', expected '$soname'"
echo "OK: $lib exports $(echo "$actual" | wc -l) names (the lists and their pnccl twins), SONAME $got"
