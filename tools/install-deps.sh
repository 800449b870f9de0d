#!/usr/bin/env bash
# Installs the Debian 12 packages s2cosim needs, only those that are missing; arguments name more packages
# (tools/test-sanitized.sh asks for clang).
set -euo pipefail
pkgs=(cmake make g++ pkg-config verilator libsystemc-dev libfmt-dev libgtest-dev libfccp-dev
      libcli11-dev nlohmann-json3-dev
      # the report tests: JUnit against its schema, the HTML report in a real browser, progress on a pty,
      # FST waveforms (zlib for Verilator's FST writer, GTKWave's fst2vcd to read them back)
      libxml2-utils chromium bsdutils zlib1g-dev gtkwave
      # real networks: ONNX models (libonnx), .npy inputs and outputs (xtensor)
      libonnx-dev libprotobuf-dev libxtensor-dev
      # one PE's area per MAC-array shape (tools/synth.sh, the Synth.* tests)
      yosys
      # the ARM kernels compiled for the Cortex-M4F and their clocks counted (tools/arm_clocks.py, docs/arm_clocks.md)
      gcc-arm-none-eabi
      "$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
