# Sourced by scripts/lib/setup.sh: real PyTorch for scripts/simtorch and the torch suites, and CUDA 12's headers for
# the simulator's CUDA 12 libraries.

# The PyTorch versions the simulator runs, newest first (the default; the torch suite's): PyPI's default CUDA build of
# each, whose wheel's Requires-Dist names the CUDA it loads (nvidia-*-cu13 or -cu12). Each is a venv of its own:
# VERSION, the CUDA major of its libraries (libcudart.so.N), the MiB it needs under .tools, the MB its wheels are
# (what pip downloads), its pins.
# Installed without their nvidia-* dependencies: the simulator's libraries stand in for them (tests/sim; CUDA 12's in
# tests/sim/cuda12 and tests/sim/standins/cuda12), found through LD_LIBRARY_PATH because the directories of the
# wheels' RPATH do not exist. Triton, torch 2.15's pin (triton~=3.9.0 on Linux), comes with the newest for
# torch.compile: it compiles its kernels here (its own ptxas, no GPU needed) and the simulator runs them from the IR
# it keeps beside each cubin (tests/sim/triton), whose dialect is Triton 3.9's; the older versions come without
# Triton, so torch.compile is not tested on them. The rest of torch's dependencies are pure Python; torch 2.4.1 and
# 2.8.0 take the same pins (cp311 wheels, Python 3.11).
torch_matrix=(
  "2.15.0 13 3600 825 torch==2.15.0 triton==3.9.0"
  "2.8.0 12 2800 888 torch==2.8.0"
  "2.4.1 12 2700 797 torch==2.4.1"
)
torch_python_pins="filelock==4.3.2 fsspec==2026.9.0 jinja2==3.1.6 markupsafe==3.0.4 mpmath==1.3.0 networkx==3.6.1 \
numpy==2.4.6 sympy==1.14.0 typing-extensions==4.16.0"
# A Jupyter kernel in the newest's venv, for the torch suite's notebook (with their dependencies, resolved by pip).
torch_notebook_pins="ipykernel==7.4.0 $notebook_common_pins"
install_torch=false  # scripts/test, scripts/simtorch and scripts/torch-bench set it: the selected version
install_torch_matrix=false  # scripts/test --suite torch-matrix sets it: every version
torch_suite=true  # false: the build's torch suites are told there is no venv (scripts/test under sanitizers)

torch_newest=${torch_matrix[0]%% *}
torch_versions() { local entry; for entry in "${torch_matrix[@]}"; do printf '%s ' "${entry%% *}"; done; }

# select_torch VERSION: sets torch_version, torch_cuda, torch_disk_mib, torch_download_mb, torch_pins, torch_dir and
# torch_all_pins (what its venv holds exactly: a venv whose pins changed is made anew). Returns 1 for a version not in
# the matrix.
select_torch() {
  local entry version cuda disk download pins
  for entry in "${torch_matrix[@]}"; do
    read -r version cuda disk download pins <<<"$entry"
    [ "$version" = "$1" ] || continue
    torch_version=$version torch_cuda=$cuda torch_disk_mib=$disk torch_download_mb=$download torch_pins=$pins
    if [ "$version" = "$torch_newest" ]; then
      torch_dir="$tools_dir/torch"
      torch_all_pins="$torch_pins $torch_python_pins $torch_notebook_pins"
    else
      torch_dir="$tools_dir/torch-$version"
      torch_all_pins="$torch_pins $torch_python_pins"
    fi
    return 0
  done
  return 1
}
select_torch "$torch_newest"

torch_installed() { [ "$(cat "$torch_dir/firstassert-pins" 2>/dev/null)" = "$torch_all_pins" ]; }

