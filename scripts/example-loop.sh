#!/usr/bin/env bash
# The bundled docs-fix loop end to end, offline: loop-run on a temp copy of fixtures/loops/docs-fix, whose only gate
# is the quickstart through qs-validate | qs-agent --agent replay | qs-check. The scripted host fixes the page from
# the gate's report; the run ends in PASS. Prints the docs diff and the final state; exits with loop-run's code.
# Where bwrap is missing: DOCS_FIX_AGENT_ARGS="--backend local --allow-unenforced" pnpm example:loop
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/docs-fix-example.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
cp -r fixtures/loops/docs-fix "$tmp/loop"
(cd "$tmp/loop" && loop-run loop.yaml < /dev/null > "$tmp/run.ndjson")
code=$?
echo "--- what the loop changed in the docs"
diff -u fixtures/loops/docs-fix/workspace/docs/quickstart.html "$tmp/loop/workspace/docs/quickstart.html" \
  | sed "s|$tmp/loop/||"
echo "--- the first gate's quickstart report (workspace/review-delivery_gate-1.md)"
node -e 'const r = require("fs").readFileSync(process.argv[1], "utf8"); console.log(JSON.parse(/```json\n([\s\S]*?)\n```/.exec(r)[1]).stdout.trimEnd())' \
  "$tmp/loop/workspace/review-delivery_gate-1.md" 2> /dev/null || echo "(none: the first delivery passed)"
echo "--- state.json"
node -e 'const s = require(process.argv[1]); console.log(`status ${s.status}${s.failure ? `, failure ${s.failure}` : ""}, iteration ${s.iteration}`)' \
  "$tmp/loop/workspace/state.json"
echo "--- $(grep -c . "$tmp/run.ndjson") events on stdout, the last: $(tail -n 1 "$tmp/run.ndjson" | cut -c1-120)…"
exit "$code"
