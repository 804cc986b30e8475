#!/usr/bin/env bash
# Starts a Docker engine for sandcheck's container hosts, idempotently: exits 0 at once when an
# engine already answers on the socket. Otherwise installs Debian's docker.io if dockerd is
# missing, and starts dockerd in the background with no bridge and no iptables rules (containers
# run with network mode none; there is no registry to pull from), its own data root, and a log.
#
#   SANDCHECK_DOCKER_ROOT   data root (default /var/lib/sandcheck/docker)
#   SANDCHECK_DOCKER_LOG    dockerd's log (default /var/log/sandcheck-dockerd.log)
#   DOCKER_HOST             unix:// socket to use (default unix:///var/run/docker.sock)
set -euo pipefail

root="${SANDCHECK_DOCKER_ROOT:-/var/lib/sandcheck/docker}"
log="${SANDCHECK_DOCKER_LOG:-/var/log/sandcheck-dockerd.log}"
host="${DOCKER_HOST:-unix:///var/run/docker.sock}"
case "$host" in
  unix://*) sock="${host#unix://}" ;;
  *) echo "start-dockerd: DOCKER_HOST=$host is not a unix socket; not starting anything" >&2; exit 1 ;;
esac
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"

# answers: the engine behind the socket replies to /_ping (curl when present, else the CLI).
answers() {
  [ -S "$sock" ] || return 1
  if command -v curl >/dev/null; then
    [ "$(curl -s --max-time 2 --unix-socket "$sock" http://localhost/_ping 2>/dev/null)" = OK ]
  else
    DOCKER_HOST="$host" timeout 5 docker version >/dev/null 2>&1
  fi
}

if answers; then
  exit 0
fi

if ! command -v dockerd >/dev/null; then
  echo "start-dockerd: installing docker.io (dockerd not found)" >&2
  $SUDO apt-get update -qq
  # policy-rc.d 101: the package must not start its own service; we start dockerd below.
  prc=/usr/sbin/policy-rc.d; made_prc=0
  if [ ! -e "$prc" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$prc" >/dev/null; $SUDO chmod +x "$prc"; made_prc=1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends docker.io >/dev/null
  [ $made_prc = 1 ] && $SUDO rm -f "$prc"
  command -v dockerd >/dev/null || { echo "start-dockerd: dockerd still missing after installing docker.io" >&2; exit 1; }
fi

# A dead engine's stale pid file or socket would stop a new one from starting.
pidfile="$root.pid"
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  echo "start-dockerd: dockerd (pid $(cat "$pidfile")) is running but not answering yet; waiting" >&2
else
  $SUDO mkdir -p "$root" "$(dirname "$log")"
  [ -S "$sock" ] && $SUDO rm -f "$sock"
  # setsid + nohup: the engine outlives this script and the test that ran it. It must not keep a
  # descriptor it inherited (a caller's lock file held with flock, a pipe a test waits on to
  # close): the subshell that starts it closes every one above stderr first.
  (
    for fd in $(ls /proc/$BASHPID/fd); do [ "$fd" -le 2 ] || eval "exec $fd>&-"; done 2>/dev/null
    exec $SUDO setsid nohup dockerd --host "$host" --data-root "$root" --pidfile "$pidfile" \
      --bridge=none --iptables=false --ip6tables=false --ip-masq=false \
      >>"$log" 2>&1 </dev/null
  ) &
fi

for _ in $(seq 1 120); do
  if answers; then
    echo "start-dockerd: dockerd ready on $sock (data root $root, log $log)" >&2
    exit 0
  fi
  sleep 0.5
done
echo "start-dockerd: dockerd did not answer on $sock within 60s; last lines of $log:" >&2
tail -n 20 "$log" >&2 || true
exit 1
