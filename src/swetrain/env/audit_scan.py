"""The leak audit's scanner: runs *inside* a task's sandbox, as the agent would, and looks for needles.

Standalone on purpose (standard library only, no swetrain import): the audit sends this file's
source to the sandbox's interpreter with ``python -c`` and the request as JSON on stdin, because
swetrain's own package is not readable from inside the sandbox.

Request ``{"mode": "list"}``: print the visible top-level folders as one JSON line.
Request ``{"mode": "scan", "roots": [...], "needles": [{"id", "text", "anchor"}], "git": bool,
"env": bool}``: search every regular file below ``roots`` (``grep -F`` over the needles' anchor
lines, then each candidate file is read to confirm the whole, possibly multi-line, needle), the
decompressed objects of every git object store found below ``roots`` (``git cat-file
--batch-all-objects``, alternates included), and the environment variables. Prints one JSON line
per hit, ``{"needle": id, "where": "...", "how": "file" | "git" | "env"}``, then ``{"done": n}``.
"""

import json
import os
import subprocess
import sys

SKIP_TOP = ("/proc", "/sys", "/dev")


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def scan_files(roots, needles, seen):
    anchors = sorted({n["anchor"].encode("utf-8", "surrogateescape") for n in needles})
    if not anchors or not roots:
        return
    patterns = b"\n".join(anchors) + b"\n"
    proc = subprocess.Popen(
        ["grep", "-r", "-a", "-F", "-l", "-Z", "-s", "-f", "-", "--", *roots],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    out, _ = proc.communicate(patterns)
    found = [p for p in out.split(b"\0") if p]
    # grep -l only says which files hold some anchor; each is read once to confirm whole needles.
    for path in found:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        for n in needles:
            key = (n["id"], path)
            if key not in seen and n["text"].encode("utf-8", "surrogateescape") in data:
                seen.add(key)
                emit({"needle": n["id"], "where": path.decode("utf-8", "surrogateescape"), "how": "file"})


def git_dirs(roots):
    for root in roots:
        for folder, dirs, files in os.walk(root):
            if "objects" in dirs and "HEAD" in files:
                yield folder
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]


def scan_git(roots, needles):
    wanted = [(n, n["text"].encode("utf-8", "surrogateescape")) for n in needles]
    for gdir in git_dirs(roots):
        proc = subprocess.Popen(
            ["git", "-c", "safe.directory=*", "--git-dir", gdir, "cat-file", "--batch-all-objects", "--unordered",
             "--batch"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        hit = set()
        stream = proc.stdout
        while True:
            header = stream.readline()
            if not header:
                break
            parts = header.split()
            if len(parts) != 3:
                break
            size = int(parts[2])
            body = stream.read(size)
            stream.read(1)
            for n, text in wanted:
                if n["id"] not in hit and text in body:
                    hit.add(n["id"])
                    emit({"needle": n["id"], "where": f"git object {parts[0].decode()} ({parts[1].decode()}) in {gdir}",
                          "how": "git"})
        proc.wait()


def scan_env(needles):
    for name, value in os.environ.items():
        for n in needles:
            if n["text"] in value or n["anchor"] in value:
                emit({"needle": n["id"], "where": f"environment variable {name}", "how": "env"})


def main():
    req = json.loads(sys.stdin.read())
    if req["mode"] == "list":
        tops = sorted("/" + e for e in os.listdir("/"))
        emit({"visible": [t for t in tops if t not in SKIP_TOP], "cwd": os.getcwd()})
        return
    roots = [r for r in req["roots"] if os.path.exists(r)]
    needles = req["needles"]
    seen = set()
    scan_files(roots, needles, seen)
    if req.get("git", True):
        scan_git(roots, needles)
    if req.get("env", True):
        scan_env(needles)
    emit({"done": len(seen)})


if __name__ == "__main__":
    main()
