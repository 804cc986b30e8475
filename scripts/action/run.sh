#!/usr/bin/env bash
# The work of the sandcheck GitHub Action (action.yml at the repository root), kept out of the
# YAML so it runs, and is tested (internal/actioncheck), outside GitHub too.
#
# Inputs come as INPUT_* variables (unset = the action's default, empty = leave it to the matrix):
#   INPUT_TARGET        sandbox under test (default srt; empty: the matrix's targets)
#   INPUT_VERSION       npm version or range of the target (srt@VERSION: installed into sandcheck's
#                       npm cache); empty: the target as installed on the runner
#   INPUT_MATRIX        matrix YAML, relative to the working directory (default: the embedded one)
#   INPUT_POLICY        gate policy YAML, relative to the working directory (default: the gate's)
#   INPUT_TRIALS        trials per cell (default 20; empty: the matrix's)
#   INPUT_LABEL_FILTER  scenarios to run (Ginkgo label filter, e.g. network); default all
#   INPUT_FAULT         a fault to inject (see `sandcheck faults`); default none
# GitHub's: RUNNER_TEMP (the work directory's parent), GITHUB_OUTPUT, GITHUB_STEP_SUMMARY (either
# may be unset outside GitHub); ACTION_REF, the action's ref, is the version sandcheck reports.
#
# It builds sandcheck from this checkout, runs it (as root: fixture hosts need network
# namespaces), gates the report, writes the outputs (exit-code, verdict, report, dir,
# run-exit-code) and the job summary, and exits with the gate's status: 0 pass, 1 fail, 2 when
# nothing could be judged (a usage error, no report). The run's own exit code (1 for a fail-open
# or a failure, 3 for too little measured) is an output; the gate, which fails on all of those
# under its policy, decides.
set -euo pipefail

action_path=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/sandcheck-action"
out="$work/run"
bin="$work/bin/sandcheck"
gate_txt="$work/gate.txt"
run_log="$work/run.log"

target="${INPUT_TARGET-srt}"
version="${INPUT_VERSION:-}"
matrix="${INPUT_MATRIX:-}"
policy="${INPUT_POLICY:-}"
trials="${INPUT_TRIALS-20}"
labels="${INPUT_LABEL_FILTER:-}"
fault="${INPUT_FAULT:-}"

run_code=""
run_args=()

# output NAME VALUE appends one step output (a single line).
output() {
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf '%s=%s\n' "$1" "$2" >> "$GITHUB_OUTPUT"
  fi
}

# summary appends its standard input to the job summary, or to the log outside GitHub.
summary() {
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    cat >> "$GITHUB_STEP_SUMMARY"
  else
    cat
  fi
}

# fence prints a file in a Markdown code block, at most its last $2 lines.
fence() {
  echo '```text'
  tail -n "$2" "$1" 2>/dev/null || true
  echo '```'
}

# finish CODE VERDICT writes the outputs and the summary, then exits with CODE.
finish() {
  local code=$1 verdict=$2 report=""
  [ -f "$out/report.json" ] && report="$out/report.json"
  output exit-code "$code"
  output verdict "$verdict"
  output report "$report"
  output dir "$out"
  output run-exit-code "$run_code"
  {
    echo "## sandcheck: $verdict"
    echo
    echo "\`sandcheck run ${run_args[*]}\`: exit ${run_code:-none}; gate: exit $code. The run directory is the job's artifact."
    echo
    if [ -f "$gate_txt" ]; then
      echo "### gate (exit $code)"
      fence "$gate_txt" 200
    elif [ -f "$run_log" ]; then
      echo "### the run's last lines"
      fence "$run_log" 60
    fi
    if [ "$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null)" = 1 ]; then
      echo
      echo "Note: this runner restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 24.04's default), so bwrap-based sandboxes run as an unprivileged user fail closed here. Lift it before this step (\`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0\`) to test the sandbox rather than the runner."
    fi
    if [ -f "$out/report.md" ]; then
      echo
      # GitHub takes at most 1 MiB of summary per step; the whole report is in the artifact.
      head -c 700000 "$out/report.md"
      [ "$(wc -c < "$out/report.md")" -le 700000 ] || printf '\n\n(report.md cut here: the whole of it is in the artifact)\n'
    fi
  } | summary
  echo "sandcheck: $verdict"
  exit "$code"
}

