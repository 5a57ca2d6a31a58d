#!/usr/bin/env bash
# Builds the persona image the container tests and benchmarks run, from this checkout:
#
#   scripts/build-test-image.sh BASE [TAG]     (TAG default: persona-browser:test)
#
# BASE is the Debian image to build on (scripts/base-image.sh makes one offline). The host's CA
# bundle goes into the build as docker/certs/host-ca.crt, for a registry behind a
# TLS-intercepting proxy. Builds take one lock, so test processes, worktrees and .ci/run never
# build over each other, and a build of a checkout just built finds every layer in Docker's
# cache. testkit/image.ts and .ci/run both build through this script.
set -euo pipefail
cd "$(dirname "$0")/.."

base=${1:?usage: scripts/build-test-image.sh BASE [TAG]}
tag=${2:-persona-browser:test}

# Opened for reading: a lock file another user made still locks.
lock=/tmp/persona-browser-image-build.lock
[ -e "$lock" ] || : >"$lock"
exec 9<"$lock"
flock 9
# Under the lock: a build in progress reads the bundle as its context, whole.
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  cp /etc/ssl/certs/ca-certificates.crt docker/certs/host-ca.crt
fi
# exec: the build keeps the lock (fd 9) to its end, and a kill of this script's pid stops it.
exec docker build --build-arg BASE="$base" -t "$tag" .
