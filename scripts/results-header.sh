#!/usr/bin/env bash
# Prints a measured result (FILE) under a header saying what wrote it, when and on which machine,
# for docs/results/: results-header.sh WHAT TITLE FILE
set -euo pipefail
what=$1 title=$2 file=$3
cores=$(nproc)
mem=$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)
os=$(. /etc/os-release && echo "$PRETTY_NAME")
virt=$(systemd-detect-virt 2>/dev/null || true)
echo "<!-- Written by make ($what); do not edit by hand. -->"
echo "# $title"
echo
echo "Measured on $(date -u +%Y-%m-%d): $os, kernel $(uname -r), $cores cores, $mem${virt:+, a $virt VM}."
echo
cat "$file"
