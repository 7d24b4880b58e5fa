#!/usr/bin/env bash
# Installs everything TMMU Studio needs to build and test, from Debian 12 packages only.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config lld \
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev qt6-svg-dev libqt6sql6-sqlite \
  libfmt-dev nlohmann-json3-dev libssl-dev libsqlite3-dev \
  libvulkan-dev mesa-vulkan-drivers glslc vulkan-tools xvfb poppler-utils clang-tidy \
  libonnx-dev libprotobuf-dev libonnx-testdata desktop-file-utils appstream >/dev/null
