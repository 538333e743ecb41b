#!/usr/bin/env bash
# The cronjob controller against a real API server (about 2.5 minutes: it waits for real
# minute boundaries):
#   - a CronJob "*/1 * * * *" with concurrencyPolicy Forbid and successfulJobsHistoryLimit 1
#     creates its Jobs on the minute, named <cronjob>-<minutes since the epoch>, owned by the
#     CronJob, with the template's labels and the scheduled-timestamp annotation; its status
#     shows lastScheduleTime and lastSuccessfulTime; once the second Job has completed the
#     first is deleted (history limit 1) and status.active is empty;
#   - a CronJob "@every 15s" whose Jobs run 25 s, Forbid: never two Jobs active at once, a
#     JobAlreadyActive Warning for the start skipped, the skipped start run late once the
#     active Job finished; suspend: true then starts nothing new;
#   - timeZone Asia/Kolkata: a daily "M H * * *" fires at that minute in Kolkata time;
#   - missed starts: resumed 20 s after a start it slept through, a CronJob with
#     startingDeadlineSeconds 5 skips it, one without a deadline runs it late.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"

install_crds
cm_start
ns=$(new_namespace ctrl-cron)
scheduler_start "$ns"

cron() { # NAME SCHEDULE RUN_FOR EXTRA_SPEC_LINE
  cat <<CRON
apiVersion: batch.volcano.sh/v1alpha1
kind: CronJob
metadata: {name: $1, namespace: $ns}
spec:
  schedule: "$2"
  concurrencyPolicy: Forbid
  ${4:-}
  jobTemplate:
    metadata:
      labels: {cron: $1}
    spec:
      minAvailable: 1
      schedulerName: volcano
      tasks:
      - name: main
        replicas: 1
        template:
          metadata: {annotations: {basalt.dev/run-for: "$3"}}
          spec:
            restartPolicy: Never
            containers: [{name: main, image: busybox, resources: {requests: {cpu: 100m}}}]
CRON
}
cron minute "*/1 * * * *" 5s "successfulJobsHistoryLimit: 1" | kubectl apply -f - >/dev/null
cron every "@every 15s" 25s | kubectl apply -f - >/dev/null
minute_uid=$(kubectl -n "$ns" get cronjob.batch.volcano.sh minute -o jsonpath='{.metadata.uid}')
# Time zones: a daily schedule at the next-but-one minute as Asia/Kolkata (UTC+05:30) reads it;
# read as UTC or the machine's zone it would not come due for hours.
tz_at=$((($(date +%s) / 60 + 2) * 60))
cron tz "$(TZ=Asia/Kolkata date -d "@$tz_at" '+%-M %-H') * * *" 5s "timeZone: Asia/Kolkata" | kubectl apply -f - >/dev/null
# Missed starts: two suspended "*/1" CronJobs resumed 20 s after a minute boundary; with
# startingDeadlineSeconds 5 that start is missed for good, without a deadline it runs late.
cron strict "*/1 * * * *" 5s $'startingDeadlineSeconds: 5\n  suspend: true' | kubectl apply -f - >/dev/null
cron late "*/1 * * * *" 5s "suspend: true" | kubectl apply -f - >/dev/null
missed_at=$((($(date +%s) / 60 + 1) * 60)) resumed=""
expect_eq "short name cronvcjob" "$(kubectl -n "$ns" get cronvcjob minute -o jsonpath='{.spec.concurrencyPolicy}')" "Forbid"

