#!/usr/bin/env bash
# Runs a command beside two busy WSL2-like guests (matrix/examples/guest-load.yaml: QEMU TCG, each
# taking a core), the load under which Claude Code's start-up race shows on a 2-core machine, and
# stops the guests when the command ends, however it ends. Waits for both guests' first trials
# (they have booted and are busy) before the command starts, and tells it so in BESIDE (which
# scripts/bug-report.sh prints). Exits with the command's status.
#   beside-guests.sh COMMAND [ARGS...]
set -euo pipefail
out=out/beside-guests
rm -rf "$out" && mkdir -p "$out"
setsid bin/sandcheck run --matrix matrix/examples/guest-load.yaml --out "$out" > "$out/log" 2>&1 &
load=$!
stop() {
  kill -TERM -- "-$load" 2>/dev/null || true
  wait "$load" 2>/dev/null || true
}
trap stop EXIT
echo "beside-guests: booting two guests (out/beside-guests/log)" >&2
until [ "$(cat "$out/journal.jsonl" 2>/dev/null | grep -c '"trial"')" -ge 2 ]; do
  kill -0 "$load" 2>/dev/null || { cat "$out/log" >&2; echo "beside-guests: the guests' run ended before it was busy" >&2; exit 1; }
  sleep 5
done
echo "beside-guests: guests busy; running $*" >&2
export BESIDE="two WSL2-like guests (QEMU TCG) running Claude Code's trials back to back, each emulation taking a core (scripts/beside-guests.sh)"
"$@"
