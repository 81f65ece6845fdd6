"""Write one benchmark's figures into its own section of benchmarks/RESULTS.md.

Each script owns the section between ``<!-- BEGIN name -->`` and
``<!-- END name -->`` and rewrites it whole, stamped with the machine, the
date, the thread count and the exact command, so figures are never edited by
hand and one script never clobbers another's.
"""

import datetime
import os
import platform
import re
import shlex
import sys
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")
HEADER = (
    "# Benchmark results\n\n"
    "Written by the scripts in this folder; do not edit figures by hand. "
    "Each section names the command that produced it.\n"
)


def machine_description():
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",) * 3
    threads = os.environ.get("NUMBA_NUM_THREADS", "default")
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"NUMBA_NUM_THREADS={threads}, load average at start {load[0]:.2f}"
    )


def write_section(name, title, body, *, started_load=None):
    """Replace (or append) the section ``name`` of RESULTS.md with ``body``."""
    command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    section = (
        f"<!-- BEGIN {name} -->\n## {title}\n\n"
        f"- command: `{command}`\n- date: {stamp}\n- machine: {machine_description()}\n\n"
        f"{body.rstrip()}\n<!-- END {name} -->\n"
    )
    text = RESULTS.read_text() if RESULTS.exists() else HEADER
    pattern = re.compile(rf"<!-- BEGIN {re.escape(name)} -->.*?<!-- END {re.escape(name)} -->\n", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS.write_text(text)


def markdown_table(header, rows):
    """A GitHub table from a header list and rows of already formatted cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
