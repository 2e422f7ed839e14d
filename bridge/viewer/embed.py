#!/usr/bin/env python3
"""Turns a file into a C source defining a NUL-terminated char array."""
import sys

source, target, name = sys.argv[1], sys.argv[2], sys.argv[3]
data = open(source, 'rb').read()
with open(target, 'w') as out:
    out.write('/* Generated from %s; edit that file. */\n#include <stddef.h>\n' % source.split('/')[-1])
    out.write('const char %s[] = {\n' % name)
    for i in range(0, len(data), 16):
        out.write('\t' + ', '.join('0x%02x' % b for b in data[i:i + 16]) + ',\n')
    out.write('\t0x00\n};\nconst size_t %s_len = %d;\n' % (name, len(data)))
