import sys


def say(message):
    """One line of firstassert's own on stderr."""
    print("firstassert: " + message, file=sys.stderr)
