"""``sklearn-structured serve``: its API, and each fault it must survive, every one
followed by a good request answered as ``parse`` answers it."""

import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.parse

import pytest

from _serving import GOOD, Server, expected, sample_model_path


@pytest.fixture(scope="module")
def server():
    running = Server("--workers", "2")
    yield running
    assert running.stop() == 0


def test_models_health_and_page(server):
    status, kind, body = server.get("/models")
    assert json.loads(body) == {"models": {"sample": ["tokenizer", "tagger", "parser"]},
                                "default_model": "sample"}
    status, kind, body = server.get("/health")
    assert json.loads(body)["status"] == "ok"
    status, kind, body = server.get("/")
    assert kind.startswith("text/html") and b"<textarea" in body
    assert b"http" not in body.replace(b"http-equiv", b"")  # no external resources


def test_form_multipart_and_json_bodies_give_what_parse_gives(server):
    server.check_good_request()
    boundary = "xyzzy"
    parts = "".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                    f"{value}\r\n" for name, value in
                    (("data", GOOD), ("tokenizer", "ranges"), ("model", "sample")))
    status, answer = server.post(body=(parts + f"--{boundary}--\r\n").encode(),
                                 content_type=f"multipart/form-data; boundary={boundary}")
    assert status == 200 and answer["result"] == expected(GOOD, token_ranges=True)
    status, answer = server.post(body=json.dumps({"data": GOOD, "input": "text",
                                                  "no_multiword": True}).encode(),
                                 content_type="application/json")
    assert status == 200 and answer["result"] == expected(GOOD, expand_multiword=False)
    status, answer = server.post({"data": "one line\nanother line", "input": "presegmented"})
    assert answer["result"] == expected("one line\nanother line", presegmented=True)


def test_conllu_in_json_out_and_pictures(server):
    conllu = expected(GOOD)
    status, answer = server.post({"data": conllu, "output": "json", "svg": "1"})
    assert status == 200
    assert [row["form"] for row in answer["result"][0]["rows"]] == GOOD.split(".")[0].split() + [
        "."]
    assert len(answer["svg"]) == 2 and all(svg.startswith("<svg") for svg in answer["svg"])


@pytest.mark.parametrize("fields, message", [
    ({"data": "1\tword\n\n", "input": "conllu"}, r"data:1: 2 tab-separated columns"),
    ({"data": "GIF89a\x00\x00binary", "input": "text"}, r"data:1: a NUL byte at byte offset 6"),
    ({"data": "caf\xe9 au lait", "input": "text"}, r"data:1: not UTF-8 \(byte 0xe9"),
    ({"data": GOOD, "model": "../sample"}, r"unknown model '../sample'"),
    ({"data": GOOD, "tokenizer": "normalized_spaces"}, r"tokenizer option 'normalized_spaces'"),
    ({"data": GOOD, "input": "text", "beam": "5"}, r"unknown field 'beam'"),
    ({"data": GOOD, "input": "horizontal"}, r"input 'horizontal' is not one of"),
    ({"data": GOOD, "tagger": "use_lemma"}, r"tagger options"),
])
def test_bad_input_gets_400_with_the_located_message(server, fields, message):
    import re

    if "\xe9" in fields["data"]:  # the raw byte, not its UTF-8 encoding
        body = urllib.parse.urlencode(fields, encoding="latin-1").encode()
        status, answer = server.post(body=body)
    else:
        status, answer = server.post(fields)
    assert status == 400 and re.search(message, answer["error"]), answer
    server.check_good_request()


