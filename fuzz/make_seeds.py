#!/usr/bin/env python3
"""Regenerates the seed corpora under fuzz/corpus/ from the examples and fixtures.

Seeds are small, meaningful inputs: Basalt's examples (examples/, the same files as the
requirements article's), the objects the API server sends (a scheduled Pod, a KWOK Node, a
PodGroup with status...), AdmissionReviews for every webhook endpoint, kubeconfigs in the
shapes up.sh, kubectl and in-cluster tooling write, and the scheduler configurations of the
chart and the unit tests. Files named repro-* are reproducers of defects found by fuzzing;
this script writes them too, from the issue that reported them.

Usage: fuzz/make_seeds.py   (idempotent; commit what changes)
"""
import base64
import json
import os
import pathlib

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"


def write(corpus, name, data):
    d = CORPUS / corpus
    d.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    (d / name).write_bytes(data)


def compact(obj):
    return json.dumps(obj, separators=(",", ":"))


def load_yaml_docs(path):
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


# --- objects ---------------------------------------------------------------------------

job = load_yaml_docs(ROOT / "examples" / "job-bert-pretrain.yaml")[0]
job["metadata"]["namespace"] = "default"
queue = load_yaml_docs(ROOT / "examples" / "queue-ai-training.yaml")[0]
priority_classes = load_yaml_docs(ROOT / "examples" / "priorityclasses.yaml")

job_with_status = json.loads(json.dumps(job))
job_with_status["metadata"].update(
    {"uid": "6f0c3c1e-1d2b-4a57-9a43-2b4c6f1f0a11", "resourceVersion": "4711",
     "creationTimestamp": "2024-05-01T10:00:00Z", "generation": 2,
     "annotations": {"scheduling.volcano.sh/queue-name": "ai-training"}})
job_with_status["spec"]["queue"] = "ai-training"
job_with_status["spec"]["maxRetry"] = 3
job_with_status["spec"]["tasks"].append({
    "name": "ps", "replicas": 1, "minAvailable": 1,
    "policies": [{"events": ["PodFailed"], "action": "RestartTask"},
                 {"exitCode": 3, "action": "CompleteJob"}],
    "dependsOn": {"name": ["worker"], "iteration": "any"},
    "template": {"spec": {"containers": [{"name": "ps", "image": "ps:1",
                                          "resources": {"requests": {"cpu": "500m"}}}]}}})
job_with_status["status"] = {
    "state": {"phase": "Running", "reason": "", "lastTransitionTime": "2024-05-01T10:01:00Z"},
    "minAvailable": 4, "running": 4, "pending": 1, "version": 2, "retryCount": 1,
    "taskStatusCount": {"worker": {"phase": {"Running": 4}}, "ps": {"phase": {"Pending": 1}}},
    "conditions": [{"status": "Pending", "lastTransitionTime": "2024-05-01T10:00:00Z"},
                   {"status": "Running", "lastTransitionTime": "2024-05-01T10:01:00.5Z"}],
    "controlledResources": {"plugin-svc": "svc"}, "runningDuration": "1m0s"}

podgroup = {
    "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
    "metadata": {"name": "bert-pretrain-6f0c3c1e", "namespace": "default",
                 "uid": "0a7e0b1c-9d7e-4b8a-8d0c-7a1f6e2b3c4d", "resourceVersion": "4712",
                 "creationTimestamp": "2024-05-01T10:00:00Z",
                 "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                                      "name": "bert-pretrain",
                                      "uid": "6f0c3c1e-1d2b-4a57-9a43-2b4c6f1f0a11",
                                      "controller": True, "blockOwnerDeletion": True}]},
    "spec": {"minMember": 4, "minTaskMember": {"worker": 4}, "queue": "ai-training",
             "priorityClassName": "offline-batch",
             "minResources": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "4"}},
    "status": {"phase": "Running", "running": 4,
               "conditions": [{"type": "Scheduled", "status": "True",
                               "transitionID": "b1f1c3d2", "reason": "tasks in gang are ready",
                               "lastTransitionTime": "2024-05-01T10:00:30Z"}]}}

queue_with_status = json.loads(json.dumps(queue))
queue_with_status["spec"].update({"reclaimable": True, "parent": "root",
                                  "deserved": {"cpu": "100", "nvidia.com/gpu": "4"},
                                  "guarantee": {"resource": {"cpu": "10"}}})
