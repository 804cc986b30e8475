#!/usr/bin/env bash
# Fails if a test run left sandcheck's things behind: fixture veths, trial dirs, sandbox processes,
# files or processes of the sandbox's user.
#
#   check-leftovers.sh --snapshot FILE   before the tests: record what is already there
#   check-leftovers.sh [--since FILE]    after them: fail on what is there and was not before
#
# What an earlier, killed run left is printed as stale but not blamed on this one.
set -u
mode=check snap=
case "${1:-}" in
--snapshot) mode=snapshot snap=${2:?--snapshot FILE} ;;
--since) snap=${2:?--since FILE} ;;
esac

# items prints one line per leftover: KIND: WHAT (stable while the thing lasts).
items() {
  ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E '^scp?[0-9a-f]{8}' |
    sed 's/^/fixture link: /'
  ls -d "${TMPDIR:-/tmp}"/sandcheck-trial-* "${TMPDIR:-/tmp}"/sandcheck-host-* "${TMPDIR:-/tmp}"/sandcheck-vm-* 2>/dev/null |
    sed 's/^/trial dir: /'
  # Live processes only: a zombie already released everything and waits for init to reap it.
  for p in $(pgrep -x 'socat|bwrap|srt' 2>/dev/null); do
    [ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" = Z ] || echo "sandbox process: $(ps -o pid=,args= -p "$p")"
  done
  pgrep -a -f 'qemu-system-x86_64.*sandcheck' 2>/dev/null | sed 's/^/VM: /'
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    docker ps -a --filter name=sandcheck- --format '{{.Names}}' 2>/dev/null | sed 's/^/container: /'
  fi
  # The sandbox's dedicated user (fixtures/users): nothing of it may outlive the trials, outside its HOME.
  if id sandcheck >/dev/null 2>&1; then
    find /tmp /var/tmp /dev/shm -xdev -user sandcheck -prune 2>/dev/null | sed 's/^/owned by sandcheck: /'
    pgrep -u sandcheck -a 2>/dev/null | sed 's/^/process of sandcheck: /'
  fi
  grep -l SANDCHECK_TRIAL_COOKIE /proc/[0-9]*/environ 2>/dev/null | sed 's/^/trial process: /'
  return 0
}

if [ "$mode" = snapshot ]; then
  now=$(items | sort -u)
  printf '%s\n' "$now" > "$snap"
  [ -z "$now" ] || { echo "check-leftovers: already here before the tests (not blamed on them):"; printf '  %s\n' "$now"; }
  exit 0
fi
# fresh: what is here now and was not in the snapshot. The kernel removes a fixture's namespace,
# and both ends of its veth, in the background after its last user exits: give it 10 s.
fresh() {
  if [ -n "$snap" ] && [ -s "$snap" ]; then
    comm -23 <(items | sort -u) <(sort -u "$snap") | sed '/^$/d'
  else
    items | sort -u
  fi
}
new=$(fresh)
for _ in 1 2 3 4 5 6 7 8 9 10; do
  [ -n "$new" ] || break
  sleep 1
  new=$(fresh)
done
if [ -n "$new" ]; then
  echo "check-leftovers: the tests left things behind:"
  printf '  %s\n' "$new" | head -20
  exit 1
fi
echo "check-leftovers: nothing left behind"
