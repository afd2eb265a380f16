#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Run by scripts/gpu-check when there is no shim to preload: builds libfirstassert.so alone into build/ with what is
# already installed. Unlike scripts/test it installs nothing (no apt-get, no pip: the GPU machine has no network).
# Exit status 0 when built; otherwise 2, and the last line on stderr says why.
set -euo pipefail
# shellcheck source=setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
meson_cmd=""
for candidate in meson "$tools_dir/venv/bin/meson"; do
  if meson_ok "$candidate"; then meson_cmd=$candidate; break; fi
done
if [ -z "$meson_cmd" ]; then
  echo "no meson >= 1.3 here" >&2
  exit 2
fi
ensure_cuda_headers
(
  if [ ! -f "$build_dir/build.ninja" ]; then
    run_quietly "configuring $build_dir" "$meson_cmd" setup "$build_dir" "$repo_root" -Dcuda-root="$cuda_root" \
      -Dtests=false
  fi
  run_quietly "building the shim" "$meson_cmd" compile -C "$build_dir" src/preload/firstassert:shared_library \
    src/preload/firstassert_recorder:shared_library
) || exit 2
