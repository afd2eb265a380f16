# Sourced by scripts/test, demo, bench, fuzz, wheel, check-wheel, simtorch, torch-bench and gpu-check's shim
# build: makes sure what the build needs is here, then configures and builds into build/. Idempotent; a second run
# only rebuilds what changed, and one with nothing to do is quiet.
#
# Debian packages are installed with apt-get when missing and we are root; otherwise the exact apt-get line is
# printed and we exit 2. Meson >= 1.3 (for meson.options) comes from PATH or, failing that, from a private venv in
# .tools/ (Debian 12 ships 1.0). Each long step says what it does and shows that it moves (scripts/lib/progress.py);
# its output is shown only when it fails.
#
# Settings (environment):
#   FIRSTASSERT_MESON=auto   (the default) a meson >= 1.3 on PATH, else the set-up's own in .tools/venv, installed
#                            there with pip when missing
#   FIRSTASSERT_MESON=own    the set-up's own in .tools/venv even where one is on PATH: the path a fresh machine takes
#                            (.ci/run sets it, so that CI checks that path)
#   FIRSTASSERT_MESON=PATH   that meson, which must be >= 1.3
#   FIRSTASSERT_TOOLS_DIR    where the set-up's own tools go (default: .tools in the checkout)
#   FIRSTASSERT_BUILD_DIR    the build directory (default: build in the checkout)
#   FIRSTASSERT_CUDA_ROOT    the CUDA toolkit whose headers are used (default: /usr/local/cuda)

set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build_dir="${FIRSTASSERT_BUILD_DIR:-$repo_root/build}"
extra_setup_options=()  # e.g. a sanitizer configuration, set by scripts/test
tools_dir="${FIRSTASSERT_TOOLS_DIR:-$repo_root/.tools}"
cuda_root=${FIRSTASSERT_CUDA_ROOT:-/usr/local/cuda}
meson_choice=${FIRSTASSERT_MESON:-auto}
tested_binaries=""  # -Dtested-binaries: the shim and command the suites run, when not this build's (scripts/test --wheel)

# zstd: the torch suites read the wheels' compressed device code (tests/sim/aten/cubin_facts.py).
required_packages=(
  g++ binutils ninja-build pkg-config python3 zstd
  libunwind-dev libboost-stacktrace-dev libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev
)

# What scripts/wheel and scripts/check-wheel need beyond the build's: downloads, the sources' make and xz archives,
# venvs, and pip for `pip install --user`.
wheel_packages=(curl make xz-utils python3-venv python3-pip)

say() { printf 'firstassert setup: %s\n' "$*" >&2; }

# One long step: WHAT, then the command. Its progress is shown while it runs, its output only if it fails (then we
# exit with its status). Without Python yet (the first apt-get of a bare machine), its output is held the same way.
run_step() {
  local what=$1 output status
  shift
  if command -v python3 >/dev/null; then
    python3 "$repo_root/scripts/lib/progress.py" "$what" -- "$@" || exit $?
    return
  fi
  status=0
  output=$("$@" 2>&1) || status=$?
  if [ "$status" -ne 0 ]; then
    printf '%s\n' "$output" >&2
    say "$what failed (exit status $status; the output above is $(basename "$1")'s)"
    exit "$status"
  fi
}

package_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# make_venv DIR: a Python venv at DIR (anew); Debian's python3 makes venvs only with python3-venv, installed then.
make_venv() {
  mkdir -p "$(dirname "$1")"
  if ! python3 -m venv "$1" >/dev/null 2>&1; then
    rm -rf "$1"
    apt_install python3-venv
    run_step "python3 -m venv" python3 -m venv "$1"
  fi
}

apt_install() {
  local line="apt-get update && apt-get install -y --no-install-recommends $*"
  if [ "$(id -u)" -ne 0 ]; then
    say "missing Debian packages: $*"
    say "run as root: $line"
    exit 2
  fi
  say "installing Debian packages: $*"
  export DEBIAN_FRONTEND=noninteractive
  run_step "apt-get update" apt-get update
  run_step "apt-get install" apt-get install -y --no-install-recommends "$@"
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

# Sets meson_cmd to the meson FIRSTASSERT_MESON chooses, if it is here; returns 1 when it is not (nothing installed).
find_meson() {
  local candidates
  case "$meson_choice" in
    auto) candidates=(meson "$tools_dir/venv/bin/meson") ;;
    own) candidates=("$tools_dir/venv/bin/meson") ;;
    *) candidates=("$meson_choice") ;;
  esac
  for candidate in "${candidates[@]}"; do
    if meson_ok "$candidate"; then meson_cmd=$candidate; return 0; fi
  done
  return 1
}

ensure_meson() {
  if find_meson; then return; fi
  case "$meson_choice" in
    auto | own) ;;
    *)
      say "FIRSTASSERT_MESON=$meson_choice is not a meson >= 1.3 (it says: $("$meson_choice" --version 2>&1 | head -n 1))"
      exit 2
      ;;
  esac
  say "installing meson >= 1.3 into $tools_dir/venv with pip$([ "$meson_choice" = own ] && echo ' (FIRSTASSERT_MESON=own)')"
  make_venv "$tools_dir/venv"
  run_step "pip install meson" "$tools_dir/venv/bin/pip" install --disable-pip-version-check 'meson>=1.3'
  meson_cmd="$tools_dir/venv/bin/meson"
  say "using $meson_cmd ($("$meson_cmd" --version))"
}

