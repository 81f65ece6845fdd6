"""Annotators: a fitted model and a CoNLL-U document in, the annotated document out.

An annotator is an estimator that writes into a document. Each declares its
``role`` (:mod:`sklearn_structured.registry`), the token fields its
prediction ``reads`` and the fields it ``writes``, and writes them itself in
``annotate(document)``. A parsing pipeline (a scikit-learn
:class:`~sklearn.pipeline.Pipeline` of a field selector, taggers and a
parser) is checked against these declarations: every field a step reads is
given or written by an earlier step. :func:`annotate` applies any of them,
the pipeline included; :func:`sklearn_structured.parse` streams files
through it.
"""

from sklearn.pipeline import Pipeline

from .datasets._base import gc_paused
from .datasets._conllu import _where
from .fields import DEPREL, DEPS, FALLBACKS, FORM, HEAD, TAG_FIELDS
from .registry import PARSER, PIPELINE, SELECTOR, TAGGER
from .utils._sentences import check_token_fields


class Annotator:
    """The declarations of an estimator that writes into a CoNLL-U document.

    ``role`` is one of the registry's roles; ``reads`` the token fields its
    prediction reads (a tag is also read from the tag it falls back to, see
    :data:`sklearn_structured.fields.FALLBACKS`); ``writes`` the columns it
    writes. Put it before the estimator's other bases.
    """

    role = None
    reads = (FORM,)
    writes = ()

    def fields_after(self, available):
        """The token fields a later step can read, given ``available`` before this one."""
        return available | set(self.writes)

    def annotate(self, document):
        """A copy of the CoNLL-U ``document`` with the fields of :attr:`writes` predicted.

        Every other column and line is kept.
        """
        return self._annotated(document)

    def _annotated(self, document, first_index=0):
        """:meth:`annotate`, with ``first_index`` the number of the sentences before
        ``document`` in its file (a chunk of it), for the place an error names."""
        # a few small containers per word and no reference cycles of note: with the
        # model's and the document's objects alive, the collector's full scans would
        # otherwise cost a tenth of the run
        with gc_paused():
            sentences = document.to_sentences()
            self._check_reads(sentences, document, first_index)
            return self._written(document, self.predict(sentences))

    def _check_reads(self, sentences, document, first_index):
        """Refuse sentences without any of the tags prediction reads."""

    def _written(self, document, predicted):
        """``document`` with ``predicted`` (what ``predict`` returned) written into it."""
        raise NotImplementedError


class ParserAnnotator(Annotator):
    """A dependency parser: reads the form and its tag fields, writes the tree.

    DEPREL is its labels if it learned them, ``_`` otherwise; DEPS is
    cleared, as it would no longer agree with the tree.
    """

    role = PARSER
    writes = (HEAD, DEPREL, DEPS)

    @property
    def reads(self):
        return (FORM, *self.tag_fields()[:1])

    def _check_reads(self, sentences, document, first_index):
        def where(index, row=None):
            return _where(document.source, first_index + index, document[index], row)

        check_token_fields(sentences, self.tag_fields(), reader=type(self).__name__,
                           where=where)

    def _written(self, document, predicted, tags=None):
        """``tags``: tag columns to write in the same pass, as ``with_heads`` takes them."""
        if predicted and isinstance(predicted[0], tuple):
            heads, deprels = [h for h, _ in predicted], [d for _, d in predicted]
        else:
            heads, deprels = predicted, [[None] * len(h) for h in predicted]
        return document.with_heads(heads, deprels, clear_deps=True, tags=tags)


class TaggerAnnotator(Annotator):
    """A tagger: reads the form and its ``input_tags``, writes its ``target`` column."""

    role = TAGGER

    @property
    def reads(self):
        return (FORM, *self.input_tags)

    @property
    def writes(self):
        return (self.target,)

    def _written(self, document, predicted):
        return document.with_tags(predicted, self.target)


