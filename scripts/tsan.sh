#!/usr/bin/env bash
# ThreadSanitizer run of the tests that run actors on threads: the real mode on the wall clock and
# the runs across processes (ctest label `process`, the slow ones aside), in build-tsan/.
#
# Debian's CAF is not instrumented, and ThreadSanitizer cannot see the ordering its mailboxes give
# (every message would look like a race), so the script first builds CAF 0.17.6 itself, with
# -fsanitize=thread, into build-tsan/caf (once: about 4 minutes on 2 cores), from Debian's own
# source tarball (checked against its SHA-256), then troupe against it.
#   scripts/tsan.sh [CTEST ARGS...]   (default: -L process -LE slow, but one test (below);
#                                     `make test-tsan` runs it)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${TSAN_BUILD:-build-tsan}"
jobs="${JOBS:-$(nproc)}"
caf="$PWD/$build/caf"
tarball_url="http://deb.debian.org/debian/pool/main/a/actor-framework/actor-framework_0.17.6.orig.tar.gz"
tarball_sha256="e2bf5bd243f08bb7d8adde197cfe3e6d71314ed3378fe0692f8932f4c3b3928c"

build_caf() {
  local src="$caf/src"
  mkdir -p "$src"
  local tarball="$src/actor-framework_0.17.6.orig.tar.gz"
  if [ ! -f "$tarball" ]; then
    echo "tsan: fetching CAF 0.17.6's source from Debian" >&2
    python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
      "$tarball_url" "$tarball.part"
    mv "$tarball.part" "$tarball"
  fi
  echo "$tarball_sha256  $tarball" | sha256sum -c --quiet -
  rm -rf "$src/actor-framework-0.17.6" "$src/build"
  tar -xzf "$tarball" -C "$src"
  # GCC 12 needs <limits> where CAF 0.17.6 forgot it; C++17 as Debian builds it.
  cmake -S "$src/actor-framework-0.17.6" -B "$src/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX="$caf" \
    -DCMAKE_CXX_FLAGS="-std=c++17 -fsanitize=thread -include limits -Wno-deprecated-declarations" \
    -DCAF_NO_EXAMPLES=yes -DCAF_NO_UNIT_TESTS=yes -DCAF_NO_TOOLS=yes -DCAF_NO_PYTHON=yes \
    -DCAF_NO_OPENCL=yes -DCAF_NO_SUMMARY=yes -DCAF_LOG_LEVEL=QUIET >/dev/null
  cmake --build "$src/build" -j "$jobs"
  cmake --install "$src/build" >/dev/null
}

[ -f "$caf/lib/libcaf_openssl.so" ] || build_caf
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTROUPE_TSAN=ON \
    -DCMAKE_PREFIX_PATH="$caf" -DTROUPE_CUDA=OFF -DTROUPE_BENCHMARKS=OFF ${TSAN_CMAKE_FLAGS:-} \
    >/dev/null
fi
cmake --build "$build" -j "$jobs" --target troupe troupe_integration_tests
cd "$build"
# RealPacing.TwoGangs... compares two wall-clock measurements whose ratio needs the gangs'
# exchanges to overlap as at full speed; ThreadSanitizer's 5-15x slower compute breaks that.
if [ $# -eq 0 ]; then set -- -L process -LE slow -E '^RealPacing[.]TwoGangsSharing'; fi
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --output-on-failure -j "$jobs" "$@"
