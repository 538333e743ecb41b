#!/usr/bin/env bash
# Builds the pinned upstream control-plane binaries from their Go modules (through the Go
# module proxy) and caches them under $BASALT_CACHE_DIR/bin/<component>-<version>-<go>/.
# A component whose binary is already cached is skipped.
#
#   e2e/cluster/build.sh [--with-kube-scheduler] [--with-kubectl] [--with-helm]
#
# --with-helm also builds helm (helm.sh/helm/v3 at $HELM_VERSION), which the cluster does not
# need: the Helm chart's test and hack/update-manifests.sh ask for it.
#
# Prints nothing but progress on stderr; exits non-zero with a clear message on failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

WITH_SCHEDULER=0
WITH_KUBECTL=0
WITH_HELM=0
for a in "$@"; do
  case $a in
    --with-kube-scheduler) WITH_SCHEDULER=1 ;;
    --with-kubectl) WITH_KUBECTL=1 ;;
    --with-helm) WITH_HELM=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) die "build.sh: unknown flag '$a' (known: --with-kube-scheduler --with-kubectl --with-helm)" ;;
  esac
done

if ! command -v go >/dev/null 2>&1; then
  # Binaries built earlier (by any Go version) are enough to run the cluster.
  have_all=1
  find_bin etcd "$ETCD_VERSION" etcd >/dev/null || have_all=0
  find_bin kwok "$KWOK_VERSION" kwok >/dev/null || have_all=0
  for b in kube-apiserver kube-controller-manager; do
    find_bin kubernetes "$KUBERNETES_VERSION" "$b" >/dev/null || have_all=0
  done
  ((WITH_SCHEDULER)) && { find_bin kubernetes "$KUBERNETES_VERSION" kube-scheduler >/dev/null || have_all=0; }
  ((WITH_KUBECTL)) && { find_bin kubernetes "$KUBERNETES_VERSION" kubectl >/dev/null || have_all=0; }
  ((WITH_HELM)) && { find_bin helm "$HELM_VERSION" helm >/dev/null || have_all=0; }
  ((have_all)) && exit 0
  die "no Go toolchain on PATH: Go >= 1.26 builds kube-apiserver, etcd and KWOK for the test cluster (cached under $BASALT_CACHE_DIR/bin afterwards). Install Go and rerun."
fi
go_env
GOV=$(go_version)
mkdir -p "$GOMODCACHE" "$GOCACHE" "$BASALT_CACHE_DIR/src"
# One build at a time per cache: parallel test runs (worktrees, two clusters) would otherwise
# build the same binaries into the same place at once. The second waits, then finds them cached.
exec 9>"$BASALT_CACHE_DIR/.build.lock"
if ! flock -n 9; then
  log "another build.sh is building into $BASALT_CACHE_DIR; waiting for it"
  flock 9
fi

proxy_hint() {
  die "$1 failed. If the message above mentions the module proxy or a network error: the Go module proxy ($(go env GOPROXY)) must be reachable to build $2 the first time; check the network/GOPROXY and rerun. Full log: $3"
}

# run_logged LOGFILE CMD... : run quietly, show the log tail on failure.
run_logged() {
  local logf=$1; shift
  if ! "$@" >>"$logf" 2>&1; then
    tail -n 30 "$logf" >&2
    return 1
  fi
}