# Triton builds its launcher and driver utilities with gcc against Python.h at a job's first compiled kernel
# (triton/runtime/build.py): the venv's Python needs its headers (Debian: python3-dev).
ensure_python_headers() {
  local include
  [[ "$torch_pins" == *triton* ]] || return 0
  include=$("$torch_dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null) || return 0
  [ -f "$include/Python.h" ] && return 0
  case $include in
    /usr/include/*) apt_install python3-dev ;;
    *) say "no Python.h in $include: Triton cannot build its launcher there (hand-written Triton kernels fail)" ;;
  esac
}

# The selected version's venv; returns 1 when it is not there and could not be installed (said why).
ensure_torch() {
  local free_mib
  if torch_installed; then
    ensure_python_headers
    return 0
  fi
  $install_torch || $install_torch_matrix || return 1
  mkdir -p "$tools_dir"
  free_mib=$(df -Pm "$tools_dir" | awk 'NR == 2 {print $4}')
  if [ -n "$free_mib" ] && [ "$free_mib" -lt "$torch_disk_mib" ]; then
    say "PyTorch $torch_version needs about $torch_disk_mib MiB under $tools_dir and $free_mib MiB are free:" \
      "not installed (the torch suites and scripts/simtorch need it)"
    return 1
  fi
  say "installing PyTorch $torch_version ($torch_pins from PyPI: a $torch_download_mb MB download, about a minute" \
    "on a fast link) into $torch_dir, for scripts/simtorch and the torch suites"
  rm -rf "$torch_dir"
  make_venv "$torch_dir"
  # shellcheck disable=SC2086  # the pins are words
  if ! python3 "$repo_root/scripts/lib/progress.py" "pip install $torch_pins (no nvidia-* packages)" -- \
    "$torch_dir/bin/pip" install --disable-pip-version-check --no-deps $torch_pins $torch_python_pins; then
    say "PyTorch $torch_version could not be installed from PyPI (is the index reachable? the output above says why)"
    rm -rf "$torch_dir"
    return 1
  fi
  # shellcheck disable=SC2086  # the pins are words
  if [ "$torch_dir" = "$tools_dir/torch" ] &&
    ! python3 "$repo_root/scripts/lib/progress.py" "pip install ipykernel and nbclient" -- \
      "$torch_dir/bin/pip" install --disable-pip-version-check $torch_notebook_pins; then
    say "ipykernel and nbclient could not be installed from PyPI (the output above says why)"
    rm -rf "$torch_dir"
    return 1
  fi
  printf '%s\n' "$torch_all_pins" >"$torch_dir/firstassert-pins"
  ensure_python_headers
}

# Every version of the matrix; one that cannot be installed is said, and its tests say they are skipped.
ensure_torch_matrix() {
  local selected=$torch_version version
  for version in $(torch_versions); do
    select_torch "$version"
    ensure_torch || say "the torch-matrix suite runs without PyTorch $version"
  done
  select_torch "$selected"
}

# -Dtorch-venv: the newest's venv when it is installed (scripts/test and scripts/simtorch install it; others use it
# if there).
torch_venv_option() {
  local selected=$torch_version
  select_torch "$torch_newest"
  if $torch_suite && torch_installed; then printf '%s' "$torch_dir"; fi
  select_torch "$selected"
}

# -Dtorch-matrix: VERSION=VENV of each older version installed (the newest is the torch suite's own).
torch_matrix_option() {
  local selected=$torch_version version entries=()
  if $torch_suite; then
    for version in $(torch_versions | cut -d' ' -f2-); do
      select_torch "$version"
      if torch_installed; then entries+=("$version=$torch_dir"); fi
    done
  fi
  select_torch "$selected"
  (IFS=,; printf '%s' "${entries[*]}")
}

# CUDA 12's runtime and CUPTI headers, from PyPI (the wheels torch 2.8.0 itself pins), for the simulator's
# libcudart.so.12 and libcupti.so.12 (tests/sim/cuda12): 11 MB.
cuda12_pins="nvidia-cuda-runtime-cu12==12.8.90 nvidia-cuda-cupti-cu12==12.8.90"
cuda12_dir="$tools_dir/cuda12"
install_cuda12_headers=false  # scripts/test, scripts/simtorch and scripts/torch-bench set it
cuda12_installed() { [ "$(cat "$cuda12_dir/firstassert-pins" 2>/dev/null)" = "$cuda12_pins" ]; }

ensure_cuda12_headers() {
  local pip="$tools_dir/venv/bin/pip"
  if cuda12_installed || ! $install_cuda12_headers; then return 0; fi
  say "downloading CUDA 12's runtime and CUPTI headers ($cuda12_pins from PyPI, 11 MB) into $cuda12_dir, for the" \
    "simulator's CUDA 12 libraries"
  rm -rf "$cuda12_dir"
  [ -x "$pip" ] || make_venv "$tools_dir/venv"
  # shellcheck disable=SC2086  # the pins are words
  if ! python3 "$repo_root/scripts/lib/progress.py" "pip download $cuda12_pins" -- \
      "$pip" download --disable-pip-version-check --no-deps -d "$cuda12_dir/wheels" $cuda12_pins ||
    ! python3 "$repo_root/scripts/lib/cuda12_wheels.py" "$cuda12_dir/wheels" "$cuda12_dir" >/dev/null; then
    say "CUDA 12's headers could not be had (the output above says why): the simulator's CUDA 12 libraries are not" \
      "built, and PyTorch's CUDA 12 builds do not run on it"
    rm -rf "$cuda12_dir"
    return 0
  fi
  rm -rf "$cuda12_dir/wheels"
  printf '%s\n' "$cuda12_pins" >"$cuda12_dir/firstassert-pins"
}

# -Dcuda12-root: the headers when they are here.
cuda12_root_option() {
  if cuda12_installed; then printf '%s' "$cuda12_dir"; fi
}
