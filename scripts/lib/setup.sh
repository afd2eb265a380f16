# Sourced by scripts/test and scripts/demo: makes sure what the build needs is here, then configures and builds
# into build/. Idempotent; a second run only rebuilds what changed.
#
# Debian packages are installed with apt-get when missing and we are root; otherwise the exact apt-get line is
# printed and we exit 2. Meson >= 1.3 (for meson.options) comes from PATH or, failing that, from a private venv in
# .tools/ (Debian 12 ships 1.0).

set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build_dir="${FIRSTASSERT_BUILD_DIR:-$repo_root/build}"
extra_setup_options=()  # e.g. a sanitizer configuration, set by scripts/test
tools_dir="$repo_root/.tools"
cuda_root=${FIRSTASSERT_CUDA_ROOT:-/usr/local/cuda}

required_packages=(
  g++ ninja-build pkg-config python3
  libunwind-dev libboost-stacktrace-dev libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev
)

say() { printf 'firstassert setup: %s\n' "$*" >&2; }

package_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

apt_install() {
  local line="apt-get update && apt-get install -y --no-install-recommends $*"
  if [ "$(id -u)" -ne 0 ]; then
    say "missing Debian packages: $*"
    say "run as root: $line"
    exit 2
  fi
  say "installing: $*"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

ensure_packages() {
  if ! command -v dpkg-query >/dev/null; then
    say "not a Debian system: make sure these are installed: ${required_packages[*]}"
    return
  fi
  local missing=()
  for p in "${required_packages[@]}"; do package_installed "$p" || missing+=("$p"); done
  if [ "${#missing[@]}" -gt 0 ]; then apt_install "${missing[@]}"; fi
}

meson_ok() {
  local version
  version=$("$1" --version 2>/dev/null) || return 1
  printf '%s\n%s\n' "1.3.0" "$version" | sort -V -C
}

ensure_meson() {
  for candidate in meson "$tools_dir/venv/bin/meson"; do
    if meson_ok "$candidate"; then meson_cmd=$candidate; return; fi
  done
  say "meson >= 1.3 not found; installing it into $tools_dir/venv with pip"
  if ! python3 -m venv "$tools_dir/venv" >/dev/null 2>&1; then
    rm -rf "$tools_dir/venv"
    apt_install python3-venv
    python3 -m venv "$tools_dir/venv"
  fi
  "$tools_dir/venv/bin/pip" install --quiet 'meson>=1.3'
  meson_cmd="$tools_dir/venv/bin/meson"
}

ensure_cuda_headers() {
  if [ ! -f "$cuda_root/include/cuda.h" ] || [ ! -f "$cuda_root/include/cupti.h" ]; then
    say "the CUDA toolkit headers are not under $cuda_root/include (set FIRSTASSERT_CUDA_ROOT to the toolkit)"
    exit 2
  fi
}

# Quiet when all goes well; on failure, everything the step printed (ninja prints compiler errors on stdout).
run_quietly() {
  local what=$1 output
  shift
  if ! output=$("$@" 2>&1); then
    printf '%s\n' "$output" >&2
    say "$what failed (the output above is meson's)"
    exit 1
  fi
}

configure_and_build() {
  if [ ! -f "$build_dir/build.ninja" ]; then
    run_quietly "configuring $build_dir" \
      "$meson_cmd" setup "$build_dir" "$repo_root" -Dcuda-root="$cuda_root" "${extra_setup_options[@]}"
  fi
  run_quietly "building $build_dir" "$meson_cmd" compile -C "$build_dir"
}

setup_and_build() {
  ensure_packages
  ensure_meson
  ensure_cuda_headers
  configure_and_build
}
