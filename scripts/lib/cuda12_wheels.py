"""Unpacks CUDA 12's runtime and CUPTI wheels from PyPI (nvidia-cuda-runtime-cu12, nvidia-cuda-cupti-cu12) into one
toolkit-shaped directory: their headers into DIR/include, NVIDIA's libcudart.so.12 and libcupti.so.12 into DIR/lib
(the simulator's tests compare its exports with theirs; nothing loads them).

usage: cuda12_wheels.py WHEEL_DIR DIR
"""
import pathlib
import sys
import zipfile

PACKAGES = ("nvidia/cuda_runtime/", "nvidia/cuda_cupti/")
LIBRARIES = ("libcudart.so.12", "libcupti.so.12")


def unpack(wheel_dir, directory):
    """Returns how many files it wrote; raises OSError or zipfile.BadZipFile, or ValueError when a part is missing."""
    written = 0
    found = set()
    for wheel in sorted(pathlib.Path(wheel_dir).glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.infolist():
                name = member.filename
                package = next((p for p in PACKAGES if name.startswith(p)), None)
                if package is None or member.is_dir() or name.endswith("__init__.py"):
                    continue
                inner = name[len(package):]
                if inner.startswith("include/"):
                    target = directory / inner
                elif inner.startswith("lib/") and pathlib.PurePath(inner).name in LIBRARIES:
                    target = directory / "lib" / pathlib.PurePath(inner).name
                    found.add(target.name)
                else:
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.read(member))
                written += 1
    for needed in ("include/cuda_runtime_api.h", "include/cupti.h"):
        if not (directory / needed).is_file():
            raise ValueError(f"the wheels in {wheel_dir} hold no {needed}")
    missing = set(LIBRARIES) - found
    if missing:
        raise ValueError(f"the wheels in {wheel_dir} hold no {', '.join(sorted(missing))}")
    return written


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        print(f"{unpack(sys.argv[1], pathlib.Path(sys.argv[2]))} files unpacked into {sys.argv[2]}")
    except (OSError, zipfile.BadZipFile, ValueError) as error:
        sys.exit(f"cuda12_wheels.py: {error}")
