#!/usr/bin/env python3
"""Writes docs/config-fields.md from config/config.proto: every message of the config schema
as a table of its fields — type, default, range and the comment written above the field.

    scripts/config_fields.py            # rewrite docs/config-fields.md
    scripts/config_fields.py --check    # exit 1 if the file is not what the schema gives

The schema's comments are the one description of each field; this keeps the reference in step
with them (ctest runs --check).
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = os.path.join(ROOT, "config", "config.proto")
OUTPUT = os.path.join(ROOT, "docs", "config-fields.md")

FIELD = re.compile(r"^(optional|repeated|required)\s+([\w.]+)\s+(\w+)\s*=\s*\d+\s*(\[(.*)\])?\s*;"
                   r"\s*(//\s*(.*))?$")
OPTION = re.compile(r"(\(?\w+\)?)\s*=\s*(\"[^\"]*\"|[^,\]]+)")


def statements(lines):
    """Joins a field declared over several lines into one; yields (comment, text, block) triples,
    where block counts blank-line or comment-separated groups (a comment above several fields
    describes them all)."""
    comment, pending, block, after_field = [], "", 0, False
    for raw in lines:
        line = raw.strip()
        if pending:
            pending += " " + line
            if pending.rstrip().endswith(";") or "//" in line:
                yield comment, pending, block
                comment, pending, after_field = [], "", True
            continue
        if line.startswith("//"):
            if after_field or not comment:
                block += 1
            comment.append(line[2:].strip())
            after_field = False
        elif not line:
            comment, block, after_field = [], block + 1, False
        elif re.match(r"^(optional|repeated|required)\b", line) and ";" not in line:
            pending = line
        else:
            yield comment, line, block
            comment, after_field = [], True


def parse(path):
    """[(message name, message comment, [(name, label, type, default, range, comment)])]."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    messages, open_messages, block_head = [], [], {}
    for comment, text, block in statements(lines):
        start = re.match(r"^message\s+(\w+)\s*\{", text)
        if start:  # nested messages are named Outer.Inner
            name = ".".join([m[0] for m in open_messages[-1:]] + [start.group(1)])
            open_messages.append((name, " ".join(comment), []))
            messages.append(open_messages[-1])
            continue
        if text.startswith("}"):
            if open_messages:
                open_messages.pop()
            continue
        field = FIELD.match(text)
        if not open_messages or not field:
            continue
        current = open_messages[-1]
        label, ftype, name, options, trailing = field.group(1, 2, 3, 5, 7)
        opts = dict((k.strip("()"), v.strip().strip('"')) for k, v in OPTION.findall(options or ""))
        default = opts.get("default", "")
        low, high, count = opts.get("min"), opts.get("max"), opts.get("max_count")
        span = f"[{low}, {high}]" if low is not None or high is not None else ""
        if count:
            span += f"{'; ' if span else ''}at most {count} entries"
        words = " ".join(comment + ([trailing] if trailing else []))
        if comment:
            block_head[block] = name
        elif block in block_head and not trailing:
            words = f"see `{block_head[block]}` above"
        current[2].append((name, label, ftype, default, span, words))
    return messages


def render(messages):
    out = ["# Config fields", "",
           "Every field of the run configuration (`config/config.proto`), message by message:",
           "its type, default, range and meaning. Written by `scripts/config_fields.py` from the",
           "schema's own comments; [config.md](config.md) explains how a config is loaded, "
           "overridden and validated.", ""]
    for name, comment, fields in messages:
        out += [f"## `{name}`", ""]
        if comment:
            out += [comment, ""]
        out += ["| field | type | default | range | meaning |", "|---|---|---|---|---|"]
        for fname, label, ftype, default, span, words in fields:
            kind = f"{ftype} (list)" if label == "repeated" else ftype
            cell = words.replace("|", "\\|")
            out.append(f"| `{fname}` | {kind} | {default and '`' + default + '`'} | {span} | {cell} |")
        out.append("")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    text = render(parse(SCHEMA))
    if args.check:
        try:
            with open(OUTPUT, encoding="utf-8") as f:
                current = f.read()
        except OSError as e:
            print(f"{OUTPUT}: {e.strerror}", file=sys.stderr)
            return 1
        if current != text:
            print(f"{OUTPUT} is not what {SCHEMA} gives: run scripts/config_fields.py",
                  file=sys.stderr)
            return 1
        return 0
    with open(OUTPUT, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