queue_with_status["status"] = {"state": "Open", "running": 1, "pending": 2, "inqueue": 1,
                               "allocated": {"cpu": "32", "memory": "256Gi",
                                             "nvidia.com/gpu": "4"}}

template_spec = job["spec"]["tasks"][0]["template"]["spec"]
pod = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "bert-pretrain-worker-0", "namespace": "default",
                 "uid": "f3b0c442-98fc-1c14-9afb-f4c8996fb924", "resourceVersion": "4720",
                 "creationTimestamp": "2024-05-01T10:00:05Z",
                 "labels": {"volcano.sh/job-name": "bert-pretrain", "volcano.sh/task-spec": "worker"},
                 "annotations": {"scheduling.k8s.io/group-name": "bert-pretrain-6f0c3c1e",
                                 "volcano.sh/task-index": "0"},
                 "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                                      "name": "bert-pretrain",
                                      "uid": "6f0c3c1e-1d2b-4a57-9a43-2b4c6f1f0a11",
                                      "controller": True}]},
    "spec": dict(template_spec, schedulerName="volcano", nodeName="kwok-node-0", priority=100,
                 priorityClassName="offline-batch",
                 initContainers=[{"name": "init", "image": "busybox",
                                  "resources": {"requests": {"cpu": "16"}}}],
                 tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists",
                               "effect": "NoSchedule"}],
                 nodeSelector={"topology.basalt.dev/rack": "rack-0"},
                 overhead={"cpu": "250m"},
                 affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                     {"topologyKey": "kubernetes.io/hostname",
                      "labelSelector": {"matchLabels": {"volcano.sh/job-name": "bert-pretrain"}}}]}}),
    "status": {"phase": "Running", "startTime": "2024-05-01T10:00:06Z",
               "conditions": [{"type": "PodScheduled", "status": "True",
                               "lastTransitionTime": "2024-05-01T10:00:05Z"}],
               "containerStatuses": [{"name": "training", "ready": True, "restartCount": 0,
                                      "state": {"running": {"startedAt": "2024-05-01T10:00:07Z"}}}]}}
pod["spec"]["containers"][0]["ports"] = [{"containerPort": 2222, "hostPort": 2222, "protocol": "TCP"}]

node = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "kwok-node-0", "uid": "c0ffee00-0000-4000-8000-000000000000",
                 "resourceVersion": "100", "creationTimestamp": "2024-05-01T09:00:00Z",
                 "labels": {"kubernetes.io/hostname": "kwok-node-0", "type": "kwok",
                            "topology.basalt.dev/rack": "rack-0",
                            "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
                 "annotations": {"kwok.x-k8s.io/node": "fake"}},
    "spec": {"taints": [{"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"},
                        {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
                         "timeAdded": "2024-05-01T09:30:00Z"}]},
    "status": {"capacity": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8", "pods": "110"},
               "allocatable": {"cpu": "31500m", "memory": "255Gi", "nvidia.com/gpu": "8",
                               "pods": "110"},
               "conditions": [{"type": "Ready", "status": "True",
                               "lastHeartbeatTime": "2024-05-01T10:00:00Z",
                               "lastTransitionTime": "2024-05-01T09:00:00Z"}]}}

command = {"apiVersion": "bus.volcano.sh/v1alpha1", "kind": "Command",
           "metadata": {"name": "bert-pretrain-abortjob-x7k2p", "namespace": "default",
                        "generateName": "bert-pretrain-abortjob-",
                        "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1",
                                             "kind": "Job", "name": "bert-pretrain",
                                             "uid": "6f0c3c1e-1d2b-4a57-9a43-2b4c6f1f0a11",
                                             "controller": True}]},
           "action": "AbortJob", "reason": "user request",
           "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                      "name": "bert-pretrain", "uid": "6f0c3c1e-1d2b-4a57-9a43-2b4c6f1f0a11"}}
namespace = {"apiVersion": "v1", "kind": "Namespace",
             "metadata": {"name": "team-a",
                          "annotations": {"scheduling.volcano.sh/queue-name": "ai-training"}},
             "status": {"phase": "Active"}}
lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
         "metadata": {"name": "vc-scheduler", "namespace": "volcano-system",
                      "resourceVersion": "77"},
         "spec": {"holderIdentity": "vc-scheduler-0_5d2c", "leaseDurationSeconds": 15,
                  "acquireTime": "2024-05-01T10:00:00.123456Z",
                  "renewTime": "2024-05-01T10:05:00.654321Z", "leaseTransitions": 3}}
event = {"apiVersion": "v1", "kind": "Event",
         "metadata": {"name": "bert-pretrain.17c0a1b2c3d4e5f6", "namespace": "default"},
         "involvedObject": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                            "name": "bert-pretrain", "namespace": "default",
                            "uid": "6f0c3c1e-1d2b-4a57-9a43-2b4c6f1f0a11"},
         "reason": "PodGroupPending", "message": "waiting for 4 pods", "type": "Normal",
         "count": 3, "firstTimestamp": "2024-05-01T10:00:00Z",
         "lastTimestamp": "2024-05-01T10:02:00Z",
         "eventTime": "2024-05-01T10:00:00.000001Z",
         "source": {"component": "vc-controller-manager"},
         "reportingComponent": "vc-controller-manager", "reportingInstance": "vc-0"}

objects = {
    "job-bert-pretrain.json": job,
    "job-with-status.json": job_with_status,
    "queue-ai-training.json": queue,
    "queue-with-status.json": queue_with_status,
    "priorityclass-online-critical.json": priority_classes[0],
    "priorityclass-offline-batch.json": priority_classes[1],
    "podgroup-running.json": podgroup,
    "pod-scheduled.json": pod,
    "node-kwok.json": node,
    "command-abortjob.json": command,
    "namespace-team-a.json": namespace,
    "lease-scheduler.json": lease,
    "event-podgroup-pending.json": event,
}
for name, obj in objects.items():
    write("api_objects", name, compact(obj))
write("api_objects", "empty-object.json", "{}")

# --- admission reviews -----------------------------------------------------------------
# The first byte picks the endpoint (fuzz/admission_fuzzer.cc): index in kEndpoints.
ENDPOINTS = ["/jobs/mutate", "/jobs/validate", "/queues/mutate", "/queues/validate",
             "/podgroups/mutate", "/podgroups/validate", "/pods/validate"]
GVR = {"Job": ("batch.volcano.sh", "v1alpha1", "jobs"),
       "Queue": ("scheduling.volcano.sh", "v1beta1", "queues"),
       "PodGroup": ("scheduling.volcano.sh", "v1beta1", "podgroups"),
       "Pod": ("", "v1", "pods")}


def review(kind, op, obj, old=None, uid="705ab4f5-6393-11e8-b7cc-42010a800002", ns="default"):
    g, v, r = GVR[kind]
    req = {"uid": uid, "kind": {"group": g, "version": v, "kind": kind},
           "resource": {"group": g, "version": v, "resource": r},
           "requestKind": {"group": g, "version": v, "kind": kind},
           "operation": op, "userInfo": {"username": "alice", "uid": "u-1",
                                          "groups": ["system:authenticated"]},
           "object": obj, "oldObject": old, "dryRun": False,
           "options": {"apiVersion": "meta.k8s.io/v1", "kind": f"{op.capitalize()}Options"}}
    name = (obj or old or {}).get("metadata", {}).get("name")
    if name:
        req["name"] = name
    if kind != "Queue":
        req["namespace"] = ns
    return compact({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                    "request": req})


def seed(endpoint, body):
    return bytes([ENDPOINTS.index(endpoint)]) + body.encode()


job_in_queue = json.loads(json.dumps(job))
job_in_queue["spec"]["queue"] = "ai-training"
job_updated = json.loads(json.dumps(job_in_queue))
job_updated["spec"]["minAvailable"] = 2
job_updated["spec"]["tasks"][0]["replicas"] = 2
job_policies = json.loads(json.dumps(job))
job_policies["spec"]["policies"] = load_yaml_docs(ROOT / "e2e" / "crds" / "testdata" /
                                                  "job-policies.yaml")[0]["policies"]
job_policies["spec"]["plugins"] = {"svc": [], "env": [], "ssh": ["--no-root"]}
job_policies["spec"]["tasks"][0]["policies"] = [{"exitCode": 3, "action": "CompleteJob"}]
pod_new = json.loads(json.dumps(pod))
del pod_new["status"]
del pod_new["spec"]["nodeName"]
queue_child = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
               "metadata": {"name": "child-c"},
               "spec": {"parent": "parent-q", "weight": 1, "capability": {"cpu": "5"}}}
