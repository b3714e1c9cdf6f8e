#!/usr/bin/env bash
# ferry's two set-up commands (see README.md, "Quick start"):
#   bash dev.sh bench   install what is missing, build Release, run the main job
#   bash dev.sh test    install what is missing, build, run the whole test suite
# Other commands used by CI: deps, build <preset>, ctest <preset> [args...],
# format-check (clang-format-14 over the libraries' sources); and
# screenshot, which remakes the README's picture of the dashboard
# (docs/images/dashboard.png) with the browser test.
set -euo pipefail
cd "$(dirname "$0")"

# Debian 12 packages ferry builds and tests with.
FERRY_PACKAGES=(
  g++ cmake ninja-build ccache pkg-config make
  libcaf-dev libcereal-dev libboost-dev libmsgpack-cxx-dev
  googletest libgtest-dev libbenchmark-dev liblz4-dev libzstd-dev libssl-dev openssl
  libsqlite3-dev libpq-dev postgresql-15 postgresql-client-15
  python3 python3-msgpack python3-prometheus-client prometheus
  gnuplot-nox iproute2 nftables procps valgrind
  libjs-chart.js chromium chromium-driver python3-selenium
)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

deps() {
  local missing=()
  for p in "${FERRY_PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
      || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "dev.sh: installing ${missing[*]}" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends "${missing[@]}" >&2
  fi
}

build() {
  local preset=$1
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$(nproc)"
}

cmd=${1:-}
shift || true
case "$cmd" in
  deps) deps "$@" ;;
  build) build "${1:-release}" ;;
  bench)
    deps
    build release >&2
    exec build/release/bench/ferry-bench --quick "$@"
    ;;
  test)
    deps
    build release
    ctest --preset release "$@"
    ;;
  ctest)
    preset=${1:-release}
    shift || true
    ctest --preset "$preset" "$@"
    ;;
  screenshot)
    deps
    build release >&2
    mkdir -p docs/images
    (cd build/release/tests/metrics &&
      FERRY_DASHBOARD_SETTLE=${FERRY_DASHBOARD_SETTLE:-45} \
      FERRY_MAKE_TEST_PKI="$PWD/../../../../tests/support/scripts/make_test_pki.sh" \
      /usr/bin/python3 ../../../../tests/metrics/dashboard_browser_test.py \
        ./ferry_metrics_node lanes "$OLDPWD/docs/images/dashboard.png")
    ;;
  format-check)
    deps clang-format-14
    git ls-files 'framework/*.cpp' 'framework/*.hpp' 'serializers/*.cpp' \
      'serializers/*.hpp' 'store/*.cpp' 'store/*.hpp' \
      | xargs clang-format-14 --dry-run -Werror
    ;;
  *)
    echo "usage: bash dev.sh {bench|test|deps|build <preset>|ctest <preset>|format-check|screenshot}" >&2
    exit 2
    ;;
esac
