#!/usr/bin/env bash
# The container images (Dockerfile) can run the binaries the chart deploys, checked without a
# container runtime: every shared library the three binaries and vcctl link (ldd of this build,
# made with the same Debian 12 packages as the image's build stage) comes from a package the
# runtime stage installs or from debian:12-slim itself; the image targets are the images the
# chart and manifests/base deploy; the build stage uses install-deps.sh --build-only.
source "$(dirname "$0")/../lib/testlib.sh"
DOCKERFILE=$BASALT_REPO_ROOT/Dockerfile
BUILD=${BASALT_BUILD_DIR:?}

# Packages of debian:12-slim that the binaries may rely on without installing them.
SLIM_BASE=(libc6 libgcc-s1 libstdc++6)
read -ra runtime_pkgs <<<"$(sed -n 's/^# runtime-packages: //p' "$DOCKERFILE")"
expect_eq "the runtime stage installs exactly the runtime-packages list" \
  "$(sed -n '/^FROM .* AS runtime/,/^FROM/p' "$DOCKERFILE" | grep -v '^#' | grep -o 'ca-certificates libabsl[^\\]*' | xargs)" \
  "${runtime_pkgs[*]}"

for bin in controllers/vc-controller-manager scheduler/vc-scheduler webhook/vc-webhook-manager cli/vcctl; do
  missing=()
  while read -r lib path; do
    [[ -n $path ]] || { missing+=("$lib(not found)"); continue; }
    pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -n1 | cut -d: -f1) || pkg=""
    [[ -z $pkg ]] && pkg=$(dpkg -S "$path" 2>/dev/null | head -n1 | cut -d: -f1)
    if [[ " ${runtime_pkgs[*]} ${SLIM_BASE[*]} " != *" $pkg "* ]]; then missing+=("$lib($pkg)"); fi
  done < <(ldd "$BUILD/$bin" | awk '$2 == "=>" {print $1, $3}')
  expect_eq "libraries of ${bin#*/} not provided by the image" "${missing[*]}" ""
done

# The chart's images are the Dockerfile's targets.
targets=$(sed -n 's/^FROM runtime AS \(.*\)$/\1/p' "$DOCKERFILE" | sort | xargs)
expect_eq "image targets" "$targets" "vc-controller-manager vc-scheduler vc-webhook-manager vcctl"
# vcctl's image is a command line for CI pods, not a component the chart deploys.
targets=${targets% vcctl}
deployed=$(yq -r 'select(.kind == "Deployment") | .spec.template.spec.containers[].image' \
  "$BASALT_REPO_ROOT/manifests/base/deployments.yaml" | sed 's#.*/##; s#:.*##' | sort | xargs)
expect_eq "images manifests/base deploys" "$deployed" "$targets"
expect_contains "the build stage installs with install-deps.sh --build-only" \
  "$(cat "$DOCKERFILE")" "install-deps.sh --build-only"
