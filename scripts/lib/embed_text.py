#!/usr/bin/env python3
"""Embeds a text file in C++ as `extern const char NAME[]` (a build step of the shim's data tables).

usage: embed_text.py INPUT OUTPUT NAME
"""
import sys


def main():
    source, target, name = sys.argv[1:4]
    text = open(source, encoding="utf-8").read()
    delimiter = "fa_embed"  # at most 16 characters
    if ")" + delimiter + '"' in text:
        sys.exit(f"embed_text.py: {source} contains the raw-string delimiter")
    with open(target, "w", encoding="utf-8") as out:
        out.write(f"// Generated from {source.split('/')[-1]} by scripts/lib/embed_text.py. Do not edit.\n")
        out.write("namespace firstassert {\n")
        out.write(f'extern const char {name}[];\nconst char {name}[] = R"{delimiter}({text}){delimiter}";\n')
        out.write("}  // namespace firstassert\n")


if __name__ == "__main__":
    main()
