"""`python -m firstassert ARGS` and the `firstassert` console command: the firstassert program of this
installation, run with ARGS (it replaces this process, so its exit status and signals are the caller's).

`python -m firstassert lib` prints the libfirstassert.so to put in LD_PRELOAD.
"""

import os
import sys

from .library import NO_CLI, cli_path


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    program = cli_path()
    if program is None:
        print("firstassert: " + NO_CLI, file=sys.stderr)
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(program, [program] + args)
    except OSError as error:
        print("firstassert: cannot run %s: %s" % (program, error.strerror), file=sys.stderr)
        return 2
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
