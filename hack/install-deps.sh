#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build and test Basalt.
# Only Debian packages; idempotent; prints nothing when everything is present.
#   --build-only   only what building the binaries needs (no test tools, no Go check): the
#                  container image build (build/Dockerfile) uses it
set -euo pipefail

BUILD_ONLY=0
for a in "$@"; do
  case $a in
    --build-only) BUILD_ONLY=1 ;;
    *) echo "install-deps: unknown flag '$a' (known: --build-only)" >&2; exit 2 ;;
  esac
done

# What the C++ build needs (the libraries of STYLE.md, the compiler and build tools).
BUILD_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  libboost1.81-dev rapidjson-dev libyaml-cpp-dev libabsl-dev libfmt-dev catch2
  prometheus-cpp-dev libssl-dev
)
# What the tests and scripts need on top. clang, its sanitizer and libFuzzer runtimes
# (libclang-rt-14-dev, only recommended by clang) and llvm (llvm-symbolizer, for symbolized
# sanitizer reports) are for hack/test-sanitizers.sh.
TEST_PACKAGES=(clang-format openssl curl ca-certificates procps psmisc jq yq
  clang libclang-rt-14-dev llvm)
PACKAGES=("${BUILD_PACKAGES[@]}")
((BUILD_ONLY)) || PACKAGES+=("${TEST_PACKAGES[@]}")

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null
  if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    echo "install-deps: apt-get install failed for: ${missing[*]}" >&2
    echo "install-deps: check the apt sources (apt-get update) and rerun" >&2
    exit 1
  fi
fi

((BUILD_ONLY)) && exit 0

if ! command -v go >/dev/null 2>&1; then
  echo "install-deps: Go toolchain not found on PATH." >&2
  echo "install-deps: Go >= 1.24 is needed to build kube-apiserver, etcd and KWOK for the test cluster." >&2
  echo "install-deps: install it (Debian: apt-get install golang-go, or your distribution's newer Go) and rerun." >&2
  exit 1
fi
