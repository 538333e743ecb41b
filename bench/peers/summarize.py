#!/usr/bin/env python3
"""One run of bench/peers/run.sh as one JSON line: pods/s, create->bound percentiles, API
requests by verb and resource (the delta of apiserver_request_total, leases left out),
component RSS and CPU.

pods/s is pods bound / (last bind - start), where start is the scheduler's start for
pre-made gangs (s1, s4) and the first create otherwise. Latency is per pod, from the creation
of what the user created (the pod, the gang or the Job) to the watch event showing its node.
"""
import argparse
import csv
import json
import re
import sys

LINE = re.compile(r'^apiserver_request_total\{(.*)\} ([0-9.e+]+)$')
LABEL = re.compile(r'(\w+)="([^"]*)"')


def requests(path):
    out = {}
    with open(path) as f:
        for line in f:
            m = LINE.match(line.strip())
            if not m:
                continue
            labels = dict(LABEL.findall(m.group(1)))
            # Leases are the KWOK nodes' heartbeats and leader election: they grow with the
            # run's length, not with what the system does per pod.
            if labels.get('resource') == 'leases':
                continue
            key = labels.get('verb', '?') + ' ' + labels.get('resource', '?')
            if labels.get('subresource'):
                key += '/' + labels['subresource']
            out[key] = out.get(key, 0) + float(m.group(2))
    return out


def pct(values, p):
    if not values:
        return 0.0
    values = sorted(values)
    return float(values[min(len(values) - 1, int(p * len(values)))])


def line():
    r = json.loads(sys.stdin.readline())
    print(f"  {r['scenario']} {r['system']}: {r['bound']}/{r['pods']} bound, "
          f"{r['pods_per_s']:.1f} pods/s, p50 {r['p50_ms']:.0f} ms, p99 {r['p99_ms']:.0f} ms, "
          f"{r['requests_per_pod']:.2f} requests/pod ({r['writes_per_pod']:.2f} writes)")


def main():
    if sys.argv[1:] == ['--line']:
        return line()
    ap = argparse.ArgumentParser()
    for a in ('scenario', 'system', 'csv', 'metrics-before', 'metrics-after', 'procs', 'extra'):
        ap.add_argument('--' + a, required=True)
    for a in ('rep', 'pods', 'start-ms', 'nodes'):
        ap.add_argument('--' + a, type=int, required=True)
    a = ap.parse_args()
    created, bound = [], []
    with open(a.csv) as f:
        for row in csv.DictReader(f):
            c, b = int(row['created_ms']), int(row['bound_ms'])
            if b:
                bound.append(b)
                if c:
                    created.append((c, b))
    extra = json.loads(a.extra)
    pre_made = a.scenario.startswith(('s1', 's4'))
    first_create = min((c for c, _ in created), default=a.start_ms)
    start = a.start_ms if pre_made else min(first_create, a.start_ms)
    end = max(bound, default=start)
    secs = max(end - start, 1) / 1000.0
    pods_per_s = extra.get('ceiling_pods_per_s') or (len(bound) / secs if bound else 0.0)
    lat = [b - c for c, b in created] if not pre_made else [b - start for b in bound]
    before, after = requests(a.metrics_before), requests(a.metrics_after)
    delta = {k: after[k] - before.get(k, 0) for k in after if after[k] - before.get(k, 0) > 0}
    n = max(a.pods, 1)
    writes = sum(v for k, v in delta.items() if k.split(' ')[0] in ('POST', 'PUT', 'PATCH', 'DELETE'))
    rec = {
        'scenario': a.scenario, 'system': a.system, 'rep': a.rep, 'nodes': a.nodes,
        'pods': a.pods, 'bound': len(bound) if a.system != 'ceiling' else a.pods,
        'seconds': secs, 'pods_per_s': pods_per_s,
        'first_bind_ms': (min(bound) - start) if bound else None,
        'p50_ms': pct(lat, 0.5), 'p99_ms': pct(lat, 0.99),
        'requests': delta, 'requests_per_pod': sum(delta.values()) / n, 'writes_per_pod': writes / n,
        'procs': json.loads(a.procs), 'csv': a.csv, 'start_ms': start,
    }
    rec.update(extra)
    json.dump(rec, sys.stdout, sort_keys=True)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
