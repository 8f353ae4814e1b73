# Progress lines for slow first-run steps (a cold kube build is ~15-20 min on 2 cores,
# helm's go install ~4 min), so they do not look like a hang. Sourced by
# scripts/kube-binaries and scripts/prereqs; bash only.
#
#   PROGRESS_PREFIX=kube-binaries
#   progress_run "building kube-apiserver" go build ...
#
# Everything goes to stderr: callers capture the scripts' stdout.
# HF_PROGRESS_INTERVAL (a sleep(1) duration, default 30s) is the time between lines.

PROGRESS_PREFIX="${PROGRESS_PREFIX:-$(basename "$0")}"
_progress_ticker_pid=""

# progress_elapsed 754 -> 12m34s
progress_elapsed() {
  printf '%dm%02ds' $(($1 / 60)) $(($1 % 60))
}

# progress_run WHAT CMD [ARGS...] runs CMD, saying every interval that WHAT is still
# going and for how long, then how it ended. Returns CMD's exit status.
# It holds the EXIT trap while CMD runs, so the ticker dies with the script.
progress_run() {
  local what=$1 start=$EPOCHSECONDS status=0 saved_exit_trap
  shift
  echo "$PROGRESS_PREFIX: $what" >&2
  saved_exit_trap=$(trap -p EXIT)
  trap _progress_stop EXIT
  _progress_ticker "$what" "$start" >/dev/null &
  _progress_ticker_pid=$!
  "$@" || status=$?
  _progress_stop
  eval "${saved_exit_trap:-trap - EXIT}"
  local took
  took=$(progress_elapsed $((EPOCHSECONDS - start)))
  if ((status == 0)); then
    echo "$PROGRESS_PREFIX: done in $took: $what" >&2
  else
    echo "$PROGRESS_PREFIX: FAILED after $took (exit status $status): $what" >&2
  fi
  return "$status"
}

# _progress_ticker runs in the background. It also stops by itself once the script
# is gone, in case the script was killed too hard to run its EXIT trap.
_progress_ticker() {
  local what=$1 start=$2 script_pid=$$ nap=""
  trap 'if [[ -n $nap ]]; then kill "$nap" 2>/dev/null || true; fi; wait; exit 0' TERM
  while kill -0 "$script_pid" 2>/dev/null; do
    sleep "${HF_PROGRESS_INTERVAL:-30}" &
    nap=$!
    wait "$nap" || true
    kill -0 "$script_pid" 2>/dev/null || break
    echo "$PROGRESS_PREFIX: still $what, $(progress_elapsed $((EPOCHSECONDS - start))) elapsed" >&2
  done
}

_progress_stop() {
  if [[ -n $_progress_ticker_pid ]]; then
    kill "$_progress_ticker_pid" 2>/dev/null || true
    wait "$_progress_ticker_pid" 2>/dev/null || true
    _progress_ticker_pid=""
  fi
}
