#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A UI automation written with nothing but `lizard-bridge call`: make a
# desktop, open a terminal that saves what it is given, type into it, save a
# screenshot, fetch the file from the sandbox, end the desktop. Needs
# LIZARD_API_URL and LIZARD_API_KEY.
# Usage: automate-terminal.sh OUTPUT_DIR
set -euo pipefail
bridge=${LIZARD_BRIDGE_BIN:-lizard-bridge}
out=$1

session=$("$bridge" call create_session template=desktop size=800x600 timeout_ms=60000 |
  sed -n 's/.*"session":"\([^"]*\)".*/\1/p')
[ -n "$session" ] || { echo "no session id" >&2; exit 1; }
trap '"$bridge" call kill_session session="$session" >/dev/null' EXIT

"$bridge" call launch session="$session" \
  command="xterm -geometry 60x10+20+20 -e sh -c 'stty -echo -icanon; exec cat > notes.txt'"
for _ in $(seq 50); do
  "$bridge" call exec session="$session" command='test -e notes.txt' && break
  sleep 0.1
done
# Let the window manager finish placing and drawing the terminal.
"$bridge" call wait session="$session" quiet_ms=300
"$bridge" call click session="$session" x=200 y=80 screenshot=true -o "$out/before.png"
"$bridge" call wait session="$session" quiet_ms=300
"$bridge" call type session="$session" text='written by a shell script ✓'
"$bridge" call press session="$session" keys=Return
"$bridge" call wait session="$session" quiet_ms=200
"$bridge" call screenshot session="$session" -o "$out/after.png"
"$bridge" call exec session="$session" command='cat notes.txt' > "$out/notes.txt"
"$bridge" call session_info session="$session"
