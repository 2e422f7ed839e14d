#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what building, running and testing lizard-bridge needs on Debian 12,
# skipping whatever is already there. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

build_packages=(meson ninja-build pkg-config gcc libc6-dev libvncserver-dev libpng-dev
  libcjson-dev libwebsockets-dev libxkbcommon-dev libjpeg-dev libisal-dev zlib1g-dev
  libseccomp-dev libzmq3-dev libssl-dev libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  libgstreamer-plugins-bad1.0-dev)
# bubblewrap makes the sandbox every local session runs in, libseccomp builds
# its system call filter and slirp4netns its network (without the host's
# loopback); fuse-overlayfs makes the writable root of the sessions of a
# daemon that is not root, and uidmap's newuidmap maps its subordinate ids;
# mke2fs (e2fsprogs) makes the disks that hold a session's
# files; the daemon serves noVNC's files from Debian's novnc package;
# programs in a sandbox find python as well as python3; run_code talks to
# ipykernel, with numpy, pandas and matplotlib beside it, and runs
# JavaScript with Node. --webrtc's video is GStreamer's webrtcbin (-bad),
# with libnice's ICE (gstreamer1.0-nice), vp8enc and the RTP payloaders
# (-good), openh264enc (-bad, with Debian's libopenh264) and videoconvert
# (-base).
run_packages=(tigervnc-standalone-server openbox xclip chromium bubblewrap libseccomp2
  slirp4netns fuse-overlayfs uidmap e2fsprogs novnc python-is-python3 python3-ipykernel python3-numpy
  python3-pandas python3-matplotlib nodejs gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad gstreamer1.0-nice)
# The Python client's tests type-check it with Debian's mypy and install it
# offline into a venv with Debian's setuptools and wheel; the code
# interpreter's bench compares with jupyter_client; the port proxy's tests
# run a WebSocket echo server inside a sandbox with python3-websockets.
test_packages=(x11vnc xvfb xdotool x11-apps x11-utils x11-xserver-utils xterm imagemagick xauth
  scrot iproute2 procps coreutils jq clang clang-format libclang-rt-14-dev websockify
  python3 python3-mypy python3-venv python3-setuptools python3-wheel
  python3-jupyter-client python3-websockets)

wanted=("${build_packages[@]}" "${run_packages[@]}")
if [ "${1:-}" = "--tests" ]; then
  wanted+=("${test_packages[@]}")
  command -v node >/dev/null || wanted+=(nodejs npm)
fi

missing=()
for package in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  # With recommends, as the tests were proven: xterm and Chromium draw text
  # with the fonts those bring.
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  # Another apt (an unattended upgrade, a second checkout's setup) may
  # hold dpkg's lock for a while: wait for it rather than fail.
  $sudo_cmd apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    "${missing[@]}" >&2
fi

if [ "${1:-}" = "--tests" ] && { [ ! -d tests/node_modules/@modelcontextprotocol/sdk ] ||
  [ ! -d tests/node_modules/@modelcontextprotocol/conformance ]; }; then
  echo "setup: installing the test's npm packages" >&2
  (cd tests && npm ci --no-audit --no-fund >&2)
fi
