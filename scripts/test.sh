#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sets up, builds and runs every test: the C unit tests and the integration
# tests against real Xvnc, x11vnc, X applications and the MCP SDK. The whole
# suite runs twice: on a normal build and under AddressSanitizer +
# UndefinedBehaviorSanitizer, where any sanitizer report fails the run; then
# each libFuzzer target runs for a few seconds.
# Ends with the line "N passed, N failed, N skipped": skipped are meson's
# skipped tests (exit 77), node's skipped tests and fuzz targets that did
# not run; each says why in the output above.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests || exit 1

passed=0
failed=0
skipped=0
# The names of what failed, repeated at the end: CI shows only the tail.
failures=$(mktemp)
count() { # file pass-regex fail-regex [skip-regex]: adds one runner's numbers
  local p f s=
  p=$(grep -hoE "$2" "$1" | grep -oE '[0-9]+' | tail -1)
  f=$(grep -hoE "$3" "$1" | grep -oE '[0-9]+' | tail -1)
  [ -z "${4:-}" ] || s=$(grep -hoE "$4" "$1" | grep -oE '[0-9]+' | tail -1)
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  skipped=$((skipped + ${s:-0}))
  # A runner that died before reporting counts as one failure.
  [ -n "$p" ] || failed=$((failed + 1))
}

build_suite() { # builddir [meson options...]: sets up once, then builds
  local dir=$1
  shift
  if [ ! -d "$dir" ]; then
    meson setup "$dir" --werror "$@" >/dev/null || return 1
  fi
  ninja -C "$dir" >&2
}

tap_total() { # file word: the number on node's "# word N" line, if any
  grep -oE "^# $2 [0-9]+" "$1" | grep -oE '[0-9]+' | tail -1
}

