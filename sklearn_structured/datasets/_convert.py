"""A document as a pandas table or as ``conllu.TokenList`` objects, and back.

pandas and the ``conllu`` package are optional (``pip install
sklearn-structured[pandas]`` or ``[conllu]``) and imported only here, when a
conversion is asked for.
"""

import io

from ._conllu import COLUMNS, ConlluDocument, ConlluSentence, read_conllu, write_conllu

FRAME_COLUMNS = ("sent_id", "token", "token_form", *COLUMNS)


def _import(name, extra):
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        raise ImportError(f"this needs the {name} package: pip install "
                          f"sklearn-structured[{extra}]") from None


def _sent_id(sentence, index):
    return sentence.metadata.get("sent_id", str(index + 1))


def to_frame(document):
    """One row per syntactic word: ``sent_id``, the surface token the word belongs
    to (``token``: its ID, ``3-4`` for a multiword token, and ``token_form``), then
    the ten CoNLL-U columns, ``id`` and ``head`` as integers (``head`` missing
    where it is ``_``), the others the file's strings.

    What is not a word's (each sentence's comments, its multiword-token lines
    whole and its empty nodes) is kept in ``frame.attrs["conllu"]``, by
    ``sent_id``, for :func:`from_frame`.
    """
    pd = _import("pandas", "pandas")
    records, extra = [], {}
    for index, sentence in enumerate(document):
        sent_id = _sent_id(sentence, index)
        token = form = None
        last = n_words = 0
        others = []  # (words before it, row) of each line that is not a word
        for row in sentence.rows:
            first, dash, end = row[0].partition("-")
            if not row[0].isdigit():
                others.append((n_words, list(row)))
                if dash:
                    token, form, last = row[0], row[1], int(end)
                continue
            n_words += 1
            if n_words > last:
                token, form = row[0], row[1]
            head = int(row[6]) if row[6].isdigit() else None
            records.append((sent_id, token, form, n_words, *row[1:6], head, *row[7:]))
        extra[sent_id] = {"comments": list(sentence.comments), "rows": others,
                          "n_words": n_words}
    frame = pd.DataFrame.from_records(records, columns=list(FRAME_COLUMNS))
    frame["head"] = frame["head"].astype("Int64")
    frame.attrs["conllu"] = extra
    return frame


def from_frame(frame):
    """The document of a table in :func:`to_frame`'s columns: a sentence for each run
    of rows with one ``sent_id``.

    A sentence whose ``sent_id`` and number of words are those
    ``frame.attrs["conllu"]`` keeps gets its comments, multiword tokens and
    empty nodes back from there, so that ``from_frame(to_frame(doc))`` writes
    what ``doc`` does; any other gets ``# sent_id`` alone and a multiword-token
    line (its other columns ``_``) wherever ``token`` is a range.
    """
    missing = [column for column in FRAME_COLUMNS if column not in frame.columns]
    if missing:
        raise ValueError(f"the table has no column {missing[0]!r}; it needs "
                         f"{', '.join(FRAME_COLUMNS)}")
    extra = frame.attrs.get("conllu", {})
    groups = {}  # sent_id -> its rows' records, in the table's order
    for record in frame[list(FRAME_COLUMNS)].itertuples(index=False):
        groups.setdefault(record[0], []).append(record)
    sentences = []
    for sent_id, records in groups.items():
        words = []
        for _, _, _, word_id, *columns in records:
            head = columns[5]
            columns[5] = "_" if head is None or head != head else str(int(head))  # NA != NA
            words.append([str(word_id), *columns])
        kept = extra.get(sent_id)
        if kept is not None and kept["n_words"] == len(words):
            comments, others = kept["comments"], kept["rows"]
        else:
            comments = [f"# sent_id = {sent_id}"]
            others = [(int(token.partition("-")[0]) - 1, [token, form] + ["_"] * 8)
                      for token, form in dict.fromkeys((r[1], r[2]) for r in records)
                      if isinstance(token, str) and "-" in token]
        rows, others = [], list(others)
        for n_before, word in enumerate(words):
            while others and others[0][0] == n_before:
                rows.append(list(others.pop(0)[1]))
            rows.append(word)
        rows += [list(row) for _, row in others]
        sentences.append(ConlluSentence(list(comments), rows))
    # the writer checks IDs and fields, and the reader gives the lines numbers
    return read_conllu(io.StringIO(write_conllu(ConlluDocument(sentences))))


def to_token_lists(document):
    """The sentences as ``conllu.TokenList`` objects, parsed by the conllu package
    from this document's CoNLL-U."""
    conllu = _import("conllu", "conllu")
    return conllu.parse(write_conllu(document))


def from_token_lists(token_lists):
    """The document of ``conllu.TokenList`` objects, read from their CoNLL-U."""
    return read_conllu(io.StringIO("".join(tokens.serialize() for tokens in token_lists)))
