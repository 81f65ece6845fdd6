import pytest

import sklearn_structured
from sklearn_structured import LowRankTensorParser

# estimator -> whether fit needs y
STRUCTURED = {
    "LowRankTensorParser": True,
    "EasyFirstBeamParser": True,
    "EasyFirstBeamTagger": False,  # can read gold tags from the tokens
    "SpectralTreeScorer": True,
    "NBestReranker": True,
    "DistroSequenceSVM": True,
    "RankSpacePCFG": False,
    "RankSpaceHMM": False,
    "TokenFieldSelector": False,
    "Tokenizer": False,  # reads its segmentation from the documents
    "TextPipeline": False,  # reads everything from the documents
}


def test_root_exports_every_estimator():
    assert set(sklearn_structured.__all__) == set(STRUCTURED) | {
        "DistroSVM", "evaluate", "make_parsing_pipeline", "parse"}


@pytest.mark.parametrize("name", sorted(STRUCTURED))
def test_structured_estimators_declare_sentence_input(name):
    cls = getattr(sklearn_structured, name)
    estimator = cls(LowRankTensorParser()) if name == "NBestReranker" else cls()
    tags = estimator.__sklearn_tags__()
    assert tags.input_tags.two_d_array is False
    assert tags.target_tags.required is STRUCTURED[name]


def test_multiclass_distro_takes_ordinary_arrays():
    tags = sklearn_structured.DistroSVM().__sklearn_tags__()
    assert tags.input_tags.two_d_array and tags.input_tags.sparse
