#!/usr/bin/env bash
# The GitHub Action's steps (action.yml): its inputs arrive as QL_* variables, never spliced into a
# script, so a task path or a model name cannot inject shell. `doctor` runs qs doctor on the tasks;
# with QL_MERGE, qs merge of the shards' folders; otherwise qs run (one shard of it with QL_SHARD),
# with its exit code written to $GITHUB_OUTPUT and returned.
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
qs=(node "$here/packages/qs/bin/qs.js")
set -f # the tasks are passed as written: qs expands globs itself
read -r -a tasks <<<"${QL_TASKS:-}"
read -r -a maps <<<"${QL_DOCS_MAP:-}"
set +f

# Ubuntu 24.04 runners set kernel.apparmor_restrict_unprivileged_userns=1, so bubblewrap cannot make
# the namespaces the sandbox is built from. Turning the restriction off for this job (the runner is
# thrown away afterwards) is what the action changes on the machine, and it says so.
if [ "${1:-}" = userns ]; then
  knob=${QL_USERNS_KNOB:-/proc/sys/kernel/apparmor_restrict_unprivileged_userns}
  if [ -r "$knob" ] && [ "$(cat "$knob")" = 1 ]; then
    if sudo -n sysctl -q -w kernel.apparmor_restrict_unprivileged_userns=0; then
      echo "quickloop: set kernel.apparmor_restrict_unprivileged_userns=0 for this job, so bubblewrap can make user namespaces"
      [ -n "${GITHUB_STEP_SUMMARY:-}" ] && echo "quickloop set \`kernel.apparmor_restrict_unprivileged_userns=0\` on this runner so the sandbox (bubblewrap) can make user namespaces." >>"$GITHUB_STEP_SUMMARY"
    else
      echo "quickloop: kernel.apparmor_restrict_unprivileged_userns is 1 and sudo could not change it: the enforced sandbox will not start" >&2
    fi
  else
    echo "quickloop: user namespaces are not restricted here; nothing changed"
  fi
  exit 0
fi

if [ "${1:-}" = doctor ]; then
  exec "${qs[@]}" doctor "${tasks[@]}"
fi

if [ -n "${QL_MERGE:-}" ]; then
  # The shards' folders, as download-artifact left them: split on spaces and globs expanded (never run).
  args=(merge)
  for d in ${QL_MERGE}; do args+=("$d"); done
else
  args=(run)
  if [ -n "${QL_EXAMPLE:-}" ]; then args+=(--example "$QL_EXAMPLE"); else args+=("${tasks[@]}"); fi
  args+=(--agent "${QL_AGENT:-replay}" --repeat "${QL_REPEAT:-1}" --workers "${QL_WORKERS:-1}")
  [ -n "${QL_MODEL:-}" ] && args+=(--model "$QL_MODEL")
  [ -n "${QL_BASE_URL:-}" ] && args+=(--base-url "$QL_BASE_URL")
  [ -n "${QL_SHARD:-}" ] && args+=(--shard "$QL_SHARD")
  for m in "${maps[@]}"; do args+=(--docs-map "$m"); done
  [ "${QL_UNENFORCED:-false}" = true ] && args+=(--allow-unenforced)
fi
if [ -n "${QL_OUT:-}" ]; then
  args+=(--out "$QL_OUT")
fi
if [ -n "${QL_JUNIT:-}" ]; then
  mkdir -p "$(dirname "$QL_JUNIT")"
  args+=(--junit "$QL_JUNIT")
fi
[ "${QL_STRICT:-false}" = true ] && args+=(--strict-inconclusive)

# The events go to the out folder's streams; the log shows people what happened.
"${qs[@]}" "${args[@]}" >/dev/null
code=$?
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "exit-code=$code" >>"$GITHUB_OUTPUT"
  [ -n "${QL_OUT:-}" ] && echo "results=$QL_OUT/results.json" >>"$GITHUB_OUTPUT"
fi
exit "$code"