queue_closed = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                "metadata": {"name": "closed-q"}, "spec": {"weight": 1},
                "status": {"state": "Closed"}}
pg_new = json.loads(json.dumps(podgroup))
del pg_new["status"]

reviews = {
    "job-mutate-create": seed("/jobs/mutate", review("Job", "CREATE", job)),
    "job-validate-create": seed("/jobs/validate", review("Job", "CREATE", job_in_queue)),
    "job-validate-update": seed("/jobs/validate",
                                review("Job", "UPDATE", job_updated, job_in_queue)),
    "job-mutate-policies": seed("/jobs/mutate", review("Job", "CREATE", job_policies)),
    "job-validate-policies": seed("/jobs/validate", review("Job", "CREATE", job_policies)),
    "job-validate-status-subresource": seed(
        "/jobs/validate",
        review("Job", "UPDATE", job_with_status, job_in_queue).replace(
            '"operation":"UPDATE"', '"subResource":"status","operation":"UPDATE"')),
    "queue-mutate-create": seed("/queues/mutate", review("Queue", "CREATE", queue)),
    "queue-validate-create": seed("/queues/validate", review("Queue", "CREATE", queue)),
    "queue-validate-child": seed("/queues/validate", review("Queue", "CREATE", queue_child)),
    "queue-validate-delete": seed("/queues/validate",
                                  review("Queue", "DELETE", None, queue_with_status)),
    "queue-validate-delete-closed": seed("/queues/validate",
                                         review("Queue", "DELETE", None, queue_closed)),
    "podgroup-mutate-create": seed("/podgroups/mutate", review("PodGroup", "CREATE", pg_new)),
    "podgroup-validate-create": seed("/podgroups/validate",
                                     review("PodGroup", "CREATE", pg_new, ns="team-a")),
    "pod-validate-create": seed("/pods/validate", review("Pod", "CREATE", pod_new)),
}
for name, data in reviews.items():
    write("admission", name, data)

