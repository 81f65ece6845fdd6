"""A small text pipeline trained once per test session on the embedded sample and
saved in the safe format, and a ``serve`` process answering with it."""

import functools
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path


@functools.lru_cache(maxsize=None)
def sample_model_path():
    from sklearn_structured import TextPipeline, Tokenizer, make_parsing_pipeline
    from sklearn_structured.datasets import load_sample_treebank
    from sklearn_structured.utils import save_model

    model = TextPipeline(
        Tokenizer(n_epochs=2, random_state=0),
        make_parsing_pipeline("easyfirst", tagger_params={"n_epochs": 1, "beam_size": 1},
                              parser_params={"n_epochs": 1, "beam_size": 1}, n_folds=2,
                              random_state=0)).fit([load_sample_treebank(as_document=True)])
    path = Path(tempfile.mkdtemp(prefix="sample-model-")) / "sample.model"
    save_model(model, path)
    return path


GOOD = "The new museum opens on Monday. Tickets cost twelve dollars."


class Server:
    """A ``serve`` process on a free loopback port; its standard error is collected."""

    def __init__(self, *options, prelude=None):
        command = [sys.executable, "-c", _LAUNCH, prelude or "", "serve", "--model",
                   f"sample={sample_model_path()}", "--port", "0", *options]
        env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
        self.lines = []
        started = threading.Event()

        def collect():
            for line in self.process.stderr:
                self.lines.append(line)
                if line.startswith("serving "):
                    self.port = int(line.split("127.0.0.1:")[1].split("/")[0])
                    started.set()
            started.set()

        threading.Thread(target=collect, daemon=True).start()
        started.wait(300)
        assert self.process.poll() is None, "".join(self.lines)

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def post(self, fields=None, *, body=None, content_type="application/x-www-form-urlencoded",
             timeout=120):
        """The status and JSON answer of ``POST /process``."""
        if body is None:
            body = urllib.parse.urlencode(fields).encode()
        request = urllib.request.Request(self.url("/process"), data=body,
                                         headers={"Content-Type": content_type})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def get(self, path):
        with urllib.request.urlopen(self.url(path), timeout=60) as answer:
            return answer.status, answer.headers["Content-Type"], answer.read()

    def check_good_request(self):
        status, answer = self.post({"data": GOOD, "tokenizer": "", "tagger": "", "parser": ""})
        assert status == 200, answer
        assert answer["result"] == expected(GOOD)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(60)


# runs the command line, after an optional piece of code (an audit hook)
_LAUNCH = ("import sys; exec(sys.argv[1]); from sklearn_structured.cli import console_main; "
           "sys.argv = ['sklearn-structured'] + sys.argv[2:]; console_main()")


def expected(text, **options):
    """What ``parse`` writes for ``text`` with the sample model."""
    from sklearn_structured import parse
    from sklearn_structured.datasets import write_conllu
    from sklearn_structured.utils import load_model

    model = load_model(sample_model_path())
    return write_conllu(parse(model, io.BytesIO(text.encode()), input_format="text", **options))
