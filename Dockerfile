# persona-browser: one image for a persona worker (the default command), the supervisor and the
# waker.
# Build args:
#   BASE   the Debian bookworm image to build on (default: the official Node 22 image). A plain
#          Debian rootfs works too (scripts/base-image.sh): Node 22 and npm 10 are then fetched
#          from the npm registry.
#   INSTALL_GOOGLE_CHROME=1   also install Google Chrome (google-chrome-stable, amd64) from
#          Google's repository at dl.google.com: the worker then runs it instead of Chromium.
#          The builder must reach dl.google.com; the default (0) installs nothing more.
# Optional extra CA (a TLS-intercepting proxy): put PEM files as docker/certs/*.crt before the
# build; curl and npm trust them during the build, and they join the image's system store.
ARG BASE=node:22-bookworm-slim

# ---- node: Node 22 and npm on the base ----
# Node 22 (maintained until April 2027), not 24: on Node 24 the worker holds about 9 MB more
# (anonymous and shared PSS of its process, one blank page open: 44 MB against 35, from
# `BENCH_SECTIONS=memory <node> worker/dist-bench/bench/run.js` with either binary), and memory
# is what limits how many personas a server runs.
FROM ${BASE} AS node
ARG NODE_MAJOR=22
ARG NPM_MAJOR=10
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
COPY docker/certs/ /tmp/certs/
RUN set -eu; \
    shopt -s nullglob; \
    certs=(/tmp/certs/*.crt); \
    if [ ${#certs[@]} -gt 0 ]; then cat "${certs[@]}" > /tmp/extra-ca.pem; fi; \
    if command -v node >/dev/null && [ "$(node -p 'process.versions.node.split(".")[0]')" = "$NODE_MAJOR" ] \
       && command -v npm >/dev/null; then exit 0; fi; \
    export DEBIAN_FRONTEND=noninteractive; \
    apt-get update -qq; \
    apt-get install -y -qq --no-install-recommends ca-certificates curl >/dev/null; \
    if [ ${#certs[@]} -gt 0 ]; then cp "${certs[@]}" /usr/local/share/ca-certificates/; update-ca-certificates >/dev/null; fi; \
    case "$(dpkg --print-architecture)" in amd64) arch=x64 ;; arm64) arch=arm64 ;; *) echo "unsupported architecture" >&2; exit 1 ;; esac; \
    registry=https://registry.npmjs.org; \
    latest() { curl -fsSL -H 'Accept: application/vnd.npm.install-v1+json' "$registry/$1" \
      | grep -o "\"$2\\.[0-9]*\\.[0-9]*\"" | tr -d '"' | sort -uV | tail -n 1; }; \
    node_version=$(latest "node-linux-$arch" "$NODE_MAJOR"); \
    npm_version=$(latest npm "$NPM_MAJOR"); \
    mkdir -p /tmp/node /usr/local/lib/node_modules/npm; \
    curl -fsSL "$registry/node-linux-$arch/-/node-linux-$arch-$node_version.tgz" | tar -xz -C /tmp/node; \
    install -m 0755 /tmp/node/package/bin/node /usr/local/bin/node; \
    curl -fsSL "$registry/npm/-/npm-$npm_version.tgz" \
      | tar -xz -C /usr/local/lib/node_modules/npm --strip-components=1; \
    ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm; \
    ln -sf ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx; \
    rm -rf /tmp/node /var/lib/apt/lists/*; \
    node --version; npm --version

# ---- manifests: what npm installs from (the layers below are rebuilt only when one changes) ----
FROM node AS manifests
WORKDIR /app
COPY package.json package-lock.json ./
COPY contracts/package.json contracts/
COPY service-kit/package.json service-kit/
COPY plugin-sdk/package.json plugin-sdk/
COPY ui/package.json ui/
COPY xvfb/package.json xvfb/
COPY mcp/package.json mcp/
COPY worker/package.json worker/
COPY plugins/package.json plugins/
COPY waker/package.json waker/
COPY supervisor/package.json supervisor/
COPY client/package.json client/

# ---- deps: the production dependencies only ----
FROM manifests AS deps
RUN if [ -s /tmp/extra-ca.pem ]; then export NODE_EXTRA_CA_CERTS=/tmp/extra-ca.pem; fi; \
    npm ci --omit=dev --no-audit --no-fund --loglevel=error

# ---- build: every dependency, then the TypeScript build; only the built app leaves ----
# The image records the content hash of the context it was built from (/app/.build-context),
# computed by the supervisor's own code, so the supervisor takes an image built here (by
# `docker compose`) as the one for its checkout instead of building the same content again.
FROM manifests AS build
RUN if [ -s /tmp/extra-ca.pem ]; then export NODE_EXTRA_CA_CERTS=/tmp/extra-ca.pem; fi; \
    npm ci --no-audit --no-fund --loglevel=error
COPY . .
ARG BASE
# The shipped packages only: the test kit (testkit/) is not in the context.
RUN npx tsc -b contracts service-kit plugin-sdk xvfb plugins worker waker supervisor \
    && node supervisor/dist/build-context.js "$BASE" > /tmp/build-context \
    && mv /tmp/build-context .build-context \
    && rm -rf node_modules ./*/node_modules docker/certs

# ---- runtime: Chromium, Xvfb, x11vnc, tini, git (the waker reads the commit of the checkout it is given), and the built app ----
FROM ${BASE}
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# dpkg leaves out the packages' manuals, documentation (their copyright files stay) and message
# translations: about 85 MB that every registry push, node pull and image load would carry.
# Chromium's own locales (/usr/lib/chromium/locales) and the fonts are elsewhere and stay.
RUN printf '%s\n' \
       'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright' \
       'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/info/*' \
       'path-exclude=/usr/share/locale/*' 'path-include=/usr/share/locale/locale.alias' \
       > /etc/dpkg/dpkg.cfg.d/01-persona-slim
RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends \
       chromium xvfb x11vnc x11-utils xauth fonts-liberation tini procps util-linux ca-certificates git >/dev/null \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
    && mkdir -m 1777 -p /tmp/.X11-unix
COPY docker/certs/ /tmp/certs/
RUN shopt -s nullglob; \
    certs=(/tmp/certs/*.crt); \
    if [ ${#certs[@]} -gt 0 ]; then cp "${certs[@]}" /usr/local/share/ca-certificates/; fi; \
    update-ca-certificates >/dev/null; \
    rm -rf /tmp/certs
# Google Chrome when asked (after the extra CA, which a proxy to dl.google.com may need): the
# worker picks /usr/bin/google-chrome before Chromium (worker/src/browser/launch.ts), and its
# pages then tell Google Chrome's own brands, with its Widevine and codecs behind them.
ARG INSTALL_GOOGLE_CHROME=0
RUN if [ "$INSTALL_GOOGLE_CHROME" = "1" ]; then \
      set -eu; \
      export DEBIAN_FRONTEND=noninteractive; \
      if [ "$(dpkg --print-architecture)" != amd64 ]; then echo "Google Chrome for Linux is amd64 only" >&2; exit 1; fi; \
      apt-get update -qq; \
      apt-get install -y -qq --no-install-recommends curl gnupg >/dev/null; \
      curl -fsSL https://dl.google.com/linux/linux_signing_key.pub \
        | gpg --dearmor -o /usr/share/keyrings/google-chrome.gpg; \
      echo 'deb [arch=amd64 signed-by=/usr/share/keyrings/google-chrome.gpg] https://dl.google.com/linux/chrome/deb/ stable main' \
        > /etc/apt/sources.list.d/google-chrome.list; \
      apt-get update -qq; \
      apt-get install -y -qq --no-install-recommends google-chrome-stable >/dev/null; \
      rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb; \
      google-chrome-stable --version; \
    fi
# The worker runs as this user (or as the owner of the persona folder: docker/entrypoint.sh).
RUN groupadd --gid 10001 persona \
    && useradd --uid 10001 --gid persona --create-home --shell /usr/sbin/nologin persona \
    && mkdir -p /persona && chown persona:persona /persona
COPY --from=node /usr/local/bin/node /usr/local/bin/node
# npm: the supervisor installs and builds the checkout it updates.
COPY --from=node /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
    && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
COPY --from=deps /app/node_modules /app/node_modules
COPY --from=build /app /app
# The worker (not root) cannot write /app: its `.update-trigger` lands in /tmp, and the waker's
# front door touches the checkout's own file when the worker accepts the call.
RUN ln -s /tmp/.update-trigger /app/.update-trigger
WORKDIR /app
ENV PORT=5000 \
    HOST=0.0.0.0 \
    REPO_ROOT=/app \
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
EXPOSE 5000
ENTRYPOINT ["tini", "--", "/app/docker/entrypoint.sh"]
CMD ["worker"]
