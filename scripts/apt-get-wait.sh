#!/usr/bin/env bash
# apt-get "$@", waiting (bounded) while another process holds an apt/dpkg lock (issue 36 item 2).
#
#   scripts/apt-get-wait.sh update -qq
#   MTBOARD_APT_LOCK_WAIT=900 scripts/apt-get-wait.sh install -y lttoolbox
#
# A fresh machine often runs its automatic updates (unattended-upgrades, apt-daily) for the first minutes: apt-get then
# exits 100 with "Could not get lock /var/lib/dpkg/lock-frontend" (install) or "/var/lib/apt/lists/lock" (update,
# which apt's own -o DPkg::Lock::Timeout does not cover; apt 2.6). This retries every 5 s until the lock is free or
# MTBOARD_APT_LOCK_WAIT seconds (default 600) have passed, saying once what it waits for and who holds the lock, then
# fails with the holder named and what to do. Any other failure is apt-get's own, reported as it is.
# Needs root, or sudo (used when not root).
set -uo pipefail

wait_s=${MTBOARD_APT_LOCK_WAIT:-600}
case "$wait_s" in
  ''|*[!0-9]*|???????*) echo "apt-get-wait: MTBOARD_APT_LOCK_WAIT must be a whole number of seconds, at most 999999" \
                        "(got '$wait_s')" >&2; exit 2 ;;
esac
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
err=$(mktemp "${TMPDIR:-/tmp}/apt-get-wait.XXXXXX")
trap 'rm -f "$err"' EXIT
start=$SECONDS
said=0
lock_pattern='Could not get lock|Unable to acquire the dpkg frontend lock|Unable to lock directory|Unable to lock the administration directory'
while :; do
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get "$@" 2>"$err"  # env: sudo's env_reset would drop it
  rc=$?
  if [ "$rc" -eq 0 ]; then
    cat "$err" >&2
    exit 0
  fi
  if [ "$rc" -ne 100 ] || ! grep -qE "$lock_pattern" "$err"; then
    cat "$err" >&2  # not a lock: apt-get's own failure
    exit "$rc"
  fi
  holder=$(grep -oE 'held by process [0-9]+( \([^)]*\))?' "$err" | head -n 1)
  waited=$((SECONDS - start))
  if [ "$waited" -ge "$wait_s" ]; then
    echo "apt-get-wait: gave up after ${waited} s: the apt/dpkg lock is still ${holder:-held by another process}." \
         "Wait for it to finish (automatic updates usually take minutes), then run this again; or set" \
         "MTBOARD_APT_LOCK_WAIT=SECONDS to wait longer" >&2
    exit 100
  fi
  if [ "$said" -eq 0 ]; then
    echo "apt-get-wait: the apt/dpkg lock is ${holder:-held by another process} (automatic updates?);" \
         "waiting up to ${wait_s} s (MTBOARD_APT_LOCK_WAIT), checking every 5 s" >&2
    said=1
  fi
  sleep 5
done
