"""An HTTP server that loads models once and annotates text or CoNLL-U on request.

Its REST API follows UDPipe's (``udpipe_server``): ``POST /process`` with the
fields ``data``, ``model``, ``input``, ``output``, ``tokenizer``, ``tagger``
and ``parser`` where their meaning is the same, and ``GET /models``; see the
user guide's page "Seeing and serving parses" for the differences. ``GET /``
is a page to paste text into and see its trees.

It is the standard library's HTTP server: every connection gets a thread of a
bounded pool (``max_connections``), and the annotation runs in ``workers``
processes forked once the models are loaded; small requests that wait at the
same time are annotated together (see :class:`Annotator`). A request larger
than ``max_request_bytes`` is refused before its body is read; one that is
not answered within ``timeout`` seconds gets 503 and its annotation stops at
the next chunk of input it reads (see :func:`sklearn_structured.parse`). A
request names models only by the names given at start; its data are read
from memory and nothing is written but the response.
"""

import collections
import concurrent.futures
import http.server
import io
import itertools
import json
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
import urllib.parse
from email import policy
from email.parser import BytesParser

from . import registry
from ._parse import input_chunks, joined, parse
from .annotation import role_of
from .datasets import ConlluDocument, write_conllu
from .fields import COLUMNS
from .pipeline import TextPipeline

MAX_REQUEST_BYTES = 1024 * 1024
TIMEOUT = 60.0
MAX_CONNECTIONS = 256
_MAX_FIELDS = 32
# requests of at most this much data are annotated together (see Annotator)
_BATCH_BYTES = 64 * 1024
_BOOLEAN = {"": True, "1": True, "true": True, "yes": True, "on": True,
            "0": False, "false": False, "no": False, "off": False}
_INPUTS = ("conllu", "text", "presegmented")
_OUTPUTS = ("conllu", "json")
_FIELDS = frozenset({"data", "model", "input", "output", "tokenizer", "tagger", "parser",
                     "presegmented", "token_ranges", "no_multiword", "svg"})
# UDPipe's tokenizer options that mean what one of ours does
_TOKENIZER_OPTIONS = {"presegmented": "presegmented", "ranges": "token_ranges"}


class RequestError(Exception):
    """A request the server refuses: an HTTP status and a message for the client."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class _Cancelled(Exception):
    """Raised inside an annotation whose request has been given up."""


# what a given-up request is finished with (nobody waits for the answer any more)
_CANCELLED = RequestError(503, "the request was given up")


class _CancellableBytes(io.BytesIO):
    """A request's data, which stop being readable once ``cancelled`` is set: parse
    reads its input a chunk at a time, so an abandoned annotation ends at the next
    chunk instead of holding its worker."""

    def __init__(self, data, cancelled, name):
        super().__init__(data)
        self.cancelled = cancelled
        self.name = name  # what the library's error messages call the input

    def _check(self):
        if self.cancelled.is_set():
            raise _Cancelled

    def read(self, size=-1):
        self._check()
        return super().read(size)

    def read1(self, size=-1):
        self._check()
        return super().read1(size)

    def readline(self, size=-1):
        self._check()
        return super().readline(size)

    def readinto(self, buffer):
        self._check()
        return super().readinto(buffer)


def capabilities(model):
    """What a model does, in UDPipe's words: some of tokenizer, tagger, parser."""
    role = role_of(model)
    if role == registry.PIPELINE:
        return ["tokenizer", "tagger", "parser"] if isinstance(model, TextPipeline) else [
            "tagger", "parser"]
    return [role]