test_suite() { # builddir: its C unit tests, then the integration tests
  local dir=$1 out
  out=$(mktemp)
  meson test -C "$dir" --print-errorlogs 2>&1 | tee "$out" >&2
  count "$out" '^Ok: +[0-9]+' '^Fail: +[0-9]+' '^Skipped: +[0-9]+'
  grep -E '^ *[0-9]+/[0-9]+ .* (FAIL|TIMEOUT|ERROR) ' "$out" | sed "s|^|$dir: |" >>"$failures"
  # meson counts an executable whose every test skipped (exit 77); a test
  # that skipped inside an executable that passed is counted here, from
  # the "SKIP: name: why" lines test.h prints.
  local partial
  partial=$(awk '/^result: +exit status 0$/ { passed = 1 } /^=+ [0-9]+\/[0-9]+ =+$/ { passed = 0 }
    passed && /^SKIP: / { n++ } END { print n + 0 }' "$dir/meson-logs/testlog.txt")
  skipped=$((skipped + partial))

  local file status pass fail skip p=0 f=0 s=0
  for file in tests/integration/*.test.mjs; do
    LIZARD_BRIDGE_BIN="$PWD/$dir/lizard-bridge" timeout -k 15 "$FILE_LIMIT" \
      node --test "${NODE_TEST_FLAGS[@]}" --test-reporter=tap "$file" 2>&1 | tee "$out" >&2
    status=${PIPESTATUS[0]}
    pass=$(tap_total "$out" pass)
    fail=$(tap_total "$out" fail)
    skip=$(tap_total "$out" skipped)
    p=$((p + ${pass:-0}))
    f=$((f + ${fail:-0}))
    s=$((s + ${skip:-0}))
    grep -E '^ *not ok ' "$out" | sed "s|^|$dir: $file: |" >>"$failures"
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
      # A file that hangs is one failure, not the end of the run; the
      # last test it reported says where it hung.
      echo "not ok - $file did not finish within $FILE_LIMIT s" >&2
      echo "$dir: $file did not finish within $FILE_LIMIT s" >>"$failures"
      f=$((f + 1))
    elif [ -z "$pass" ]; then
      echo "$dir: $file ended (status $status) before reporting" >>"$failures"
      f=$((f + 1))
    fi
  done
  passed=$((passed + p))
  failed=$((failed + f))
  skipped=$((skipped + s))
  rm -f "$out"
}

# Each integration file runs on its own under a deadline, and each test
# under a shorter one: a hang fails that file and the run goes on (the
# slowest file took 86 s under the sanitizers on 2026-12-04).
# A file whose tests are done but which left a handle open (a socket, a
# timer) ends anyway, where Node has the flag for it (20.14 and later).
FILE_LIMIT=900
NODE_TEST_FLAGS=(--test-timeout=300000)
if node --help | grep -q -- --test-force-exit; then NODE_TEST_FLAGS+=(--test-force-exit); fi

sanitize=(-Db_sanitize=address,undefined -Db_lundef=false --buildtype=debug)

# The layering check: every #include points down a layer and none closes
# a circle (scripts/check-layers.py says which may include which).
echo "== layering check" >&2
if python3 scripts/check-layers.py >&2; then passed=$((passed + 1)); else
  failed=$((failed + 1))
  echo "layering check" >>"$failures"
fi

# The layout of the C code (.clang-format) and the SPDX lines.
echo "== format check" >&2
if scripts/check-format.sh; then passed=$((passed + 1)); else
  failed=$((failed + 1))
  echo "format check" >>"$failures"
fi

echo "== normal build" >&2
sanitize_build=
if build_suite build; then
  # The sanitizer build compiles, at the lowest priority, while the normal
  # build's tests run: they mostly wait on X servers, kernels and browsers.
  # Its output is shown again below if it fails.
  (renice -n 19 -p "$BASHPID" >/dev/null; build_suite build-sanitize "${sanitize[@]}" >/dev/null 2>&1) &
  sanitize_build=$!
  test_suite build
else
  failed=$((failed + 1))
  echo "normal build" >>"$failures"
fi

# The official MCP conformance suite's DNS rebinding scenario (Node 22 from
# tests/node_modules; the other server scenarios expect its own test tools).
echo "== MCP conformance: dns-rebinding-protection" >&2
out=$(mktemp)
LIZARD_BRIDGE_BIN="$PWD/build/lizard-bridge" scripts/conformance.sh dns-rebinding-protection 2>&1 |
  tee "$out" >&2
before=$failed
count "$out" '^Passed: [0-9]+' '[0-9]+ failed,'
[ "$failed" -eq "$before" ] || echo "MCP conformance: dns-rebinding-protection" >>"$failures"
rm -f "$out"

reports=$(mktemp -d)
export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=0"
echo "== sanitizer (address, undefined) build" >&2
[ -z "$sanitize_build" ] || wait "$sanitize_build"
if build_suite build-sanitize "${sanitize[@]}"; then
  test_suite build-sanitize
else
  failed=$((failed + 1))
  echo "sanitizer build" >>"$failures"
fi
unset ASAN_OPTIONS UBSAN_OPTIONS
if compgen -G "$reports/*" >/dev/null; then
  echo "== sanitizer reports" >&2
  cat "$reports"/* >&2
  ls "$reports" | sed 's|^|sanitizer report: |' >>"$failures"
  failed=$((failed + $(ls "$reports" | wc -l)))
fi
rm -rf "$reports"

# libFuzzer targets, briefly: each runs its committed corpus and then
# mutates for 10 s (scripts/fuzz.sh SECONDS runs them longer).
echo "== fuzz targets" >&2
out=$(mktemp)
scripts/fuzz.sh 10 2>&1 | tee "$out" >&2
count "$out" '^fuzz: [0-9]+ passed' '^fuzz: .*[0-9]+ failed' '^fuzz: .*[0-9]+ skipped'
grep -E '^fuzz.*FAILED|^fuzz: 0 passed, 1 failed' "$out" >>"$failures"
rm -f "$out"

if [ -s "$failures" ]; then
  echo "== what failed (details above)"
  cat "$failures"
fi
rm -f "$failures"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
