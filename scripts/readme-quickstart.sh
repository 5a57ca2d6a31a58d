#!/usr/bin/env bash
# Runs README's one-machine command block exactly as written, as the current user, so README
# cannot drift from what works: the fenced `sh` block under "### One machine", run verbatim
# from the repository root. Then it waits for `GET /api/v1/system/status` on port 5000 to say
# `initialized: true`, and stops the worker with everything it started (its process group,
# Xvfb and Chromium; x11vnc runs only while a live view is open, so none yet), checking that
# each of those processes is gone.
#
#   scripts/readme-quickstart.sh [README]     (default: README.md at the repository root)
#
# Env: QUICKSTART_TIMEOUT_S (default 900: the block installs packages, runs npm ci and builds).
# Port 5000 must be free. Exits non-zero, with the block's output, when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."

readme=${1:-README.md}
port=5000
timeout_s=${QUICKSTART_TIMEOUT_S:-900}
say() { echo "readme-quickstart: $*" >&2; }

# The first fenced sh block after the heading, before any other heading.
block=$(awk '
  /^### One machine[[:space:]]*$/ { under = 1; next }
  under && /^#/ { exit }
  under && !inside && /^```sh[[:space:]]*$/ { inside = 1; next }
  inside && /^```/ { exit }
  inside { print }
' "$readme")
if [ -z "$block" ]; then
  say "no \`\`\`sh block under '### One machine' in $readme"
  exit 1
fi
say "the block, from $readme:"
printf '%s\n' "$block" | sed 's/^/    $ /' >&2

port_free() {
  node -e '
    const s = require("node:net").createServer();
    s.once("error", () => process.exit(1));
    s.listen(Number(process.argv[1]), "0.0.0.0", () => s.close(() => process.exit(0)));
  ' "$port"
}
if ! port_free; then
  say "port $port is in use: README's worker listens there; stop what holds it first"
  exit 1
fi

log=$(mktemp /tmp/readme-quickstart.XXXXXX.log)
# As on a fresh machine: no display to borrow (the worker starts its own Xvfb), no port
# override. setsid: the block and all it starts form one process group to stop.
(unset DISPLAY PORT && exec setsid bash -c "$block") >"$log" 2>&1 </dev/null &
leader=$!
started=$(date +%s)

# Every process descended from the block's shell, with its name: "pid name" lines.
descendants() {
  ps -e -o pid=,ppid=,comm= | awk -v root="$leader" '
    { parent[$1] = $2; name[$1] = $3 }
    END {
      for (p in parent) {
        q = p
        while (q in parent && q != root && q > 1) q = parent[q]
        if (q == root && p != root) print p, name[p]
      }
    }'
}
# A pid that has exited, or is a zombie waiting to be reaped.
gone() {
  local state
  state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 0
  [ "$state" = Z ]
}

procs=""
stop_all() {
  kill -TERM -- "-$leader" 2>/dev/null || true
  local left="" deadline=$(($(date +%s) + 60))
  while :; do
    left=""
    for p in $leader $(printf '%s\n' "$procs" | awk '{ print $1 }'); do
      gone "$p" || left="$left $p"
    done
    [ -z "$left" ] && break
    [ "$(date +%s)" -ge "$deadline" ] && break
    sleep 0.5
  done
  wait "$leader" 2>/dev/null || true
  if [ -n "$left" ]; then
    say "still running 60 s after SIGTERM:$left"
    ps -o pid=,comm=,args= -p "${left# }" >&2 || true
    # shellcheck disable=SC2086
    kill -KILL $left 2>/dev/null || true
    return 1
  fi
}
fail() {
  say "FAIL: $*"
  say "the block's output (last 60 lines of $log):"
  tail -n 60 "$log" | sed 's/^/    | /' >&2
  procs="$procs
$(descendants)"
  stop_all || true
  exit 1
}

status_initialized() {
  node -e '
    fetch(process.argv[1], { signal: AbortSignal.timeout(3000) })
      .then((r) => r.json())
      .then((b) => process.exit(b.initialized === true ? 0 : 1), () => process.exit(1));
  ' "http://127.0.0.1:$port/api/v1/system/status"
}

say "running it (timeout ${timeout_s} s; output in $log)"
until status_initialized; do
  if gone "$leader"; then
    wait "$leader" && rc=0 || rc=$?
    fail "the block ended (exit $rc) before the worker said initialized: true"
  fi
  [ $(($(date +%s) - started)) -lt "$timeout_s" ] || fail "no initialized: true after ${timeout_s} s"
  sleep 1
done
say "initialized: true on port $port after $(($(date +%s) - started)) s"

procs=$(descendants)
names=$(printf '%s\n' "$procs" | awk '{ print $2 }' | sort | uniq -c | awk '{ printf " %s×%s", $2, $1 }')
say "processes it started:$names"
for want in Xvfb chromium; do
  printf '%s\n' "$procs" | awk '{ print $2 }' | grep -q "^$want" ||
    fail "no $want among the block's processes: the worker did not start as README says"
done
# x11vnc starts with the first viewer of the live view, not with the worker.
if printf '%s\n' "$procs" | awk '{ print $2 }' | grep -q '^x11vnc'; then
  fail "x11vnc runs with no live view open: README says it starts with the first viewer"
fi

stop_all || fail "the worker did not stop cleanly"
port_free || fail "port $port still in use after the worker stopped"
say "stopped: the block's process group, Xvfb and Chromium are gone; port $port is free"