def _raw_request(port, head, body=b"", wait=30):
    """Send bytes on a new connection; the status line of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as connection:
        connection.sendall(head + body)
        return connection.recv(65536).split(b"\r\n", 1)[0]


def test_an_oversized_body_gets_413_before_it_is_read(server):
    head = (b"POST /process HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-"
            b"urlencoded\r\nContent-Length: %d\r\n\r\n" % (2 * 1024 * 1024))
    start = time.monotonic()
    # only the first bytes are sent: the answer must come without the rest
    assert b" 413 " in _raw_request(server.port, head, b"data=abc")
    assert time.monotonic() - start < 20
    server.check_good_request()


def test_a_client_that_leaves_does_not_kill_a_worker(server):
    head = (b"POST /process HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-"
            b"urlencoded\r\nContent-Length: 5000\r\n\r\n")
    for _ in range(4):  # more than the workers, mid-body
        with socket.create_connection(("127.0.0.1", server.port)) as connection:
            connection.sendall(head + b"data=The+cat")
    body = urllib.parse.urlencode({"data": GOOD * 200, "input": "text"}).encode()
    for _ in range(4):  # mid-annotation
        with socket.create_connection(("127.0.0.1", server.port)) as connection:
            connection.sendall(head.replace(b"5000", str(len(body)).encode()) + body)
            time.sleep(0.2)
    server.check_good_request()
    assert not any("Traceback" in line for line in server.lines), "".join(server.lines)


def test_too_many_connections_get_503_at_once():
    running = Server("--max-connections", "2")
    try:
        idle = [socket.create_connection(("127.0.0.1", running.port)) for _ in range(2)]
        time.sleep(0.5)
        assert b" 503 " in _raw_request(running.port, b"GET /health HTTP/1.0\r\n\r\n", wait=10)
        for connection in idle:
            connection.close()
        time.sleep(0.5)
        running.check_good_request()
    finally:
        assert running.stop() == 0


def test_a_request_past_the_time_limit_gets_503_and_frees_its_worker():
    from sklearn_structured.datasets import load_sample_treebank
    from sklearn_structured.tokenize import segmented_text

    text = segmented_text(load_sample_treebank("test", as_document=True)).text
    long_text = "\n\n".join([text] * (800_000 // len(text)))  # about 13,000 sentences
    running = Server("--workers", "1", "--timeout", "5")
    try:
        start = time.monotonic()
        status, answer = running.post(body=json.dumps({"data": long_text, "input": "text"}).encode(),
                                      content_type="application/json")
        waited = time.monotonic() - start
        assert status == 503 and "time limit" in answer["error"] and waited < 20, answer
        # one worker, and the whole text takes above 10 s: the good request is answered
        # within its own 5 s only if the abandoned one stopped at its next chunk
        running.check_good_request()
    finally:
        assert running.stop() == 0


def test_small_requests_that_wait_together_are_annotated_together_as_each_alone(monkeypatch):
    from sklearn_structured.server import Annotator, RequestError, _WorkerProcess
    from sklearn_structured.utils import load_model

    annotator = Annotator({"sample": load_model(sample_model_path())}, workers=1)
    annotator.start()
    batches = []
    annotate = _WorkerProcess.annotate
    monkeypatch.setattr(_WorkerProcess, "annotate",
                        lambda self, batch: batches.append(len(batch)) or annotate(self, batch))
    answers = {}

    def send(key, data):
        try:
            answers[key] = annotator.process({"data": data, "input": "text"},
                                             time.monotonic() + 300)["result"]
        except RequestError as error:
            answers[key] = error

    # a request over the batching limit keeps the one worker busy while the others wait
    long_text = "\n\n".join([GOOD] * 2000)
    first = threading.Thread(target=send, args=("long", long_text.encode()))
    first.start()
    while not batches:
        time.sleep(0.01)
    small = {"good": GOOD, "short": "It rains.", "two lines": "One line.\nAnother line."}
    others = [threading.Thread(target=send, args=(key, text.encode()))
              for key, text in small.items()]
    others.append(threading.Thread(target=send, args=("not UTF-8", b"caf\xe9 au lait")))
    for thread in others:
        thread.start()
    for thread in [first, *others]:
        thread.join()
    annotator.close()
    assert batches == [1, 4]
    assert answers["long"] == expected(long_text)
    for key, text in small.items():
        assert answers[key] == expected(text), key
    error = answers["not UTF-8"]
    assert error.status == 400 and "not UTF-8" in str(error)


def test_sigterm_answers_the_request_in_flight_then_exits():
    running = Server("--workers", "1")
    text = "\n\n".join([GOOD] * 1500)
    answers = []
    thread = threading.Thread(target=lambda: answers.append(
        running.post({"data": text, "input": "text"})))
    thread.start()
    time.sleep(1)
    running.process.send_signal(signal.SIGTERM)
    assert running.process.wait(120) == 0
    thread.join(120)
    [(status, answer)] = answers
    assert status == 200 and answer["result"] == expected(text)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", running.port), timeout=5)


# Records every file the server opens once it has started, on standard error.
_AUDIT = """
import os
def _audit(event, args):
    if event == "open" and os.environ.get("AUDIT_READY") == "1" and isinstance(args[0], str):
        os.write(2, f"AUDIT {args[1]!s} {args[2]} {args[0]}\\n".encode())
