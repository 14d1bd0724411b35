#!/usr/bin/env bash
# check_no_doubles.sh LIB... : none of the tests' doubles (tests/support: the in-memory transport, its links
# table, the host runtime, the runtime registry) is linked into a product library. Reads each LIB's full
# symbol table (nm), so a stripped library fails rather than passing unchecked. Exits 1 naming the symbols.
set -euo pipefail
doubles='hetccl::transport::mem::|hetccl::engine::ConnectionTable|hetccl::device::HostRuntime|hetccl::device::RuntimeRegistry|hetccl::device::runtimes\('
status=0
for lib in "$@"; do
  [[ -f $lib ]] || { echo "FAIL: $lib does not exist" >&2; status=1; continue; }
  symbols=$(nm -C "$lib" 2>&1) || { echo "FAIL ($lib): nm: $symbols" >&2; status=1; continue; }
  if ! grep -q 'hetccl::' <<<"$symbols"; then
    echo "FAIL ($lib): no hetccl:: symbols in its symbol table (stripped?): cannot check" >&2
    status=1
    continue
  fi
  found=$(grep -E "$doubles" <<<"$symbols" | sed 's/^[0-9a-f]* //' | sort -u || true)
  if [[ -n $found ]]; then
    echo "FAIL ($lib): test doubles linked into the library:" >&2
    head -20 <<<"$found" >&2
    status=1
  else
    echo "ok ($lib): no test doubles among $(wc -l <<<"$symbols") symbols"
  fi
done
exit $status
