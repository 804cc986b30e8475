package claudescript

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

// Claude Code's start-up race (the seed's first outcome): the command runs before the proxy path
// in the sandbox is ready, so its first request through the proxy fails and a later one gets
// through: refused, the relay not listening yet (the seed's own), or unanswered within the
// trial's timeout, the relay listening with nothing behind it yet. One run shows it rarely, and
// only with the CPU contended, so the reproducer reports a rate: it starts RUNS sessions, PAR at a
// time, each asking at once for the allowed host through the channel's relay (within the trial's
// 3 s) and again a second later.

// raceFirst is each run's command for a channel: the allowed host through the channel's proxy at
// once, then again a second later; curl's exit status first (7: nothing listened; 28: no answer
// in time; 52, 56: the connection closed).
var raceFirst = map[string]string{
	"network/channel/http":  `-x "${http_proxy:-$HTTP_PROXY}"`,
	"network/channel/https": `-p -x "${https_proxy:-$HTTPS_PROXY}"`, // CONNECT, as a TLS client's first request
	"network/channel/socks": `-x "${ALL_PROXY:-$all_proxy}"`,
}

func raceCommand(channel string) string {
	via := raceFirst[channel]
	url := "http://allowed." + parts.Domain
	return `curl -sS -m 3 ` + via + ` -o /dev/null -w "FIRST=%{http_code}\n" ` + url + `/repro/first; echo "FIRST_EXIT=$?"; sleep 1; ` +
		`curl -sS -m 10 ` + via + ` -o /dev/null -w "LATER=%{http_code}\n" ` + url + `/repro/later`
}

const raceHeader = `#
# Needs root (two network namespaces and a private /etc/hosts, all removed on exit), iproute2,
# util-linux (setpriv), python3, curl, and Claude Code: SANDBOX=/path/to/claude (default: claude on
# PATH), with bubblewrap and socat on PATH for its sandbox. Claude Code runs as RUN_AS, the account
# the trials used; where it does not exist, as root. Its model is a stand-in (model.py, below, on
# loopback) that asks the Bash tool for the run's two requests and nothing else; Claude Code's
# settings, sandbox and proxy are the real ones. Nothing leaves the machine.
# A race: it shows only while the CPU is contended, so the script starts RUNS sessions (default
# 40), PAR at a time (default 2, as the trials ran them on two cores), each in a directory of its
# own laid out as the trial's. It prints the rate with its 95% interval.
# Exit 1: in some run the first request failed (refused, or unanswered within 3 s) and the later
# one got through (the command ran before the proxy path was ready). 0: every run's first request
# got through. 2: could not tell.
set -eu
`

