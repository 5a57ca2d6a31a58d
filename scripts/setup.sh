#!/usr/bin/env bash
# Prepares this checkout for `docker compose up`: a .env with a fresh SERVICE_KEY, and an
# example persona when ./personas is empty. Safe to run again: it never overwrites what exists.
#
#   scripts/setup.sh                  set-up for a server that reaches Docker Hub
#   scripts/setup.sh --offline-base   also build the base image from Debian's own mirror
#                                     (debootstrap; no image registry needed) and use it
#   scripts/setup.sh --ca FILE        trust an extra CA bundle while building the image
#                                     (networks behind a TLS-intercepting proxy)
#   scripts/setup.sh --timezone ZONE --locale LOCALE
#                                     the fleet's default time zone (IANA, Europe/Rome) and
#                                     locale (it-IT) that pages are told; asked for when run
#                                     in a terminal without them (a server's UTC gives a
#                                     browser away)
set -euo pipefail
cd "$(dirname "$0")/.."

offline=false
ca=""
timezone=""
locale=""
while [ $# -gt 0 ]; do
  case "$1" in
    --offline-base) offline=true ;;
    --ca) ca="${2:?--ca needs a file}"; shift ;;
    --timezone) timezone="${2:?--timezone needs a zone such as Europe/Rome}"; shift ;;
    --locale) locale="${2:?--locale needs a locale such as it-IT}"; shift ;;
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

# The fleet's time zone and locale: every persona's default (a persona.env or a proxy identity
# may set its own). Kept when .env has them already.
env_has() { grep -q "^$1=" .env; }
host_zone() {
  local z=""
  if [ -f /etc/timezone ]; then z="$(cat /etc/timezone)"; fi
  if [ -z "$z" ] && [ -L /etc/localtime ]; then
    z="$(readlink /etc/localtime | sed 's#.*/zoneinfo/##')"
  fi
  case "$z" in "" | UTC | Etc/UTC | Etc/GMT | GMT | Etc/Universal | Universal) echo "" ;; *) echo "$z" ;; esac
}
if ! env_has BROWSER_TIMEZONE; then
  if [ -z "$timezone" ] && [ -t 0 ]; then
    suggested="$(host_zone)"
    read -r -p "setup: the time zone pages are told (IANA, e.g. Europe/Rome)${suggested:+ [$suggested]}: " timezone
    timezone="${timezone:-$suggested}"
  fi
  if [ -n "$timezone" ]; then
    # The zone database is checked where the host has one; the worker checks again at start.
    if ! [[ "$timezone" =~ ^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$ ]] ||
      { [ -d /usr/share/zoneinfo ] && [ ! -f "/usr/share/zoneinfo/$timezone" ]; }; then
      echo "setup: unknown time zone $timezone (see /usr/share/zoneinfo, e.g. Europe/Rome)" >&2
      exit 2
    fi
    printf 'BROWSER_TIMEZONE=%s\n' "$timezone" >> .env
    echo "setup: pages are told the time zone $timezone (BROWSER_TIMEZONE in .env)"
  else
    echo "setup: no time zone set: personas without one tell pages this server's, and warn if it is UTC" >&2
  fi
fi
if ! env_has BROWSER_LOCALE; then
  if [ -z "$locale" ] && [ -t 0 ]; then
    read -r -p "setup: the locale pages are told (e.g. it-IT, en-US): " locale
  fi
  if [ -n "$locale" ]; then
    if ! [[ "$locale" =~ ^[a-z]{2,3}(-[A-Z]{2})?$ ]]; then
      echo "setup: a locale is a language and a region, such as it-IT or en-US (got $locale)" >&2
      exit 2
    fi
    printf 'BROWSER_LOCALE=%s\n' "$locale" >> .env
    echo "setup: pages are told the locale $locale (BROWSER_LOCALE in .env)"
  fi
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
