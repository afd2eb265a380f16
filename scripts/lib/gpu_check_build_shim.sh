#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Run by scripts/gpu-check when there is no shim to preload: builds libfirstassert.so alone into build/ with what is
# already installed. Unlike scripts/test it installs nothing (no apt-get, no pip: the GPU machine has no network).
# It finds Meson as scripts/lib/setup.sh does (FIRSTASSERT_MESON, FIRSTASSERT_TOOLS_DIR, FIRSTASSERT_BUILD_DIR).
# Exit status 0 when built; otherwise 2, and the last line on stderr says why.
set -euo pipefail
# shellcheck source=setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
if ! find_meson; then
  echo "no meson >= 1.3 here" >&2
  exit 2
fi
ensure_cuda_headers
shim_targets=(src/firstassert:shared_library src/firstassert_recorder:shared_library)
if [ -f "$build_dir/build.ninja" ]; then  # a build directory as it is, whatever else it was set up for
  (run_step "building the shim" "$meson_cmd" compile -C "$build_dir" "${shim_targets[@]}") || exit 2
else
  (configure_and_build -Dtests=false -- "${shim_targets[@]}") || exit 2
fi
