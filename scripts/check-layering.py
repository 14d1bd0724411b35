#!/usr/bin/env python3
"""No upward include: every `#include "FOLDER/..."` in src/MODULE is of a folder that MODULE's static library
links, directly or through others, as CMakeLists.txt declares it (hetccl_module(hetccl_NAME DIR DEPS...)).
The link graph is the one source of truth; this check keeps the includes inside it.

Usage: check-layering.py [REPO_ROOT]. Prints every include that breaks the rule (file:line, what, why) and
exits 1; exits 0 with a one-line summary otherwise. Public headers ("hetccl/...") may be included anywhere.
Not checked: src/abi and src/nccl_abi (the shared libraries over everything), the GPU plugins
(src/device/cuda, src/device/hip: separate shared objects that include only device/)."""
import os
import re
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
cmake = open(os.path.join(root, "CMakeLists.txt")).read()
modules = {}  # library name -> (folder, [library deps])
for m in re.finditer(r"^hetccl_module\((\w+)\s+(\w+)([^)]*)\)", cmake, re.M):
    modules[m.group(1)] = (m.group(2), [d for d in m.group(3).split() if d.startswith("hetccl_")])
if len(modules) < 5:
    sys.exit(f"check-layering: found only {len(modules)} hetccl_module() calls in CMakeLists.txt")
folder_of = {lib: folder for lib, (folder, _) in modules.items()}


def reach(lib, seen=None):
    seen = set() if seen is None else seen
    for dep in modules[lib][1]:
        if dep in modules and dep not in seen:
            seen.add(dep)
            reach(dep, seen)
    return seen


allowed = {folder: {folder} | {folder_of[d] for d in reach(lib)} for lib, (folder, _) in modules.items()}
known = set(allowed) | {"abi", "nccl_abi"}
bad, files = [], 0
for folder in sorted(allowed):
    for dirpath, _, names in os.walk(os.path.join(root, "src", folder)):
        rel_dir = os.path.relpath(dirpath, os.path.join(root, "src"))
        if rel_dir.startswith(("device/cuda", "device/hip")):
            continue
        for name in sorted(names):
            if not name.endswith((".cc", ".hpp", ".h", ".cu", ".cuh")):
                continue
            files += 1
            path = os.path.join(dirpath, name)
            for lineno, line in enumerate(open(path, encoding="utf-8"), 1):
                m = re.match(r'\s*#\s*include\s+"([\w]+)/', line)
                if not m or m.group(1) == "hetccl":
                    continue
                target = m.group(1)
                if target not in known:
                    continue  # a path relative to the file's own folder
                if target not in allowed[folder]:
                    bad.append(f"src/{rel_dir}/{name}:{lineno}: includes {target}/, which src/{folder} "
                               f"does not link (it links: {', '.join(sorted(allowed[folder]))})")
for line in bad:
    print(line)
if bad:
    sys.exit(1)
print(f"check-layering: {files} files of {len(allowed)} modules include only what their libraries link")
