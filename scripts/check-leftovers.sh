#!/usr/bin/env bash
# Fails if a test run left things behind: sandcheck's own (fixture veths, trial dirs, sandbox
# processes, files or processes of the sandbox's user) and anything new in the places a trial's
# processes can write besides their trial directory, whatever its name (see places), and the
# root directory's own entries.
#
#   check-leftovers.sh --snapshot FILE   before the tests: record what is already there
#   check-leftovers.sh [--since FILE]    after them: fail on what is there and was not before
#
# What an earlier, killed run left is printed as stale but not blamed on this one.
#
#   SANDCHECK_LEFTOVERS_PLACES   where to look for new paths (default: see places)
#   SANDCHECK_LEFTOVERS_IGNORE   space-separated globs of paths not blamed (another program's
#                                files on a shared machine: '/tmp/other-*'), with what is under them
set -u
export LC_ALL=C # one order for sort and comm
mode=check snap=
case "${1:-}" in
--snapshot) mode=snapshot snap=${2:?--snapshot FILE} ;;
--since) snap=${2:?--since FILE} ;;
esac

# Where a trial can write outside its directory: the shared temporary directories, the
# per-user runtime directories, and the HOMEs of the accounts sandboxes run as (root's, this
# script's own, and the dedicated account's).
places() {
  if [ -n "${SANDCHECK_LEFTOVERS_PLACES:-}" ]; then
    printf '%s\n' $SANDCHECK_LEFTOVERS_PLACES
    return
  fi
  printf '%s\n' /tmp /var/tmp /dev/shm /run/user "${HOME:-/root}"
  getent passwd sandcheck | cut -d: -f6
}

# newPaths prints "new path: P" for every path three levels deep at most in places, but those
# ignored, a HOME's skeleton files (an account made during the run gets them) and its ~/.codex:
# Codex keeps its helpers there, made once per account (it refuses a HOME under /tmp, so a trial
# cannot give it one of its own) and cleaned up by Codex itself.
newPaths() {
  local - place p pat
  set -f # the ignore globs are matched below, not expanded here
  for place in $(places | sort -u); do
    [ -d "$place" ] || continue
    find "$place" -mindepth 1 -maxdepth 3 2>/dev/null | while IFS= read -r p; do
      for pat in ${SANDCHECK_LEFTOVERS_IGNORE:-}; do
        # shellcheck disable=SC2053 # a glob, on purpose; * matches across /
        [[ $p == $pat || $p == $pat/* ]] && continue 2
      done
      case $place in
      /tmp | /var/tmp | /dev/shm | /run/user) ;;
      *) [ -e "/etc/skel/${p#"$place"/}" ] || [[ $p == "$place"/.codex* ]] && continue ;;
      esac
      echo "new path: $p"
    done
  done
  # The root's own entries: a sandbox that resolves a planted link as root and mounts where it
  # leads would make its mount point there (/oldroot, say).
  find / -mindepth 1 -maxdepth 1 2>/dev/null | while IFS= read -r p; do
    for pat in ${SANDCHECK_LEFTOVERS_IGNORE:-}; do
      # shellcheck disable=SC2053 # a glob, on purpose
      [[ $p == $pat ]] && continue 2
    done
    echo "new path: $p"
  done
}

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
  # A trial's control group (fixtures/cgroup), at the unified root or in a v1 hierarchy.
  ls -d /sys/fs/cgroup/sandcheck-* /sys/fs/cgroup/*/sandcheck-* 2>/dev/null | sed 's/^/cgroup: /'
  grep -l SANDCHECK_TRIAL_COOKIE /proc/[0-9]*/environ 2>/dev/null | sed 's/^/trial process: /'
  # A sentinel (fixtures/sentinel) carries no cookie, whichever account it runs as.
  pgrep -a -f '__sandcheck_sentinel' 2>/dev/null | grep -v pgrep | sed 's/^/sentinel: /'
  newPaths
  return 0
}

# topmost keeps, of new paths, those whose parent is not new too: a left directory is one line.
topmost() {
  awk '/^new path: / {
      p = substr($0, 11); a = p; keep = 1
      while ((i = match(a, /\/[^\/]*$/)) > 1) { a = substr(a, 1, i - 1); if (a in seen) { keep = 0; break } }
      seen[p] = 1
      if (!keep) next
    }
    { print }'
}

if [ "$mode" = snapshot ]; then
  now=$(items | sort -u)
  printf '%s\n' "$now" > "$snap"
  stale=$(printf '%s\n' "$now" | grep -v '^new path: ')
  [ -z "$stale" ] || { echo "check-leftovers: already here before the tests (not blamed on them):"; printf '  %s\n' "$stale"; }
  exit 0
fi
# fresh: what is here now and was not in the snapshot. The kernel removes a fixture's namespace,
# and both ends of its veth, in the background after its last user exits: give it 10 s.
fresh() {
  if [ -n "$snap" ] && [ -s "$snap" ]; then
    comm -23 <(items | sort -u) <(sort -u "$snap") | sed '/^$/d' | topmost
  else
    items | grep -v '^new path: ' | sort -u
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
