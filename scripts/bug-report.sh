#!/usr/bin/env bash
# Writes docs/reports/NAME.md: the bug report `sandcheck repro` prints for a finding, and every
# standalone reproducer it wrote, each run here as a maintainer would run it (outside sandcheck,
# SANDBOX the sandbox under test), with what it printed and its exit status. The report's opening
# (what the bug is in the sandbox's own terms, what upstream would need to fix) is written by
# hand between the <!-- intro --> markers and kept when the report is written again. SANDBOX may
# name several builds, colon-separated (the release that has the bug and the one that fixed it):
# each reproducer is run with each. REPRO_ENV, when set, is more of the reproducers' environment
# (RUNS=100 PAR=2 for a rate), and the report says so; so is BESIDE, what ran beside the report's
# runs (scripts/beside-guests.sh sets it).
#   bug-report.sh NAME SANDBOX[:SANDBOX...] [RUN_AS] -- REPRO-ARGS...
set -euo pipefail
name=$1 sandbox=$2
shift 2
run_as=""
if [ "${1:-}" != "--" ]; then run_as=$1; shift; fi
[ "${1:-}" = "--" ] || { echo "usage: bug-report.sh NAME SANDBOX [RUN_AS] -- REPRO-ARGS..." >&2; exit 2; }
shift
doc=docs/reports/$name.md
out=out/reports/$name
rm -rf "$out" && mkdir -p "$out"

intro=""
if [ -f "$doc" ]; then
  intro=$(awk '/^<!-- intro -->$/{p=1} p{print} /^<!-- \/intro -->$/{p=0}' "$doc")
fi
[ -n "$intro" ] || intro=$'<!-- intro -->\n(what the bug is, and what upstream would need to fix: written by hand)\n<!-- /intro -->'

# shell_words prints its arguments as a shell reads them back, quoted only where they need it.
shell_words() {
  for a in "$@"; do
    case $a in
      *[!A-Za-z0-9@%+=:,./_-]*) printf "'%s' " "${a//\'/\'\\\'\'}" ;;
      *) printf '%s ' "$a" ;;
    esac
  done
}

set +e
# Not DIR/report.md: that is the run's own (a nightly's wording), which repro writes beside what it prints.
bin/sandcheck repro "$@" --out "$out" > "$out/bug-report.md" 2> "$out/stderr"
code=$?
set -e
[ $code -le 1 ] || { cat "$out/stderr" "$out/bug-report.md" >&2; echo "bug-report.sh: sandcheck repro exited $code" >&2; exit 1; }

{
  echo "<!-- Written by scripts/bug-report.sh (make reports), but for the intro; do not edit the rest by hand. -->"
  echo "$intro"
  echo
  echo "## How this report was made"
  echo
  echo "On $(date -u +%Y-%m-%d), on this repository's development machine ($(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r), $(nproc) cores):"
  echo
  echo '```'
  echo "sandcheck repro $(shell_words "$@")--out DIR"
  echo '```'
  echo
  [ -z "${BESIDE:-}" ] || { echo "It ran, and its reproducers after it, beside $BESIDE."; echo; }
  echo "Its exit status was $code. What it printed follows, a level down; then each reproducer it wrote, run outside sandcheck."
  echo
  sed -e 's/^#/##/' "$out/bug-report.md"
  for s in "$out"/repro/*.sh; do
    [ -e "$s" ] || continue
    base=$(basename "$s")
    IFS=: read -r -a builds <<< "$sandbox"
    for build in "${builds[@]}"; do
      set +e
      # shellcheck disable=SC2086 # REPRO_ENV is words: VAR=VALUE ...
      env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin SANDBOX="$build" ${run_as:+RUN_AS=$run_as} ${REPRO_ENV:-} sh "$s" > "$out/$base.out" 2>&1
      rc=$?
      set -e
      echo
      with=""
      [ ${#builds[@]} -le 1 ] || with="SANDBOX=${build#$PWD/}"
      with="$with${REPRO_ENV:+${with:+ }$REPRO_ENV}"
      if [ -n "$with" ]; then
        echo "### Reproducer \`$base\`, run here with \`$with\` (exit $rc)"
      else
        echo "### Reproducer \`$base\`, run here (exit $rc)"
      fi
      echo
      echo '```'
      sed -e "s|$PWD/||g" "$out/$base.out"
      echo '```'
    done
    echo
    echo "<details><summary>$base</summary>"
    echo
    echo '```sh'
    cat "$s"
    echo '```'
    echo
    echo "</details>"
  done
} > "$doc.new"
mv "$doc.new" "$doc"
echo "$doc: written"
