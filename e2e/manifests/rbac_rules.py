#!/usr/bin/env python3
"""Least privilege, checked both ways: e2e/manifests/rbac-rules.yaml (what each Basalt binary
calls on the API server, and why) against the code, and against the chart's rendered RBAC.

  rbac_rules.py --repo DIR --table FILE --rbac RENDERED.yaml [--namespace NS]

1. The code: every API call site in controllers/, webhook/, scheduler/ and common/ (outside
   common/client/, which implements the verbs) is found by pattern:
     - a call of a Client method on a client (client_->Create(...), ctx_.client->Patch(...));
     - an informer (InformerFor(...) or `.source.resource = client::X()`: list and watch);
     - a ResourcePath(client::X(), ...) built for a raw request.
   (common/client/ and common/informer/ are the mechanism and are not scanned.)
   A call whose resource is a helper (client::Pods(), whose group and plural are read from
   common/client/resource.cc) and whose verb follows from the method (Patch(..., "status") is
   patch on the status subresource) is resolved by this script. Any other call site (the
   resource or verb is a variable) must be claimed by an `indirect` entry of the table, which
   says what it grants; so must every non-call need (blockOwnerDeletion). Every resource the
   component's code names (a client::X() helper, a ResourceRef literal, a plugin object's
   apiVersion/kind) must be granted some verb.
   A file belongs to the component whose directory holds it; a shared file under common/ to
   each component listed under `reaches` with the line of its code that runs it, and every
   other component must list it under `notReaches` with a pattern its code must not contain.
   The verbs so derived per component must equal the table's rules (group, resource, verb):
   a verb the code uses and the table lacks fails, and so does a granted verb no call needs.
2. The chart: every rule of the rendered RBAC, expanded to (component, scope, group, resource,
   verb, resourceNames), must equal the table's rules expanded the same way.
Prints one line per finding; exits 1 if there is any.
"""
import argparse
import os
import re
import sys

import yaml

CALL_METHODS = {
    "Get": ["get"],
    "List": ["list"],
    "ListAll": ["list"],
    "Watch": ["watch"],
    "Create": ["create"],
    "Update": ["update"],
    "UpdateStatus": ["update"],
    "Patch": ["patch"],
    "Delete": ["delete"],
    "CreateSubresource": ["create"],
    "Bind": ["create"],
    "Evict": ["create"],
    "Raw": None,  # verb and path built by the caller
}
# A client: `client_`, `client`, `ctx_.client`, `ctx.client`, `(*client)`.
RECEIVER = r"(?:\bclient_|\bclient|\bctx_?\.client|\(\*client\))\s*(?:->|\.)\s*"
CALL_RE = re.compile(RECEIVER + r"(" + "|".join(CALL_METHODS) + r")\s*\(")
INFORMER_RE = re.compile(r"\bInformerFor\s*\(")
SOURCE_RE = re.compile(r"\.source\.resource\s*=\s*client::(\w+)\(\)")
PATH_RE = re.compile(r"\bResourcePath\s*\(\s*client::(\w+)\(\)")
HELPER_RE = re.compile(r"\bclient::(\w+)\(\)")
# ResourceRef{"apps", "v1", "replicasets", ...} or a braced return of one.
LITERAL_RE = re.compile(r"(?:ResourceRef\s*)?\{\s*\"([a-z0-9.\-]*)\",\s*\"(v[0-9a-z]+)\",\s*\"([a-z]+)\"")
# Objects a job plugin creates or deletes: NewOwnedObject(job, "v1", "Secret", ...) and
# ObjectRef{"networking.k8s.io/v1", "NetworkPolicy", ...}.
OWNED_RE = re.compile(r"NewOwnedObject\(\s*\w+,\s*\"([\w./]+)\",\s*\"(\w+)\"")
OBJREF_RE = re.compile(r"\{\s*\"([\w.]+/)?(v[0-9a-z]+)\",\s*\"([A-Z]\w+)\",")
COMPONENT_DIRS = ("controllers/", "webhook/", "scheduler/")
SCANNED = ("controllers", "webhook", "scheduler", "common")
# The mechanism, not callers: common/client/ implements the verbs; common/informer/ lists and
# watches the resource given at each InformerFor call site (which is scanned), nothing else.
LIBRARIES = ("common/client/", "common/informer/")


TOKEN_RE = re.compile(
    r"//[^\n]*"  # line comment
    r"|/\*.*?\*/"  # block comment
    r"|R\"(?P<delim>[^(\s]*)\(.*?\)(?P=delim)\""  # raw string
    r"|\"(?:\\.|[^\"\\\n])*\""  # string
    r"|'(?:\\.|[^'\\\n])'",  # char literal
    re.S)