def _request_fields(content_type, body):
    """The fields of a POST body (form-encoded, multipart or JSON): ``data`` as bytes,
    the others as str."""
    kind, _, _ = (content_type or "application/x-www-form-urlencoded").partition(";")
    kind = kind.strip().lower()
    if kind == "application/json":
        try:
            fields = json.loads(body)
        except ValueError as error:
            raise RequestError(400, f"the JSON body does not parse: {error}") from None
        if not isinstance(fields, dict):
            raise RequestError(400, "the JSON body must be an object of fields")
        raw = {}
        for name, value in fields.items():
            if isinstance(value, bool):
                value = "1" if value else "0"
            if not isinstance(value, str):
                raise RequestError(400, f"field {name!r} must be a string or a boolean")
            # a lone surrogate stays a bad byte, which the reader then locates
            raw[name] = value.encode("utf-8", "surrogatepass")
    elif kind == "application/x-www-form-urlencoded":
        try:
            pairs = urllib.parse.parse_qsl(body.decode("latin-1"), keep_blank_values=True,
                                           encoding="latin-1", max_num_fields=_MAX_FIELDS)
        except ValueError as error:
            raise RequestError(400, f"the form body does not parse: {error}") from None
        raw = {}
        for name, value in pairs:
            if name in raw:
                raise RequestError(400, f"field {name!r} is given twice")
            raw[name] = value.encode("latin-1")  # latin-1 maps the bytes back one to one
    elif kind == "multipart/form-data":
        header = f"Content-Type: {content_type}\r\n\r\n".encode("latin-1", "replace")
        message = BytesParser(policy=policy.HTTP).parsebytes(header + body)
        if not message.is_multipart():
            raise RequestError(400, "the multipart body does not parse")
        raw = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if not name or name in raw:
                raise RequestError(400, f"a multipart part without a name or given twice "
                                   f"({name!r})")
            raw[name] = part.get_payload(decode=True) or b""
    else:
        raise RequestError(400, f"content type {kind!r} is not form-encoded, multipart or "
                           "JSON")
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise RequestError(400, f"unknown field {unknown[0]!r}; the fields are "
                           f"{', '.join(sorted(_FIELDS))}")
    fields = {}
    for name, value in raw.items():
        if name == "data":
            fields[name] = value
            continue
        try:
            fields[name] = value.decode("utf-8")
        except UnicodeDecodeError:
            raise RequestError(400, f"field {name!r} is not UTF-8") from None
    if "data" not in fields:
        raise RequestError(400, "no 'data' field: nothing to annotate")
    return fields


def _boolean(fields, name):
    value = fields.get(name, "0").strip().lower()
    if value not in _BOOLEAN:
        raise RequestError(400, f"field {name!r} is {value!r}, not a boolean (1/0, true/false)")
    return _BOOLEAN[value]


def _parse_options(fields):
    """``parse``'s ``input_format`` and keyword options from a request's fields."""
    options = {"presegmented": _boolean(fields, "presegmented"),
               "token_ranges": _boolean(fields, "token_ranges")}
    tokenizer = fields.get("tokenizer")
    input_format = fields.get("input", "text" if tokenizer is not None else "conllu")
    if input_format not in _INPUTS:
        raise RequestError(400, f"input {input_format!r} is not one of {', '.join(_INPUTS)}")
    for option in filter(None, (tokenizer or "").split(";")):
        if option not in _TOKENIZER_OPTIONS:
            raise RequestError(400, f"tokenizer option {option!r} is not one of "
                               f"{', '.join(_TOKENIZER_OPTIONS)}")
        options[_TOKENIZER_OPTIONS[option]] = True
    for step in ("tagger", "parser"):
        if fields.get(step):
            raise RequestError(400, f"{step} options ({fields[step]!r}) are not supported: a "
                               "model's taggers and parser run as they were trained")
    if input_format == "presegmented":
        input_format, options["presegmented"] = "text", True
    if _boolean(fields, "no_multiword"):
        options["expand_multiword"] = False
    if input_format == "conllu":
        given = [name for name, value in options.items() if value]
        if given:
            raise RequestError(400, f"{', '.join(given)} apply to text input only")
        options = {}
    return input_format, options


def _as_json(document):
    """A document as JSON-ready data: its sentences' comments and every row's columns
    (words, multiword tokens and empty nodes, in order)."""
    return [{"comments": sentence.comments,
             "rows": [dict(zip(COLUMNS, row)) for row in sentence.rows]}
            for sentence in document]