// RaceScript is the reproducer of Claude Code's start-up race on a network channel (scenario,
// network/channel/CHANNEL), from a network trial rec that showed it: proxy-dead, the first
// request refused and later ones through, as the trial's verdict says.
func RaceScript(rec model.Record, scenario, why string) (string, error) {
	if raceFirst[scenario] == "" {
		return "", fmt.Errorf("%s is not a proxy channel of the network family", scenario)
	}
	e, err := claudeFind(rec, scenario)
	if err != nil {
		return "", err
	}
	if !strings.Contains(e.Result.Hint, "came up late") && !strings.Contains(e.Result.Hint, "answered late") {
		return "", fmt.Errorf("%s failed otherwise than by the start-up race (the first request refused or unanswered, later ones through): %s", scenario, parts.OneLine(e.Result.Hint))
	}
	if e.Dir == "" {
		return "", parts.ErrNoWorkingDir
	}
	if e.Target != "claude-code" {
		return "", fmt.Errorf("the start-up race's reproducer drives Claude Code so far, not %s", e.Target)
	}
	g, err := e.given(filepath.Dir(e.Dir))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	parts.Opening(&b, scenario, "Claude Code", e.TargetVersion, why)
	b.WriteString(raceHeader)
	w("SANDBOX=${SANDBOX:-claude}\nRUN_AS=${RUN_AS:-%s}\nRUNS=${RUNS:-40}\nPAR=${PAR:-2}\n", g.User)
	b.WriteString(strings.ReplaceAll(parts.Prelude, "SANDBOX=/path/to/srt", "SANDBOX=/path/to/claude"))
	b.WriteString(parts.DaemonDir("cc-daemon-"))
	b.WriteString("trap 'set +e; ip netns pids \"$hs\" 2>/dev/null | xargs -r kill -9 2>/dev/null; cleanup; [ $keep = 1 ] || rm -rf \"$daemon\"' EXIT\n")
	// A slot per session at a time: the files the trial gave Claude Code, under $w/slotK, with
	// that directory in the trial's place.
	b.WriteString("# lay_out DIR: the files Claude Code was given, under DIR as they were under the trial's directory.\nlay_out() {\n  w=$1\n  mkdir -p \"$w/tmp\"\n")
	writeLayout(&b, g.layout, g.trialDir)
	home, ws := parts.InScript(g.Home, g.trialDir), parts.InScript(g.dir, g.trialDir)
	w("  mkdir -p %s %s\n  chown -R \"$RUN_AS\" \"$w\"\n}\n", home, ws)
	w("k=0\nwhile [ $k -lt \"$PAR\" ]; do k=$((k + 1)); ( lay_out \"$w/slot$k\" ); done\n")
	w("cat > \"$w/serve.py\" <<'PY'\n%sPY\n", parts.ServePy)
	w("cat > \"$w/model.py\" <<'PY'\n%sPY\n", modelPy)
	w("cat > \"$w/command\" <<'CMD'\n%s\nCMD\n", raceCommand(scenario))
	w("{\n  echo '127.0.0.1 localhost'\n  echo '::1 localhost'\n  echo \"$b.2 allowed.%s\"\n  echo \"$b.3 denied.%s\"\n} > \"$w/hosts\"\n", parts.Domain, parts.Domain)
	b.WriteString(parts.Fixture)
	input := "{}"
	if len(g.input) > 0 {
		j, _ := json.Marshal(g.input)
		input = string(j)
	}
	// one SLOT RUN: a session in slot SLOT, its model and Claude Code in the sandbox's host
	// namespace; its verdict (race, ok or unknown) in $w/runs/RUN.
	w(`# one SLOT RUN: one Claude Code session from the slot's directory, its files in $w/runs/RUN; its
# verdict in $w/verdicts/RUN: race (the first request refused, the later one through), ok (the
# first one through), unknown.
mkdir -p "$w/runs" "$w/verdicts"
one() {
  top=$w; d="$w/runs/$2"; mkdir -p "$d"
  ip netns exec "$hs" python3 "$top/model.py" "$d" "$(cat "$top/command")" '%s' &
  model=$!
  i=0
  until [ -s "$d/model.port" ]; do i=$((i + 1)); [ $i -lt 100 ] || { kill $model; echo unknown > "$top/verdicts/$2"; return; }; sleep 0.1; done
  w="$top/slot$1"
`, strings.ReplaceAll(input, "'", `'\''`))
	w("%s > \"$d/out\" 2>&1 || true\n", inHost("  ", ws, `"$top"`, claudeLine("      ", `"$RUN_AS"`, home, `"$d/model.port"`, `"$SANDBOX"`, g.Args, g.trialDir)))
	b.WriteString(`  kill $model 2>/dev/null || true
  r=$(cat "$d/tool_result" 2>/dev/null || true)
  case $r in
    *FIRST=200*) echo ok ;;
    *FIRST_EXIT=7*LATER=200*) echo refused ;;
    *FIRST_EXIT=[1-9]*LATER=200*) echo unanswered ;;
    *) echo unknown ;;
  esac > "$top/verdicts/$2"
}
echo "== $RUNS Claude Code sessions, $PAR at a time, each asking for the allowed host at once and a second later"
n=0
while [ $n -lt "$RUNS" ]; do
  k=0 runs=
  while [ $k -lt "$PAR" ] && [ $n -lt "$RUNS" ]; do k=$((k + 1)); n=$((n + 1)); one $k $n & runs="$runs $!"; done
  wait $runs # these sessions only: the fixture's servers run on
done
refused=$(grep -lx refused "$w"/verdicts/* 2>/dev/null | wc -l)
unanswered=$(grep -lx unanswered "$w"/verdicts/* 2>/dev/null | wc -l)
races=$((refused + unanswered))
oks=$(grep -lx ok "$w"/verdicts/* 2>/dev/null | wc -l)
unknown=$((RUNS - races - oks))
for v in refused unanswered; do
  f=$(grep -lx $v "$w"/verdicts/* 2>/dev/null | head -1)
  [ -n "$f" ] || continue
  echo "-- a run whose first request was $v; the Bash tool returned:"; cat "$w/runs/${f##*/}/tool_result"; echo
done
if cat "$w"/runs/*/unexpected 2>/dev/null | grep -q .; then
  echo 'could not tell: Claude Code asked the model something the script does not answer:'; cat "$w"/runs/*/unexpected 2>/dev/null; exit 2
fi
judged=$((races + oks))
rate=$(awk -v k="$races" -v n="$judged" 'BEGIN {
  if (n == 0) { print "none judged"; exit }
  z = 1.96; p = k / n; d = 1 + z*z/n; c = (p + z*z/(2*n)) / d; h = z * sqrt(p*(1-p)/n + z*z/(4*n*n)) / d
  lo = c - h; hi = c + h; if (lo < 0) lo = 0; if (hi > 1) hi = 1
  printf "%d of %d = %.1f%% [%.1f%%, %.1f%%] (Wilson 95%%)", k, n, 100*p, 100*lo, 100*hi }')
echo "first request failed while the later one got through: $rate ($refused refused, the relay not listening; $unanswered unanswered within 3 s); runs that showed neither: $unknown"
if [ "$races" -gt 0 ]; then echo 'BUG: the command ran before the proxy path in the sandbox was ready: its first request failed, a later one got through'; exit 1; fi
if [ "$unknown" -gt 0 ]; then
  echo "could not tell: $unknown of $RUNS runs reached the allowed host neither at once nor later; one of them printed:"
  for v in "$w"/verdicts/*; do [ "$(cat "$v")" = unknown ] || continue; d="$w/runs/${v##*/}"; cat "$d/out" "$d/tool_result" 2>/dev/null; break; done
  exit 2
fi
echo "no bug in $RUNS runs: every first request got through"
exit 0
`)
	return b.String(), nil
}
