#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The layout every C file has (.clang-format decides it) and the SPDX line
# every source file starts with. Fails naming the files that differ; fix
# the layout with: git ls-files '*.c' '*.h' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
mapfile -t c_files < <(git ls-files '*.c' '*.h')
if ! clang-format --dry-run --Werror "${c_files[@]}"; then
  echo "format: the files above differ from .clang-format's layout" >&2
  status=1
fi

missing=()
while IFS= read -r f; do
  head -n 3 "$f" | grep -q 'SPDX-License-Identifier: MIT' || missing+=("$f")
done < <(git ls-files '*.c' '*.h' '*.mjs' '*.js' '*.py' '*.sh' '*.html' '*meson.build' \
  meson_options.txt .ci/run)
if [ "${#missing[@]}" -gt 0 ]; then
  printf 'format: no SPDX line in the first three lines of %s\n' "${missing[@]}" >&2
  status=1
fi

[ "$status" -eq 0 ] && echo "format: ${#c_files[@]} C files laid out as .clang-format says, every source file has its SPDX line" >&2
exit "$status"