class _Job:
    """One ``POST /process``: its model, data and options, and, once done, its
    result or the error to answer with. ``cancelled`` is anything with
    ``is_set()``: an event here, the shared flag of :class:`_SharedCancel` in a
    worker process."""

    _ids = itertools.count()

    def __init__(self, model_name, data, input_format, options, output, draw, *,
                 cancelled=None, job_id=None):
        self.model_name, self.data = model_name, data
        self.input_format, self.options = input_format, options
        self.output, self.draw = output, draw
        self.id = next(self._ids) if job_id is None else job_id
        self.cancelled = threading.Event() if cancelled is None else cancelled
        self.done = threading.Event()
        self.result = self.error = None
        self.worker = None  # the worker process it was sent to

    @property
    def batchable(self):
        return len(self.data) <= _BATCH_BYTES

    def message(self):
        """What a worker process needs to annotate it (plain data, pickled to the pipe)."""
        return (self.id, self.model_name, self.data, self.input_format, self.options,
                self.output, self.draw)

    def finish(self, result=None, error=None):
        self.result, self.error = result, error
        self.done.set()


class _SharedCancel:
    """A worker process's view of whether the request it is annotating was given up:
    the server's process writes the request's id into ``shared``."""

    def __init__(self, shared, job_id):
        self.shared, self.job_id = shared, job_id

    def is_set(self):
        return self.shared.value == self.job_id


def _annotate(models, batch):
    """Annotate the requests of ``batch`` (one model), finishing each: several together
    in one call of the annotator, the answers those of each alone."""
    if len(batch) == 1:
        _annotate_alone(models, batch[0])
        return
    model = models[batch[0].model_name]
    inputs = []
    for job in batch:
        source = _source(job)
        try:
            annotator, chunks = input_chunks(model, source, input_format=job.input_format,
                                             **job.options)
            inputs.append((job, joined(chunks, source)))
        except ValueError as error:
            job.finish(error=RequestError(400, str(error)))
        except _Cancelled:
            job.finish(error=_CANCELLED)
    if not inputs:
        return
    together = ConlluDocument([sentence for _, document in inputs for sentence in document])
    try:
        annotated = annotator._annotated(together).sentences
    except ValueError:  # each alone, so that the error names its request's lines
        for job, _ in inputs:
            _annotate_alone(models, job)
        return
    done = 0
    for job, document in inputs:
        sentences = annotated[done:done + len(document)]
        done += len(sentences)
        job.finish(_response(job, ConlluDocument(sentences, source=document.source,
                                                 newline=document.newline)))


def _annotate_alone(models, job):
    """One request by :func:`~sklearn_structured.parse`, a chunk of its input at a time:
    one given up stops at its next chunk."""
    try:
        document = parse(models[job.model_name], _source(job), input_format=job.input_format,
                         output=None, **job.options)
        job.finish(_response(job, document))
    except ValueError as error:
        job.finish(error=RequestError(400, str(error)))
    except _Cancelled:
        job.finish(error=_CANCELLED)


def _source(job):
    return _CancellableBytes(job.data, job.cancelled, "data")


def _response(job, document):
    result = {"result": write_conllu(document) if job.output == "conllu" else _as_json(document)}
    if job.draw:  # the drawing code is loaded by the first request that asks for it
        from .display import sentence_svg

        result["svg"] = [sentence_svg(sentence) for sentence in document]
    return result


def _internal_error(error):
    """A bug: the log gets the traceback, the client one line."""
    traceback.print_exc(file=sys.stderr)
    return RequestError(500, f"internal error: {type(error).__name__}: {error}")


def _annotate_or_fail(models, batch):
    """:func:`_annotate`, every request it left unanswered by a bug answering 500."""
    try:
        _annotate(models, batch)
    except Exception as error:
        failure = _internal_error(error)
        for job in batch:
            if not job.done.is_set():
                job.finish(error=failure)