def strip_comments(text):
    """C++ text with comments blanked and each raw string and char literal replaced by a plain
    one (so quotes and parentheses inside them do not count); line numbers stay."""
    def repl(m):
        tok = m.group(0)
        newlines = "\n" * tok.count("\n")
        if tok.startswith("//"):
            return ""
        if tok.startswith("/*"):
            return newlines
        if tok.startswith("R"):
            return 'R"raw"' + newlines
        if tok.startswith("'"):
            return "' '"
        return tok
    return TOKEN_RE.sub(repl, text)


def balanced(text, open_at):
    """The text between the parenthesis at open_at and its match."""
    depth, i = 0, open_at
    while i < len(text):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[open_at + 1:i]
        elif text[i] == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        i += 1
    return text[open_at + 1:]


def split_args(args):
    out, depth, cur, i = [], 0, "", 0
    while i < len(args):
        c = args[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
        i += 1
    if cur.strip():
        out.append(cur.strip())
    return out


def plural(kind):
    """As ResourceOf in controllers/job/controller/job_reconciler.cc."""
    p = kind.lower()
    if p.endswith("y"):
        return p[:-1] + "ies"
    if p.endswith("s"):
        return p + "es"
    return p + "s"


def read_helpers(repo):
    """client::X() -> (group, resource) from common/client/resource.cc."""
    text = open(os.path.join(repo, "common/client/resource.cc")).read()
    helpers = {}
    for m in re.finditer(r"ResourceRef (\w+)\(\) \{\s*return Make\(\"([^\"]*)\", \"[^\"]*\", \"([^\"]*)\"", text):
        helpers[m.group(1)] = (m.group(2), m.group(3))
    return helpers


class Site:
    def __init__(self, path, line, text, resource=None, verbs=None):
        self.path, self.line, self.text = path, line, " ".join(text.split())
        self.resource = resource  # (group, resource[/sub]) or None
        self.verbs = verbs  # list or None

    def where(self):
        return f"{self.path}:{self.line}"


def scan(repo, helpers):
    """(call sites, resource mentions) of the code."""
    sites, mentions = [], []
    for top in SCANNED:
        for root, _, files in os.walk(os.path.join(repo, top)):
            for f in sorted(files):
                if not f.endswith((".cc", ".h")):
                    continue
                path = os.path.relpath(os.path.join(root, f), repo)
                if path.startswith(LIBRARIES):
                    continue
                text = strip_comments(open(os.path.join(repo, path)).read())
                line_of = lambda pos: text.count("\n", 0, pos) + 1
                for m in CALL_RE.finditer(text):
                    method = m.group(1)
                    args_text = balanced(text, m.end() - 1)
                    args = split_args(args_text)
                    site = Site(path, line_of(m.start()), f"{method}({args_text})")
                    helper = re.fullmatch(r"client::(\w+)\(\)", args[0]) if args else None
                    if method == "Bind":
                        site.resource, site.verbs = ("", "pods/binding"), ["create"]
                    elif method == "Evict":
                        site.resource, site.verbs = ("", "pods/eviction"), ["create"]
                    elif helper and helper.group(1) in helpers and CALL_METHODS[method]:
                        group, res = helpers[helper.group(1)]
                        sub = None
                        if method == "UpdateStatus":
                            sub = "status"
                        elif method in ("Get", "Patch") and args[-1].startswith('"'):
                            sub = args[-1].strip('"')
                        elif method == "CreateSubresource" and len(args) > 3:
                            sub = args[3].strip('"') if args[3].startswith('"') else None
                            if sub is None:
                                helper = None
                        if helper:
                            site.resource = (group, res + ("/" + sub if sub else ""))
                            site.verbs = CALL_METHODS[method]
                    sites.append(site)
                for m in INFORMER_RE.finditer(text):
                    args_text = balanced(text, m.end() - 1)
                    site = Site(path, line_of(m.start()), f"InformerFor({args_text})")
                    h = HELPER_RE.search(args_text)
                    if h and h.group(1) in helpers:
                        site.resource, site.verbs = helpers[h.group(1)], ["list", "watch"]
                    sites.append(site)
                for m in SOURCE_RE.finditer(text):
                    if m.group(1) in helpers:
                        sites.append(Site(path, line_of(m.start()), m.group(0), helpers[m.group(1)], ["list", "watch"]))
                for m in PATH_RE.finditer(text):
                    args_text = balanced(text, text.index("(", m.start()))
                    # The verb is the request's: claimed by an indirect entry.
                    site = Site(path, line_of(m.start()), f"ResourcePath({args_text})")
                    site.mentioned = helpers.get(m.group(1))
                    sites.append(site)
                for m in HELPER_RE.finditer(text):
                    if m.group(1) in helpers:
                        mentions.append((path, line_of(m.start()), helpers[m.group(1)]))
                for m in LITERAL_RE.finditer(text):
                    mentions.append((path, line_of(m.start()), (m.group(1), m.group(3))))
                for m in OWNED_RE.finditer(text):
                    api_version = m.group(1)
                    group = api_version.split("/")[0] if "/" in api_version else ""
                    mentions.append((path, line_of(m.start()), (group, plural(m.group(2)))))
                for m in OBJREF_RE.finditer(text):
                    group = (m.group(1) or "").rstrip("/")
                    mentions.append((path, line_of(m.start()), (group, plural(m.group(3)))))
    return sites, mentions


def components_of(path, table, problems):
    for name, c in table["components"].items():
        if path.startswith(c["code"]):
            return [name]
    out = [name for name, c in table["components"].items() if path in (c.get("reaches") or {})]
    return out


def check_reaches(repo, table, problems):
    for name, c in table["components"].items():
        for shared, evidence in (c.get("reaches") or {}).items():
            f, _, pattern = evidence.partition(": ")
            if not f.startswith(c["code"]):
                problems.append(f"{name}: reaches {shared} through {f}, which is not its code ({c['code']})")
                continue
            try:
                text = " ".join(strip_comments(open(os.path.join(repo, f)).read()).split())
            except OSError:
                problems.append(f"{name}: reaches {shared} through {f}, which does not exist")
                continue
            if not re.search(pattern, text):
                problems.append(f"{name}: reaches {shared}: no /{pattern}/ in {f} (stale table entry)")
            if not os.path.exists(os.path.join(repo, shared)):
                problems.append(f"{name}: reaches {shared}, which does not exist")


def matches(entry):
    m = entry["match"]
    return [m] if isinstance(m, str) else list(m)


def expand(rule):
    """A Kubernetes PolicyRule -> set of (group, resource, verb, names)."""
    names = tuple(sorted(rule.get("resourceNames") or []))
    return {(g, r, v, names) for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}


def derive(repo, table, helpers, problems):
    """component -> {(group, resource, verb): [where, ...]} from the code."""
    sites, mentions = scan(repo, helpers)
    check_reaches(repo, table, problems)
    indirect = table.get("indirect") or []
    used = [False] * len(indirect)
    needs = {name: {} for name in table["components"]}

    def add(comps, group, res, verbs, where):
        for c in comps:
            for v in verbs:
                needs[c].setdefault((group, res, v), []).append(where)

    def claim(path, text):
        hits = []
        for i, e in enumerate(indirect):
            if e["file"] == path and any(re.search(m, text) for m in matches(e)):
                used[i] = True
                hits.append(e)
        return hits

    # Every shared file with calls is declared, for every component, reached (with the line
    # that shows it) or not (with a pattern that must then be absent from the component's code).
    shared_files = sorted({s.path for s in sites if not s.path.startswith(COMPONENT_DIRS)})
    for name, c in table["components"].items():
        absent = c.get("notReaches") or {}
        for f in shared_files:
            if f in (c.get("reaches") or {}):
                continue
            if f not in absent:
                problems.append(f"{name}: does it run {f}, which calls the API? List it under `reaches` "
                                f"or `notReaches`")
                continue
            for root, _, files in os.walk(os.path.join(repo, c["code"])):
                for cf in files:
                    path = os.path.join(root, cf)
                    if cf.endswith((".cc", ".h")) and re.search(absent[f], strip_comments(open(path).read())):
                        problems.append(f"{name}: /{absent[f]}/ appears in {os.path.relpath(path, repo)}: it runs "
                                        f"{f} after all (move it to `reaches`)")
    for s in sites:
        comps = components_of(s.path, table, problems)
        if not comps:
            problems.append(f"{s.where()}: API call {s.text[:80]!r} in code no component is listed to reach "
                            f"(add the file to a component's `reaches`)")
            continue
        if s.resource is not None:
            add(comps, s.resource[0], s.resource[1], s.verbs, s.where())
            continue
        hits = claim(s.path, s.text)
        if not hits:
            problems.append(f"{s.where()}: call {s.text[:100]!r}: its resource or verb is not a constant; "
                            f"an `indirect` entry of the table must say what it needs")
    # Needs that are not call sites (the entries' matches run over the whole file).
    for i, e in enumerate(indirect):
        path = os.path.join(repo, e["file"])
        if not os.path.exists(path):
            problems.append(f"indirect entry for {e['file']}: no such file")
            continue
        text = " ".join(strip_comments(open(path).read()).split())
        stale = [m for m in matches(e) if not re.search(m, text)]
        if stale:
            problems.append(f"indirect entry {e['file']}: {stale} match nothing (stale table entry)")
            continue
        used[i] = True
        comps = components_of(e["file"], table, problems)
        if not comps:
            problems.append(f"indirect entry {e['file']}: no component is listed to reach the file")
        for g in e.get("grants") or []:
            for r in g["resources"]:
                add(comps, g["apiGroup"], r, g["verbs"], f"{e['file']} (indirect: {e['why']})")
    for path, line, (group, res) in mentions:
        for c in components_of(path, table, problems):
            if not any(k[0] == group and k[1].split("/")[0] == res for k in needs[c]):
                problems.append(f"{path}:{line}: {c} names {group or 'core'}/{res}, but nothing derived from "
                                f"its calls or the table's indirect entries grants it a verb")
    return needs


def table_rules(table, namespace):
    """(component, scope, group, resource, verb, names) from the table."""
    out = set()
    for name, c in table["components"].items():
        for rule in c["rules"]:
            scope = namespace if rule.get("namespace") == "release" else "cluster"
            for g, r, v, n in expand(rule):
                out.add((name, scope, g, r, v, n))
    return out


def chart_rules(rbac_docs, table, problems):
    by_sa = {c["serviceAccount"]: name for name, c in table["components"].items()}
    roles = {}
    for d in rbac_docs:
        if d and d["kind"] in ("ClusterRole", "Role"):
            roles[(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"])] = d
    out = set()
    bound = set()
    for d in rbac_docs:
        if not d or d["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        ref = d["roleRef"]
        ns = d["metadata"].get("namespace")
        key = (ref["kind"], ns if ref["kind"] == "Role" else None, ref["name"])
        role = roles.get(key)
        if role is None:
            problems.append(f"{d['kind']} {d['metadata']['name']} refers to a missing {ref['kind']} {ref['name']}")
            continue
        bound.add(key)
        scope = "cluster" if d["kind"] == "ClusterRoleBinding" else ns
        for s in d.get("subjects") or []:
            comp = by_sa.get(s["name"]) if s.get("kind") == "ServiceAccount" else None
            if comp is None:
                problems.append(f"{d['kind']} {d['metadata']['name']} binds {s} (not a Basalt component)")
                continue
            for rule in role.get("rules") or []:
                for g, r, v, n in expand(rule):
                    out.add((comp, scope, g, r, v, n))
    for key in roles:
        if key not in bound:
            problems.append(f"{key[0]} {key[2]} is bound to no one")
    return out


def fmt(t):
    comp, scope, g, r, v, n = t
    names = f" resourceNames={list(n)}" if n else ""
    return f"{comp}: {v} {g or 'core'}/{r} ({'cluster-wide' if scope == 'cluster' else 'namespace ' + scope}){names}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--rbac", required=True, help="rendered RBAC (YAML stream)")
    ap.add_argument("--namespace", default="volcano-system", help="the release namespace of --rbac")
    ap.add_argument("--print-derived", action="store_true", help="print what the code needs and exit")
    a = ap.parse_args()
    table = yaml.safe_load(open(a.table))
    helpers = read_helpers(a.repo)
    problems = []
    if len(helpers) < 10:
        problems.append(f"read only {len(helpers)} resource helpers from common/client/resource.cc")
    needs = derive(a.repo, table, helpers, problems)
    if a.print_derived:
        for c, n in needs.items():
            for (g, r, v), where in sorted(n.items()):
                print(f"{c}\t{g or 'core'}\t{r}\t{v}\t{where[0]}{' +%d' % (len(where) - 1) if len(where) > 1 else ''}")
        return 0
    # 1. The code against the table (group, resource, verb per component; scope and names are
    #    the table's word, proved by the e2e run with the chart's RBAC).
    for name, c in table["components"].items():
        granted = {(g, r, v) for g, r, v, _ in set().union(*[expand(rule) for rule in c["rules"]])}
        for key, where in sorted(needs[name].items()):
            if key not in granted:
                problems.append(f"{name} needs {key[2]} {key[0] or 'core'}/{key[1]} ({where[0]}) but the table grants it not")
        for key in sorted(granted - set(needs[name])):
            problems.append(f"{name}: the table grants {key[2]} {key[0] or 'core'}/{key[1]}, which no call of its code needs")
        for rule in c["rules"]:
            if rule.get("resourceNames") and set(rule["verbs"]) & {"create", "list", "watch", "deletecollection"}:
                problems.append(f"{name}: rule {rule} restricts create/list/watch by name, which never matches")
    # 2. The chart against the table.
    docs = list(yaml.safe_load_all(open(a.rbac)))
    want = table_rules(table, a.namespace)
    have = chart_rules(docs, table, problems)
    for t in sorted(have - want):
        problems.append(f"the chart grants {fmt(t)}, which the table does not list")
    for t in sorted(want - have):
        problems.append(f"the chart lacks {fmt(t)}, which the table lists")
    for p in problems:
        print(p)
    if not problems:
        comps = len(table["components"])
        print(f"ok: {len(have)} grants of {comps} components = the table = what the code calls "
              f"({sum(len(n) for n in needs.values())} (component, resource, verb) needs)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
