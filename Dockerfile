# The three Basalt images (what manifests/helm/basalt deploys), built from this checkout:
#
#   for c in vc-controller-manager vc-scheduler vc-webhook-manager; do
#     docker build --target "$c" -t "basalt/$c:0.1.0" .
#   done
#
# and `--target vcctl` the command line (docs/vcctl.md), e.g. for a CI step running in a pod
# (it uses the pod's service account). One build stage compiles all the binaries (Release, no tests or benchmarks) on Debian 12 with
# the packages hack/install-deps.sh --build-only installs; each image is debian:12-slim with only
# the shared libraries the binaries link (e2e/manifests/image_test.sh checks that list against
# `ldd` of the binaries), running as a non-root user.
ARG DEBIAN_IMAGE=debian:12

FROM ${DEBIAN_IMAGE} AS build
COPY hack/install-deps.sh /tmp/install-deps.sh
RUN /tmp/install-deps.sh --build-only && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /out -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DBASALT_BUILD_TESTS=OFF -DBASALT_BUILD_BENCH=OFF \
 && cmake --build /out --target vc-controller-manager vc-scheduler vc-webhook-manager vcctl \
 && strip /out/controllers/vc-controller-manager /out/scheduler/vc-scheduler \
      /out/webhook/vc-webhook-manager /out/cli/vcctl

FROM ${DEBIAN_IMAGE}-slim AS runtime
# runtime-packages: ca-certificates libabsl20220623 libfmt9 libprometheus-cpp-core1.0 libssl3 libyaml-cpp0.7 tzdata
# (tzdata: the IANA time zones of CronJob spec.timeZone, read by the controller and the webhook)
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      ca-certificates libabsl20220623 libfmt9 libprometheus-cpp-core1.0 libssl3 libyaml-cpp0.7 tzdata \
 && rm -rf /var/lib/apt/lists/*
# 65532: the conventional "nonroot" uid; the Deployments run with runAsNonRoot.
USER 65532:65532

FROM runtime AS vc-controller-manager
COPY --from=build /out/controllers/vc-controller-manager /usr/local/bin/
ENTRYPOINT ["/usr/local/bin/vc-controller-manager"]

FROM runtime AS vc-scheduler
COPY --from=build /out/scheduler/vc-scheduler /usr/local/bin/
ENTRYPOINT ["/usr/local/bin/vc-scheduler"]

FROM runtime AS vc-webhook-manager
COPY --from=build /out/webhook/vc-webhook-manager /usr/local/bin/
ENTRYPOINT ["/usr/local/bin/vc-webhook-manager"]

FROM runtime AS vcctl
COPY --from=build /out/cli/vcctl /usr/local/bin/
ENTRYPOINT ["/usr/local/bin/vcctl"]
