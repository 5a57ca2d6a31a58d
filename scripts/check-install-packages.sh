#!/usr/bin/env bash
# Shows, in a fresh Debian container, that scripts/install-packages.sh works for the two people
# README speaks to and stops clearly for anyone else:
#   1. root on a machine without sudo: apt-get runs directly, the packages are installed;
#   2. a user, no sudo installed: it stops before anything, saying why;
#   3. a user sudo does not let in: it stops, saying why;
#   4. a user with sudo (NOPASSWD): apt-get runs through sudo (sudo's own log shows the
#      commands) and the user joins the docker group.
# Needs Docker and a Debian base image (PERSONA_BASE_IMAGE, default persona-base:bookworm, which
# scripts/base-image.sh builds from Debian's mirror). Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

image=${PERSONA_BASE_IMAGE:-persona-base:bookworm}
if ! docker image inspect "$image" >/dev/null 2>&1; then
  echo "check-install-packages: no image $image: build it with scripts/base-image.sh" >&2
  exit 1
fi

# Runs inside the container, as root. Every command that might read stdin gets /dev/null.
read -r -d '' inside <<'INSIDE' || true
set -euo pipefail
script=/opt/install-packages.sh
step() { echo "check-install-packages: $*" >&2; }
fail() {
  printf '%s\n' "${out:-}" | tail -n 40 | sed 's/^/    | /' >&2
  echo "check-install-packages: FAIL: $*" >&2
  exit 1
}
# run USER ARGS...: the script's output in $out (its own lines and sudo's shown), status in $rc
run() {
  local who=$1; shift
  set +e
  if [ "$who" = root ]; then out=$("$script" "$@" 2>&1 </dev/null); rc=$?
  else out=$(su "$who" -s /bin/bash -c "$script $*" 2>&1 </dev/null); rc=$?; fi
  set -e
  printf '%s\n' "$out" | grep -E '^(install-packages|sudo):' | sed 's/^/    | /' >&2 || true
}

! command -v sudo >/dev/null || fail "the image already has sudo"

step "1. root, no sudo on the machine"
run root
[ "$rc" -eq 0 ] || fail "root without sudo: exit $rc"
grep -q 'running as root: apt-get directly' <<<"$out" || fail "root did not run apt-get itself"
for bin in chromium Xvfb x11vnc xdpyinfo git curl; do
  command -v "$bin" >/dev/null || fail "$bin is not installed"
done
! command -v sudo >/dev/null || fail "sudo appeared"
step "   ok: installed by root without sudo"

useradd --create-home newcomer
step "2. user newcomer, sudo not installed"
run newcomer
[ "$rc" -ne 0 ] || fail "a user without sudo got through"
grep -q 'newcomer is not root and sudo is not installed' <<<"$out" || fail "no clear reason"
step "   ok: refused with the reason"

DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sudo >/dev/null </dev/null
printf 'Defaults logfile=/var/log/sudo.log\nDefaults loglinelen=0\n' >/etc/sudoers.d/00-logfile
chmod 0440 /etc/sudoers.d/00-logfile
step "3. user newcomer, sudo installed but not allowed for them"
run newcomer
[ "$rc" -ne 0 ] || fail "sudo let newcomer in without a rule"
grep -q 'sudo refused newcomer' <<<"$out" || fail "no clear reason"
step "   ok: refused with the reason"

echo 'newcomer ALL=(ALL) NOPASSWD: ALL' >/etc/sudoers.d/newcomer
chmod 0440 /etc/sudoers.d/newcomer
step "4. user newcomer with sudo (NOPASSWD): the fleet's packages"
run newcomer fleet
[ "$rc" -eq 0 ] || fail "newcomer with sudo: exit $rc"
grep -q 'running as newcomer, not root: apt-get through sudo' <<<"$out" || fail "sudo not said"
command -v docker >/dev/null || fail "docker is not installed"
grep -q 'newcomer : .*COMMAND=/usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io' \
  /var/log/sudo.log || fail "sudo's log has no apt-get install by newcomer"
id -nG newcomer | tr ' ' '\n' | grep -qx docker || fail "newcomer is not in the docker group"
step "   ok: sudo's log:"
grep -o 'newcomer : .*' /var/log/sudo.log | sed 's/^/    | /' >&2
INSIDE

echo "check-install-packages: in a fresh $image container" >&2
docker run --rm --name "pb-install-check-$$" \
  -v "$PWD/scripts/install-packages.sh:/opt/install-packages.sh:ro" \
  "$image" bash -c "$inside"
echo "check-install-packages: all four cases as expected" >&2
