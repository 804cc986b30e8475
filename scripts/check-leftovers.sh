#!/usr/bin/env bash
# Fails if a test run left sandcheck's things behind: fixture veths, trial dirs, sandbox processes,
# files or processes of the sandbox's user.
set -u
bad=0
links=$(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | grep -E '^scp?[0-9a-f]{8}' || true)
[ -z "$links" ] || { echo "leftover fixture links: $links"; bad=1; }
dirs=$(ls -d "${TMPDIR:-/tmp}"/sandcheck-trial-* "${TMPDIR:-/tmp}"/sandcheck-host-* "${TMPDIR:-/tmp}"/sandcheck-vm-* 2>/dev/null || true)
[ -z "$dirs" ] || { echo "leftover trial dirs: $dirs"; bad=1; }
# Live processes only: a zombie already released everything and waits for init to reap it.
live() { for p in $(pgrep -x 'socat|bwrap|srt' 2>/dev/null); do
  [ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" = Z ] || ps -o pid=,args= -p "$p"; done; }
procs=$(live)
[ -z "$procs" ] || { echo "leftover sandbox processes: $procs"; bad=1; }
qemu=$(pgrep -a -f 'qemu-system-x86_64.*sandcheck' 2>/dev/null || true)
[ -z "$qemu" ] || { echo "leftover VMs: $qemu"; bad=1; }
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  ctrs=$(docker ps -a --filter name=sandcheck- --format '{{.Names}}' 2>/dev/null || true)
  [ -z "$ctrs" ] || { echo "leftover containers: $ctrs"; bad=1; }
fi
# The sandbox's dedicated user (fixtures/users): nothing of it may outlive the trials, outside its HOME.
if id sandcheck >/dev/null 2>&1; then
  owned=$(find /tmp /var/tmp /dev/shm -xdev -user sandcheck 2>/dev/null | head -5 || true)
  [ -z "$owned" ] || { echo "left owned by the sandbox's user sandcheck: $owned"; bad=1; }
  uprocs=$(pgrep -u sandcheck -a 2>/dev/null | head -3 || true)
  [ -z "$uprocs" ] || { echo "processes of the sandbox's user sandcheck: $uprocs"; bad=1; }
fi
cookie=$(grep -l SANDCHECK_TRIAL_COOKIE /proc/[0-9]*/environ 2>/dev/null | head -3 || true)
[ -z "$cookie" ] || { echo "leftover trial processes: $cookie"; bad=1; }
[ $bad = 0 ] && echo "check-leftovers: nothing left behind"
exit $bad
