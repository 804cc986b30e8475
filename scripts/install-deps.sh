#!/usr/bin/env bash
# Installs what sandcheck needs on a fresh Debian 12 machine; fast and silent the second time.
# Debian packages system-wide (they are the sandbox's own dependencies), npm packages into the
# project-local .tools/ dir, never globally.
set -euo pipefail
cd "$(dirname "$0")/.."

SRT_VERSION="${SRT_VERSION:-0.0.83}"
APT_PACKAGES=(bubblewrap socat curl ripgrep iproute2 util-linux procps ca-certificates firejail)
# --test adds what only the test suite needs: a browser to render report.html, cpio(1) to
# unpack the VM initramfs we write, iptables(8) to watch what the sandbox's user sends outside
# the fixture ranges, and real third-party consumers of our JUnit and HTML output.
TEST=0; [ "${1:-}" = "--test" ] && TEST=1
[ $TEST = 1 ] && APT_PACKAGES+=(chromium cpio iptables)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

command -v node >/dev/null || { echo "install-deps: node is required (Debian: apt-get install nodejs npm)" >&2; exit 1; }

tools=.tools/npm
have=$(node -e "try{console.log(require('./$tools/node_modules/@anthropic-ai/sandbox-runtime/package.json').version)}catch(e){}" 2>/dev/null || true)
if [ "$have" != "$SRT_VERSION" ]; then
  echo "install-deps: npm install @anthropic-ai/sandbox-runtime@$SRT_VERSION into $tools"
  mkdir -p "$tools"
  [ -f "$tools/package.json" ] || echo '{"name":"sandcheck-tools","private":true}' > "$tools/package.json"
  npm install --silent --no-audit --no-fund --prefix "$tools" "@anthropic-ai/sandbox-runtime@$SRT_VERSION" 2>&1 \
    | grep -v EBADENGINE | grep -v "^npm warn" || true
fi
test -x "$tools/node_modules/.bin/srt" || { echo "install-deps: srt missing after install" >&2; exit 1; }

# OpenAI Codex CLI, a second real sandbox under test (`codex sandbox -- CMD`); it ships its binary.
CODEX_VERSION="${CODEX_VERSION:-0.171.0}"
codex_tools=.tools/npm-codex
have=$(node -e "try{console.log(require('./$codex_tools/node_modules/@openai/codex/package.json').version)}catch(e){}" 2>/dev/null || true)
if [ "$have" != "$CODEX_VERSION" ]; then
  echo "install-deps: npm install @openai/codex@$CODEX_VERSION into $codex_tools"
  mkdir -p "$codex_tools"
  [ -f "$codex_tools/package.json" ] || echo '{"name":"sandcheck-codex","private":true}' > "$codex_tools/package.json"
  npm install --silent --no-audit --no-fund --prefix "$codex_tools" "@openai/codex@$CODEX_VERSION" 2>&1 | grep -v "^npm warn" || true
fi
test -x "$codex_tools/node_modules/.bin/codex" || { echo "install-deps: codex missing after install" >&2; exit 1; }

# Claude Code itself (the seed's system, driven with a scripted model): its pinned version goes
# into the npm cache that versioned targets use (/var/cache/sandcheck/npm), never globally. About
# 250 MB, the native binary from its platform package; installed through sandcheck's own cache
# code so the install is checked and marked complete like any version's.
# The tests also run the newest version published when they were written (e2e/claudecode_test.go).
CLAUDE_CODE_VERSION="${CLAUDE_CODE_VERSION:-2.1.215}"
claude_versions=("$CLAUDE_CODE_VERSION")
[ $TEST = 1 ] && claude_versions+=(2.1.332)
npm_cache="${SANDCHECK_NPM_CACHE:-/var/cache/sandcheck/npm}"
for v in "${claude_versions[@]}"; do
  if [ ! -f "$npm_cache/@anthropic-ai/claude-code@$v/.sandcheck-install.json" ]; then
    echo "install-deps: @anthropic-ai/claude-code@$v into $npm_cache"
    PATH="$PATH:/usr/local/go/bin" go run ./cmd/sandcheck versions --install "claude-code@$v" >/dev/null
  fi
done

# The releases the e2e tests run (e2e/releases.txt) into the same cache, outside their time
# budget; a release already there is kept.
if [ $TEST = 1 ]; then
  PATH="$PATH:/usr/local/go/bin" go build -o .tools/bin/sandcheck-deps ./cmd/sandcheck
  grep -v '^#' e2e/releases.txt | grep -v '^$' | while read -r rel; do
    .tools/bin/sandcheck-deps versions --install "$rel" >/dev/null || { echo "install-deps: $rel failed to install" >&2; exit 1; }
  done
fi

if [ $TEST = 1 ]; then
  consumers=.tools/npm-report
  if [ ! -d "$consumers/node_modules/jsdom" ] || [ ! -d "$consumers/node_modules/test-results-parser" ]; then
    echo "install-deps: npm install report consumers (jsdom, test-results-parser) into $consumers"
    mkdir -p "$consumers"
    cp reports/format/testdata/node/package.json "$consumers/package.json"
    npm install --silent --no-audit --no-fund --prefix "$consumers" 2>&1 | grep -v "^npm warn" || true
  fi
fi
