#!/bin/bash
# Entry point of the persona-browser image (PID 1 is tini, which forwards signals and reaps).
#   worker (the default command), or node .../worker/dist/main.js: a persona worker. It runs as
#     the owner of the persona folder (PERSONA_DIR, default /persona) when that owner is not
#     root, else as the image's user `persona` (the folder is then given to it), with no
#     capabilities and no way to gain privileges (setpriv), so Chromium keeps its sandbox.
#   anything else runs as given, as the container's user (the waker: `node waker/dist/main.js`).
set -euo pipefail

is_worker=0
if [ "${1:-}" = worker ]; then
  is_worker=1
  # V8's switches as WORKER_NODE_FLAGS says (contracts/src/process.ts).
  set -- node --max-semi-space-size=2 --v8-pool-size=1 /app/worker/dist/main.js "${@:2}"
elif [ "${1:-}" = node ] && [[ "${2:-}" == *worker/dist/main.js ]]; then
  is_worker=1
fi
[ "$is_worker" -eq 1 ] || exec "$@"

# glibc gives each thread that mallocs an arena of its own (up to 8 per core), which keeps its
# freed memory: node's threads held 7.7 MB in them in an idle worker. Two arenas: 3.5 MB less
# (PSS of an idle container's node, one container measured against MALLOC_ARENA_MAX=64). Chromium
# allocates through its own PartitionAlloc; the worker's child processes inherit the setting.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"

export PERSONA_DIR="${PERSONA_DIR:-/persona}"
mkdir -p "$PERSONA_DIR"

# Already started as a non-root user (`docker run --user`): nothing to drop.
[ "$(id -u)" -ne 0 ] && exec "$@"

uid=$(stat -c %u "$PERSONA_DIR")
gid=$(stat -c %g "$PERSONA_DIR")
if [ "$uid" -eq 0 ]; then
  # A folder Docker created, or one made by root on the host: the worker's user takes it over.
  uid=$(id -u persona)
  gid=$(id -g persona)
  chown -R "$uid:$gid" "$PERSONA_DIR"
fi

if [ "$uid" -eq "$(id -u persona)" ]; then
  export HOME=/home/persona USER=persona
else
  # The folder's owner from the host has no account here: a private home of its own.
  export HOME=/tmp/home-$uid USER=persona
  mkdir -p "$HOME"
  chown "$uid:$gid" "$HOME"
  chmod 700 "$HOME"
fi
export LOGNAME=$USER

# No supplementary groups, except, with GPU=dri, the groups of the render nodes the waker
# passed in (/dev/dri), which the worker's user must be in to open them.
groups=(--clear-groups)
if [ "${GPU:-}" = dri ]; then
  gids=$(stat -c %g /dev/dri/renderD* 2>/dev/null | sort -u | paste -sd, -) || true
  if [ -n "$gids" ]; then groups=(--groups="$gids"); fi
fi

drop=(setpriv --reuid="$uid" --regid="$gid" "${groups[@]}" --inh-caps=-all --bounding-set=-all
  --no-new-privs --)

# Chromium's sandbox puts its renderers in new user, PID and network namespaces. Docker's
# default seccomp profile refuses that to non-root users: say so plainly, once, at the start.
if [ "${CHROME_NO_SANDBOX:-false}" != true ] &&
  ! "${drop[@]}" unshare --user --pid --net --fork true 2>/dev/null; then
  echo "persona-browser: this container refuses user namespaces, so Chromium's sandbox cannot" \
    "start: run it with --security-opt seccomp=<docker/seccomp-chromium.json> (the waker does)," \
    "or opt out with CHROME_NO_SANDBOX=true" >&2
fi

exec "${drop[@]}" "$@"
