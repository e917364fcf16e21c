#!/usr/bin/env bash
# The bundled example end to end, offline: the Greeter quickstart (fixtures/examples/greeter.yaml)
# through qs-validate | qs-sandbox | qs-agent --agent replay | qs-check, its docs served from
# fixtures/docs-site with --docs-map, rendered by `qs show`. Ends in PASS; exits with qs-check's code.
# Extra arguments go to qs-sandbox (e.g. --backend local --allow-unenforced where bwrap is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
qs-validate fixtures/examples/greeter.yaml \
  | qs-sandbox "$@" \
  | qs-agent --agent replay --docs-map https://docs.greeter.test/=fixtures/docs-site \
  | qs-check \
  | qs show -
