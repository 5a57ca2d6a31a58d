#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages persona-browser needs, as root or through sudo.
#
#   scripts/install-packages.sh          a worker on this machine (npm start): the browser,
#                                        its virtual display and live view, git, curl
#   scripts/install-packages.sh fleet    the fleet (docker compose up): Docker and Compose
#   scripts/install-packages.sh ci       everything the tests use (.ci/run)
#
# Run as root it calls apt-get itself; run as another user it goes through sudo. With neither
# it stops and says so, before touching anything.
set -euo pipefail

say() { echo "install-packages: $*" >&2; }

# The worker's list is the persona image's own (Dockerfile), with curl for README's examples.
worker=(chromium xvfb x11vnc x11-utils xauth fonts-liberation procps util-linux ca-certificates git
  curl)
fleet=(docker.io docker-compose ca-certificates git)
# iproute2 (ip netns, veth, bridge) for the multi-node Swarm cluster the tests build, and
# docker-registry, the image registry its nodes pull the persona image from; prometheus, which
# the tests start to scrape a worker and a fleet.
ci=("${worker[@]}" docker.io docker-compose debootstrap openssl iproute2 docker-registry
  prometheus)

groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(worker)
packages=()
for g in "${groups[@]}"; do
  case "$g" in
    worker) packages+=("${worker[@]}") ;;
    fleet) packages+=("${fleet[@]}") ;;
    ci) packages+=("${ci[@]}") ;;
    -h | --help)
      sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      say "unknown group '$g' (groups: worker, fleet, ci)"
      exit 2
      ;;
  esac
done

if ! command -v apt-get >/dev/null 2>&1; then
  say "apt-get not found: this script installs Debian or Ubuntu packages."
  say "elsewhere, install these with your system's package manager: ${packages[*]}"
  exit 1
fi

# Who runs apt-get: root itself, or this user through sudo.
as_root=()
if [ "$(id -u)" -eq 0 ]; then
  say "running as root: apt-get directly"
elif command -v sudo >/dev/null 2>&1; then
  say "running as $(id -un), not root: apt-get through sudo"
  if ! sudo true; then
    say "sudo refused $(id -un): run this script as root, or let this user use sudo"
    exit 1
  fi
  as_root=(sudo)
else
  say "installing packages needs root: $(id -un) is not root and sudo is not installed."
  say "run this script as root (su -c $0), or install sudo and let $(id -un) use it"
  exit 1
fi

apt_get() { "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "$@"; }

apt_get update -qq
apt_get install -y -qq --no-install-recommends "${packages[@]}"
say "installed: ${packages[*]}"

# Docker's socket belongs to the docker group: a user who is not root joins it, so that
# `docker compose up` runs without sudo (from their next login on).
user=$(id -un)
case " ${groups[*]} " in
  *" fleet "* | *" ci "*)
    if [ ${#as_root[@]} -gt 0 ] && ! id -nG "$user" | tr ' ' '\n' | grep -qx docker; then
      sudo usermod -aG docker "$user"
      say "added $user to the docker group: log in again (or run: newgrp docker) to use docker"
    fi
    ;;
esac
