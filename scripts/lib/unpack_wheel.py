"""Unpacks a wheel with its files' modes (zipfile keeps none of them: the wheel's command must stay executable).

usage: unpack_wheel.py WHEEL DIR     (scripts/test --wheel; scripts/gpu-check --wheel imports unpack())
"""
import os
import sys
import zipfile


def unpack(wheel, directory):
    """Extracts wheel into directory; returns the path of the shim it holds (firstassert/_native/libfirstassert.so).
    Raises OSError or zipfile.BadZipFile, or ValueError when it holds no shim."""
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            path = archive.extract(member, directory)
            mode = member.external_attr >> 16
            if mode:
                os.chmod(path, mode & 0o7777)
    shim = os.path.join(directory, "firstassert", "_native", "libfirstassert.so")
    if not os.path.isfile(shim):
        raise ValueError(f"{wheel} holds no firstassert/_native/libfirstassert.so")
    return shim


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        unpack(sys.argv[1], sys.argv[2])
    except (OSError, zipfile.BadZipFile, ValueError) as error:
        sys.exit(f"unpack_wheel.py: {sys.argv[1]}: {error}")
