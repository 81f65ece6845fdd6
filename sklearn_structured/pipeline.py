"""From word forms to labelled trees: taggers chained before a parser.

:func:`make_parsing_pipeline` builds an ordinary scikit-learn
:class:`~sklearn.pipeline.Pipeline`::

    TokenFieldSelector -> EasyFirstBeamTagger(target=t1) -> ... -> parser

- The selector keeps only the word form and the fields the taggers learn, so
  that the parser never trains on a gold field (a gold lemma, say) that it
  will not see when it parses raw text.
- Each tagger learns its field from the gold value in the tokens and writes
  its prediction over it. ``Pipeline.fit`` calls every tagger's
  ``fit_transform``, which tags the training data by k-fold jackknifing, so
  the next tagger and the parser are trained on predicted tags as noisy as
  those they see at prediction time.
- The parser learns from ``y``: heads, or ``(heads, deprels)`` pairs, and
  then predicts the same.

The pipeline is saved and loaded as one model by
:func:`~sklearn_structured.utils.save_model` and
:func:`~sklearn_structured.utils.load_model`.
"""

import warnings
from collections.abc import Mapping

from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.pipeline import Pipeline

from . import registry
from .annotation import Annotator, _PipelineAnnotator, check_pipeline_fields, pipeline_targets
from .datasets import ConlluDocument, load_conllu
from .easy_first import EasyFirstBeamTagger
from .fields import DEFAULT_TARGETS, FEATS, FORM, INPUT_TAG_FIELDS, TAG_FIELDS, TOKEN_FIELDS
from .metrics import aligned_scores
from .tokenize import Tokenizer, segmented_text
from .tokenize._reader import text_documents
from .tokenize._tokenizer import _documents, _texts
from .utils import CheckedSentences, carried_fields, check_sentences
from .utils._base import FormatVersionMixin, StructuredInputMixin, check_fitted
from .utils._compat import HasMethods, _fit_context


# the FEATS a low-rank parser built here joins to its fine tag when FEATS are tagged:
# chosen on dev with predicted tags (RESULTS lowrank_tag_inputs)
PARSER_TAG_FEATS = ("Case", "Number", "Gender", "VerbForm")
# the arc pruning of a low-rank parser built here: on dev from raw text as accurate as
# without it, and faster (see the low-rank guide)
PARSER_PRUNE_MARGIN = 2.0