sys.addaudithook(_audit)
import sklearn_structured.server as _server
_start = _server.Annotator.start
def start(self):
    _start(self)
    os.environ["AUDIT_READY"] = "1"
_server.Annotator.start = start
_annotate_batches = _server._annotate_batches
def annotate_batches(*args):  # a worker process, from its first batch on
    os.environ["AUDIT_READY"] = "1"
    _annotate_batches(*args)
_server._annotate_batches = annotate_batches
"""


def test_no_request_makes_the_server_open_a_file(tmp_path):
    secret = tmp_path / "secret.conllu"
    secret.write_text("1\tsecret\t_\tX\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    running = Server(prelude=_AUDIT)
    try:
        for fields in ({"data": str(secret), "input": "conllu"}, {"data": str(secret)},
                       {"data": f"file://{secret}", "input": "text"},
                       {"data": GOOD, "model": str(secret)},
                       {"data": GOOD, "model": str(sample_model_path())},
                       {"data": GOOD, "input": "text", "output": str(tmp_path / "out")},
                       {"data": GOOD, "input": "text", "svg": "1", "output": "json"}):
            status, answer = running.post(fields)
            assert "secret\t" not in json.dumps(answer)
        running.check_good_request()
    finally:
        assert running.stop() == 0
    opened = [line.rstrip("\n").split(" ", 3)[1:] for line in running.lines
              if line.startswith("AUDIT ")]
    # importing code on first use opens modules (the pictures' on the request that
    # asked for them, which shows that the hook sees what is opened); nothing else may be
    assert any(path.endswith("display.py") for _, _, path in opened), opened
    data = [path for _, _, path in opened
            if not path.endswith((".py", ".pyc", ".so", ".nbi", ".nbc"))
            and "__pycache__" not in path and not path.endswith("/")]
    assert not data, data
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT
    assert not [(mode, path) for mode, flags, path in opened
                if set(mode) & set("wax+") or int(flags) & writing], opened
    assert not (tmp_path / "out").exists()


def test_worker_processes_answer_together_and_stop_with_the_server():
    running = Server("--workers", "2")
    try:
        workers = subprocess.run(["pgrep", "-P", str(running.process.pid)],
                                 capture_output=True, text=True).stdout.split()
        assert len(workers) == 2
        answers = []
        threads = [threading.Thread(target=lambda: answers.append(running.post(
            {"data": GOOD, "input": "text"}))) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert [status for status, _ in answers] == [200] * 6
        assert all(answer["result"] == expected(GOOD) for _, answer in answers)
    finally:
        assert running.stop() == 0
    assert "stopped after answering" in "".join(running.lines)
    assert not any(os.path.exists(f"/proc/{pid}") for pid in workers)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", running.port), timeout=5)
