#!/usr/bin/env python3
"""Check fslab's crash-state verdicts state by state, independently.

For a case run with `--crash flush --crash-record` (so its recording is
kept), this rebuilds every judged state from `before.img` and `writes.log`
by its own reading of the dm-log-writes format, mounts it, judges it by its
own rules for the program, and compares good/bad with fslab's outcome.

Programs judged: `sqlite` (python's sqlite3: integrity_check is ok and every
row marked durable for the state is there) and `atomic-replace` (`data` is
`size` bytes of one version's lines, no older than the newest marked).

Usage: sudo bench/crash_independent.py RUN.json [CASE_INDEX ...]
  RUN.json  the output of `fslab run ... --crash flush --crash-record --json`
Exit 0 when every state agrees, 1 when one does not, 3 when it cannot run.
"""

import json
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile

MAGIC = 0x6A736677736872
FLUSH, DISCARD = 1, 4


def read_log(path):
    """The log's entries, in order: (sector, sectors, flags, data offset), in log sectors."""
    with open(path, "rb") as log:
        magic, version, count, sector_size = struct.unpack("<QQQI", log.read(28))
        if magic != MAGIC or version != 1:
            sys.exit(f"{path}: not a write log (magic {magic:#x}, version {version})")
        entries, at = [], 1
        for _ in range(count):
            log.seek(at * sector_size)
            sector, sectors, flags, _data_len = struct.unpack("<QQQQ", log.read(32))
            has_data = not flags & DISCARD and sectors > 0
            entries.append((sector, sectors, flags, (at + 1) * sector_size))
            at += 1 + (sectors if has_data else 0)
    return entries, sector_size


def rebuild(before, log_path, entries, sector_size, prefix, image):
    """`before` with the first `prefix` entries applied, written to `image`."""
    subprocess.run(["cp", "--reflink=auto", "--sparse=always", before, image], check=True)
    with open(log_path, "rb") as log, open(image, "r+b") as out:
        for sector, sectors, flags, data in entries[:prefix]:
            if sectors == 0:
                continue
            out.seek(sector * sector_size)
            if flags & DISCARD:
                out.write(bytes(sectors * sector_size))
            else:
                log.seek(data)
                out.write(log.read(sectors * sector_size))


def durable_names(marks, entries, prefix):
    """Names a state holding `prefix` entries must keep: a mark counts once the
    last flush before it (or the start, when none) is in the state."""
    flushes = [i for i, e in enumerate(entries) if e[2] & FLUSH]
    names = []
    for mark in marks:
        before = [f for f in flushes if f < mark["entries"]]
        need = before[-1] + 1 if before else 0
        if prefix >= need:
            names.append(mark["what"].removeprefix("durable:"))
    return names


def judge_sqlite(folder, names):
    rows = [int(n.removeprefix("row-")) for n in names if n.startswith("row-")]
    if not os.path.exists(os.path.join(folder, "db")):
        return "no database" if rows else None
    with tempfile.TemporaryDirectory() as copy:
        for name in os.listdir(folder):
            if name.startswith("db"):
                shutil.copy(os.path.join(folder, name), copy)
        db = sqlite3.connect(os.path.join(copy, "db"))
        try:
            said = db.execute("PRAGMA integrity_check").fetchone()[0]
            if said != "ok":
                return f"integrity_check: {said}"
            if rows:
                have = {k for (k,) in db.execute("SELECT k FROM t")}
                lost = [r for r in rows if r not in have]
                if lost:
                    return f"rows {lost} lost"
        except sqlite3.DatabaseError as e:
            return f"unreadable: {e}" if rows or "no such table" not in str(e) else None
        finally:
            db.close()
    return None


def judge_replace(folder, names, size):
    path = os.path.join(folder, "data")
    if not os.path.exists(path):
        return "data missing"
    data = open(path, "rb").read()
    if len(data) != size:
        return f"data is {len(data)} bytes"
    first = data.split(b"\n", 1)[0]
    if not first.startswith(b"version ") or not first[8:].isdigit():
        return "data is no version"
    version = int(first[8:])
    line = f"version {version}\n".encode()
    if (line * (size // len(line) + 1))[:size] != data:
        return "data mixes versions"
    newest = max([int(n.removeprefix("v-")) for n in names if n.startswith("v-")], default=0)
    return f"version {version} older than {newest}" if version < newest else None


def judge_state(image, fs, scenario, params, names):
    """Mount a copy of the state and judge it; the reason it is bad, or None."""
    loop = subprocess.run(["losetup", "--find", "--show", image], capture_output=True, text=True, check=True).stdout.strip()
    mnt = tempfile.mkdtemp(prefix="fslab-indep-mnt-")
    try:
        opts = ["-o", "nouuid"] if fs == "xfs" else []
        if subprocess.run(["mount", "-t", fs, *opts, loop, mnt], capture_output=True).returncode != 0:
            return "unmountable"
        try:
            folder = mnt
            if scenario == "sqlite":
                return judge_sqlite(folder, names)
            return judge_replace(folder, names, int(params["size"]))
        finally:
            subprocess.run(["umount", mnt], check=True)
    finally:
        os.rmdir(mnt)
        subprocess.run(["losetup", "-d", loop], check=True)


def check_case(case, work):
    crash, states = case["crash"], case["crash"]["states"]
    folder = crash["folder"]
    entries, sector_size = read_log(os.path.join(folder, "writes.log"))
    mine = [i for i, e in enumerate(entries) if e[2] & FLUSH and i >= states["from_entry"]]
    theirs = states.get("flush_entries", [])
    if mine[: len(theirs)] != theirs:
        print(f"  the log's flushes read here differ from fslab's: {mine[:8]}... against {theirs[:8]}...")
    agree = bad_fslab = bad_mine = 0
    for state in states["outcomes"]:
        image = os.path.join(work, "state.img")
        rebuild(os.path.join(folder, "before.img"), os.path.join(folder, "writes.log"), entries, sector_size, state["prefix"], image)
        names = durable_names(crash.get("marks", []), entries, state["prefix"])
        why = judge_state(image, case["fs"], case["scenario"], case["params"], names)
        os.remove(image)
        theirs_bad = bool(state.get("classes")) or state.get("violations", 0) > 0
        bad_fslab += theirs_bad
        bad_mine += why is not None
        if theirs_bad == (why is not None):
            agree += 1
        else:
            print(f"  entry {state['entry']}: fslab {state.get('classes') or 'good'}, here {why or 'good'}")
    return len(states["outcomes"]), bad_fslab, bad_mine, agree


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 3
    if os.geteuid() != 0:
        print("run as root: states are mounted on loop devices", file=sys.stderr)
        return 3
    run = json.load(open(sys.argv[1]))["run"]
    picked = [int(i) for i in sys.argv[2:]] or range(len(run["cases"]))
    ok = True
    with tempfile.TemporaryDirectory(prefix="fslab-indep-", dir="/var/tmp") as work:
        for i in picked:
            case = run["cases"][i]
            if not (case.get("crash") or {}).get("kept"):
                print(f"case {i}: its recording was not kept (run with --crash-record)", file=sys.stderr)
                return 3
            cell = f"{case['scenario']} {case['fs']} {json.dumps(case['params'])} {case['conditions']}"
            n, theirs, mine, agree = check_case(case, work)
            print(f"{cell}: {n} states, fslab bad {theirs}, independent bad {mine}, agree {agree} of {n}")
            ok &= agree == n
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
