#!/usr/bin/env python3
"""speedtest1.py -- SQLite's own benchmark program on both libraries, side by side.

SQLite's speedtest1.c (test/speedtest1.c of the reference release, 3.40.1) is
fetched from Debian's source package at bench time -- never copied into this
tree -- built exactly as a SQLite user builds it (the system <sqlite3.h> and
-lsqlite3), and run unmodified twice per configuration: once on the reference
libsqlite3 and once with LD_LIBRARY_PATH=build/compat, i.e. on Shale's drop-in
library. Both runs use --verify, and the verification hashes must be equal or
the report says "DIFFER" and the script exits 1.

Usage: bench/speedtest1.py [--build DIR] [--size N] [--reps N] [--configs file,wal,memdb]
                           [--out docs/speedtest1.md] [--instr]

--instr counts instructions instead of timing: each engine runs once per
configuration under callgrind (default size 10), which dumps its counters
after every step, and the report (default docs/speedtest1-instr.md) gives
each step's instruction count on both engines. On a noisy machine these are
the numbers to judge a change by; wall-clock times there move by 2x.

Invariants:
 1. The source comes from `apt-get source --download-only sqlite3` through a
    private deb-src list and private list/state folders (made from the
    machine's own deb entries), so the machine's apt configuration is left as
    it is.
 2. Engines alternate within each repetition (SQLite, Shale, SQLite, ...);
    each step's time is the median over the repetitions.
 3. The --instr program is built from the same source with -fno-inline, so
    speedtest1_end_test stays a function callgrind can dump after; inlining
    only the driver's own code changes nothing in either library.
"""
import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CONFIGS = {
    "file": [],
    "wal": ["--journal", "wal"],
    "memdb": ["--memdb"],
}


def deb_src_sources(dst):
    """Write deb-src twins of the machine's own Debian deb sources into dst."""
    os.makedirs(dst, exist_ok=True)
    n = 0
    for f in glob.glob("/etc/apt/sources.list.d/*.sources"):
        text = open(f).read()
        if "debian" not in text:
            continue
        out = re.sub(r"^Types:\s*deb\s*$", "Types: deb-src", text, flags=re.M)
        open(os.path.join(dst, os.path.basename(f)), "w").write(out)
        n += 1
    lines = []
    for f in ["/etc/apt/sources.list"] + glob.glob("/etc/apt/sources.list.d/*.list"):
        if os.path.exists(f):
            for line in open(f):
                if line.startswith("deb ") and "debian" in line:
                    lines.append("deb-src " + line[4:])
    if lines:
        open(os.path.join(dst, "debian-src.list"), "w").write("".join(lines))
        n += 1
    return n


def fetch_source(work):
    """The path of speedtest1.c from Debian's sqlite3 source package."""
    found = glob.glob(os.path.join(work, "src", "*", "test", "speedtest1.c"))
    if found:
        return found[0]
    apt = os.path.join(work, "apt")
    parts = os.path.join(apt, "sources")
    lists = os.path.join(apt, "lists")
    os.makedirs(os.path.join(lists, "partial"), exist_ok=True)
    if deb_src_sources(parts) == 0:
        sys.exit("speedtest1: no Debian deb source in /etc/apt to derive deb-src from")
    opts = ["-o", "Dir::Etc::sourceparts=" + parts, "-o", "Dir::Etc::sourcelist=/dev/null",
            "-o", "Dir::State::Lists=" + lists, "-o", "Dir::Cache=" + os.path.join(apt, "cache")]
    subprocess.run(["apt-get"] + opts + ["update", "-qq"], check=True)
    dl = os.path.join(work, "dl")
    os.makedirs(dl, exist_ok=True)
    subprocess.run(["apt-get"] + opts + ["source", "--download-only", "-qq", "sqlite3"],
                   check=True, cwd=dl, stderr=subprocess.DEVNULL)
    tars = [t for t in glob.glob(os.path.join(dl, "sqlite3_*.orig.tar.*")) if "www" not in t]
    if not tars:
        sys.exit("speedtest1: apt-get source gave no sqlite3 orig tarball")
    src = os.path.join(work, "src")
    os.makedirs(src, exist_ok=True)
    subprocess.run(["tar", "xf", tars[0], "-C", src, "--wildcards", "*/test/speedtest1.c"], check=True)
    found = glob.glob(os.path.join(src, "*", "test", "speedtest1.c"))
    if not found:
        sys.exit("speedtest1: speedtest1.c not in " + tars[0])
    return found[0]


