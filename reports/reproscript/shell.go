package reproscript

// sendSRT runs one request under srt: the script's fixture part for srt's requests.
const sendSRT = `# send VIA HOST-AS-HEX PORT METHOD PATH AUTH: one request from inside the sandbox, the sandbox run
# in the host namespace with the fixture's hosts file, as the trial ran it.
send() {
  ( cd "$w/workspace" && ip netns exec "$hs" sh -c 'mount --bind "$1/hosts" /etc/hosts && mount --bind "$1/resolv.conf" /etc/resolv.conf && shift && exec "$@"' sh "$w" \
    setpriv --reuid="$RUN_AS" --regid="$(id -g "$RUN_AS")" --init-groups \
    env -i PATH="$PATH" HOME="$w/home" USER="$RUN_AS" LOGNAME="$RUN_AS" TMPDIR="$w/tmp" LANG=C.UTF-8 \
    "$SANDBOX" --settings "$w/settings.json" -c "python3 $w/request.py $1 $2 $3 $4 $5 $6" ) || true
}
`
