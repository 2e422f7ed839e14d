#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The layering check: reads every #include "..." of the C sources and fails
on an edge that goes up a layer, crosses between bridge/server and
bridge/tools, or closes a circle between modules.

A module is a header and the source file of the same name beside it
(vnc/conn.h and vnc/conn.c); a module depends on another when either of its
files includes the other's header. Every header must have its source file,
but for the few that only declare types or constants (TYPES_ONLY below), so
that a header shared by several files cannot hide a circle between them.

Layers, lowest first, and what each may include besides itself:

    util                 nothing else
    vnc, mcp, sandbox    util
    kernel, webrtc       util
    bridge/viewer        vnc, webrtc, util
    bridge/session       bridge/viewer, vnc, sandbox, util
    bridge/tools         bridge/session, bridge/viewer, bridge/context, mcp,
                         vnc, sandbox, util
    bridge/server        bridge/session, bridge/viewer, bridge/context, mcp,
                         util
    bridge/client        util
    bridge/main.c        everything: it wires the layers together

Tests, fuzz targets and benchmarks may include anything. Prints each
violation and exits 1, or says how many files it checked and exits 0."""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
SOURCE_DIRS = ['util', 'vnc', 'mcp', 'sandbox', 'kernel', 'webrtc', 'bridge']
ALLOWED = {
    'util': set(),
    'vnc': {'util'},
    'mcp': {'util'},
    'sandbox': {'util'},
    'kernel': {'util'},
    'webrtc': {'util'},
    'bridge/viewer': {'vnc', 'webrtc', 'util'},
    'bridge/session': {'bridge/viewer', 'vnc', 'sandbox', 'kernel', 'util'},
    'bridge/tools': {'bridge/session', 'bridge/viewer', 'bridge/context', 'mcp', 'vnc',
                     'sandbox', 'kernel', 'util'},
    'bridge/server': {'bridge/session', 'bridge/viewer', 'bridge/context', 'mcp', 'util'},
    'bridge/client': {'util'},
    'bridge/context': set(),
    'bridge/main': {'*'},
}
# Headers without a source file of their own: types and constants only.
TYPES_ONLY = {'bridge/context.h', 'bridge/session/code_types.h', 'bridge/session/types.h', 'bridge/session/state.h',
              'bridge/server/state.h', 'bridge/server/options.h', 'bridge/viewer/wire.h', 'bridge/viewer/types.h', 'bridge/viewer/hub_state.h', 'sandbox/protocol.h', 'sandbox/inside.h',
              'sandbox/state.h', 'sandbox/cgroup_state.h', 'webrtc/state.h', 'webrtc/types.h', 'sandbox/cgroup_types.h',
              'vnc/conn_state.h', 'mcp/types.h', 'mcp/state.h'}
# A function declared at file level: a name and an argument list, ending the
# statement. Types-only headers must have none (macros and function pointer
# types aside).
FUNCTION = re.compile(r'^[A-Za-z_][\w\s\*]*?\b([a-z_][a-z0-9_]*)\s*\([^;{]*\)\s*;', re.M)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    """The layer a repository path belongs to, or None outside the sources."""
    parts = path.split('/')
    if parts[0] != 'bridge':
        return parts[0] if parts[0] in SOURCE_DIRS else None
    if len(parts) == 2:
        if parts[1] == 'main.c':
            return 'bridge/main'
        if parts[1].startswith('context.'):
            return 'bridge/context'
        return 'bridge'  # a file left in bridge/ itself: not a layer
    return 'bridge/' + parts[1]


def sources():
    for top in SOURCE_DIRS:
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for name in sorted(names):
                if name.endswith(('.c', '.h')):
                    yield os.path.relpath(os.path.join(dirpath, name), ROOT)


def resolve(including, target):
    """An include as a repository path: written from the root, or beside
    the including file (which the rules below refuse)."""
    if os.path.exists(os.path.join(ROOT, target)):
        return target, True
    beside = os.path.normpath(os.path.join(os.path.dirname(including), target))
    if os.path.exists(os.path.join(ROOT, beside)):
        return beside, False
    return None, False


def module_of(path):
    return os.path.splitext(path)[0]


def find_cycles(edges):
    """Every module that lies on a circle, with one circle through it."""
    found, state, stack = [], {}, []

    def visit(node):
        state[node] = 'open'
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 'open':
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 'done'

    for node in sorted(edges):
        if node not in state:
            visit(node)
    return found


def main():
    problems = []
    edges = {}
    files = list(sources())
    present = set(files)
    for path in files:
        layer = layer_of(path)
        if layer == 'bridge':
            problems.append(f'{path}: bridge/ holds main.c and context.h only; '
                            'put this file in one of its folders')
        if path.endswith('.h') and path not in TYPES_ONLY and module_of(path) + '.c' not in present:
            problems.append(f'{path}: a header without {os.path.basename(module_of(path))}.c '
                            'beside it (add it to TYPES_ONLY only if it declares no functions)')
        with open(os.path.join(ROOT, path), encoding='utf-8') as f:
            text = f.read()
        if path in TYPES_ONLY:
            bare = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
            # A typedef of a function or function pointer type declares none.
            bare = re.sub(r'\btypedef\b[^;]*;', '', bare)
            for name in FUNCTION.findall(bare):
                problems.append(f'{path}: declares {name}(), but is listed as types only')
        for target in INCLUDE.findall(text):
            resolved, from_root = resolve(path, target)
            if resolved is None:
                continue  # generated (the embedded pages), or a system header in quotes
            if not from_root:
                problems.append(f'{path}: #include "{target}" is relative; write it from the '
                                f'root: "{resolved}"')
            to_layer = layer_of(resolved)
            allowed = ALLOWED.get(layer, set())
            if to_layer != layer and '*' not in allowed and to_layer not in allowed:
                problems.append(f'{path}: includes {resolved}: {layer} may not depend on '
                                f'{to_layer}')
            if module_of(resolved) != module_of(path):
                edges.setdefault(module_of(path), set()).add(module_of(resolved))
    for cycle in find_cycles(edges):
        problems.append('a circle between modules: ' + ' -> '.join(cycle))
    for p in problems:
        print('layers:', p)
    if problems:
        print(f'layers: {len(problems)} problem(s) in {len(files)} files')
        return 1
    print(f'layers: {len(files)} files, every edge points down and none closes a circle')
    return 0


if __name__ == '__main__':
    sys.exit(main())
