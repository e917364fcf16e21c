# quickloop check helpers: prepended to every success check (QS_PORT_BASE is set on the line above).
# Contract: the check's exit code is the verdict, and when it fails its last line says why, in one line.

QS_TMP=$(mktemp -d "${TMPDIR:-/tmp}/qs-check.XXXXXX") || { echo "check failed: cannot create a temporary directory"; exit 1; }
QS_BODY="$QS_TMP/body"
QS_SESSION_LOG="${QS_SESSION_LOG:-$PWD/.qs-session.log}"
QS_LOG=""
_qs_pgids=""
_qs_serves=0

# qs_fail WHY...: print the one-line reason and fail the check.
qs_fail() {
  local why="$*"
  why=${why//$'\r'/ }
  why=${why//$'\n'/ }
  printf 'check failed: %s\n' "${why:-no reason given}"
  exit 1
}

# Servers are started in their own process group, so the whole tree (npm → node → workers) is
# stopped, not just the direct child; TERM first, KILL after two seconds.
_qs_cleanup() {
  local pg i
  for pg in $_qs_pgids; do kill -TERM -- "-$pg" 2>/dev/null; done
  for pg in $_qs_pgids; do
    for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
      kill -0 -- "-$pg" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL -- "-$pg" 2>/dev/null
  done
  rm -rf "$QS_TMP"
}
trap _qs_cleanup EXIT
trap 'exit 130' INT TERM

_qs_port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# QS_PORT: the first free port of [QS_PORT_BASE, QS_PORT_BASE+20), stable per task name.
_qs_pick_port() {
  local p=$QS_PORT_BASE
  while [ "$p" -lt $((QS_PORT_BASE + 20)) ]; do
    if ! _qs_port_busy "$p"; then
      echo "$p"
      return
    fi
    p=$((p + 1))
  done
  echo "$QS_PORT_BASE"
}
QS_PORT="${QS_PORT:-$(_qs_pick_port)}"
export QS_PORT QS_SESSION_LOG

# Where quickloop's enforced sandbox has it, a served program runs under this wrapper, in a Landlock
# domain of its own: it and all it starts can neither signal this check's tools nor open their
# pipes, memory or environment through /proc, while this shell still signals and waits for them.
_qs_isolate=/opt/quickloop/libexec/isolate

# qs_serve CMD...: start a long-running command in the background, with its own log file.
qs_serve() {
  [ $# -gt 0 ] || qs_fail "qs_serve needs a command"
  _qs_serves=$((_qs_serves + 1))
  QS_LOG="$QS_TMP/serve-$_qs_serves.log"
  local run=("$@") file
  # The wrapper execs a path: a program is found here; a shell function or builtin is run as it is.
  if [ -x "$_qs_isolate" ] && [ "$(type -t -- "$1")" = file ] && file=$(type -P -- "$1"); then run=("$_qs_isolate" "$file" "${@:2}"); fi
  set -m
  "${run[@]}" >"$QS_LOG" 2>&1 </dev/null &
  _qs_last_pid=$!
  set +m
  _qs_pgids="$_qs_pgids $_qs_last_pid"
}

_qs_show_logs() {
  local n=1 log
  while [ "$n" -le "$_qs_serves" ]; do
    log="$QS_TMP/serve-$n.log"
    if [ -s "$log" ]; then
      echo "--- server $n output (last 20 lines) ---"
      tail -n 20 "$log"
    else
      echo "--- server $n printed nothing; it may never have started ---"
    fi
    n=$((n + 1))
  done
}

_qs_ere_escape() { printf '%s' "$1" | sed -e 's/[][\.*^$+?(){}|]/\\&/g'; }

# _qs_fetch URL SECONDS: body to $QS_BODY, status on stdout; on no response, the reason in $QS_TMP/fetch.err.
# No fetcher reads a start-up file from the home the run wrote (curl -q first: no ~/.curlrc, whose
# connect-to could send the check to the agent's own server; python3 -I: no user site; no ~/.wgetrc).
_qs_fetch() {
  : >"$QS_BODY"
  if command -v curl >/dev/null 2>&1; then
    curl -q -sS -o "$QS_BODY" -w '%{http_code}' --max-time "$2" "$1" 2>"$QS_TMP/fetch.err"
  elif command -v python3 >/dev/null 2>&1; then
    python3 -I - "$1" "$QS_BODY" "$2" 2>"$QS_TMP/fetch.err" <<'PY'
import sys, urllib.request, urllib.error
try:
    r = urllib.request.urlopen(sys.argv[1], timeout=float(sys.argv[3]))
    code, body = r.status, r.read()
except urllib.error.HTTPError as e:
    code, body = e.code, e.read()
except Exception as e:
    sys.stderr.write("%s\n" % e)
    sys.exit(1)
open(sys.argv[2], "wb").write(body)
sys.stdout.write(str(code))
PY
  elif command -v node >/dev/null 2>&1; then
    node -e '
      const [url, out, secs] = process.argv.slice(1);
      fetch(url, { signal: AbortSignal.timeout(secs * 1000) })
        .then(async (r) => { require("fs").writeFileSync(out, Buffer.from(await r.arrayBuffer())); process.stdout.write(String(r.status)); })
        .catch((e) => { process.stderr.write(String(e.cause ?? e) + "\n"); process.exit(1); });' "$1" "$QS_BODY" "$2" 2>"$QS_TMP/fetch.err"
  elif command -v wget >/dev/null 2>&1; then
    WGETRC=/dev/null wget -q -S --content-on-error -T "$2" -O "$QS_BODY" "$1" 2>"$QS_TMP/fetch.hdr"
    local code
    code=$(grep -Eo 'HTTP/[0-9.]+ [0-9]{3}' "$QS_TMP/fetch.hdr" | tail -n 1 | cut -d' ' -f2)
    if [ -z "$code" ]; then
      echo "no response" >"$QS_TMP/fetch.err"
      return 1
    fi
    printf '%s' "$code"
  fi
}

# qs_wait_http TARGET [--status N] [--timeout S] [--contains TEXT]... [--matches ERE]... [--json KEY=VALUE]...
# TARGET is a full http(s) URL, or a path on http://127.0.0.1:$QS_PORT. Polls until the answer has
# the status and every pattern, or fails with the last thing it saw (never the body) as its last line.
# `--json-ere SHOWN ERE` is what a task's wait_http.json compiles to: the pair's pattern, typed and
# written as any JSON encoder may write it, and the pair as the failure names it.
qs_wait_http() {
  [ $# -gt 0 ] || qs_fail "qs_wait_http needs a URL or a path"
  local target=$1 want=200 timeout=40 url last="no attempt was made" code left secs exited=""
  local checks=""
  shift
  while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || qs_fail "qs_wait_http: $1 needs a value"
    case "$1" in
      --status) want=$2 ;;
      --timeout) timeout=$2 ;;
      --contains | --matches | --json) checks="$checks$1"$'\x1f'"$2"$'\x1e' ;;
      --json-ere)
        [ $# -ge 3 ] || qs_fail "qs_wait_http: --json-ere needs what to show and a pattern"
        checks="$checks$1"$'\x1f'"$2"$'\x1f'"$3"$'\x1e'
        shift ;;
      *) qs_fail "qs_wait_http: unknown option $1" ;;
    esac
    shift 2
  done
  case "$target" in
    http://* | https://*) url=$target ;;
    /*) url="http://127.0.0.1:$QS_PORT$target" ;;
    *) url="http://127.0.0.1:$QS_PORT/$target" ;;
  esac
  command -v curl >/dev/null 2>&1 || command -v python3 >/dev/null 2>&1 || command -v node >/dev/null 2>&1 ||
    command -v wget >/dev/null 2>&1 || qs_fail "qs_wait_http needs curl, python3, node or wget in the sandbox"
  local deadline=$((SECONDS + timeout))
  while :; do
    left=$((deadline - SECONDS))
    secs=$((left < 1 ? 1 : (left > 10 ? 10 : left)))
    if code=$(_qs_fetch "$url" "$secs"); then
      if [ "$code" != "$want" ]; then
        last="HTTP $code, wanted $want"
      else
        # 2: a --matches pattern grep cannot use, which no answer would ever match.
        last=$(_qs_body_misses "$checks")
        case $? in
          0) return 0 ;;
          2) qs_fail "qs_wait_http: grep could not use the pattern /$last/" ;;
        esac
      fi
    else
      last=$(head -n 1 "$QS_TMP/fetch.err" 2>/dev/null)
      last=${last:-no response}
    fi
    # A server that crashed will not start answering: stop waiting for it. One that exited 0 may
    # have handed over to a background process (a daemon), so the wait goes on.
    if [ "$_qs_serves" -gt 0 ] && [ -z "$exited" ] && [ "${url#http://127.0.0.1:"$QS_PORT"}" != "$url" ] && ! kill -0 "$_qs_last_pid" 2>/dev/null; then
      wait "$_qs_last_pid" 2>/dev/null
      exited=$?
      if [ "$exited" -ne 0 ]; then
        last="$last; the server exited with status $exited"
        break
      fi
    fi
    [ "$SECONDS" -lt "$deadline" ] || break
    sleep 0.5
  done
  _qs_show_logs
  if [ -s "$QS_BODY" ]; then
    echo "--- last response body (first 300 bytes) ---"
    head -c 300 "$QS_BODY"
    echo
  fi
  qs_fail "$url did not answer as expected within ${timeout}s (last: $last)"
}

# Prints what the body lacks and fails, or succeeds silently when every pattern is there; a --matches
# pattern grep cannot use is printed alone, with status 2.
_qs_body_misses() {
  local rest=$1 item kind value key pattern
  while [ -n "$rest" ]; do
    item=${rest%%$'\x1e'*}
    rest=${rest#*$'\x1e'}
    kind=${item%%$'\x1f'*}
    value=${item#*$'\x1f'}
    case "$kind" in
      --contains)
        grep -Fq -e "$value" "$QS_BODY" || { echo "the body does not contain '$value'"; return 1; } ;;
      --matches)
        grep -Eq -e "$value" "$QS_BODY"
        case $? in
          0) ;;
          1) echo "the body does not match /$value/"; return 1 ;;
          *) printf '%s' "$value"; return 2 ;;
        esac ;;
      --json)
        key=${value%%=*}
        value=${value#*=}
        pattern="\"$(_qs_ere_escape "$key")\"[[:space:]]*:[[:space:]]*(\"$(_qs_ere_escape "$value")\"|$(_qs_ere_escape "$value"))([[:space:]]*[,}]|[[:space:]]*\$)"
        grep -Eq -e "$pattern" "$QS_BODY" || { echo "the body has no \"$key\": $value"; return 1; } ;;
      --json-ere)
        pattern=${value#*$'\x1f'}
        value=${value%%$'\x1f'*}
        grep -Eq -e "$pattern" "$QS_BODY"
        case $? in
          0) ;;
          1) echo "the body has no $value"; return 1 ;;
          *) printf '%s' "$pattern"; return 2 ;;
        esac ;;
    esac
  done
  return 0
}

# qs_expect_output [--contains TEXT | --matches ERE]...: assert on what the run printed ($QS_SESSION_LOG).
qs_expect_output() {
  [ $# -gt 0 ] || qs_fail "qs_expect_output needs --contains or --matches"
  [ -f "$QS_SESSION_LOG" ] || qs_fail "there is no session log ($QS_SESSION_LOG), so nothing the run printed can be checked"
  local kind value miss="" rc
  while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || qs_fail "qs_expect_output: $1 needs a value"
    kind=$1
    value=$2
    shift 2
    [ -n "$value" ] || qs_fail "qs_expect_output: $kind has an empty pattern, which matches anything"
    case "$kind" in
      --contains) grep -Fq -e "$value" "$QS_SESSION_LOG"; rc=$? ;;
      --matches) grep -Eq -e "$value" "$QS_SESSION_LOG"; rc=$? ;;
      *) qs_fail "qs_expect_output: unknown option $kind" ;;
    esac
    [ "$rc" -ne 2 ] || qs_fail "qs_expect_output: grep could not use the pattern /$value/"
    [ "$rc" -eq 0 ] || miss="${miss:+$miss, nor }${kind#--} '$value'"
  done
  if [ -n "$miss" ]; then
    echo "--- what the run printed (last 20 lines) ---"
    tail -n 20 "$QS_SESSION_LOG"
    qs_fail "nothing the run printed ${miss}"
  fi
}
