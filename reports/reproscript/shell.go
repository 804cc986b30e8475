package reproscript

// The script's fixed parts, around what the trial decides (settings, names, the request).

const header = `#
# Needs root (two network namespaces and a private /etc/hosts, all removed on exit), iproute2,
# util-linux (setpriv), python3 and the sandbox: SANDBOX=/path/to/srt (default: srt on PATH).
# The sandbox runs as RUN_AS, the account the trial used; where it does not exist, as root.
# Nothing leaves the machine: the sandbox's host is a network namespace of the script's whose
# only link is to the fixture's (198.19.X.0/24), and names resolve through a hosts file of its own.
# Exit 1: the bug shows. 0: it does not. 2: could not tell.
set -eu
`

const prelude = `[ "$(id -u)" = 0 ] || { echo "run me as root: I make two network namespaces" >&2; exit 2; }
command -v "$SANDBOX" >/dev/null 2>&1 || { echo "no sandbox at $SANDBOX: set SANDBOX=/path/to/srt" >&2; exit 2; }
SANDBOX=$(command -v "$SANDBOX")
if ! id "$RUN_AS" >/dev/null 2>&1; then echo "no account $RUN_AS: the sandbox runs as root" >&2; RUN_AS=root; fi
n=$$
fx=reprofx$n
hs=reprohs$n
w=$(mktemp -d /tmp/repro.XXXXXX)
cleanup() {
  set +e
  for p in $(cat "$w/pids" 2>/dev/null); do kill "$p" 2>/dev/null; done
  ip netns del "$fx" 2>/dev/null
  ip netns del "$hs" 2>/dev/null
  rm -rf "$w"
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP
chmod 755 "$w"
# The session's own HOME and TMPDIR, as a trial gives them: what the sandbox writes there (srt
# asks npm, which logs under HOME) goes with the script.
mkdir -p "$w/workspace" "$w/tmp" "$w/home"
chown "$RUN_AS" "$w/workspace" "$w/tmp" "$w/home"
b=198.19.$(( $(od -An -N1 -tu1 /dev/urandom) % 250 + 1 ))
printf 'nameserver 127.0.0.1\n' > "$w/resolv.conf"
`

const fixture = `ip netns add "$fx"
ip netns add "$hs"
ip link add "h$n" netns "$hs" type veth peer name "f$n" netns "$fx"
ip -n "$hs" link set lo up
ip -n "$hs" link set "h$n" up
ip -n "$hs" addr add "$b.1/24" dev "h$n"
ip -n "$hs" route add 169.254.169.254/32 dev "h$n"
ip -n "$fx" link set lo up
ip -n "$fx" link set "f$n" up
for a in "$b.2/24" "$b.3/24" 169.254.169.254/32; do ip -n "$fx" addr add "$a" dev "f$n"; done
: > "$w/log"
ip netns exec "$fx" python3 "$w/serve.py" "$w/log" "allowed@$b.2:80" "allowed@$b.2:8080" "denied@$b.3:80" "metadata@169.254.169.254:80" &
echo $! >> "$w/pids"
ip netns exec "$hs" python3 "$w/serve.py" "$w/log" "loopback@127.0.0.1:80" "loopback@127.0.0.1:8080" "self@$b.1:80" &
echo $! >> "$w/pids"
i=0
until [ "$(grep -c '^ready' "$w/log")" = 2 ]; do
  i=$((i + 1))
  [ $i -lt 100 ] || { echo "the fixture did not start" >&2; exit 2; }
  sleep 0.1
done
: > "$w/log"
# send VIA HOST-AS-HEX PORT METHOD PATH AUTH: one request from inside the sandbox, the sandbox run
# in the host namespace with the fixture's hosts file, as the trial ran it.
send() {
  ( cd "$w/workspace" && ip netns exec "$hs" sh -c 'mount --bind "$1/hosts" /etc/hosts && mount --bind "$1/resolv.conf" /etc/resolv.conf && shift && exec "$@"' sh "$w" \
    setpriv --reuid="$RUN_AS" --regid="$(id -g "$RUN_AS")" --init-groups \
    env -i PATH="$PATH" HOME="$w/home" USER="$RUN_AS" LOGNAME="$RUN_AS" TMPDIR="$w/tmp" LANG=C.UTF-8 \
    "$SANDBOX" --settings "$w/settings.json" -c "python3 $w/request.py $1 $2 $3 $4 $5 $6" ) || true
}
`
