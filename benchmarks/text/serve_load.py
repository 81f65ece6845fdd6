"""``serve`` under load: concurrent clients on loopback, one paragraph of text a request.

For each ``--workers`` count, a ``sklearn-structured serve`` process is
started on a free loopback port with the model; ``--clients`` threads of
this process then send ``POST /process`` requests (UDPipe's API: raw text
in, CoNLL-U out) for ``--seconds`` seconds, each taking the next paragraph
of the text (paragraphs are separated by blank lines). Every answer is
compared with ``parse`` of the same paragraph in this process, byte for
byte. The table gives requests and sentences (those of the
answers) per wall second, the errors and the mismatches, and, once per
run, the sentences per second of one in-process ``parse`` of the whole text
(the model loaded once, the median of ``--repeats`` after a warm-up). The
CPU seconds of the server (its own process and its worker processes) and of
the clients during the load show where the machine's time went.

The clients and the server share the machine: on two cores, the client
threads, the server's own threads and its workers all compete for them.

    SKLEARN_STRUCTURED_DATA=/path/to/data python -m benchmarks serve_load \\
        --model ewt.model --text ewt-test.txt --workers 1 2 --clients 8 --seconds 60
"""

import argparse
import io
import itertools
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

from sklearn_structured import parse
from sklearn_structured.datasets import write_conllu
from sklearn_structured.utils import load_model

from benchmarks.base import timed, write_rows


def paragraphs(text):
    """The non-empty paragraphs of ``text`` (blank-line separated)."""
    return [p.strip("\n") + "\n" for p in re.split(r"\n[ \t]*\n", text) if p.strip()]


def start_server(model, workers):
    """A ``serve`` process on a free loopback port and that port."""
    command = [sys.executable, "-m", "sklearn_structured", "serve", "--model", f"m={model}",
               "--port", "0", "--workers", str(workers)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "NUMBA_NUM_THREADS": "1"})
    for line in process.stderr:
        if line.startswith("serving "):
            port = int(line.split("127.0.0.1:")[1].split("/")[0])
            # keep reading its log, so that the server never blocks on a full pipe
            threading.Thread(target=process.stderr.read, daemon=True).start()
            return process, port
    raise RuntimeError(f"serve did not start (exit status {process.wait()})")


def post(port, paragraph):
    body = urllib.parse.urlencode({"data": paragraph, "input": "text", "output": "conllu"})
    request = urllib.request.Request(f"http://127.0.0.1:{port}/process", data=body.encode(),
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.loads(answer.read())["result"]


def process_cpu(pid):
    """CPU seconds of process ``pid`` and of its children that are alive (Linux ``/proc``)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as children:
                total += sum(process_cpu(int(child)) for child in children.read().split())
    except (OSError, IndexError, ValueError):  # gone, or no /proc
        pass
    return total


def load(port, texts, expected, n_clients, seconds):
    """Requests, answered sentences, errors and mismatches of ``n_clients`` clients
    sending ``texts`` in turn for ``seconds``, and the wall seconds taken."""
    lock = threading.Lock()
    counts = {"requests": 0, "sentences": 0, "errors": 0, "mismatches": 0}
    turn = itertools.count()
    stop = time.perf_counter() + seconds

    def client():
        while time.perf_counter() < stop:
            with lock:
                i = next(turn) % len(texts)
            try:
                result = post(port, texts[i])
            except Exception:  # noqa: BLE001 - every failure counts as an error
                with lock:
                    counts["errors"] += 1
                continue
            with lock:
                counts["requests"] += 1
                counts["sentences"] += result.count("\n\n")
                counts["mismatches"] += result != expected[i]

    threads = [threading.Thread(target=client) for _ in range(n_clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return counts, time.perf_counter() - start


def arguments(argv):
    """The command line of this measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="a text pipeline's model file")
    parser.add_argument("--text", type=Path, required=True,
                        help="UTF-8 text, paragraphs separated by blank lines")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--repeats", type=int, default=3,
                        help="in-process parses of the whole text, after a warm-up")
    return parser.parse_args(argv)


def main(argv=None):
    args = arguments(argv)
    text = args.text.read_text(encoding="utf-8")
    texts = paragraphs(text)
    model = load_model(args.model)

    def annotate(data):
        return write_conllu(parse(model, io.BytesIO(data.encode("utf-8")), input_format="text"))

    expected = [annotate(p) for p in texts]  # also the warm-up of the whole-text parse
    whole = timed(lambda: annotate(text), args.repeats)
    n_sentences = whole.result.count("\n\n")
    in_process = n_sentences / whole.wall
    rows = []
    for workers in args.workers:
        process, port = start_server(args.model, workers)
        try:
            post(port, texts[0])  # the first answer loads the kernels in every worker
            server_cpu, client_cpu = process_cpu(process.pid), time.process_time()
            counts, wall = load(port, texts, expected, args.clients, args.seconds)
            server_cpu = process_cpu(process.pid) - server_cpu
            client_cpu = time.process_time() - client_cpu
        finally:
            process.terminate()
            process.wait()
        rows.append([workers, args.clients, f"{wall:.1f}", counts["requests"],
                     f"{counts['requests'] / wall:.1f}", f"{counts['sentences'] / wall:.1f}",
                     counts["errors"], counts["mismatches"], f"{server_cpu:.1f}",
                     f"{client_cpu:.1f}", f"{in_process:.1f}",
                     f"{os.getloadavg()[0]:.1f}"])
        print(*rows[-1], flush=True)
    write_rows(
        "serve_load", "serve under load: concurrent clients, a paragraph a request",
        ["workers", "clients", "seconds", "requests", "requests / s", "sentences / s",
         "errors", "answers unlike parse", "server CPU s (with workers)", "clients CPU s",
         "in-process parse, sentences / s",
         "load average at end"],
        rows, key_columns=2,
        note=f"Model `{args.model.name}`, text `{args.text.name}` "
             f"({len(texts)} paragraphs, {n_sentences} sentences as the model splits it); "
             "wall-clock rates, clients and server on the same machine; in-process parse: "
             f"the whole text in one call, median of {args.repeats} after a warm-up.")


if __name__ == "__main__":
    main()
