"""``sklearn-structured serve``: load models once and annotate over HTTP
(:mod:`sklearn_structured.server`)."""

import os
import signal
import sys
import threading

from ._common import PICKLE_WARNING, CommandError, load_annotator

HELP = "load models once and annotate text or CoNLL-U over HTTP (UDPipe's REST API)"
DESCRIPTION = (
    "Load one or more saved models and answer HTTP requests: POST /process (the fields of "
    "UDPipe's REST API: data, model, input, output, tokenizer; and presegmented, "
    "token_ranges, no_multiword, svg), GET /models, GET /health, and GET /, a page to paste "
    "text into and see its trees. Binds 127.0.0.1 unless --host says otherwise. Ctrl-C or "
    "SIGTERM stops it once the requests in flight are answered.")


def add_arguments(p):
    p.add_argument("--model", action="append", required=True, metavar="[NAME=]PATH",
                   help="a model file written by 'train', repeatable; NAME (default: the "
                   "file's name without its extension) is what requests call it; the first "
                   "is the default")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--port", type=int, default=8001, help="port to listen on; 0: any free one")
    p.add_argument("--workers", type=int, default=1,
                   help="annotations that run at once: processes forked once the models are "
                   "loaded (their memory stays shared until written), one a core")
    # the limits' defaults are udpipe_server's, kept in the server module (imported
    # only by this command's run, as it costs a tenth of a second)
    p.add_argument("--max-request-size", type=int, metavar="KB",
                   help="refuse (413) a request body larger than this (default 1024)")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="answer 503 to a request not done in this time, and stop its work "
                   "(default 60)")
    p.add_argument("--max-connections", type=int,
                   help="connections handled at once; one more is answered 503 (default 256)")
    p.add_argument("--verbose", action="store_true", help="log one line a request")
    p.add_argument("--allow-pickle", action="store_true",
                   help=f"also load joblib/pickle model files; {PICKLE_WARNING}")


def _named_models(specs, allow_pickle):
    models = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = os.path.splitext(os.path.basename(spec))[0], spec
        if not name or name in models:
            raise CommandError(f"--model {spec!r}: the name {name!r} is empty or already taken")
        models[name] = load_annotator(path, allow_pickle, "serve")
    return models


def run(args):
    from .. import server as limits
    from ..server import AnnotationServer, Annotator

    def given(value, default):
        return default if value is None else value

    request_kb = given(args.max_request_size, limits.MAX_REQUEST_BYTES // 1024)
    timeout = given(args.timeout, limits.TIMEOUT)
    connections = given(args.max_connections, limits.MAX_CONNECTIONS)
    for option, value in (("--workers", args.workers),
                          ("--max-connections", connections),
                          ("--max-request-size", request_kb), ("--timeout", timeout)):
        if value <= 0:
            raise CommandError(f"{option} must be positive, got {value}")
    models = _named_models(args.model, args.allow_pickle)
    annotator = Annotator(models, args.workers)
    annotator.start()
    server = AnnotationServer(
        (args.host, args.port), annotator,
        max_request_bytes=request_kb * 1024, timeout=timeout, max_connections=connections,
        verbose=args.verbose)
    host, port = server.server_address[:2]

    def stop(signum, frame):
        # shutdown waits for serve_forever's loop, which runs in this thread
        threading.Thread(target=server.shutdown).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"serving {', '.join(models)} on http://{host}:{port}/ with {args.workers} "
          f"worker{'s' * (args.workers > 1)}", file=sys.stderr, flush=True)
    server.serve_forever(poll_interval=0.2)
    server.server_close()  # answers the requests in flight first
    print("stopped after answering the requests in flight", file=sys.stderr, flush=True)
    return 0

