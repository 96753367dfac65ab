#!/usr/bin/env bash
# Installs troupe's build dependencies from Debian's archive. Does nothing when all are present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libcaf-dev libasio-dev libprotobuf-dev protobuf-compiler
  libspdlog-dev libfmt-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev libabsl-dev
  libglpk-dev librocksdb-dev libssl-dev libcpp-httplib-dev libmimalloc-dev
  nlohmann-json3-dev  # Philly's job log (workload/philly_job_log.cpp)
  openssl  # scripts/make-deployment-credentials.sh
  python3-matplotlib python3-pandas python3-protobuf python3-numpy clang-14 libclang-rt-14-dev
  chromium  # the live view's browser test (tests/integration/live_view_test.cpp)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
