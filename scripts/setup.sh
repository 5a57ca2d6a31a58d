#!/usr/bin/env bash
# Prepares this checkout for `docker compose up`: a .env with a fresh SERVICE_KEY, and an
# example persona when ./personas is empty. Safe to run again: it never overwrites what exists.
#
#   scripts/setup.sh                  set-up for a server that reaches Docker Hub
#   scripts/setup.sh --offline-base   also build the base image from Debian's own mirror
#                                     (debootstrap; no image registry needed) and use it
#   scripts/setup.sh --ca FILE        trust an extra CA bundle while building the image
#                                     (networks behind a TLS-intercepting proxy)
set -euo pipefail
cd "$(dirname "$0")/.."

offline=false
ca=""
while [ $# -gt 0 ]; do
  case "$1" in
    --offline-base) offline=true ;;
    --ca) ca="${2:?--ca needs a file}"; shift ;;
    *) echo "setup: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

if ! command -v docker >/dev/null 2>&1; then
  echo "setup: Docker is not installed: apt-get install docker.io docker-compose (or Docker's own packages)" >&2
  exit 1
fi

if [ ! -f .env ]; then
  key="$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"
  printf 'SERVICE_KEY=%s\n' "$key" > .env
  chmod 600 .env
  echo "setup: wrote .env with a new SERVICE_KEY (the key every API call and the panels need)"
fi

if [ -n "$ca" ]; then
  cp "$ca" docker/certs/extra-ca.crt
  echo "setup: the image build will trust $ca"
fi

if $offline; then
  scripts/base-image.sh
  if ! grep -q '^PERSONA_BASE_IMAGE=' .env; then
    echo 'PERSONA_BASE_IMAGE=persona-base:bookworm' >> .env
  fi
fi

mkdir -p personas
if [ -z "$(ls -A personas)" ]; then
  mkdir -p personas/example
  cat > personas/example/persona.env <<'PERSONA'
# The port this persona answers on, on this host.
PORT=5001
# always-on: started with the fleet and restarted if it dies.
# sleepy: started by the first request to PORT, stopped after IDLE_TIMEOUT idle seconds.
MODE=sleepy
IDLE_TIMEOUT=600
PERSONA
  echo "setup: created personas/example (port 5001, sleepy)"
fi

echo "setup: done. Start the fleet with: docker compose up   (or docker-compose up)"
