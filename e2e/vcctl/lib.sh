# shellcheck shell=bash
# Shared by e2e/vcctl/*_test.sh (source it after e2e/lib/testlib.sh): the controllers and the
# scheduler of e2e/controllers/lib.sh, the webhook of e2e/webhook/lib.sh on request, and vcctl.
#
#   vcctl_webhook_start     registers and starts vc-webhook-manager (unregistered at exit)
#   run_vcctl ARGS...       runs vcctl; sets RC, OUT (stdout) and ERR (stderr)
#   row_of TEXT FIRST       the whitespace-split fields of TEXT's line whose first field is FIRST
#   header_of TEXT          the first line of TEXT, its fields single-spaced

# shellcheck source=../controllers/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../controllers/lib.sh"
# shellcheck source=../webhook/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../webhook/lib.sh"
VCCTL=$BASALT_BUILD_DIR/cli/vcctl
[[ -x $VCCTL ]] || { fail "no vcctl binary at $VCCTL (build the vcctl target)"; exit 1; }
VCCTL_WEBHOOK=""

vcctl_webhook_start() {
  webhook_start
  VCCTL_WEBHOOK=1
}

vcctl_on_exit() {
  local rc=$?
  set +e  # a failing cleanup step must not skip the others (the processes would leak)
  [[ -n $VCCTL_WEBHOOK ]] && webhook_stop
  (exit "$rc")
  controllers_on_exit
}
trap vcctl_on_exit EXIT

RC=0 OUT="" ERR=""
run_vcctl() {
  local o e
  o=$(mktemp) e=$(mktemp)
  set +e
  "$VCCTL" "$@" >"$o" 2>"$e"
  RC=$?
  set -e
  OUT=$(<"$o") ERR=$(<"$e")
  rm -f "$o" "$e"
}

row_of() { awk -v k="$2" '$1 == k { $1 = $1; print; exit }' <<<"$1"; }
header_of() { head -n 1 <<<"$1" | awk '{ $1 = $1; print }'; }