jobs_of() { kubectl -n "$ns" get vcjob -l "cron=$1" -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.state.phase}{"\n"}{end}' 2>/dev/null; }
declare -A seen_minute=() seen_every=()
max_every_active=0 suspended_at="" suspended_count=""
deadline=$((SECONDS + 200))
while ((SECONDS < deadline)); do
  while read -r name phase; do [[ -n $name ]] && seen_minute[$name]=$phase; done <<<"$(jobs_of minute)"
  active=0
  while read -r name phase; do
    [[ -z $name ]] && continue
    seen_every[$name]=$phase
    [[ $phase != Completed && $phase != Failed && $phase != Terminated ]] && active=$((active + 1))
  done <<<"$(jobs_of every)"
  ((active > max_every_active)) && max_every_active=$active
  # Once "every" has shown Forbid at work (a skipped start and a late one), suspend it.
  if [[ -z $suspended_at ]] && ((${#seen_every[@]} >= 2)) &&
    kubectl -n "$ns" get events --field-selector involvedObject.name=every,reason=JobAlreadyActive -o name 2>/dev/null | grep -q .; then
    kubectl -n "$ns" patch cronjob.batch.volcano.sh every --type=merge -p '{"spec":{"suspend":true}}' >/dev/null
    suspended_at=$SECONDS
    sleep 1
    suspended_count=$(jobs_of every | grep -c . || true)
  fi
  if [[ -z $resumed ]] && (($(date +%s) >= missed_at + 20)); then
    for c in strict late; do
      kubectl -n "$ns" patch cronjob.batch.volcano.sh "$c" --type=merge -p '{"spec":{"suspend":false}}' >/dev/null
    done
    resumed=$(date +%s)
    wait_for "late: the missed start runs late" 15 bash -c "kubectl -n $ns get vcjob late-$((missed_at / 60)) >/dev/null 2>&1"
    # Before the next boundary: strict has started nothing.
    if (($(date +%s) < missed_at + 58)); then
      expect_eq "strict: the start missed by more than startingDeadlineSeconds is not run" "$(jobs_of strict)" ""
    else
      fail "strict: the late start took past the next minute boundary"
    fi
  fi
  remaining=$(jobs_of minute | grep -c . || true)
  if ((${#seen_minute[@]} >= 2)) && [[ -n $suspended_at && -n $resumed ]] && ((SECONDS - suspended_at >= 20)) &&
    [[ $remaining == 1 && $(jobs_of minute) == *Completed* ]]; then
    break
  fi
  sleep 2
done

# --- "*/1 * * * *" ---------------------------------------------------------------------------
names=$(printf '%s\n' "${!seen_minute[@]}" | sort)
expect_eq "minute: two Jobs were created" "$(grep -c . <<<"$names")" "2"
first=$(head -1 <<<"$names") second=$(tail -1 <<<"$names")
m1=${first#minute-} m2=${second#minute-}
if [[ $m1 =~ ^[0-9]+$ && $m2 =~ ^[0-9]+$ ]] && ((m2 == m1 + 1)); then
  pass "minute: Jobs named minute-<minutes>, one minute apart ($first, $second)"
else
  fail "minute: unexpected Job names: $first $second"
fi
expect_eq "minute: the first Job was deleted after the second completed (history limit 1)" "$(jobs_of minute)" "$second Completed"
expect_eq "minute: Job owner" "$(kubectl -n "$ns" get vcjob "$second" -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].uid}/{.metadata.ownerReferences[0].controller}')" "CronJob/minute/$minute_uid/true"
expected_ts=$(date -u -d "@$((m2 * 60))" +%Y-%m-%dT%H:%M:%SZ)
settled() {
  [[ $(kubectl -n "$ns" get cronjob.batch.volcano.sh minute -o jsonpath='{.status.active}') == "" &&
    $(kubectl -n "$ns" get cronjob.batch.volcano.sh minute -o jsonpath='{.status.lastSuccessfulTime}') == "$(job_field "$ns" "$second" .status.state.lastTransitionTime)" ]]
}
wait_for "minute: the status shows the second Job finished" 20 settled
expect_eq "minute: scheduled-timestamp annotation" "$(kubectl -n "$ns" get vcjob "$second" -o jsonpath='{.metadata.annotations.batch\.volcano\.sh/cronjob-scheduled-timestamp}')" "$expected_ts"
expect_eq "minute: lastScheduleTime" "$(kubectl -n "$ns" get cronjob.batch.volcano.sh minute -o jsonpath='{.status.lastScheduleTime}')" "$expected_ts"
expect_eq "minute: no active Job" "$(kubectl -n "$ns" get cronjob.batch.volcano.sh minute -o jsonpath='{.status.active}')" ""
last_ok=$(kubectl -n "$ns" get cronjob.batch.volcano.sh minute -o jsonpath='{.status.lastSuccessfulTime}')
expect_eq "minute: lastSuccessfulTime is the second Job's completion" "$last_ok" "$(job_field "$ns" "$second" .status.state.lastTransitionTime)"
expect_contains "minute: events" "$(kubectl -n "$ns" get events --field-selector involvedObject.name=minute -o jsonpath='{.items[*].reason}')" "SuccessfulCreate"
expect_contains "minute: history deletion event" "$(kubectl -n "$ns" get events --field-selector involvedObject.name=minute,reason=SuccessfulDelete -o jsonpath='{.items[*].message}')" "Deleted job $first"

# --- time zone ------------------------------------------------------------------------------
wait_for "tz: the Job of $(TZ=Asia/Kolkata date -d "@$tz_at" '+%H:%M') Asia/Kolkata was created" \
  $((tz_at + 20 - $(date +%s) > 5 ? tz_at + 20 - $(date +%s) : 5)) \
  bash -c "kubectl -n $ns get vcjob tz-$((tz_at / 60)) >/dev/null 2>&1"
# The annotation is the start in the CronJob's zone (RFC 3339 with its offset), as Kubernetes'.
expect_eq "tz: scheduled-timestamp annotation (Kolkata time)" \
  "$(kubectl -n "$ns" get vcjob "tz-$((tz_at / 60))" -o jsonpath='{.metadata.annotations.batch\.volcano\.sh/cronjob-scheduled-timestamp}')" \
  "$(TZ=Asia/Kolkata date -d "@$tz_at" +%Y-%m-%dT%H:%M:%S%:z)"
expect_eq "tz: one Job only" "$(jobs_of tz | grep -c . || true)" "1"
[[ -n $resumed ]] || fail "strict/late: never resumed"

# --- "@every 15s", Forbid, suspend -------------------------------------------------------------
if ((${#seen_every[@]} >= 2)); then pass "every: ${#seen_every[@]} Jobs ran"; else fail "every: only ${#seen_every[@]} Jobs"; fi
expect_eq "every: never two Jobs active at once (Forbid)" "$max_every_active" "1"
expect_contains "every: JobAlreadyActive warning" "$(kubectl -n "$ns" get events --field-selector involvedObject.name=every,reason=JobAlreadyActive -o jsonpath='{.items[0].type}: {.items[0].message}')" "Warning: Not starting job"
if [[ -n $suspended_at ]]; then
  expect_eq "every: no new Job after suspend" "$(jobs_of every | grep -c . || true)" "$suspended_count"
else
  fail "every: never reached the suspend step"
fi
expect_eq "every: the CronJob shows suspend" "$(kubectl -n "$ns" get cronjob.batch.volcano.sh every -o jsonpath='{.spec.suspend}')" "true"

# Deleting a CronJob deletes its Jobs (ownerReferences, garbage collector).
kubectl -n "$ns" delete cronjob.batch.volcano.sh minute >/dev/null
gone() { [[ -z $(jobs_of minute) ]]; }
wait_for "minute's Jobs are garbage-collected with it" 60 gone
expect_contains "reconcile metrics" "$(curl -fsS "http://127.0.0.1:$CM_METRICS_PORT/metrics")" 'basalt_controller_reconcile_total{controller="cronjob",result="success"}'
