"""The marker troupe leaves in every folder it writes, and the test of whether a folder is troupe's.

troupe replaces or removes only folders it wrote itself. Each such folder holds `.troupe-output`:
a first line "troupe output: KIND", then the names of the entries troupe put there, one a line.
A folder is troupe's when it has the marker and every entry is named by it or is itself troupe's.
Each file is named before it is written (name_entry), so a folder being written is troupe's at
every moment.
The same rule is implemented for the C++ side in runner/output_folder.cpp.
"""

import os

MARKER = ".troupe-output"
MARKER_UPDATE = ".troupe-output.new"  # a marker being rewritten, renamed over MARKER once whole
PREFIX = "troupe output: "
MAX_DEPTH = 8


def read_marker(folder):
    """(kind, set of entry names), or None when the folder has no readable marker."""
    try:
        with open(os.path.join(folder, MARKER), encoding="utf-8") as file:
            lines = file.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    if not lines or not lines[0].startswith(PREFIX):
        return None
    return lines[0][len(PREFIX):], {line for line in lines[1:] if line}


def is_troupe_folder(folder, depth=0):
    if depth > MAX_DEPTH or os.path.islink(folder) or not os.path.isdir(folder):
        return False
    marker = read_marker(folder)
    if marker is None:
        return False
    _, named = marker
    for entry in os.scandir(folder):
        if entry.name == MARKER:
            continue
        if entry.is_dir(follow_symlinks=False):
            if not is_troupe_folder(entry.path, depth + 1):
                return False
        elif not entry.is_file(follow_symlinks=False) or entry.name not in named:
            return False
    return True


def write_marker(folder, kind):
    """Marks folder as troupe's, naming every entry it holds now. An existing marker is replaced
    whole (the new one, named in it first, is renamed over it), never left cut short."""
    entries = sorted(name for name in os.listdir(folder) if name not in (MARKER, MARKER_UPDATE))
    text = PREFIX + kind + "\n" + "".join(name + "\n" for name in entries)
    if read_marker(folder) is None:
        with open(os.path.join(folder, MARKER), "w", encoding="utf-8") as file:
            file.write(text)
        return
    name_entry(folder, MARKER_UPDATE)
    update = os.path.join(folder, MARKER_UPDATE)
    with open(update, "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(update, os.path.join(folder, MARKER))


def name_entry(folder, name):
    """Names `name` in folder's marker before troupe creates it there, so that a process killed
    while writing it leaves a folder that is still troupe's (a later run removes it)."""
    path = os.path.join(folder, MARKER)
    with open(path, "rb") as file:
        text = file.read()
    line_open = bool(text) and not text.endswith(b"\n")  # cut short by an earlier process
    with open(path, "a", encoding="utf-8") as file:
        file.write(("\n" if line_open else "") + name + "\n")