class _PipelineAnnotator(Annotator):
    """A parsing pipeline as an annotator: its steps tag the sentences in turn and its
    last step parses them; the document is written once. The tag columns no step
    writes are cleared, not copied from the input: the pipeline reads the forms."""

    role = PIPELINE

    def __init__(self, pipeline):
        self.pipeline = pipeline

    @property
    def writes(self):
        return tuple(field for _, step in self.pipeline.steps for field in step.writes)

    def _annotated(self, document, first_index=0):
        with gc_paused():  # as in Annotator._annotated
            # each step in turn, not Pipeline.transform, whose checks of the whole
            # pipeline cost a server a twentieth of every request's time; a step
            # that is not fitted says so itself
            tagged = document.to_sentences()
            for _, step in self.pipeline.steps[:-1]:
                tagged = step.transform(tagged)
            written = set(self.writes)
            tags = {field: [[token.get(field) for token in sentence] if field in written
                            else [None] * len(sentence) for sentence in tagged]
                    for field in TAG_FIELDS}
            parser = self.pipeline.steps[-1][1]
            return parser._written(document, parser.predict(tagged), tags)


def role_of(model):
    """The registry role of ``model``: its class's declaration, or PIPELINE for a
    scikit-learn Pipeline of taggers (and field selectors) before a parser, as
    :func:`~sklearn_structured.make_parsing_pipeline` builds; None for any other
    model."""
    if type(model) is Pipeline:
        *steps, final = [step for _, step in model.steps]
        if role_of(final) == PARSER and all(role_of(step) in (TAGGER, SELECTOR)
                                            for step in steps):
            return PIPELINE
        return None
    return model.role if isinstance(model, Annotator) else None


def as_annotator(model):
    """``model`` as an :class:`Annotator` of CoNLL-U words (a parser, a tagger or a
    parsing pipeline), its pipeline's fields checked.

    Raises
    ------
    ValueError
        For a model of another kind, or a pipeline step that reads a field no
        earlier step writes.
    """
    role = role_of(model)
    if role not in (PARSER, TAGGER, PIPELINE):
        raise ValueError(f"a {type(model).__name__} cannot annotate CoNLL-U: give a parser, a "
                         "tagger or a parsing pipeline (make_parsing_pipeline)")
    if isinstance(model, Pipeline):
        check_pipeline_fields(model.steps)
        return _PipelineAnnotator(model)
    return model


def annotate(model, document):
    """Annotate a CoNLL-U document with a fitted parser, tagger or parsing pipeline.

    Parameters
    ----------
    model : estimator
        A parser (writes HEAD and DEPREL: its labels if it learned them,
        ``_`` otherwise, and ``_`` in DEPS; never the input's), a tagger
        (writes its ``target`` column), a parsing pipeline
        (:func:`~sklearn_structured.make_parsing_pipeline`: writes the
        columns of its taggers, clears the other tag columns, and parses) or
        a :class:`~sklearn_structured.TextPipeline` (its parsing pipeline).
    document : ConlluDocument
        Every other column and line is kept.

    Returns
    -------
    ConlluDocument
        A new document; ``document`` is unchanged.
    """
    return as_annotator(model).annotate(document)


def pipeline_targets(model):
    """The token fields a parsing pipeline's taggers write, in order (empty for other
    models)."""
    if role_of(model) != PIPELINE:
        return ()
    annotator = _PipelineAnnotator(model) if isinstance(model, Pipeline) else model
    return tuple(field for field in annotator.writes if field in TAG_FIELDS)


def check_pipeline_fields(steps):
    """Refuse ``(name, step)`` pairs where a step reads a token field that neither
    the input (its forms) nor an earlier step's ``writes`` provides.

    A step that declares nothing (not an :class:`Annotator`) is taken to read
    nothing and pass every field on.
    """
    available = {FORM}
    for name, step in steps:
        if not isinstance(step, Annotator):
            continue
        for field in step.reads:
            # the form, every field's last fall-back, is no tag to stand in for one
            if not available & {field, *FALLBACKS.get(field, ())[:-1]}:
                raise ValueError(
                    f"step {name!r} ({type(step).__name__}) reads {field.upper()}, which the "
                    f"input does not give and no step before it writes (available: "
                    f"{', '.join(sorted(f.upper() for f in available))})")
        available = step.fields_after(available)
