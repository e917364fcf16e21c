#!/usr/bin/env bash
# Installs everything quickloop needs on a fresh Debian/Ubuntu machine with Node 20.19+:
# through apt when root or sudo allows, the sandbox tools (bubblewrap, socat, nsenter and setpriv, ip) and
# what the tests run inside and beside it (curl, wget, python3 with venv, ps; Debian's chromium for the report's
# browser tests; redis-server, which the fleet's tests start), then the pinned pnpm, the workspace's
# dependencies, and a build. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1

node_ok=$(node -e 'const [a,b]=process.versions.node.split(".").map(Number); console.log(a>20||(a===20&&b>=19)?1:0)' 2>/dev/null || echo 0)
if [ "$node_ok" != 1 ]; then
  echo "quickloop needs Node.js 20.19 or newer (found: $(node -v 2>/dev/null || echo none))" >&2
  exit 1
fi

# The enforced sandbox needs the first five (slim images lack iproute2, some util-linux); the tests
# also run curl, wget and python3 in the sandbox (every HTTP client a check may fall back on) and ps.
missing=()
packages=()
for pair in bwrap:bubblewrap socat:socat nsenter:util-linux setpriv:util-linux ip:iproute2 curl:curl wget:wget python3:python3 ps:procps redis-server:redis-server; do
  tool=${pair%%:*}
  if ! command -v "$tool" >/dev/null 2>&1; then
    missing+=("$tool")
    case " ${packages[*]-} " in *" ${pair#*:} "*) ;; *) packages+=("${pair#*:}") ;; esac
  fi
done
# The install cache's pip test makes a venv in the sandbox: Debian and Ubuntu keep ensurepip apart.
if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  missing+=("python3 -m venv")
  packages+=(python3-venv)
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo"; else sudo="none"; fi
  if [ "$sudo" = none ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "note: ${missing[*]} not found and cannot be installed here (needs apt-get as root or sudo)." >&2
    echo "      Install ${packages[*]} yourself: without the sandbox tools only the unenforced" >&2
    echo "      'local' backend runs (and only with --allow-unenforced), and the tests need them all." >&2
  else
    echo "installing ${packages[*]} (apt)…" >&2
    $sudo apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${packages[@]}" >/dev/null
  fi
fi

# chromium only opens `qs report`'s page in the tests, which say so and skip without it. Debian has the
# package; Ubuntu's is a snap wrapper that may not install in a container, so a failure is only a note.
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then csudo=""; elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then csudo="sudo"; else csudo="none"; fi
  if [ "$csudo" != none ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium (apt, for the report's browser tests)…" >&2
    if ! { $csudo apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $csudo apt-get install -y -qq chromium >/dev/null 2>&1 && [ -x /usr/bin/chromium ]; }; then
      echo "note: chromium could not be installed through apt; the report's browser tests will skip and say so." >&2
    fi
  else
    echo "note: /usr/bin/chromium not found and cannot be installed here; the report's browser tests will skip and say so." >&2
  fi
fi

if [ "$(pnpm -v 2>/dev/null)" != 12.4.2 ]; then
  echo "installing pnpm 12.4.2 (npm -g)…" >&2
  npm install -g pnpm@12.4.2 >/dev/null 2>&1 || npm install -g pnpm@12.4.2
fi

pnpm install --frozen-lockfile
pnpm build
