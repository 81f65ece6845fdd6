"""Write one benchmark's figures into its own section of benchmarks/RESULTS.md.

Each script owns the section between ``<!-- BEGIN name -->`` and
``<!-- END name -->`` and rewrites it whole, stamped with the machine, the
date, the thread count and the exact command, so figures are never edited by
hand and one script never clobbers another's. The stamp also names the
commit the code was run on and whether the work tree differed from it, so
that a figure can be traced to the code that produced it.
"""

import datetime
import os
import platform
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).with_name("RESULTS.md")
HEADER = (
    "# Benchmark results\n\n"
    "Written by the scripts in this folder; do not edit figures by hand. "
    "Each section names the command, the commit and the machine that produced it.\n"
)


def machine_description():
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",) * 3
    threads = os.environ.get("NUMBA_NUM_THREADS", "default")
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"NUMBA_NUM_THREADS={threads}, load average at start {load[0]:.2f}"
    )


def code_description():
    """The commit checked out, and whether anything but RESULTS.md differs from it."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=RESULTS.parent, capture_output=True,
                              text=True, check=True).stdout

    try:
        commit = git("rev-parse", "--short", "HEAD").strip()
        # RESULTS.md is rewritten by the scripts themselves, so its edits do not count
        changed = [line for line in git("status", "--porcelain").splitlines()
                   if not line.endswith(f"benchmarks/{RESULTS.name}")]
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not run from a git checkout)"
    return f"{commit}, " + ("with uncommitted changes" if changed else "clean tree")


def write_section(name, title, body):
    """Replace (or append) the section ``name`` of RESULTS.md with ``body``."""
    command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    section = (
        f"<!-- BEGIN {name} -->\n## {title}\n\n"
        f"- command: `{command}`\n- date: {stamp}\n- commit: {code_description()}\n"
        f"- machine: {machine_description()}\n\n"
        f"{body.rstrip()}\n<!-- END {name} -->\n"
    )
    text = RESULTS.read_text() if RESULTS.exists() else HEADER
    pattern = re.compile(rf"<!-- BEGIN {re.escape(name)} -->.*?<!-- END {re.escape(name)} -->\n", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS.write_text(text)


def mean_sd(values, scale=1.0, digits=2):
    """``mean ± sd`` over seeds (population sd), or the single value of one seed."""
    values = scale * np.asarray(values, dtype=float)
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{values.mean():.{digits}f} ± {values.std():.{digits}f}"


def markdown_table(header, rows):
    """A GitHub table from a header list and rows of already formatted cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