class TokenFieldSelector(Annotator, TransformerMixin, BaseEstimator):
    """Keep only some fields of every token (a stateless transformer).

    Parameters
    ----------
    fields : tuple of str, default=("form",)
        CoNLL-U field names to keep (among ``form``, ``lemma``, ``upos``,
        ``xpos``, ``feats``); every other field of a mapping token is
        dropped. A str token (a bare form) is left as it is.

    Examples
    --------
    >>> TokenFieldSelector(fields=("form", "upos")).transform(
    ...     [[{"form": "Dogs", "lemma": "dog", "upos": "NOUN"}, "bark"]])
    [[{'form': 'Dogs', 'upos': 'NOUN'}, 'bark']]
    """

    role = registry.SELECTOR
    # which names are allowed, and that FORM is among them, is checked by _validate_fields
    _parameter_constraints = {"fields": ["array-like"]}

    def __init__(self, fields=("form",)):
        self.fields = fields

    def _validate_fields(self):
        fields = tuple(self.fields)
        unknown = [f for f in fields if f not in TOKEN_FIELDS]
        if unknown or FORM not in fields:
            raise ValueError(
                f"fields must include 'form' and name only {', '.join(TOKEN_FIELDS)}; "
                f"got {fields!r}"
            )
        return fields

    def fields_after(self, available):
        return available & set(self._validate_fields())

    def _annotated(self, document, first_index=0):
        """The document with the tag columns outside ``fields`` cleared."""
        cleared = [field for field in TAG_FIELDS if field not in self._validate_fields()]
        return document.with_tag_columns(
            {field: [[None] * len(s.words) for s in document] for field in cleared})

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the parameters; nothing is learned."""
        self._validate_fields()
        return self

    def transform(self, X):
        """Copies of the sentences whose tokens hold only ``fields``."""
        fields = self._validate_fields()
        out = CheckedSentences()
        for sentence in check_sentences(X):
            out.append([
                {f: token[f] for f in fields if f in token}
                if type(token) is dict or isinstance(token, Mapping) else token
                for token in sentence
            ])
        return out

    def __sklearn_is_fitted__(self):
        return True  # stateless

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.requires_fit = False
        return tags


def make_parsing_pipeline(parser="lowrank", targets=DEFAULT_TARGETS, *, tagger_params=None,
                          parser_params=None, n_folds=10, random_state=None, verbose=0,
                          n_jobs=None):
    """A pipeline that tags word forms and then parses them.

    Parameters
    ----------
    parser : {"lowrank", "easyfirst"} or parser estimator, default="lowrank"
        The final step: a :class:`LowRankTensorParser` or an
        :class:`EasyFirstBeamParser` (built with ``parser_params``), or an
        unfitted parser of the library used as it is. An easy-first parser
        built here reads UPOS when a tagger writes it, else XPOS.
    targets : tuple of str, default=("upos", "xpos", "feats", "lemma")
        The token fields to predict, one :class:`EasyFirstBeamTagger` each,
        applied in this order (a later tagger sees the earlier taggers'
        predictions: each tagger reads the UPOS and XPOS tagged before it as
        features, see ``input_tags``, and the lemmatiser's dictionary reads
        the predicted UPOS).
        ``LowRankTensorParser`` reads XPOS and falls back to UPOS; give both
        for its best accuracy.
    tagger_params : dict or None
        Parameters of every tagger, over the pipeline's default
        ``{"beam_size": 1}`` (greedy easy-first tagging: about three times
        as fast as the tagger's own default beam of 3).
    parser_params : dict or None
        Parameters of the parser when ``parser`` is a name. A
        ``LowRankTensorParser`` built here gets ``prune_margin=2.0`` (it
        scores only the arcs its pruner keeps; ``prune_margin=None`` in
        ``parser_params`` scores every arc), and ``tag_feats=("Case",
        "Number", "Gender", "VerbForm")`` when ``targets`` holds ``"feats"``
        (the parser's tags then carry that morphology; ``tag_feats=None``
        turns it off).
    n_folds : int, default=10
        Jackknifing folds: the parser (and each later tagger) is trained on
        tags predicted by models that did not see the sentence.
    random_state, verbose, n_jobs
        Passed to every step that does not get them from ``tagger_params``
        or ``parser_params``.

    Returns
    -------
    sklearn.pipeline.Pipeline
        Steps ``"fields"`` (a :class:`TokenFieldSelector`), ``"tag_<field>"``
        for each target and ``"parser"``. ``fit(X, y)`` takes sentences whose
        tokens carry the gold ``targets`` fields and the parser's ``y`` (heads
        or ``(heads, deprels)`` pairs); ``predict(X)`` needs only the forms.

    Examples
    --------
    >>> from sklearn_structured import make_parsing_pipeline
    >>> pipe = make_parsing_pipeline("easyfirst", targets=("upos",),
    ...                              tagger_params={"beam_size": 1})
    >>> [name for name, _ in pipe.steps]
    ['fields', 'tag_upos', 'parser']
    """
    targets = tuple(targets)
    if not targets:
        raise ValueError("targets must name at least one field to tag")
    bad = [t for t in targets if t not in TAG_FIELDS]
    if bad or len(set(targets)) != len(targets):
        raise ValueError(f"targets must be distinct token fields other than 'form', got {targets!r}")
    common = {"random_state": random_state, "verbose": verbose, "n_jobs": n_jobs}

    if isinstance(parser, str):
        if parser not in registry.names(registry.PARSER):
            raise ValueError(f"parser must be one of {registry.names(registry.PARSER)} or an "
                             f"estimator, got {parser!r}")
        params = {**common, **(parser_params or {})}
        if parser == "easyfirst" and "pos" not in params:
            params["pos"] = "upos" if "upos" in targets or "xpos" not in targets else "xpos"
        if parser == "lowrank":
            params.setdefault("prune_margin", PARSER_PRUNE_MARGIN)
            if FEATS in targets:
                params.setdefault("tag_feats", PARSER_TAG_FEATS)
        final = registry.estimator_class(parser)(**params)
    else:
        if parser_params:
            raise ValueError("parser_params applies only when parser is given by name")
        final = parser

    steps = [("fields", TokenFieldSelector(fields=(FORM,) + targets))]
    for k, target in enumerate(targets):
        params = {**common, "beam_size": 1, "n_folds": n_folds, **(tagger_params or {}),
                  "target": target}
        # each tagger reads the tags it can read that were tagged before it
        params.setdefault("input_tags", tuple(t for t in targets[:k] if t in INPUT_TAG_FIELDS))
        steps.append((f"tag_{target}", EasyFirstBeamTagger(**params)))
    steps.append(("parser", final))
    check_pipeline_fields(steps)
    return Pipeline(steps)


def fit_parsing_pipeline(model, X, y, *, X_val=None, y_val=None):
    """Fit a parsing pipeline, passing validation data to every step.

    The same model as ``model.fit(X, y)`` (each transformer's
    ``fit_transform`` in turn, then the parser's ``fit``), but with
    ``X_val`` passed through the steps fitted so far, so that every step's
    progress line (``verbose``) scores it on validation data annotated as it
    will be at prediction time: a tagger on the earlier taggers' predictions,
    the parser on all predicted tags. The validation data do not change the
    model.

    Returns
    -------
    model
    """
    check_pipeline_fields(model.steps)
    Xt, Xv = X, X_val
    for name, step in model.steps[:-1]:
        tagger = getattr(step, "role", None) == registry.TAGGER
        if tagger:
            _read_only_tagged(name, step, Xt)
        validation = {"X_val": Xv} if tagger and Xv is not None else {}
        Xt = step.fit_transform(Xt, y, **validation)
        if Xv is not None:
            Xv = step.transform(Xv)
    validation = {} if Xv is None else {"X_val": Xv, "y_val": y_val}
    model.steps[-1][1].fit(Xt, y, **validation)
    return model


class TextPipeline(Annotator, StructuredInputMixin, FormatVersionMixin, BaseEstimator):
    """Raw text to full UD annotation: a :class:`Tokenizer`, then a parsing pipeline.

    ``fit`` learns both from CoNLL-U documents: the tokeniser from their raw
    text (``# text`` and ``SpaceAfter=No``, or the FORMs where a sentence has
    no ``# text``), the parsing pipeline from their words. ``predict`` turns
    raw texts into CoNLL-U documents with sentences, tokens, multiword
    tokens, the tagged columns and labelled trees.

    Parameters
    ----------
    tokenizer : Tokenizer or None, default=None
        The tokeniser to clone and fit; None: ``Tokenizer()``.
    annotator : Pipeline or None, default=None
        The parsing pipeline to clone and fit (:func:`make_parsing_pipeline`);
        None: ``make_parsing_pipeline()``. A tagger whose target column the
        training documents leave empty (no XPOS, say) is dropped from the
        fitted copy with a warning.

    Attributes
    ----------
    tokenizer_ : Tokenizer
        The fitted tokeniser.
    annotator_ : Pipeline
        The fitted parsing pipeline.

    Examples
    --------
    >>> from sklearn_structured import TextPipeline, Tokenizer, make_parsing_pipeline
    >>> from sklearn_structured.datasets import load_sample_treebank
    >>> model = TextPipeline(Tokenizer(n_epochs=2), make_parsing_pipeline(
    ...     "easyfirst", targets=("upos",), tagger_params={"n_epochs": 2},
    ...     parser_params={"n_epochs": 2}, n_folds=2, random_state=0))
    >>> model = model.fit([load_sample_treebank(as_document=True)])
    >>> document = model.predict(["The dog barks. It is loud."])[0]
    >>> [len(sentence.words) for sentence in document]  # doctest: +SKIP
    [4, 4]
    """

    _requires_y = False  # everything is read from the documents
    role = registry.PIPELINE
    reads = ()  # raw text

    @property
    def writes(self):
        annotator = getattr(self, "annotator_", None) or self.annotator or make_parsing_pipeline()
        return (FORM, *_PipelineAnnotator(annotator).writes)

    _parameter_constraints = {
        "tokenizer": [HasMethods(["fit", "predict"]), None],
        "annotator": [HasMethods(["fit", "predict"]), None],
    }

    def __init__(self, tokenizer=None, annotator=None):
        self.tokenizer = tokenizer
        self.annotator = annotator

    # the steps validate their own parameters when they are fitted
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, *, X_val=None, y_val=None):
        """Learn from CoNLL-U documents.

        Parameters
        ----------
        X : list of ConlluDocument
            Training documents; every word needs a HEAD, and a DEPREL for
            the parser to learn labels.
        y : None
            Ignored: everything is read from the documents.
        X_val : list of ConlluDocument, default=None
            Validation documents, for the steps' progress lines and early
            stopping.
        y_val : None
            Ignored.

        Returns
        -------
        self
        """
        documents = _documents(X, "X")
        validation = None if X_val is None else _documents(X_val, "X_val")
        self.tokenizer_ = clone(self.tokenizer) if self.tokenizer is not None else Tokenizer()
        self.tokenizer_.fit(documents, X_val=validation)
        annotator = (clone(self.annotator) if self.annotator is not None
                     else make_parsing_pipeline())
        X_words, y_words = _words_and_trees(documents)
        annotator = _without_empty_targets(annotator, X_words)
        X_val_words, y_val_words = (None, None) if validation is None else _words_and_trees(validation)
        self.annotator_ = fit_parsing_pipeline(annotator, X_words, y_words,
                                               X_val=X_val_words, y_val=y_val_words)
        return self

    def predict(self, X):
        """Annotate raw texts.

        Parameters
        ----------
        X : list of str
            Raw texts (paragraphs separated by blank lines).

        Returns
        -------
        list of ConlluDocument
            One per text, as :func:`parse` writes it; an empty text (or one of
            white space only) gives a document without sentences.
        """
        check_fitted(self, "annotator_")
        return [self._text_annotated(text) for text in _texts(X)]

    def annotate(self, document):
        """Annotate a raw text (a str) or the words of a CoNLL-U document.

        A raw text is tokenised and annotated as :meth:`predict` does; a
        ConlluDocument keeps its words and gets the columns of the parsing
        pipeline (see :func:`sklearn_structured.annotate`).
        """
        check_fitted(self, "annotator_")
        if isinstance(document, str):
            return self._text_annotated(document)
        return self._annotated(document)

    def _annotated(self, document, first_index=0):
        return _PipelineAnnotator(self.annotator_)._annotated(document, first_index)

    def _text_annotated(self, text):
        annotator = _PipelineAnnotator(self.annotator_)
        sentences = []
        for chunk in text_documents(self.tokenizer_, text):
            sentences += annotator._annotated(chunk).sentences
        return ConlluDocument(sentences)

    def score(self, X, y=None):
        """CoNLL 2018 LAS F1 (a fraction) of the annotation of the documents' raw text.

        The documents' text is rebuilt as :func:`~sklearn_structured.tokenize.segmented_text`
        reads it, annotated, and aligned with the documents' words by
        :func:`~sklearn_structured.metrics.aligned_scores`.
        """
        documents = _documents(X, "X")
        gold = ConlluDocument([s for document in documents for s in document])
        system = ConlluDocument([s for document in documents
                                 for s in self.predict([segmented_text(document).text])[0]])
        return aligned_scores(gold, system)["LAS"].f1


def _words_and_trees(documents):
    """``(X, y)`` of the parsing pipeline: the words of every sentence and their
    ``(heads, deprels)`` (heads alone when some word has no DEPREL)."""
    document = ConlluDocument([s for d in documents for s in d])
    return load_conllu(document, labelled=document.has_deprels())


def _read_only_tagged(name, tagger, X):
    """Leave out of ``tagger``'s input tags a field that no training word carries: an
    earlier tagger can write ``_`` on every word, as one trained on a treebank that
    gives the field to a handful of words does in its jackknifed predictions."""
    carried = carried_fields(X, tagger.input_tags)
    absent = [field for field in tagger.input_tags if field not in carried]
    if absent:
        warnings.warn(f"{name}: no training word has a predicted {', '.join(absent).upper()}: "
                      "not reading it", UserWarning, stacklevel=3)
        tagger.set_params(input_tags=carried)


def _without_empty_targets(annotator, X):
    """``annotator`` without the taggers whose target field no training word has."""
    targets = pipeline_targets(annotator)
    empty = set(targets) - set(carried_fields(X, targets))
    if not empty:
        return annotator
    warnings.warn(f"the training data have no {', '.join(sorted(empty)).upper()}: "
                  "not tagging it", UserWarning, stacklevel=3)
    steps = [(name, step) for name, step in annotator.steps
             if getattr(step, "role", None) != registry.TAGGER or step.target not in empty]
    for _, step in steps:  # a later tagger cannot read a field no tagger writes
        if getattr(step, "input_tags", None):
            step.set_params(input_tags=tuple(t for t in step.input_tags if t not in empty))
    fields = steps[0][1]
    if isinstance(fields, TokenFieldSelector):
        fields.set_params(fields=tuple(f for f in fields.fields if f not in empty))
    annotator.steps = steps
    return annotator
