#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the libFuzzer targets (clang, AddressSanitizer + UBSan, in
# build-fuzz/) and runs each for SECONDS (default 60) on its committed
# corpus, tests/fuzz/corpus/<name>/. Every tests/fuzz/fuzz_<name>.c is a
# target. New inputs go to a scratch directory, not into the corpus; a crash
# leaves its input as build-fuzz/crash-<name>-*. Ends with the line
# "fuzz: N passed, N failed, N skipped": when the targets cannot be built,
# that is one failure, and every target counts as skipped (it did not run).
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
dir=build-fuzz

targets=$(cd tests/fuzz && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')
not_run() { # why: none of the targets ran
  echo "fuzz: 0 passed, 1 failed, $(echo "$targets" | wc -w) skipped ($1)"
  exit 1
}
if [ ! -d "$dir" ]; then
  CC=clang meson setup "$dir" --werror -Dfuzz=true -Db_sanitize=address,undefined \
    -Db_lundef=false --buildtype=debugoptimized -Dc_args=-fsanitize=fuzzer-no-link \
    >/dev/null || not_run "meson setup; is clang installed?"
fi
# shellcheck disable=SC2046
ninja -C "$dir" $(for t in $targets; do echo "tests/fuzz/fuzz-$t"; done) >&2 || not_run "build"

passed=0
failed=0
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
for t in $targets; do
  corpus=tests/fuzz/corpus/$t
  mkdir -p "$corpus"
  scratch=$(mktemp -d)
  echo "== fuzz-$t for ${seconds}s" >&2
  if "$dir/tests/fuzz/fuzz-$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$dir/crash-$t-" "$scratch" "$corpus" >&2; then
    echo "fuzz-$t: ok"
    passed=$((passed + 1))
  else
    echo "fuzz-$t: FAILED (input saved as $dir/crash-$t-*)"
    failed=$((failed + 1))
  fi
  rm -rf "$scratch"
done
echo "fuzz: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
