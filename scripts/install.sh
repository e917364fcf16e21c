#!/usr/bin/env bash
# Installs everything quickloop needs on a fresh Debian/Ubuntu machine with Node 20.19+:
# the sandbox tools (bubblewrap, socat, nsenter and setpriv, ip, ripgrep) and redis-server (the fleet's tests
# start one) through apt when root or sudo allows, the pinned
# pnpm, the workspace's dependencies, and a build. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1

node_ok=$(node -e 'const [a,b]=process.versions.node.split(".").map(Number); console.log(a>20||(a===20&&b>=19)?1:0)' 2>/dev/null || echo 0)
if [ "$node_ok" != 1 ]; then
  echo "quickloop needs Node.js 20.19 or newer (found: $(node -v 2>/dev/null || echo none))" >&2
  exit 1
fi

# The enforced sandbox needs every one of these (slim images lack iproute2, some util-linux).
missing=()
packages=()
for pair in bwrap:bubblewrap socat:socat nsenter:util-linux setpriv:util-linux ip:iproute2 rg:ripgrep redis-server:redis-server; do
  tool=${pair%%:*}
  if ! command -v "$tool" >/dev/null 2>&1; then
    missing+=("$tool")
    case " ${packages[*]-} " in *" ${pair#*:} "*) ;; *) packages+=("${pair#*:}") ;; esac
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo"; else sudo="none"; fi
  if [ "$sudo" = none ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "note: ${missing[*]} not found and cannot be installed here (needs apt-get as root or sudo)." >&2
    echo "      Install ${packages[*]} yourself for the enforced sandbox; without them only" >&2
    echo "      the unenforced 'local' backend runs (and only with --allow-unenforced)." >&2
    echo "      Without redis-server the worker fleet's tests say why they did not run." >&2
  else
    echo "installing ${packages[*]} (apt)…" >&2
    $sudo apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${packages[@]}" >/dev/null
  fi
fi

if [ "$(pnpm -v 2>/dev/null)" != 12.4.2 ]; then
  echo "installing pnpm 12.4.2 (npm -g)…" >&2
  npm install -g pnpm@12.4.2 >/dev/null 2>&1 || npm install -g pnpm@12.4.2
fi

pnpm install --frozen-lockfile
pnpm build
