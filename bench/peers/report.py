#!/usr/bin/env python3
"""bench/peers results.jsonl -> a markdown report (one table per scenario, each figure also as
a ratio to the raw bind ceiling and to Volcano measured in the same run) and, when matplotlib
is importable, one PNG per scenario: cumulative pods bound over time, one line per system.
"""
import argparse
import csv
import json
import os
import statistics
from collections import defaultdict

ORDER = ['ceiling', 'basalt', 'basalt-shadow', 'volcano', 'kube50', 'kube2000']
NAMES = {'ceiling': 'raw bind ceiling (16 in flight)', 'basalt': 'Basalt',
         'basalt-shadow': 'Basalt, --bare-pod-podgroups=false (shadow jobs)',
         'volcano': 'Volcano v1.15.1', 'kube50': 'kube-scheduler, QPS 50',
         'kube2000': 'kube-scheduler, QPS 2000'}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, digits=1):
    return '–' if x is None else f'{x:.{digits}f}'


def ratio(a, b):
    return '–' if not a or not b else f'{a / b:.2f}'


def top_writes(runs, n):
    tot = defaultdict(float)
    for r in runs:
        for k, v in r['requests'].items():
            if k.split(' ')[0] in ('POST', 'PUT', 'PATCH', 'DELETE'):
                tot[k] += v / max(r['pods'], 1) / len(runs)
    return ', '.join(f'{k} {v:.2f}' for k, v in sorted(tot.items(), key=lambda kv: -kv[1])[:n])


def procs(runs):
    names = sorted({p for r in runs for p in r['procs']})
    out = []
    for p in names:
        rss = med([r['procs'][p]['rss_mib'] for r in runs if p in r['procs']])
        cpu = med([r['procs'][p]['cpu_s'] * 1000 / max(r['pods'], 1) for r in runs if p in r['procs']])
        out.append(f'{p} {fmt(rss, 0)} MiB, {fmt(cpu, 2)} CPU-s/1k pods')
    return '; '.join(out) or '–'


def plot(scenario, runs, path):
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4))
    for sys_ in ORDER:
        rs = [r for r in runs if r['system'] == sys_ and os.path.exists(r['csv'])]
        if not rs:
            continue
        r = rs[0]
        with open(r['csv']) as f:
            ts = sorted((int(row['bound_ms']) - r['start_ms']) / 1000.0
                        for row in csv.DictReader(f) if int(row['bound_ms']))
        if ts:
            ax.step(ts, range(1, len(ts) + 1), where='post', label=NAMES[sys_])
    ax.set_xlabel('seconds since start')
    ax.set_ylabel('pods bound')
    ax.set_title(scenario)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--results', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--plots', required=True)
    a = ap.parse_args()
    runs = [json.loads(line) for line in open(a.results) if line.strip()]
    by = defaultdict(lambda: defaultdict(list))
    for r in runs:
        by[r['scenario']][r['system']].append(r)
    lines = ['# bench/peers report', '',
             f'{len(runs)} runs; nodes: {sorted({r["nodes"] for r in runs})}. Medians over '
             'repetitions (each value in brackets); ratios are of medians measured in this run.', '']
    for sc in sorted(by):
        systems = by[sc]
        base = {s: med([r['pods_per_s'] for r in systems[s]]) for s in systems}
        title = {'s1': 'pre-made gangs of 4, scheduler started after creation; start -> all bound',
                 's2-1pod': 'one-pod vcjobs, controllers and scheduler running; first create -> all bound',
                 's2-gang20': '20-pod vcjobs; first create -> all bound',
                 's3': 'bare pods, no PodGroup; first create -> all bound',
                 's4': 'scheduler restarted with the s1 pods bound in its caches; restart -> one new '
                       'gang of 4 bound (read "first bind s" and p99; pods/s is 4 pods over that time)'}
        key = next((k for k in title if sc == k or sc.startswith(k + '-')), None)
        lines += [f'## {sc}', '', title.get(key, ''), '',
                  '| system | pods/s | ÷ ceiling | ÷ Volcano | first bind s | p50 s | p99 s | '
                  'req/pod | writes/pod | top writes per pod | components |',
                  '|---|---|---|---|---|---|---|---|---|---|---|']
        for s in ORDER:
            if s not in systems:
                continue
            rs = systems[s]
            each = ', '.join(fmt(r['pods_per_s']) for r in rs)
            incomplete = sum(1 for r in rs if r['bound'] < r['pods'])
            note = f' ({incomplete} run(s) incomplete)' if incomplete else ''
            fb = med([r['first_bind_ms'] / 1000 if r['first_bind_ms'] is not None else None for r in rs])
            lines.append(
                f'| {NAMES[s]}{note} | {fmt(base[s])} [{each}] | {ratio(base[s], base.get("ceiling"))} | '
                f'{ratio(base[s], base.get("volcano"))} | {fmt(fb, 2)} | '
                f'{fmt(med([r["p50_ms"] / 1000 for r in rs]), 2)} | '
                f'{fmt(med([r["p99_ms"] / 1000 for r in rs]), 2)} | '
                f'{fmt(med([r["requests_per_pod"] for r in rs]), 2)} | '
                f'{fmt(med([r["writes_per_pod"] for r in rs]), 2)} | {top_writes(rs, 4)} | {procs(rs)} |')
        png = os.path.join(a.plots, f'{sc}.png')
        if plot(sc, [r for s in systems for r in systems[s]], png):
            lines += ['', f'![{sc}]({os.path.basename(png)})']
        lines.append('')
    with open(a.out, 'w') as f:
        f.write('\n'.join(lines))
    print('\n'.join(lines))


if __name__ == '__main__':
    main()