# --- kubeconfigs -----------------------------------------------------------------------
# The fuzzer's directory holds ca.crt, client.crt, client.key and token (relative paths).
pem = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n"
b64 = base64.b64encode(pem.encode()).decode()
kubeconfigs = {
    "admin-client-cert-data.yaml": {
        "apiVersion": "v1", "kind": "Config", "current-context": "basalt-test",
        "clusters": [{"name": "basalt-test", "cluster": {
            "server": "https://127.0.0.1:6443", "certificate-authority-data": b64}}],
        "users": [{"name": "admin", "user": {"client-certificate-data": b64,
                                             "client-key-data": b64}}],
        "contexts": [{"name": "basalt-test", "context": {"cluster": "basalt-test",
                                                         "user": "admin"}}]},
    "relative-files-token-file.yaml": {
        "apiVersion": "v1", "kind": "Config", "current-context": "sa",
        "clusters": [{"name": "c", "cluster": {"server": "https://kube.example:443/prefix",
                                               "certificate-authority": "ca.crt",
                                               "tls-server-name": "kubernetes.default.svc"}}],
        "users": [{"name": "sa", "user": {"tokenFile": "token"}},
                  {"name": "cert", "user": {"client-certificate": "client.crt",
                                            "client-key": "client.key"}}],
        "contexts": [{"name": "sa", "context": {"cluster": "c", "user": "sa",
                                                "namespace": "volcano-system"}},
                     {"name": "cert", "context": {"cluster": "c", "user": "cert"}}]},
    "token-insecure.yaml": {
        "apiVersion": "v1", "kind": "Config", "current-context": "dev",
        "clusters": [{"name": "dev", "cluster": {"server": "https://[::1]:6443",
                                                 "insecure-skip-tls-verify": True}}],
        "users": [{"name": "dev", "user": {"token": "abc.def"}}],
        "contexts": [{"name": "dev", "context": {"cluster": "dev", "user": "dev"}}]},
    "exec-user.yaml": {
        "apiVersion": "v1", "kind": "Config", "current-context": "gke",
        "clusters": [{"name": "gke", "cluster": {"server": "https://34.1.2.3"}}],
        "users": [{"name": "gke", "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "gke-gcloud-auth-plugin"}}}],
        "contexts": [{"name": "gke", "context": {"cluster": "gke", "user": "gke"}}],
        "preferences": {}},
}
for name, cfg in kubeconfigs.items():
    write("kubeconfig", name, yaml.safe_dump(cfg, sort_keys=False))
write("kubeconfig", "empty.yaml", "")

# --- scheduler configurations ----------------------------------------------------------
chart_conf = load_yaml_docs(ROOT / "manifests" / "base" / "scheduler-config.yaml")[0]
write("scheduler_conf", "chart-default.yaml", chart_conf["data"]["volcano-scheduler.conf"])
# The requirements article's binpack snippet (/work/shared/examples/snippets).
write("scheduler_conf", "article-binpack.yaml",
      "actions: \"enqueue, allocate, backfill\"\ntiers:\n  - plugins:\n      - name: binpack\n"
      "        arguments:\n          binpack.weight: 0.1\n")
write("scheduler_conf", "preempt-reclaim-hierarchy.yaml", """\
actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
    enableJobStarving: true
  - name: conformance
- plugins:
  - name: drf
    enableHierarchy: true
  - name: predicates
    arguments:
      predicate.GPUSharingEnable: false
  - name: nodeorder
    arguments:
      nodeaffinity.weight: 2
      podaffinity.weight: 2
      leastrequested.weight: 1
      balancedresource.weight: 1
  - name: binpack
    arguments:
      binpack.weight: 10
      binpack.cpu: 1
      binpack.memory: 1
      binpack.resources: nvidia.com/gpu, example.com/foo
      binpack.resources.nvidia.com/gpu: 5
  - name: overcommit
    arguments:
      overcommit-factor: 1.5
  - name: interpodaffinity
configurations:
- name: allocate
  arguments:
    predicateErrorCacheEnable: true
- name: enqueue
  arguments:
    overcommit-factor: 1.2
metrics:
  type: prometheus
""")
write("scheduler_conf", "proportion-only.yaml", """\
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: proportion
    enableQueueOrder: true
    enabledOverused: true
    enabledAllocatable: true
""")

# --- quantities ------------------------------------------------------------------------
quantities = ["0", "1", "500m", "1.5", "64Gi", "2e3", "1E-3", "1k", "100Mi", "-1", "+3", ".5",
              "1n", "12u", "0.000000001", "9223372036854775807", "8Ei", "1e100000",
              "123456789012345678901234567890", "1.5Gi", "256Gi", "31500m", "110",
              "8", "0.5", "\"2Gi\"", "1e400", "-0.0001m"]
for i, q in enumerate(quantities):
    write("quantity", f"seed-{i:02d}", q)

# --- reproducers (issue 11, defect 5) ----------------------------------------------------
# Each crashed its fuzzer when found; keep them so a regression is caught at the first input.
# Quantity: parses, but its canonical form "90e100011" does not (exponent limit).
write("quantity", "repro-canonical-exponent", "9000000000000e+100000")
# Timestamps after 2262 overflow int64 nanoseconds in common/api/time.cc.
repro_pod = json.loads(json.dumps(pod))
repro_pod["status"]["startTime"] = "8970-05-01T10:00:00Z"
write("api_objects", "repro-pod-starttime-8970.json", compact(repro_pod))
# Total replicas overflow int64 in validate_job.cc / mutate_job.cc on a direct AdmissionReview
# (the API server's CRD schema would refuse them; the webhook sums them unchecked).
repro_job = json.loads(json.dumps(job_in_queue))
repro_job["spec"]["tasks"][0]["replicas"] = 9223372036854775807
repro_job["spec"]["tasks"].append(dict(repro_job["spec"]["tasks"][0], name="worker2"))
write("admission", "repro-job-replicas-overflow-validate",
      seed("/jobs/validate", review("Job", "CREATE", repro_job)))
write("admission", "repro-job-replicas-overflow-mutate",
      seed("/jobs/mutate", review("Job", "CREATE", repro_job)))
# ... and timestamps before 1678 the other way (found by fuzz_api_objects: a Lease renewTime).
repro_lease = json.loads(json.dumps(lease))
repro_lease["spec"]["renewTime"] = "1012-05-01T10:05:00.654321Z"
write("api_objects", "repro-lease-renewtime-1012.json", compact(repro_lease))
