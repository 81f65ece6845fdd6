"""A small text pipeline trained once per test session on the embedded sample, and
saved in the safe format, for the tests that serve or convert its output."""

import functools
import tempfile
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
