#!/usr/bin/env bash
# The bundled example end to end, offline: a real sweep of the two bundled quickstart tasks, each run
# three times, two at a time, every attempt `qs-sandbox | qs-agent --agent replay | qs-check` in the
# enforced sandbox with its docs served from the bundled site, then the sweep's summary.
# `greeter` must pass every time and `greeter-docs-gap` must fail every time (its route skips the
# install page on purpose): the script exits 0 when both verdicts are what they must be.
# Extra arguments go to qs run (e.g. --backend local --allow-unenforced where bwrap is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
out="$(mktemp -d "${TMPDIR:-/tmp}/quickloop-example-XXXXXX")"
set +e
qs run --example greeter --example greeter-docs-gap --repeat 3 --workers 2 --out "$out/sweep" --summary "$out/summary.md" "$@" >/dev/null
code=$?
set -e
cat "$out/summary.md"
echo
echo "streams, results.json and the summary: $out"
# 1 is the documented exit code for "a docs gap was found": here it is the expected verdict.
if [ "$code" -ne 1 ]; then
  echo "example: qs run exited $code; expected 1 (greeter passes, greeter-docs-gap is a docs gap)" >&2
  exit 1
fi
node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const by = Object.fromEntries(r.tasks.map((t) => [t.task, t]));
const ok = by["greeter-quickstart"]?.passes === 3 && by["greeter-docs-gap"]?.passes === 0 && by["greeter-docs-gap"]?.evidential_runs === 3;
console.log(ok ? "example: as expected — greeter-quickstart passed 3/3, greeter-docs-gap failed 3/3 (a docs gap)" : "example: unexpected results");
process.exit(ok ? 0 : 1);
' "$out/sweep/results.json"