k8s_minor() { local v=${KUBERNETES_VERSION#v}; echo "${v#*.}" | cut -d. -f1; }
k8s_staging_version() { local v=${KUBERNETES_VERSION#v1.}; echo "v0.$v"; }

build_kubernetes() {
  local want=(kube-apiserver kube-controller-manager)
  ((WITH_SCHEDULER)) && want+=(kube-scheduler)
  ((WITH_KUBECTL)) && want+=(kubectl)
  local todo=() b
  for b in "${want[@]}"; do
    [[ -x $(bin_path kubernetes "$KUBERNETES_VERSION" "$b") ]] || todo+=("$b")
  done
  ((${#todo[@]})) || return 0

  local src="$BASALT_CACHE_DIR/src/kubernetes-$KUBERNETES_VERSION"
  local logf="$BASALT_CACHE_DIR/src/kubernetes-$KUBERNETES_VERSION.log"
  local outdir
  outdir=$(dirname "$(bin_path kubernetes "$KUBERNETES_VERSION" kube-apiserver)")
  mkdir -p "$src" "$outdir"
  : >"$logf"
  if [[ ! -f $src/go.sum ]]; then
    log "kubernetes $KUBERNETES_VERSION: resolving the wrapper module (staging replace block)"
    local gomod
    gomod=$(cd "$src" && go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" 2>>"$logf" |
      sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p') || true
    [[ -n $gomod && -f $gomod ]] || { tail -n 20 "$logf" >&2; proxy_hint "downloading k8s.io/kubernetes@$KUBERNETES_VERSION" kubernetes "$logf"; }
    local staging
    staging=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/k8s.io/.*#\1#p' "$gomod" | sort -u)
    [[ -n $staging ]] || die "no staging replace lines found in $gomod"
    local goline godebug
    goline=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gomod")
    godebug=$(sed -n 's/^godebug \(.*\)$/\1/p' "$gomod")
    rm -f "$src/go.mod"
    (
      cd "$src"
      go mod init basalt.local/kbuild >>"$logf" 2>&1
      go mod edit -go="$goline"
      [[ -n $godebug ]] && go mod edit -godebug="$godebug"
      go mod edit -require="k8s.io/kubernetes@$KUBERNETES_VERSION"
      local sv m
      sv=$(k8s_staging_version)
      for m in $staging; do go mod edit -replace="$m=$m@$sv"; done
      cat >tools.go <<'GO'
//go:build tools

// Package kbuild pins the upstream commands the Basalt test cluster builds.
package kbuild

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
    )
    log "kubernetes $KUBERNETES_VERSION: go mod tidy (downloads modules the first time)"
    (cd "$src" && run_logged "$logf" go mod tidy -e) || { rm -f "$src/go.sum"; proxy_hint "go mod tidy for kubernetes" kubernetes "$logf"; }
  fi
  local minor bd ldf
  minor=$(k8s_minor)
  bd=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  ldf="-s -w"
  local pkg
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    ldf+=" -X '$pkg.gitVersion=$KUBERNETES_VERSION' -X '$pkg.gitMajor=1' -X '$pkg.gitMinor=$minor'"
    ldf+=" -X '$pkg.gitTreeState=clean' -X '$pkg.buildDate=$bd' -X '$pkg.gitCommit=module-$KUBERNETES_VERSION'"
  done
  for b in "${todo[@]}"; do
    log "kubernetes $KUBERNETES_VERSION: building $b (cold: minutes, about 5 for kube-apiserver on 2 cores; cached afterwards)"
    local t0=$SECONDS
    (cd "$src" && run_logged "$logf" go build -trimpath -tags selinux,notest -ldflags "$ldf" \
      -o "$outdir/$b.tmp" "k8s.io/kubernetes/cmd/$b") || proxy_hint "building $b" kubernetes "$logf"
    mv "$outdir/$b.tmp" "$outdir/$b"
    log "kubernetes $KUBERNETES_VERSION: $b built in $((SECONDS - t0))s"
  done
}

build_etcd() {
  local out
  out=$(bin_path etcd "$ETCD_VERSION" etcd)
  [[ -x $out ]] && return 0
  local src="$BASALT_CACHE_DIR/src/etcd-$ETCD_VERSION" logf="$BASALT_CACHE_DIR/src/etcd-$ETCD_VERSION.log"
  mkdir -p "$src" "$(dirname "$out")"
  : >"$logf"
  log "etcd $ETCD_VERSION: building"
  local t0=$SECONDS
  if [[ ! -f $src/go.sum ]]; then
    (
      cd "$src"
      rm -f go.mod
      go mod init basalt.local/etcdbuild >>"$logf" 2>&1
      cat >main.go <<'GO'
// Command etcd runs the pinned upstream etcd server for the Basalt test cluster.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
      run_logged "$logf" go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" &&
        run_logged "$logf" go mod tidy
    ) || { rm -f "$src/go.sum"; proxy_hint "resolving etcd $ETCD_VERSION" etcd "$logf"; }
  fi
  (cd "$src" && run_logged "$logf" go build -trimpath -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module" \
    -o "$out.tmp" .) || proxy_hint "building etcd" etcd "$logf"
  mv "$out.tmp" "$out"
  log "etcd $ETCD_VERSION: built in $((SECONDS - t0))s"
}

# go_install_cached COMPONENT VERSION BINARY PACKAGE@VERSION LDFLAGS [NOTE]: `go install` of a
# module's command through the proxy into the cache (skipped when the binary is there).
go_install_cached() {
  local component=$1 version=$2 binary=$3 pkg=$4 ldflags=$5 note=${6:-}
  local out
  out=$(bin_path "$component" "$version" "$binary")
  [[ -x $out ]] && return 0
  local logf="$BASALT_CACHE_DIR/src/$component-$version.log"
  : >"$logf"
  log "$component $version: building${note:+ ($note)}"
  local t0=$SECONDS
  mkdir -p "$(dirname "$out")"
  local tmpbin
  tmpbin=$(mktemp -d)
  GOBIN=$tmpbin run_logged "$logf" go install -trimpath -ldflags "$ldflags" "$pkg" ||
    { rm -rf "$tmpbin"; proxy_hint "building $component" "$component" "$logf"; }
  mv "$tmpbin/$binary" "$out"
  rm -rf "$tmpbin"
  log "$component $version: built in $((SECONDS - t0))s"
}

build_kwok() {
  go_install_cached kwok "$KWOK_VERSION" kwok "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" \
    "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=$KUBERNETES_VERSION"
}

# helm's own Makefile stamps the version into internal/version; without it `helm version` prints
# only the module's go.mod state.
build_helm() {
  go_install_cached helm "$HELM_VERSION" helm "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" \
    "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean" \
    "cold: about 75s on 2 cores; cached afterwards"
}

build_etcd
build_kwok
build_kubernetes
((WITH_HELM)) && build_helm
exit 0