def _annotate_batches(models, connection, cancel, not_ours):
    """A worker process: annotate the batches the server's process sends, until it sends
    None or goes away. Ctrl-C and SIGTERM are the server's process's to handle: it
    answers the requests in flight, then stops its workers. ``not_ours``: the server's
    ends of the pipes, copied by the fork, closed so that its exit is seen here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for end in not_ours:
        end.close()
    while True:
        try:
            messages = connection.recv()
        except EOFError:
            return
        if messages is None:
            return
        batch = [_Job(*fields, job_id=job_id, cancelled=_SharedCancel(cancel, job_id))
                 for job_id, *fields in messages]
        _annotate_or_fail(models, batch)
        connection.send([(job.result, job.error and (job.error.status, str(job.error)))
                         for job in batch])


class _WorkerProcess:
    """A forked process with the models, which annotates the batches of one
    dispatching thread of the server's process."""

    def __init__(self, models, context, earlier):
        self.connection, child = context.Pipe()
        self.cancel = context.Value("q", -1, lock=False)
        not_ours = [self.connection, *(worker.connection for worker in earlier)]
        self.process = context.Process(target=_annotate_batches, name="annotate",
                                       args=(models, child, self.cancel, not_ours), daemon=True)
        self.process.start()
        child.close()

    def annotate(self, batch):
        """Send ``batch`` and finish each request with the answer; a process that died
        answers 500 (and annotates nothing more)."""
        try:
            self.connection.send([job.message() for job in batch])
            answers = self.connection.recv()
        except (EOFError, OSError):
            for job in batch:
                job.finish(error=RequestError(500, "internal error: the worker process "
                                              "ended; restart the server"))
            return False
        for job, (result, error) in zip(batch, answers):
            job.finish(result, error and RequestError(*error))
        return True

    def stop(self):
        try:
            self.connection.send(None)
        except OSError:
            pass
        self.process.join()


class Annotator:
    """The models a server answers with, and the workers that apply them.

    Each worker is a process forked from this one once the models are loaded
    (their arrays stay shared until written), so that workers use as many
    cores, not only where the numba kernels release the GIL. A thread of this
    process feeds each: it takes the oldest waiting request and, when that
    is small, the other small ones waiting for the same model, and the worker
    reads each (tokenising raw text), tags and parses all their sentences in
    one call, and answers each with its own: what a call costs beyond its
    sentences is then paid once per batch instead of once per request. The
    answers are those of :func:`~sklearn_structured.parse` on each request
    alone (the annotators treat every sentence on its own). A large request
    is annotated alone, a chunk of input at a time. Where ``os.fork`` does
    not exist, the workers are threads of this process.

    Parameters
    ----------
    models : dict
        Name -> fitted parser, tagger or pipeline; the first is the default.
    workers : int
        Annotations that run at once.
    """

    def __init__(self, models, workers=1):
        if not models:
            raise ValueError("a server needs at least one model")
        self.models = dict(models)
        self.default = next(iter(self.models))
        self.workers = workers
        self._waiting = collections.deque()
        self._changed = threading.Condition()
        self._closing = False
        self._processes = None
        self._dispatchers = []  # started by the first request, after the fork

    def listing(self):
        """``GET /models``: UDPipe's listing of the models and what each does."""
        return {"models": {name: capabilities(model) for name, model in self.models.items()},
                "default_model": self.default}

    def warm_up(self):
        """Annotate two words with each model that reads raw text, so that its kernels
        are compiled (or loaded from numba's cache) before the first request is."""
        for model in self.models.values():
            if "tokenizer" in capabilities(model):
                parse(model, io.BytesIO(b"Warm up."), input_format="text")

    def start(self):
        """Warm the models up, then fork the worker processes. Call it before this
        process starts any thread: a fork copies only the thread that calls it."""
        self.warm_up()
        if hasattr(os, "fork"):
            context = multiprocessing.get_context("fork")
            self._processes = []
            for _ in range(self.workers):
                self._processes.append(_WorkerProcess(self.models, context, self._processes))
        else:
            self._processes = [None] * self.workers

    def process(self, fields, deadline):
        """The response to ``POST /process`` with these fields, or a RequestError."""
        name = fields.get("model") or self.default
        if name not in self.models:
            raise RequestError(400, f"unknown model {name!r}; the models are "
                               f"{', '.join(self.models)}")
        output = fields.get("output", "conllu")
        if output not in _OUTPUTS:
            raise RequestError(400, f"output {output!r} is not one of {', '.join(_OUTPUTS)}")
        input_format, options = _parse_options(fields)
        job = _Job(name, fields["data"], input_format, options, output, _boolean(fields, "svg"))
        with self._changed:
            if self._processes is None:
                raise RuntimeError("Annotator.start() was not called")
            if not self._dispatchers:
                for number, worker in enumerate(self._processes):
                    dispatcher = threading.Thread(target=self._dispatch, args=(worker,),
                                                  name=f"annotate-{number}", daemon=True)
                    dispatcher.start()
                    self._dispatchers.append(dispatcher)
            self._waiting.append(job)
            self._changed.notify()
        if not job.done.wait(max(0.0, deadline - time.monotonic())):
            job.cancelled.set()
            if job.worker is not None:
                job.worker.cancel.value = job.id
            raise RequestError(503, "the request took longer than the server's time limit "
                               "(send less data at once)")
        if job.error is not None:
            raise job.error
        return {"model": name, "acknowledgements": [], **job.result}

    def _dispatch(self, worker):
        """Feed one worker (a process, or None: annotate in this thread) batch after
        batch until the annotator closes."""
        working = True
        while working:
            with self._changed:
                while not self._waiting and not self._closing:
                    self._changed.wait()
                if not self._waiting:
                    break
                batch = self._next_batch()
                for job in batch:
                    job.worker = worker
            if not batch:
                continue
            if worker is not None:
                working = worker.annotate(batch)
                continue
            _annotate_or_fail(self.models, batch)
        if worker is not None:
            worker.stop()

    def _next_batch(self):
        """The oldest waiting request, with the other small ones for its model when it
        is small itself, up to ``_BATCH_BYTES`` of data in all (the lock held)."""
        first = self._waiting.popleft()
        batch = [first]
        if first.batchable:
            size, kept = len(first.data), collections.deque()
            while self._waiting:
                job = self._waiting.popleft()
                if (job.model_name == first.model_name and job.batchable
                        and size + len(job.data) <= _BATCH_BYTES):
                    batch.append(job)
                    size += len(job.data)
                else:
                    kept.append(job)
            self._waiting = kept
        return [job for job in batch if not job.cancelled.is_set()]

    def close(self):
        """Answer the requests waiting and in the workers, then stop the workers."""
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        for dispatcher in self._dispatchers:
            dispatcher.join()
        if not self._dispatchers:  # never asked anything: the processes wait for work
            for worker in filter(None, self._processes or ()):
                worker.stop()


