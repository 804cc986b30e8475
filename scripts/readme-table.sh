#!/usr/bin/env bash
# Prints the README's "sandbox x scenario" table, measured on this machine: every adapter whose
# sandbox is installed is run healthy through the network, filesystem, fail-closed, untrusted and
# bypass scenarios (`sandcheck run --target X -n N --json`), and the reports become one Markdown
# table; the bypass class x target table goes to $BYPASS_TABLE (default out/bypass-table.md).
#   scripts/readme-table.sh [N]        N trials per sandbox (default 3); TIMEOUT per trial (2m)
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-3}"
TARGETS="${TARGETS:-srt bwrap firejail codex}"
LABELS="${LABELS:-network || filesystem || failclosed || untrusted || bypass}"
BYPASS_TABLE="${BYPASS_TABLE:-out/bypass-table.md}"
work=$(mktemp -d /tmp/sandcheck-readme-table-XXXXXX)
chmod 755 "$work" # the sandbox's user runs the binary in it
trap 'rm -rf "$work"' EXIT
bin="$work/sandcheck"
CGO_ENABLED=0 go build -o "$bin" ./cmd/sandcheck
args=()
for t in $TARGETS; do
  out="$work/run-$t"
  # Exit 1 is a measured run whose scenarios failed (or whose known findings are egress, which
  # run never excuses): it belongs in the table. Any other failure means it did not run here.
  rc=0
  "$bin" run --target "$t" -n "$N" -j 2 --timeout "${TIMEOUT:-2m}" --json --plain --label-filter "$LABELS" --out "$out" >"$work/$t.json" 2>"$work/$t.err" || rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
    echo "readme-table: $t not run here (exit $rc): $(tail -n 1 "$work/$t.err")" >&2
    continue
  fi
  args+=("$t=$out")
done
[ ${#args[@]} -gt 0 ] || { echo "readme-table: no sandbox could run" >&2; exit 1; }
go run ./scripts/readmetable "${args[@]}"
mkdir -p "$(dirname "$BYPASS_TABLE")"
go run ./scripts/readmetable -bypass "${args[@]}" > "$BYPASS_TABLE"
