package parts

// InHostAs is the start of a script's send(): from its workspace, in the sandbox's host namespace
// with the fixture's hosts file and resolver bound over the system's, as the trial's account with
// a clean environment whose TMPDIR is tmp, plus $caller_env (a condition's own variables, such as
// a caller's proxy; empty by default). The sandbox's command line follows.
func InHostAs(tmp string) string {
	return `( cd "$w/workspace" && ip netns exec "$hs" sh -c 'mount --bind "$1/hosts" /etc/hosts && mount --bind "$1/resolv.conf" /etc/resolv.conf && shift && exec "$@"' sh "$w" \
    setpriv --reuid="$RUN_AS" --regid="$(id -g "$RUN_AS")" --init-groups \
    env -i PATH="$PATH" HOME="$w/home" USER="$RUN_AS" LOGNAME="$RUN_AS" TMPDIR="` + tmp + `" LANG=C.UTF-8 ${caller_env:-} \
    `
}

// SendHead is send()'s comment, the same for every sandbox.
const SendHead = `# send VIA HOST-AS-HEX PORT METHOD PATH AUTH: one request from inside the sandbox, the sandbox run
# in the host namespace with the fixture's hosts file, as the trial ran it.
`

// RoundResidue is the lines of a rounds script (the concurrency family's) that count round $r as
// residue when its workspace listing after ($w/r$r.after) differs from the one before, and show
// the first such round's difference.
const RoundResidue = `  if ! cmp -s "$w/r$r.before" "$w/r$r.after"; then
    residue=$((residue + 1))
    [ $residue -gt 1 ] || { echo "-- round $r left the workspace changed (+ new, - gone):"; diff "$w/r$r.before" "$w/r$r.after" | sed -n 's/^> /  + /p; s/^< /  - /p'; }
  fi
`