class _Handler(http.server.BaseHTTPRequestHandler):
    server_version = "sklearn-structured"
    protocol_version = "HTTP/1.0"  # one request a connection: shutdown never waits on idle ones

    def setup(self):
        self.deadline = time.monotonic() + self.server.timeout_seconds
        super().setup()
        self.connection.settimeout(self.server.timeout_seconds)

    def log_message(self, format, *args):
        if self.server.verbose:
            super().log_message(format, *args)

    def _send_json(self, status, payload):
        self._send(status, "application/json",
                   json.dumps(payload, ensure_ascii=False).encode("utf-8"))

    def _send(self, status, content_type, body):
        try:
            self.send_response(status)
            self.send_header("Content-Type", f"{content_type}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)
        except OSError:  # the client went away; nothing to tell it
            self.close_connection = True

    def send_error(self, code, message=None, explain=None):
        # malformed request lines and headers get the same JSON as any other error
        self.close_connection = True
        self._send_json(code, {"error": message or explain or self.responses[code][0]})

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        if path == "/":
            self._send(200, "text/html", _PAGE.encode("utf-8"))
        elif path == "/models":
            self._send_json(200, self.server.annotator.listing())
        elif path == "/health":
            annotator = self.server.annotator
            self._send_json(200, {"status": "ok", "models": list(annotator.models),
                                  "workers": annotator.workers})
        else:
            self._send_json(404, {"error": f"no page {path!r}; see GET /, /models, /health "
                                  "and POST /process"})

    def do_POST(self):
        path = urllib.parse.urlsplit(self.path).path
        if path != "/process":
            self._send_json(404, {"error": f"no endpoint {path!r}; POST /process"})
            return
        try:
            body = self._body()
            if body is None:  # the client left before sending it all
                return
            fields = _request_fields(self.headers.get("Content-Type"), body)
            self._send_json(200, self.server.annotator.process(fields, self.deadline))
        except RequestError as error:
            self.close_connection = True
            self._send_json(error.status, {"error": str(error)})
        except Exception as error:
            self._send_json(500, {"error": str(_internal_error(error))})

    def _body(self):
        """The request's body, read only once its announced length is within the limit;
        None when the client closed the connection before sending all of it."""
        length = self.headers.get("Content-Length")
        if length is None:
            raise RequestError(411, "a POST needs a Content-Length header")
        if not length.isdigit():
            raise RequestError(400, f"Content-Length {length!r} is not a number of bytes")
        limit = self.server.max_request_bytes
        if int(length) > limit:
            raise RequestError(413, f"the request's {int(length)} bytes are more than the "
                               f"server's limit of {limit} bytes (send less data at once)")
        try:
            body = self.rfile.read(int(length))
        except TimeoutError:
            raise RequestError(408, "the request's body did not arrive within the server's "
                               "time limit") from None
        except OSError:
            body = b""
        if len(body) < int(length):
            self.close_connection = True
            return None
        return body


class AnnotationServer(http.server.HTTPServer):
    """:class:`Annotator` behind HTTP: each connection handled by a thread of a
    pool of ``max_connections``; one more is answered 503 at once.

    Parameters
    ----------
    address : (host, port)
        Port 0 takes any free port (see ``server_address``).
    annotator : Annotator
    max_request_bytes, timeout, max_connections : int, float, int
        The limits (UDPipe's defaults): a longer body gets 413 unread, a
        request not answered within ``timeout`` seconds 503.
    verbose : bool
        Log one line a request on standard error.
    """

    def __init__(self, address, annotator, *, max_request_bytes=MAX_REQUEST_BYTES,
                 timeout=TIMEOUT, max_connections=MAX_CONNECTIONS, verbose=False):
        self.annotator = annotator
        self.max_request_bytes = max_request_bytes
        self.timeout_seconds = timeout
        self.verbose = verbose
        self.request_queue_size = max(5, min(max_connections, 128))
        self.connections = concurrent.futures.ThreadPoolExecutor(max_connections, "connection")
        self.free_slots = threading.BoundedSemaphore(max_connections)
        super().__init__(address, _Handler)

    def process_request(self, request, client_address):
        if not self.free_slots.acquire(blocking=False):
            body = json.dumps({"error": "the server is handling as many connections as it "
                               "may; try again"}).encode()
            try:
                request.settimeout(1)
                request.sendall(b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: "
                                b"application/json\r\nContent-Length: "
                                + str(len(body)).encode() + b"\r\n\r\n" + body)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        self.connections.submit(self._handle, request, client_address)

    def _handle(self, request, client_address):
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            self.free_slots.release()

    def handle_error(self, request, client_address):
        if self.verbose:
            super().handle_error(request, client_address)

    def server_close(self):
        """Stop listening, then wait for the requests in flight to be answered."""
        super().server_close()
        self.connections.shutdown(wait=True)
        self.annotator.close()


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>sklearn-structured</title>
<style>
body{font-family:sans-serif;margin:1.5em;max-width:70em}
textarea{width:100%;height:8em;font:14px monospace}
#conllu{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:12px}
#error{color:#b00}
.tree{overflow-x:auto;margin:1em 0}
</style></head><body>
<h1>sklearn-structured</h1>
<form id="form">
<p><label>Model <select id="model" name="model"></select></label>
<label><input type="checkbox" id="presegmented"> one sentence a line</label></p>
<p><textarea id="data" name="data" placeholder="Paste text here."></textarea></p>
<p><button type="submit" id="parse">Parse</button> <span id="status"></span></p>
</form>
<p id="error"></p><div id="trees"></div><pre id="conllu"></pre>
<script>
const $ = (id) => document.getElementById(id);
fetch("models").then((r) => r.json()).then((listing) => {
  for (const name of Object.keys(listing.models)) {
    const option = document.createElement("option");
    option.value = option.textContent = name;
    option.selected = name === listing.default_model;
    $("model").appendChild(option);
  }
});
$("form").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("error").textContent = ""; $("status").textContent = "parsing...";
  const body = new URLSearchParams({data: $("data").value, model: $("model").value,
    input: $("presegmented").checked ? "presegmented" : "text", output: "conllu", svg: "1"});
  try {
    const answer = await (await fetch("process", {method: "POST", body})).json();
    if (answer.error) throw new Error(answer.error);
    $("trees").innerHTML = answer.svg.map((svg) => '<div class="tree">' + svg + "</div>").join("");
    $("conllu").textContent = answer.result;
    $("status").textContent = answer.svg.length + " sentences";
  } catch (error) {
    $("error").textContent = error.message; $("status").textContent = "";
  }
});
</script></body></html>
"""
