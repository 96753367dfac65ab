#!/usr/bin/env python3
"""Checks every `#include "FOLDER/..."` in troupe's sources against docs/architecture.md's rules.

The rules are the ```layers block under "Who may include whom": each line `PART: PART...` names
the parts a part's files may include directly; a part may also include itself, base/ and
everything the parts it names may include. A part is a top folder, or the files a line
`part NAME = PATTERN...` takes out of one (glob patterns, relative to the repository root;
indented lines add more). `without caf: PART...` names the parts whose files include no CAF header.

Usage: scripts/check-layering.py [--root DIR]. Exit status 0 when every include keeps the rules,
1 with one line per include that does not (FILE:LINE: ...), 2 when the rules cannot be read.
"""

import argparse
import fnmatch
import os
import re
import sys

SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cc", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
CAF_INCLUDE = re.compile(r'^\s*#\s*include\s+[<"](caf/[^>"]+)[>"]')
RULES_DOC = os.path.join("docs", "architecture.md")


class RulesError(Exception):
    pass


def read_rules(doc_path):
    """Returns (parts, deps, without_caf): {name: [patterns]}, {part: [parts it names]} and the
    parts whose files include no CAF header."""
    with open(doc_path, encoding="utf-8") as doc:
        text = doc.read()
    block = re.search(r"^```layers\n(.*?)^```", text, re.S | re.M)
    if not block:
        raise RulesError(f"{doc_path}: no ```layers block")
    parts, deps, without_caf = {}, {}, []
    last_part = None
    for number, raw in enumerate(block.group(1).splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if raw[0].isspace() and last_part:  # more files of the part above
            parts[last_part] += line.split()
            continue
        last_part = None
        if line.startswith("part "):
            name, _, patterns = line[len("part "):].partition("=")
            if not patterns.split():
                raise RulesError(f"{doc_path}: layers line {number}: a part with no files")
            last_part = name.strip()
            parts[last_part] = patterns.split()
            continue
        name, colon, named = line.partition(":")
        if not colon:
            raise RulesError(f"{doc_path}: layers line {number}: expected 'PART: PART...'")
        if name.strip() == "without caf":
            without_caf = named.split()
        else:
            deps[name.strip()] = named.split()
    for name in without_caf:
        if name not in deps:
            raise RulesError(f"{doc_path}: 'without caf' names '{name}', which has no line")
    for name, named in deps.items():
        for part in named:
            if part not in deps:
                raise RulesError(f"{doc_path}: '{name}' names '{part}', which has no line")
    for name in parts:
        if name not in deps:
            raise RulesError(f"{doc_path}: part '{name}' has no line of what it may include")
    return parts, deps, without_caf


def allowed_parts(deps):
    """What each part may include: itself, base and the closure of what it names."""
    allowed = {}

    def visit(part, path):
        if part in path:
            raise RulesError("the layers go round: " + " -> ".join(path + [part]))
        if part not in allowed:
            reach = {part, "base"}
            for named in deps[part]:
                reach |= visit(named, path + [part])
            allowed[part] = reach
        return allowed[part]

    for part in deps:
        visit(part, [])
    return allowed


def part_of(path, parts):
    for name, patterns in parts.items():
        if any(fnmatch.fnmatchcase(path, pattern) for pattern in patterns):
            return name
    return path.split("/", 1)[0]


def source_files(root, folders):
    for folder in sorted(folders):
        for directory, subdirs, files in os.walk(os.path.join(root, folder)):
            subdirs.sort()
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(directory, name), root)


def check(root):
    """Returns the broken includes, one line each."""
    parts, deps, without_caf = read_rules(os.path.join(root, RULES_DOC))
    allowed = allowed_parts(deps)
    folders = {name for name in deps if name not in parts}
    problems = []
    for entry in sorted(os.listdir(root)):
        if entry in folders or entry.startswith((".", "build")):
            continue
        if os.path.isfile(os.path.join(root, entry, "CMakeLists.txt")):
            problems.append(f"{entry}/: a source folder with no line in {RULES_DOC}'s layers")
    for path in source_files(root, folders):
        source = part_of(path, parts)
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as text:
            for number, line in enumerate(text, 1):
                caf = CAF_INCLUDE.match(line)
                if caf and source in without_caf:
                    problems.append(f"{path}:{number}: includes <{caf.group(1)}>, and {source} "
                                    "includes no CAF header (docs/architecture.md)")
                match = INCLUDE.match(line)
                if not match or "/" not in match.group(1):
                    continue
                included = match.group(1)
                if included.split("/", 1)[0] not in folders:
                    continue  # a library's header (absl/...) or a path relative to the file
                target = part_of(included, parts)
                if target not in allowed[source]:
                    problems.append(f"{path}:{number}: includes \"{included}\" ({target}), which "
                                    f"{source} may not (docs/architecture.md, Who may include "
                                    "whom)")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), help="the repository root (default: this script's)")
    args = parser.parse_args()
    try:
        problems = check(args.root)
    except (OSError, RulesError) as error:
        print(f"check-layering: {error}", file=sys.stderr)
        return 2
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
