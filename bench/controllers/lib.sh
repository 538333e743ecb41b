# shellcheck shell=bash
# Shared by bench/controllers/*.sh. Source it after parsing flags; needs KUBECONFIG,
# BASALT_BUILD_DIR and QPS.
: "${KUBECONFIG:?}" "${BASALT_BUILD_DIR:?}" "${QPS:?}"
CM=$BASALT_BUILD_DIR/controllers/vc-controller-manager
RAW=$BASALT_BUILD_DIR/bench/controllers/controllers_raw_create
now() { date +%s.%N; }
count_pods() { # namespace
  kubectl get --raw "/api/v1/namespaces/$1/pods?limit=1" | jq '(.metadata.remainingItemCount // 0) + (.items | length)'
}

# start_controller_manager NAMESPACE... -- [EXTRA FLAGS...]: creates the namespaces, starts
# vc-controller-manager (pid in $cm, log in $cm_log) with the client QPS and the extra flags,
# waits for its caches, and on exit stops it and deletes the namespaces.
start_controller_manager() {
  BENCH_NAMESPACES=()
  while (($#)) && [[ $1 != -- ]]; do BENCH_NAMESPACES+=("$1"); shift; done
  (($#)) && shift
  local n
  for n in "${BENCH_NAMESPACES[@]}"; do kubectl create namespace "$n" >/dev/null; done
  cm_log=$(mktemp)
  "$CM" --kubeconfig="$KUBECONFIG" --leader-elect=false --metrics-addr=127.0.0.1:0 \
    --health-addr=127.0.0.1:0 --kube-api-qps="$QPS" --kube-api-burst="$QPS" "$@" >"$cm_log" 2>&1 &
  cm=$!
  trap stop_controller_manager EXIT
  until grep -q "Caches synced" "$cm_log"; do sleep 0.1; done
  sleep 1
}
stop_controller_manager() {
  kill "$cm" 2>/dev/null || true
  wait "$cm" 2>/dev/null || true
  kubectl delete namespace "${BENCH_NAMESPACES[@]}" --wait=false >/dev/null 2>&1 || true
}