ensure_cuda_headers() {
  if [ ! -f "$cuda_root/include/cuda.h" ] || [ ! -f "$cuda_root/include/cupti.h" ]; then
    say "the CUDA toolkit headers are not under $cuda_root/include (set FIRSTASSERT_CUDA_ROOT to the toolkit)"
    exit 2
  fi
}

# configure_and_build [MESON SETUP OPTIONS...] [-- TARGETS...]
# A build directory configured with other options (another toolkit, tests off) is reconfigured with these: the
# options it was set up with are kept beside it.
configure_and_build() {
  local setup_options=() targets=() options previous stamp="$build_dir/firstassert-setup-options"
  previous=$(cat "$stamp" 2>/dev/null || true)
  while [ $# -gt 0 ] && [ "$1" != -- ]; do setup_options+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  targets=("$@")
  # Fatal warnings: a feature newer than meson.build's meson_version (the set-up installs the newest Meson, where
  # it would work) fails here, not on a machine with an older Meson >= 1.3 on PATH.
  setup_options=(--fatal-meson-warnings -Dcuda-root="$cuda_root" "${extra_setup_options[@]}" "${setup_options[@]}")
  options="${setup_options[*]}"
  if [ ! -f "$build_dir/build.ninja" ]; then
    say "configuring $build_dir (meson setup)"
    run_step "configuring $build_dir" "$meson_cmd" setup "$build_dir" "$repo_root" "${setup_options[@]}"
  elif [ "$previous" != "$options" ]; then
    say "reconfiguring $build_dir with $options (it was set up with ${previous:-options not recorded})"
    # Read meson.options anew first (an option added since the directory was set up is unknown until then), then set
    # the options. Where the old ones no longer hold (a toolkit gone, a wheel unpacked elsewhere), set up afresh.
    local defines=()
    for option in "${setup_options[@]}"; do [[ "$option" == -D* ]] && defines+=("$option"); done
    if ! "$meson_cmd" setup --reconfigure "$build_dir" "$repo_root" >/dev/null 2>&1 ||
      ! "$meson_cmd" configure "$build_dir" "${defines[@]}" >/dev/null 2>&1; then
      run_step "setting up $build_dir afresh" "$meson_cmd" setup --wipe "$build_dir" "$repo_root" "${setup_options[@]}"
    fi
  fi
  printf '%s\n' "$options" >"$stamp"
  run_step "building $build_dir" "$meson_cmd" compile -C "$build_dir" "${targets[@]}"
}

# The notebook suite's kernels, from PyPI: one venv per ipykernel line under $tools_dir/notebook/, each with the
# nbclient that drives it. Pinned, so that a kernel release cannot turn CI red or green by itself; a venv whose pins
# changed is made anew.
notebook_kernels=(
  "ipykernel-6 ipykernel==6.31.0"
  "ipykernel-7 ipykernel==7.4.0"
)
notebook_common_pins="ipython==9.18.1 jupyter_client==8.10.0 nbclient==0.11.0 nbformat==5.11.1"
notebook_kernel_dirs=""  # -Dnotebook-kernels, set by ensure_notebook_kernels
install_notebook_kernels=false  # scripts/test sets it; scripts/demo and scripts/bench use the venvs already there

ensure_notebook_kernels() {
  local entry name pins dir dirs=()
  for entry in "${notebook_kernels[@]}"; do
    name=${entry%% *}
    pins="${entry#* } $notebook_common_pins"
    dir="$tools_dir/notebook/$name"
    if [ "$(cat "$dir/firstassert-pins" 2>/dev/null)" != "$pins" ]; then
      $install_notebook_kernels || continue
      say "installing $name ($pins) into $dir with pip, for the notebook suite"
      rm -rf "$dir"
      make_venv "$dir"
      # shellcheck disable=SC2086  # the pins are words
      run_step "pip install $name" "$dir/bin/pip" install --disable-pip-version-check $pins
      printf '%s\n' "$pins" >"$dir/firstassert-pins"
    fi
    dirs+=("$dir")
  done
  notebook_kernel_dirs=$(IFS=,; printf '%s' "${dirs[*]}")
}

source "$(dirname "${BASH_SOURCE[0]}")/torch_setup.sh"

setup_and_build() {
  ensure_packages
  ensure_meson
  ensure_cuda_headers
  ensure_notebook_kernels
  ensure_cuda12_headers
  if $install_torch && ! ensure_torch; then exit 2; fi
  if $install_torch_matrix; then ensure_torch_matrix; fi
  configure_and_build -Dtests=true -Dtested-binaries="$tested_binaries" -Dnotebook-kernels="$notebook_kernel_dirs" \
    -Dtorch-venv="$(torch_venv_option)" -Dtorch-matrix="$(torch_matrix_option)" -Dcuda12-root="$(cuda12_root_option)"
}