def build(work, source):
    exe = os.path.join(work, "speedtest1")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(source):
        subprocess.run(["cc", "-O2", "-o", exe, source, "-lsqlite3", "-lm", "-lpthread"], check=True)
    return exe


def build_instr(work, source):
    exe = os.path.join(work, "speedtest1-instr")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(source):
        subprocess.run(["cc", "-O2", "-fno-inline", "-o", exe, source, "-lsqlite3", "-lm",
                        "-lpthread"], check=True)
    return exe


STEP = re.compile(r"^\s*(\d+) - (.*?)\.*\s+([0-9.]+)s\s*$")


def run_once(exe, args, env, scratch):
    for f in glob.glob(os.path.join(scratch, "st1.db*")):
        os.remove(f)
    out = subprocess.run([exe] + args + [os.path.join(scratch, "st1.db")], env=env, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    steps, total, hashv = {}, None, None
    for line in out.splitlines():
        m = STEP.match(line)
        if m:
            steps[m.group(1)] = (m.group(2).strip(), float(m.group(3)))
        elif "TOTAL" in line:
            total = float(line.split()[-1].rstrip("s"))
        elif line.startswith("Verification Hash:"):
            hashv = line.split(":", 1)[1].strip()
    return steps, total, hashv


def run_instr(exe, args, env, scratch):
    """One run under callgrind: {step: (what, instructions)}, hash, total instructions."""
    for f in glob.glob(os.path.join(scratch, "st1.db*")) + glob.glob(os.path.join(scratch, "cg.*")):
        os.remove(f)
    cg = os.path.join(scratch, "cg.out")
    out = subprocess.run(["valgrind", "--tool=callgrind", "--dump-after=speedtest1_end_test",
                          "--callgrind-out-file=" + cg, exe] + args +
                         [os.path.join(scratch, "st1.db")], env=env, check=True,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    dumps = sorted(glob.glob(cg + ".*"), key=lambda f: int(f.rsplit(".", 1)[1]))
    names = [STEP.match(l) for l in out.splitlines()]
    names = [m for m in names if m]
    steps, hashv = {}, None
    for m, f in zip(names, dumps):
        ir = 0
        for line in open(f):
            if line.startswith("summary:") or line.startswith("totals:"):
                ir = int(line.split()[1])
                break
        steps[m.group(1)] = (m.group(2).strip(), ir)
    for line in out.splitlines():
        if line.startswith("Verification Hash:"):
            hashv = line.split(":", 1)[1].strip()
    return steps, sum(v[1] for v in steps.values()), hashv


def main_instr(a, work, source, env_ref, env_shale):
    exe = build_instr(work, source)
    size = a.size if a.size is not None else 10
    out = a.out or "docs/speedtest1-instr.md"
    scratch = tempfile.mkdtemp(prefix="st1-", dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else None)
    lines = ["# speedtest1 in instructions: SQLite's own benchmark on both libraries", "",
             "Written by `bench/speedtest1.py --instr` on %s; do not edit by hand." %
             time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "",
             "- Program: `test/speedtest1.c` of Debian's sqlite3 3.40.1 source package, unmodified, "
             "built with `cc -O2 -fno-inline speedtest1.c -lsqlite3`; run once per engine under "
             "`valgrind --tool=callgrind --dump-after=speedtest1_end_test` on the reference "
             "libsqlite3 and with `LD_LIBRARY_PATH=build/compat` (Shale).",
             "- Size %d; instructions (Ir) per step, counted in the whole process (both the "
             "library and the driver); ratio = Shale / SQLite." % size, ""]
    failed = False
    try:
        for cfg in a.configs.split(","):
            args = ["--size", str(size), "--verify"] + CONFIGS[cfg]
            ref, ref_tot, ref_hash = run_instr(exe, args, env_ref, scratch)
            sh, sh_tot, sh_hash = run_instr(exe, args, env_shale, scratch)
            agree = ref_hash == sh_hash and ref_hash is not None
            failed |= not agree
            lines += ["## %s: `speedtest1 %s`" % (cfg, " ".join(args)), "",
                      "TOTAL: SQLite %d Ir, Shale %d Ir, **ratio %.2fx**; verification hashes %s." %
                      (ref_tot, sh_tot, sh_tot / ref_tot, "agree" if agree else "DIFFER"), "",
                      "| Step | What | SQLite Ir | Shale Ir | Ratio |", "|---|---|---:|---:|---:|"]
            for k, (what, ir) in ref.items():
                h = sh.get(k, (what, 0))[1]
                lines.append("| %s | %s | %d | %d | %.2fx |" % (k, what, ir, h, h / ir if ir else 0))
            lines.append("")
            print("speedtest1 --instr %-5s SQLite %d Ir, Shale %d Ir, ratio %.2fx, hashes %s" %
                  (cfg, ref_tot, sh_tot, sh_tot / ref_tot, "agree" if agree else "DIFFER"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    open(out, "w").write("\n".join(lines))
    print("report: " + out)
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--size", type=int, default=None)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--configs", default="file,wal,memdb")
    ap.add_argument("--out", default=None)
    ap.add_argument("--instr", action="store_true")
    a = ap.parse_args()
    compat = os.path.abspath(os.path.join(a.build, "compat"))
    if not os.path.exists(os.path.join(compat, "libsqlite3.so.0")):
        sys.exit("speedtest1: build the drop-in library first (make compat)")
    work = os.path.abspath(os.path.join(a.build, "speedtest1"))
    os.makedirs(work, exist_ok=True)
    source = fetch_source(work)
    env_ref = dict(os.environ)
    env_ref.pop("LD_LIBRARY_PATH", None)
    env_shale = dict(env_ref, LD_LIBRARY_PATH=compat)
    if a.instr:
        return main_instr(a, work, source, env_ref, env_shale)
    exe = build(work, source)
    if a.size is None:
        a.size = 50
    if a.out is None:
        a.out = "docs/speedtest1.md"
    load_before = os.getloadavg()
    scratch = tempfile.mkdtemp(prefix="st1-", dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else None)
    failed = False
    report = []
    try:
        for cfg in a.configs.split(","):
            args = ["--size", str(a.size), "--verify"] + CONFIGS[cfg]
            runs = {"sqlite": [], "shale": []}
            for _ in range(a.reps):
                runs["sqlite"].append(run_once(exe, args, env_ref, scratch))
                runs["shale"].append(run_once(exe, args, env_shale, scratch))
            hashes = {e: {r[2] for r in runs[e]} for e in runs}
            agree = len(hashes["sqlite"]) == 1 and hashes["sqlite"] == hashes["shale"]
            failed |= not agree
            med = lambda e, k: statistics.median(r[0][k][1] for r in runs[e])
            tot = {e: statistics.median(r[1] for r in runs[e]) for e in runs}
            rows = []
            for k in runs["sqlite"][0][0]:
                s, h = med("sqlite", k), med("shale", k)
                rows.append((k, runs["sqlite"][0][0][k][0], s, h, h / s if s > 0 else float("nan")))
            report.append((cfg, args, tot, rows, agree, hashes))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    load_after = os.getloadavg()
    lines = ["# speedtest1: SQLite's own benchmark on SQLite and on Shale's drop-in library", "",
             "Written by `bench/speedtest1.py` (`make bench` runs it) on %s; do not edit by hand." %
             time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "",
             "- Program: `test/speedtest1.c` of Debian's sqlite3 3.40.1 source package, unmodified, "
             "built with `cc -O2 speedtest1.c -lsqlite3`; run on the reference libsqlite3 and with "
             "`LD_LIBRARY_PATH=build/compat` (Shale).",
             "- Size %d, median of %d runs per engine (alternating), times in seconds as speedtest1 "
             "prints them; ratio = Shale / SQLite (below 1.00 Shale is faster)." % (a.size, a.reps),
             "- Load average before: %.2f %.2f %.2f, after: %.2f %.2f %.2f, on %d CPUs." %
             (load_before + load_after + (os.cpu_count(),)), ""]
    for cfg, args, tot, rows, agree, hashes in report:
        lines += ["## %s: `speedtest1 %s`" % (cfg, " ".join(args)), "",
                  "TOTAL: SQLite %.3f s, Shale %.3f s, **ratio %.2fx**; verification hashes %s." %
                  (tot["sqlite"], tot["shale"], tot["shale"] / tot["sqlite"],
                   "agree" if agree else "DIFFER (%s)" % hashes), "",
                  "| Step | What | SQLite s | Shale s | Ratio |", "|---|---|---:|---:|---:|"]
        for k, what, s, h, r in rows:
            lines.append("| %s | %s | %.3f | %.3f | %.2fx |" % (k, what, s, h, r))
        lines.append("")
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    open(a.out, "w").write("\n".join(lines))
    for cfg, args, tot, rows, agree, hashes in report:
        worst = max(rows, key=lambda r: r[4])
        print("speedtest1 %-5s TOTAL SQLite %.3fs Shale %.3fs ratio %.2fx, worst step %s %.2fx, hashes %s"
              % (cfg, tot["sqlite"], tot["shale"], tot["shale"] / tot["sqlite"], worst[0], worst[4],
                 "agree" if agree else "DIFFER"))
    print("report: " + a.out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
