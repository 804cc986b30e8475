#!/usr/bin/env bash
# A throwaway OpenSSH server for tests: fresh host and user keys in DIR, listening on
# 127.0.0.1:PORT only, key authentication only, for the user running it. Installs Debian's
# openssh-server first if it is missing (never starts the system service). Runs sshd in the
# foreground (`exec`), so whoever started this script owns sshd and kills it by its pid.
#
#   scripts/sshd-throwaway.sh DIR PORT
#
# Leaves in DIR: id_ed25519 (the user's key), known_hosts (the host's key for [127.0.0.1]:PORT),
# sshd_config, sshd.log.
set -euo pipefail
dir=${1:?usage: sshd-throwaway.sh DIR PORT}
port=${2:?usage: sshd-throwaway.sh DIR PORT}
dir=$(cd "$dir" && pwd)

if [ ! -x /usr/sbin/sshd ]; then
  [ "$(id -u)" -eq 0 ] || { echo "sshd-throwaway: /usr/sbin/sshd missing and not root to install openssh-server" >&2; exit 3; }
  echo "sshd-throwaway: apt-get install openssh-server" >&2
  # policy-rc.d answering 101 keeps the package from starting the system's sshd.
  prc=/usr/sbin/policy-rc.d; made=0
  if [ ! -e $prc ]; then printf '#!/bin/sh\nexit 101\n' > $prc; chmod 755 $prc; made=1; fi
  { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server >/dev/null 2>&1 ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server >/dev/null; }; } || rc=$?
  [ $made = 1 ] && rm -f $prc
  [ -x /usr/sbin/sshd ] || { echo "sshd-throwaway: could not install openssh-server (rc ${rc:-?})" >&2; exit 3; }
fi

# Keys already in DIR are kept: a restarted server is the same host.
[ -f "$dir/host_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C sandcheck-test-host -f "$dir/host_ed25519"
[ -f "$dir/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C sandcheck-test-user -f "$dir/id_ed25519"
cp "$dir/id_ed25519.pub" "$dir/authorized_keys"
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$dir/host_ed25519.pub")" > "$dir/known_hosts"
chmod 600 "$dir/authorized_keys" "$dir/id_ed25519" "$dir/host_ed25519"

cat > "$dir/sshd_config" <<CFG
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_ed25519
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
AllowUsers $(id -un)
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxSessions 50
MaxStartups 50
Subsystem sftp internal-sftp
LogLevel VERBOSE
CFG

# The privilege separation directory, as the system service would make it.
[ "$(id -u)" -ne 0 ] || [ -d /run/sshd ] || install -d -m 0755 /run/sshd
exec /usr/sbin/sshd -D -e -f "$dir/sshd_config" 2>>"$dir/sshd.log"