usage_error() {
  echo "sandcheck action: $*" >&2
  printf 'sandcheck action: %s\n' "$*" > "$run_log"
  finish 2 "ERROR: $*"
}

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  # Only the variables sandcheck reads go through sudo: HOME stays root's, so npm leaves no
  # root-owned files in the runner's home.
  keep=$(compgen -e | grep -E '^SANDCHECK_' | paste -sd, - || true)
  as_root=(sudo "--preserve-env=CI${keep:+,$keep}" env "PATH=$PATH")
fi

# A fresh work directory: a report left by an earlier run must never be judged as this one's.
"${as_root[@]}" rm -rf "$work"
mkdir -p "$work/bin"

case "$trials" in
  "" | *[!0-9]* | 0*) [ -z "$trials" ] || usage_error "trials: want a positive whole number, got '$trials'" ;;
esac
if [ -n "$version" ] && [ -z "$target" ]; then
  usage_error "version $version needs a target"
fi
# Paths are the caller's, relative to the working directory (the workspace on GitHub).
absolute() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
if [ -n "$matrix" ]; then
  matrix=$(absolute "$matrix")
  [ -f "$matrix" ] || usage_error "matrix $matrix: no such file"
fi
if [ -n "$policy" ]; then
  policy=$(absolute "$policy")
  [ -f "$policy" ] || usage_error "policy $policy: no such file"
fi

# The sandbox's own dependencies and what the fixture hosts use (scripts/install-deps.sh has the
# same list), only those missing: a runner that has them all runs no apt.
packages=(bubblewrap socat curl ripgrep iproute2 util-linux procps ca-certificates)
if [ "$target" = firejail ] || { [ -z "$target" ] && [ -n "$matrix" ] && grep -q firejail "$matrix"; }; then
  packages+=(firejail)
fi
if [ -n "$version" ] && ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "::group::apt-get install ${missing[*]}"
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  echo "::endgroup::"
fi

echo "::group::build sandcheck"
(cd "$action_path" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build \
  -ldflags "-X main.Version=action-${ACTION_REF:-local}" -o "$bin" ./cmd/sandcheck) \
  || usage_error "building sandcheck from $action_path failed"
echo "::endgroup::"

run_args=(--plain --out "$out")
if [ -n "$target" ]; then
  run_args+=(--target "$target${version:+@$version}")
fi
[ -z "$matrix" ] || run_args+=(--matrix "$matrix")
[ -z "$trials" ] || run_args+=(-n "$trials")
[ -z "$labels" ] || run_args+=(--label-filter "$labels")
[ -z "$fault" ] || run_args+=(--fault "$fault")

echo "sandcheck run ${run_args[*]}"
set +e
"${as_root[@]}" "$bin" run "${run_args[@]}" 2>&1 | tee "$run_log"
run_code=${PIPESTATUS[0]}
set -e
if [ ${#as_root[@]} -gt 0 ] && [ -d "$out" ]; then
  # The run wrote as root; the artifact upload and later steps read as the runner's user.
  "${as_root[@]}" chown -R "$(id -u):$(id -g)" "$out"
fi
mkdir -p "$out"
cp "$run_log" "$out/run.log"
"$bin" doctor > "$out/doctor.txt" 2>&1 || true

if [ ! -f "$out/report.json" ]; then
  # Nothing was judged (a configuration error, a journal that cannot be read): never a pass.
  finish 2 "ERROR: sandcheck run exited $run_code with no report"
fi

gate_args=("$out/report.json")
[ -z "$policy" ] || gate_args+=(--policy "$policy")
gate_code=0
"$bin" gate "${gate_args[@]}" > "$gate_txt" 2>&1 || gate_code=$?
cat "$gate_txt"
cp "$gate_txt" "$out/gate.txt"
verdict=$(grep -E '^(PASS|FAIL)' "$gate_txt" | tail -n 1 || true)
case "$gate_code" in
  0) [ -n "$verdict" ] || finish 2 "ERROR: the gate passed without a verdict line" ;;
  1) [ -n "$verdict" ] || verdict="FAIL: the gate exited 1" ;;
  *) finish 2 "ERROR: the gate exited $gate_code: $(tail -n 1 "$gate_txt")" ;;
esac
case "$run_code" in
  0 | 1 | 3) ;; # judged: pass, a failure, too little measured; the gate weighs them by its policy
  *) finish 2 "ERROR: sandcheck run exited $run_code (interrupted or broken), so its report is not a verdict; the gate said: $verdict" ;;
esac
finish "$gate_code" "$verdict"
