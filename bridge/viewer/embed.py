#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns a page into a C source defining a NUL-terminated char array, so the
daemon serves it from the binary with nothing read from disk.

Usage: embed.py SOURCE TARGET NAME [MODULE.js ...]

Each MODULE.js is an ES module the page loads as <script src="MODULE.js">
</script>: that element is replaced by a classic inline script that runs
the module's code in a function of its own and makes its exports constants
of the page. Modules stay plain ES modules (the tests and benches import
them from Node), and the page is still one file. Only what this can do
faithfully is accepted: exports as `export const|function|class NAME`
declarations, no imports, no "</script" in the module; a page script with
a relative src that is not inlined (it would be fetched from the daemon at
run time, which serves no such file) is refused too.
"""
import os
import re
import sys

EXPORT = re.compile(r'^export (?:const|let|function|async function|class) ([A-Za-z_$][\w$]*)')
IMPORT_OR_EXPORT = re.compile(r'^\s*(?:import|export)\b')
SCRIPT_SRC = re.compile(r'<script\b[^>]*\bsrc="([^"]*)"[^>]*>\s*</script>')


def fail(message):
    sys.exit('embed.py: ' + message)


def inline_module(path):
    """The module as a classic script that defines its exports."""
    name = os.path.basename(path)
    lines, exports = [], []
    with open(path, encoding='utf-8') as source:
        for number, line in enumerate(source, 1):
            match = EXPORT.match(line)
            if match:
                exports.append(match.group(1))
                line = line[len('export '):]
            elif IMPORT_OR_EXPORT.match(line):
                fail('%s:%d: only "export const|function|class NAME" declarations '
                     'can be inlined, not: %s' % (name, number, line.strip()))
            lines.append(line)
    body = ''.join(lines)
    if '</script' in body.lower():
        fail('%s holds "</script", which would end the inline script early' % name)
    if not exports:
        fail('%s exports nothing for the page' % name)
    names = ', '.join(exports)
    return ('<script>\n// %s, inlined by embed.py: its exports as constants of the page.\n'
            'const { %s } = (() => {\n\'use strict\';\n%s\nreturn { %s };\n})();\n</script>'
            % (name, names, body.rstrip('\n'), names))


def main():
    if len(sys.argv) < 4:
        fail('usage: embed.py SOURCE TARGET NAME [MODULE.js ...]')
    source, target, name, modules = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    with open(source, encoding='utf-8') as page:
        text = page.read()
    by_name = {os.path.basename(m): m for m in modules}
    used = set()

    def replace(match):
        src = match.group(1)
        if src in by_name:
            used.add(src)
            return inline_module(by_name[src])
        if not src.startswith('/') and '://' not in src:
            fail('%s loads %s at run time, where the daemon serves no such file: '
                 'inline it (embed.py SOURCE TARGET NAME %s)' % (source, src, src))
        return match.group(0)

    text = SCRIPT_SRC.sub(replace, text)
    for module in sorted(set(by_name) - used):
        fail('%s has no <script src="%s"></script> to inline it at' % (source, module))
    data = text.encode('utf-8')
    with open(target, 'w') as out:
        out.write('/* Generated from %s; edit that file. */\n#include <stddef.h>\n'
                  % os.path.basename(source))
        out.write('const char %s[] = {\n' % name)
        for i in range(0, len(data), 16):
            out.write('\t' + ', '.join('0x%02x' % b for b in data[i:i + 16]) + ',\n')
        out.write('\t0x00\n};\nconst size_t %s_len = %d;\n' % (name, len(data)))


main()
