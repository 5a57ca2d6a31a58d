#!/usr/bin/env bash
# Builds an offline Debian bookworm base image, persona-base:bookworm, from a debootstrap rootfs:
# for machines that reach Debian's package mirror but no image registry (tests, CI). The host's
# apt sources are copied in, so the image installs packages from the same mirror (and
# bookworm-security, which carries Chromium). Usage: scripts/base-image.sh [--force] [TAG]
set -euo pipefail

force=0
tag="persona-base:bookworm"
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h | --help)
      echo "usage: $0 [--force] [TAG]   (default TAG: persona-base:bookworm)"
      exit 0
      ;;
    *) tag="$arg" ;;
  esac
done

if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi

# One build at a time on this machine (parallel test runs): a waiting one finds the image made.
if command -v flock >/dev/null; then
  exec 9>"/tmp/persona-base-image.lock"
  flock 9
fi

if [ "$force" -eq 0 ] && docker image inspect "$tag" >/dev/null 2>&1; then
  echo "base-image: $tag already exists (--force rebuilds it)"
  exit 0
fi

# The host's mirror for bookworm itself (not -security, not -updates).
mirror=""
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  mirror=$(awk '
    /^URIs:/ { uri = $2 }
    /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") { print uri; exit } }
  ' /etc/apt/sources.list.d/debian.sources)
fi
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
  mirror=$(awk '$1 == "deb" && $0 !~ /\[/ && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list)
fi
mirror=${mirror:-http://deb.debian.org/debian}

command -v debootstrap >/dev/null || {
  echo "base-image: debootstrap is missing: apt-get install debootstrap" >&2
  exit 1
}

rootfs=$(mktemp -d /tmp/persona-base.XXXXXX)
cleanup() { $SUDO rm -rf "$rootfs"; }
trap cleanup EXIT

echo "base-image: debootstrap bookworm from $mirror"
$SUDO debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 || {
  tail -n 30 "$rootfs.log" >&2
  rm -f "$rootfs.log"
  exit 1
}
rm -f "$rootfs.log"

# The host's own sources replace debootstrap's one-line sources.list.
$SUDO rm -f "$rootfs/etc/apt/sources.list"
copied=0
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  $SUDO cp /etc/apt/sources.list.d/debian.sources "$rootfs/etc/apt/sources.list.d/"
  copied=1
fi
if [ -f /etc/apt/sources.list ] && grep -q '^deb ' /etc/apt/sources.list; then
  $SUDO cp /etc/apt/sources.list "$rootfs/etc/apt/sources.list"
  copied=1
fi
if [ "$copied" -eq 0 ]; then
  printf 'deb %s bookworm main\ndeb %s/debian-security bookworm-security main\n' \
    "$mirror" "${mirror%/debian}" | $SUDO tee "$rootfs/etc/apt/sources.list" >/dev/null
fi
$SUDO rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb

$SUDO tar -C "$rootfs" -c . | docker import -c 'CMD ["bash"]' - "$tag" >/dev/null
echo "base-image: built $tag"
