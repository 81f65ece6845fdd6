"""The tokeniser and sentence splitter learned from CoNLL-U documents."""

import io
import pickle
import re
import time
import unicodedata

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_structured.datasets import (
    ConlluDocument,
    load_sample_treebank,
    load_ud_treebank,
    read_conllu,
    write_conllu,
)
from sklearn_structured.metrics import aligned_scores
from sklearn_structured.tokenize import Token, Tokenizer, segmented_text, to_document
from sklearn_structured.tokenize._kernels import (
    CTX_KNOWN_ACROSS,
    CTX_KNOWN_END,
    CTX_KNOWN_START,
    CTX_NEXT2_CLASS,
    CTX_NEXT_CASE,
    CTX_SINCE_FINAL,
    CTX_UNTIL_FINAL,
    N_TEMPLATES,
    N_TEMPLATES_WITHOUT_KNOWN,
    N_TEMPLATES_WITHOUT_SENTENCE,
    N_TEMPLATES_WITHOUT_WEB,
    NEXT_CAPITAL_KNOWN_LOWER,
    NEXT_CAPITAL_UNKNOWN,
    NEXT_NOT_CAPITAL,
    SENTENCE_END,
    TOKEN_END,
    _closes,
    _web_address,
    known_tokens,
    label_spans,
    lowercase_words,
    predict_labels,
    text_context,
    unbreakable_characters,
)
from sklearn_structured.tokenize._multiword import expand, learn_expansions
from sklearn_structured.tokenize._tokenizer import (
    _Text,
    _keep_web_addresses,
    _web_address_spans,
    encode_text,
)
from sklearn_structured.utils import load_model, save_model

CONLLU = """\
# newdoc id = d1
# newpar
# text = Hi there!
1	Hi	_	_	_	_	2	x	_	_
2	there	_	_	_	_	0	root	_	SpaceAfter=No
3	!	_	_	_	_	2	punct	_	SpaceAfter=No

1	Ok	_	_	_	_	0	root	_	SpaceAfter=No
2	.	_	_	_	_	1	punct	_	_

# newpar
# text = Vou do Porto à casa.
1	Vou	_	_	_	_	0	root	_	_
2-3	do	_	_	_	_	_	_	_	_
2	de	_	_	_	_	4	case	_	_
3	o	_	_	_	_	4	det	_	_
4	Porto	_	_	_	_	1	obl	_	_
5-6	à	_	_	_	_	_	_	_	_
5	a	_	_	_	_	7	case	_	_
6	a	_	_	_	_	7	det	_	_
7	casa	_	_	_	_	1	obl	_	SpaceAfter=No
8	.	_	_	_	_	1	punct	_	_

"""


def test_segmented_text_follows_the_ud_rules():
    segmented = segmented_text(read_conllu(io.StringIO(CONLLU)))
    # no "# text" in the second sentence: rebuilt from FORM and SpaceAfter; it is
    # glued to the first (SpaceAfter=No); a new paragraph after a blank line
    assert segmented.text == "Hi there!Ok.\n\nVou do Porto à casa."
    assert segmented.rebuilt == 1
    first, second, third = segmented.sentences
    assert [t.form for t in first] == ["Hi", "there", "!"]
    assert [(t.start, t.end) for t in second] == [(9, 11), (11, 12)]
    # consecutive multiword tokens keep their words
    assert [(t.form, t.words) for t in third] == [
        ("Vou", ("Vou",)), ("do", ("de", "o")), ("Porto", ("Porto",)), ("à", ("a", "a")),
        ("casa", ("casa",)), (".", (".",))]
    assert all(segmented.text[t.start:t.end] == t.form for s in segmented.sentences for t in s)


def _sentence(*forms):
    """A CoNLL-U sentence of bare forms, each attached to the root."""
    return "".join(f"{i}\t{form}\t_\t_\t_\t_\t0\troot\t_\t_\n"
                   for i, form in enumerate(forms, 1)) + "\n"


def test_a_text_rebuilt_without_recorded_spacing_has_no_spaces_around_han_and_kana():
    """Older Chinese and Japanese releases give neither ``# text`` nor ``SpaceAfter=No``:
    their tokens are glued where a side is Han, kana or their punctuation, as in every
    treebank of those languages that records spacing, and spaced elsewhere."""
    doc = read_conllu(io.StringIO(_sentence("我", "用", "iPhone", "X", "看", "。")
                                  + _sentence("北条", "は", "、", "武将", "。")
                                  + _sentence("Vou", "à", "casa", ".")))
    segmented = segmented_text(doc)
    assert segmented.text == "我用iPhone X看。北条は、武将。Vou à casa ."
    assert all(segmented.text[t.start:t.end] == t.form for s in segmented.sentences for t in s)
    # where a sentence records spacing, its spaces are kept whatever the script
    spaced = read_conllu(io.StringIO(_sentence("我", "用", "书").replace(
        "1\t我\t_\t_\t_\t_\t0\troot\t_\t_", "1\t我\t_\t_\t_\t_\t0\troot\t_\tSpaceAfter=No")))
    assert segmented_text(spaced).text == "我用 书"


def test_segmented_text_rebuilds_a_text_that_does_not_spell_the_tokens():
    doc = read_conllu(io.StringIO("# text = Something else\n1\tHi\t_\t_\t_\t_\t0\troot\t_\t_\n\n"))
    segmented = segmented_text(doc)
    assert segmented.text == "Hi" and segmented.rebuilt == 1


def test_multiword_expansion_known_forms_case_and_suffix_rules():
    pairs = [("do", ("de", "o"))] * 5 + [("do", ("do",))] + [("nos", ("nos",))] * 3 + [
        ("nos", ("em", "os"))] + [(f"{verb}-lo", (verb[:-1] + "er", "o"))
                                  for verb in ("fazê", "vê", "crê", "dizê")]
    known, rules = learn_expansions(pairs, min_count=3)
    assert expand("do", known, rules) == ("de", "o")
    assert expand("Do", known, rules) == ("De", "o")
    assert expand("DO", known, rules) == ("DE", "O")
    assert expand("nos", known, rules) == ("nos",)  # mostly a word of its own
    # an unseen form takes the rule of its suffix
    assert expand("lê-lo", known, rules) == ("ler", "o")
    assert expand("casa", known, rules) == ("casa",)


def test_words_that_spell_their_token_keep_its_characters():
    pairs = [(f"{noun}'s", (noun, "'s")) for noun in ("dog", "cat", "house", "car")]
    known, rules = learn_expansions(pairs, min_count=3)
    # mixed case survives, so the words still spell the text (spaCy's Doc.text needs it)
    assert expand("L/C's", known, rules) == ("L/C", "'s")
    assert expand("McDonald's", known, rules) == ("McDonald", "'s")
    assert expand("DOG'S", known, rules) == ("DOG", "'S")
    # words that do not spell the token take the token's case as before
    pairs = [("do", ("de", "o"))] * 5
    known, rules = learn_expansions(pairs, min_count=3)
    assert expand("Do", known, rules) == ("De", "o")


def test_multiword_expansions_keep_only_what_the_fallback_gets_wrong():
    # "Nessa" the name, "nessa" and "pelo" contractions, "-lo" a rule that "cabelo" must
    # not take, plain words no rule touches
    pairs = ([("Nessa", ("Nessa",))] * 2 + [("nessa", ("em", "essa"))] * 3
             + [("pelo", ("por", "o"))] + [("cabelo", ("cabelo",))]
             + [(f"{verb}-lo", (verb[:-1] + "er", "o")) for verb in ("fazê", "crê", "dizê")]
             + [("casa", ("casa",)), ("Casa", ("Casa",))])
    known, rules = learn_expansions(pairs, min_count=3)
    assert expand("lê-lo", known, rules) == ("ler", "o")
    assert known == {"written": {"Nessa": ()},
                     "lower": {"nessa": ("em", "essa"), "pelo": ("por", "o")}}
    # every training form still expands as it most often did in training
    for form, words in pairs:
        assert expand(form, known, rules) == (tuple(words) if form != "Nessa" else ("Nessa",))


@pytest.fixture(scope="module")
def sample():
    train = load_sample_treebank("train", as_document=True)
    test = load_sample_treebank("test", as_document=True)
    return train, test, Tokenizer(n_epochs=4, random_state=0).fit([train])


def _baseline_document(text):
    """Split at white space and around punctuation; a sentence ends after . ! or ?"""
    sentences, tokens = [], []
    for match in re.finditer(r"\w+|[^\w\s]", text):
        tokens.append(Token(match[0], match.start(), match.end(), (match[0],)))
        if match[0] in ".!?":
            sentences.append(tokens)
            tokens = []
    if tokens:
        sentences.append(tokens)
    return to_document(text, sentences)


def test_learns_to_beat_a_rule_based_splitter_on_the_sample(sample):
    _, test, tokenizer = sample
    segmented = segmented_text(test)
    ours = aligned_scores(test, to_document(segmented.text, tokenizer.predict([segmented.text])[0]))
    rules = aligned_scores(test, _baseline_document(segmented.text))
    assert ours["Tokens"].f1 > rules["Tokens"].f1 and ours["Tokens"].f1 > 0.97
    assert ours["Sentences"].f1 > rules["Sentences"].f1
    assert ours["Words"].f1 > 0.97
    assert tokenizer.score([test]) == pytest.approx(
        (ours["Tokens"].f1 + ours["Sentences"].f1) / 2)


def test_tokens_point_into_the_text(sample):
    tokenizer = sample[2]
    text = "  Mr. Smith went to Washington.He didn't stay!\n\nNew paragraph here "
    sentences = tokenizer.predict([text])[0]
    tokens = [t for s in sentences for t in s]
    assert all(text[t.start:t.end] == t.form for t in tokens)
    assert [t.start for t in tokens] == sorted(t.start for t in tokens)
    # every character that is not white space is in a token
    covered = "".join(text[t.start:t.end] for t in tokens)
    assert covered == "".join(text.split())
    # a blank line ends a sentence
    assert any(s[-1].end <= text.index("\n\n") < s[-1].end + 3 for s in sentences)


def test_conllu_of_predicted_text_round_trips_the_characters(sample):
    tokenizer = sample[2]
    text = "The cat sat.It was (very) happy.\n\nAnother one"
    sentences = tokenizer.predict([text])[0]
    doc = to_document(text, sentences)
    again = segmented_text(read_conllu(io.StringIO(write_conllu(doc))))
    assert "".join(again.text.split()) == "".join(text.split())
    assert doc[0].comments[:2] == ["# newdoc", "# newpar"]
    assert sum(c == "# newpar" for s in doc for c in s.comments) == 2


def test_a_long_line_without_punctuation_takes_linear_time(sample):
    tokenizer = sample[2]
    tokenizer.predict(["word " * 10])
    times = []
    for n in (10_000, 40_000):
        text = "x" * n
        start = time.perf_counter()
        [[sentence]] = tokenizer.predict([text])
        times.append(time.perf_counter() - start)
        assert "".join(t.form for t in sentence) == text
    assert times[1] < 10 * times[0] + 0.5


def test_estimator_api(sample, tmp_path):
    train, test, tokenizer = sample
    assert clone(tokenizer).get_params() == tokenizer.get_params()
    text = segmented_text(test).text
    again = pickle.loads(pickle.dumps(tokenizer))
    assert again.predict([text]) == tokenizer.predict([text])
    save_model(tokenizer, tmp_path / "tokenizer.model")
    assert load_model(tmp_path / "tokenizer.model").predict([text]) == tokenizer.predict([text])
    refit = Tokenizer(n_epochs=4, random_state=0).fit([train])
    np.testing.assert_array_equal(refit.kept_rows_, tokenizer.kept_rows_)
    np.testing.assert_array_equal(refit.kept_weights_, tokenizer.kept_weights_)
    whole = Tokenizer(n_epochs=4, random_state=0, expand_multiword=False).fit([train])
    assert all(len(t.words) == 1 for s in whole.predict([text])[0] for t in s)


def test_a_model_saved_with_the_whole_weight_table_segments_alike(sample):
    """Models saved before the compact weights hold the hashed table whole, as
    ``weights_``; they are compacted when they first predict."""
    _, test, tokenizer = sample
    text = segmented_text(test).text
    assert len(tokenizer.kept_rows_) < tokenizer.n_features / 10
    old = pickle.loads(pickle.dumps(tokenizer))
    old.weights_ = np.zeros((old.n_features, 3), np.float32)
    old.weights_[old.kept_rows_] = old.kept_weights_[1:]
    del old.kept_rows_, old.kept_weights_
    assert old.predict([text]) == tokenizer.predict([text])
    np.testing.assert_array_equal(old.kept_rows_, tokenizer.kept_rows_)


def test_bad_input_is_refused_with_a_clear_message(sample):
    tokenizer = sample[2]
    with pytest.raises(ValueError, match="list of raw texts"):
        tokenizer.predict("just a string")
    with pytest.raises(ValueError, match=r"X\[1\] is a int"):
        tokenizer.predict(["fine", 3])
    with pytest.raises(ValueError, match="list of CoNLL-U documents"):
        Tokenizer().fit(load_sample_treebank("test", as_document=True))
    with pytest.raises(ValueError, match="power of two"):
        Tokenizer(n_features=3000).fit([sample[0]])
    assert tokenizer.predict(["", "   \n "]) == [[], []]


@pytest.mark.parametrize("chunk, expected", [
    ("someone@example.com", 1), ("HTTP://example.org/a-b", 1), ("WWW.example.org", 1),
    ("U.S.", 0), ("counter-attack", 0), ("www.", 0), ("a:/b", 0),
])
def test_web_and_mail_addresses_are_told_apart(chunk, expected):
    codes, _, _ = encode_text(chunk)
    assert _web_address(codes, 0, len(codes)) == expected


@pytest.mark.parametrize("n_templates", [N_TEMPLATES_WITHOUT_WEB, N_TEMPLATES_WITHOUT_SENTENCE,
                                         N_TEMPLATES_WITHOUT_KNOWN])
def test_a_model_fitted_before_later_templates_scores_with_its_own(sample, n_templates):
    tokenizer = sample[2]
    assert tokenizer.n_templates_ == N_TEMPLATES
    old = pickle.loads(pickle.dumps(tokenizer))
    # as in files saved before the templates were added
    none = np.zeros(0, np.int64)
    del old.known_tokens_
    if n_templates < N_TEMPLATES_WITHOUT_KNOWN:
        del old.lowercase_words_
    if n_templates == N_TEMPLATES_WITHOUT_WEB:
        del old.n_templates_
    else:
        old.n_templates_ = n_templates
    text = "Write to someone@example.com or see www.example.org/a-b today. Thanks!"
    encoded = _Text(text).with_context(getattr(old, "lowercase_words_", none), none)
    labels = predict_labels(encoded.codes, encoded.classes, encoded.context,
                            old._row_positions(), old.kept_weights_, old.n_features - 1,
                            n_templates)
    _keep_web_addresses(text, labels)
    spans, _ = label_spans(labels, encoded.classes)
    np.testing.assert_array_equal(old._segment(text)[0], spans)


@pytest.mark.parametrize("chunk, expected", [
    ("mortos.", True), ("(zulu).", True), ("afirmou».", True), ("disse.»", True),
    ("...", True), ("Hoje?", True), ("mortos", False), ("J.B", False), ("a.)))", False),
])
def test_a_chunk_closes_with_final_punctuation_maybe_then_closing_marks(chunk, expected):
    _, classes, _ = encode_text(chunk)
    assert _closes(classes, 0, len(classes)) == expected


def test_known_tokens_mark_where_words_may_end_in_text_without_spaces():
    """The tokens seen twice are known; each character gets the longest known token
    ending at it, starting after it and holding it and the next one, as a brute force
    over every span of every chunk finds them."""
    training = ["我们", "喜欢", "我们", "的", "书", "的", "中国人", "中国人"]
    text = "".join(training)
    codes, classes, _ = encode_text(text)
    gold = np.zeros(len(text), np.int8)
    gold[np.cumsum([len(t) for t in training]) - 1] = TOKEN_END
    known = known_tokens(codes, classes, gold)
    assert len(known) == 3  # 我们, 的, 中国人: 喜欢 and 书 are seen once

    new = "我们的中国人喜欢的书 我们的"
    codes, classes, _ = encode_text(new)
    context = text_context(codes, classes, np.zeros(0, np.int64), known)
    words = {"我们", "的", "中国人"}
    expected = np.zeros((len(new), 3), np.int64)
    for chunk in re.finditer(r"\S+", new):
        for a in range(chunk.start(), chunk.end()):
            for b in range(a + 1, chunk.end() + 1):
                if new[a:b] in words:
                    expected[b - 1, 0] = max(expected[b - 1, 0], b - a)
                    if a > chunk.start():
                        expected[a - 1, 1] = max(expected[a - 1, 1], b - a)
                    for k in range(a, b - 1):
                        expected[k, 2] = max(expected[k, 2], b - a)
    np.testing.assert_array_equal(
        context[:, [CTX_KNOWN_END, CTX_KNOWN_START, CTX_KNOWN_ACROSS]], expected)
    assert expected[new.index("中国人") + 2].tolist() == [3, 0, 0]


def test_known_token_features_are_used_where_words_are_written_without_spaces():
    unspaced = read_conllu(io.StringIO(_sentence("我们", "喜欢", "书", "。") * 3))
    spaced = read_conllu(io.StringIO(_sentence("We", "like", "books", ".") * 3))
    auto = Tokenizer(n_epochs=1, n_features=2**10)
    assert clone(auto).fit([unspaced]).known_token_features_
    fitted = clone(auto).fit([spaced])
    assert not fitted.known_token_features_ and len(fitted.known_tokens_) == 0
    assert len(clone(auto).set_params(known_token_features=True).fit([spaced]).known_tokens_)
    off = clone(auto).set_params(known_token_features=False).fit([unspaced])
    assert not off.known_token_features_ and len(off.known_tokens_) == 0


def test_a_tokenizer_pickled_before_the_known_token_choice_reads_its_known_tokens(sample):
    tokenizer = sample[2]
    state = tokenizer.__getstate__()
    del state["known_token_features"], state["known_token_features_"]
    old = Tokenizer.__new__(Tokenizer)
    old.__setstate__(state)
    repr(old)  # every parameter is there
    assert old.get_params()["known_token_features"] is True
    text = "Hi there! Ok. Vou do Porto à casa."
    assert old.predict([text]) == tokenizer.predict([text])


def test_sentence_context_reaches_past_the_character_window():
    codes, classes, _ = encode_text("os mortos pelo menos")
    lexicon = lowercase_words(codes, classes)
    text = "Ele saiu. Luta no Rio deixa mortos «Pelo menos dez Ana. sem ponto\n\nOutra Rio"
    codes, classes, _ = encode_text(text)
    context = text_context(codes, classes, lexicon, np.zeros(0, np.int64))

    def at(word, column):
        return context[text.index(word) + len(word) - 1, column]

    # "Luta" is the first chunk after "saiu.", "mortos" the fifth
    assert at("Luta", CTX_SINCE_FINAL) == 1 and at("mortos", CTX_SINCE_FINAL) == 5
    # five chunks from "mortos" to the end of the stretch ("Ana."), both counted
    assert at("mortos", CTX_UNTIL_FINAL) == 5 and at("Ana.", CTX_UNTIL_FINAL) == 1
    # a blank line ends a stretch as a full stop does
    assert at("Outra", CTX_SINCE_FINAL) == 1 and at("ponto", CTX_UNTIL_FINAL) == 1
    assert at("sem", CTX_UNTIL_FINAL) == 2
    assert at("deixa", CTX_NEXT2_CLASS) == encode_text("«")[1][0]
    # a capitalised word known in lower case, past an opening quote; a name; no capital
    assert at("mortos", CTX_NEXT_CASE) == NEXT_CAPITAL_KNOWN_LOWER
    assert at("dez", CTX_NEXT_CASE) == NEXT_CAPITAL_UNKNOWN
    assert at("Pelo", CTX_NEXT_CASE) == NEXT_NOT_CAPITAL
    # every character of a chunk carries the chunk's values
    start = text.index("mortos")
    assert (context[start:start + 6, CTX_SINCE_FINAL] == 5).all()


@pytest.mark.slow
@pytest.mark.corpus
def test_finds_sentence_ends_without_punctuation_in_bosque():
    # Bosque's newspaper headlines end with no full stop before the article's first
    # sentence; with the character window alone the model found 74 of dev's 161
    # such ends, with the sentence-level features 89 (and no more false ends)
    train = load_ud_treebank("pt_bosque", "train", as_document=True)
    dev = segmented_text(load_ud_treebank("pt_bosque", "dev", as_document=True))
    tokenizer = Tokenizer(n_epochs=4, random_state=0).fit([ConlluDocument(list(train)[:4000])])
    gold = {s[-1].end for s in dev.sentences}
    unmarked = {end for end in gold - {len(dev.text)} if dev.text[end - 1] not in ".!?»)\""}
    found = {s[-1].end for s in tokenizer.predict([dev.text])[0]}
    assert len(unmarked) == 161
    assert len(unmarked & found) >= 82
    assert len(found - gold) <= 30


@pytest.mark.parametrize("text, addresses", [
    ("See https://www.example.org/some-page.", ["https://www.example.org/some-page"]),
    ("(http://en.wikipedia.org/wiki/A_(b)) x", ["http://en.wikipedia.org/wiki/A_(b)"]),
    ("[http://a.com/x?id=3] 'www.b.org/'", ["http://a.com/x?id=3", "www.b.org/"]),
    ("visit WWW.Example.COM, now", ["WWW.Example.COM"]),
    ("julie@www.x.com foo.www.bar www. http://", []),
])
def test_web_addresses_are_found_without_the_punctuation_after_them(text, addresses):
    assert [text[a:b] for a, b in _web_address_spans(text)] == addresses


def test_a_web_address_is_one_token_whatever_the_model_says(sample):
    text = "Read [https://www.example.org/some-page-about-it?id=3]. Then go."
    tokens = [t.form for s in sample[2].predict([text])[0] for t in s]
    assert "https://www.example.org/some-page-about-it?id=3" in tokens
    assert tokens[tokens.index("https://www.example.org/some-page-about-it?id=3") + 1] == "]"
    # a sentence end the model puts inside an address moves to its end
    labels = np.zeros(len(text), np.int8)
    labels[text.index("-page")] = SENTENCE_END
    _keep_web_addresses(text, labels)
    assert labels[text.index("]") - 1] == SENTENCE_END
    assert labels[text.index("https") - 1] == TOKEN_END  # the "[" before it


JOINING_TEXTS = [
    "Cafe\u0301 is open.",  # a combining acute accent
    "He wrote \u202eevil\u202c today.",  # bidi controls around a word
    "\u202eevil\u202c. And \u202aembedded\u202c, \u2067isolated\u2069!",
    "Look: \U0001f468\u200d\U0001f469\u200d\U0001f467 and \u2764\ufe0f here.",  # ZWJ, VS16
    "\u0939\u093f\u0902\u0926\u0940 text (Mc and Mn marks) and 1\u20dd enclosed.",
    "mi\u200cxed zero\u200bwidth and a\ufeffBOM inside, \ufeffstarting one.",
    "\u0301A mark starts the text; ( \u0301 ) stands alone; \"\u0308o\".",
    "See \u202ehttp://example.org/a\u202c or (\u200fwww.example.org\u200f).",  # addresses
    "\ufeffA byte-order mark first, then Arabic \u0643\u064e\u062a\u064e\u0628\u064e.",
]


def _joining(char):
    return unicodedata.category(char) in {"Mn", "Mc", "Me", "Cf"}


@pytest.mark.parametrize("text", JOINING_TEXTS)
def test_a_combining_mark_or_format_character_never_starts_a_token(sample, text):
    tokenizer = sample[2]
    [sentences] = tokenizer.predict([text])
    tokens = [token for sentence in sentences for token in sentence]
    assert "".join(t.form for t in tokens) == "".join(text.split())
    for token in tokens:
        chunk_start = token.start == 0 or text[token.start - 1].isspace()
        chunk_end = token.end == len(text) or text[token.end].isspace()
        # it stays with the character before it, which only white space can take away
        assert chunk_start or not _joining(text[token.start]), (text, token)
        # a chunk that begins with marks gives them to what follows
        assert chunk_end or not all(map(_joining, token.form)), (text, token)
        assert chunk_end or not token.form.endswith("\u200d"), (text, token)
    forms = [t.form for t in tokens]
    if text.startswith("Cafe"):
        assert forms[0] == "Cafe\u0301"
    if text.startswith("He wrote"):
        assert "\u202eevil\u202c" in forms


@pytest.mark.parametrize("text, unbreakable", [
    ("Cafe\u0301 x", [3]),
    ("\u0301\u0301ab c", [0, 1]),  # marks that begin a chunk go with what follows
    ("\u0301 a\u0301", [2]),  # a chunk of marks alone is a token: nothing to join
    ("a\u200db", [0, 1]),  # a zero-width joiner holds both sides
    ("a\u200cb\ufe0f!", [0, 2]),  # ZWNJ and a variation selector join the previous only
    ("plain text, no marks.", []),
])
def test_characters_that_cannot_end_a_token(text, unbreakable):
    _, classes, joins = encode_text(text)
    assert np.flatnonzero(unbreakable_characters(joins, classes)).tolist() == unbreakable


@pytest.mark.parametrize("text", ["它重38.28公斤，售价1,50元。", "It weighs 38.28 kg. It costs 1,50 euros."])
def test_no_sentence_ends_inside_a_number(text):
    """A point or comma between two digits may end a token, never a sentence, even
    where every weight says a sentence ends (and, failing that, a token)."""
    encoded = _Text(text).with_context(np.zeros(0, np.int64), np.zeros(0, np.int64))
    n_rows = 1024
    weights = np.zeros((2, 3))
    weights[1, TOKEN_END], weights[1, SENTENCE_END] = 0.5, 1.0
    labels = predict_labels(encoded.codes, encoded.classes, encoded.context,
                            np.ones(n_rows, np.int64), weights, n_rows - 1, N_TEMPLATES)
    inside_numbers = [m.start() for m in re.finditer(r"(?<=\d)[.,](?=\d)", text)]
    assert len(inside_numbers) == 2
    assert all(labels[i] == TOKEN_END for i in inside_numbers)
    # punctuation elsewhere still follows the weights
    elsewhere = text.index("，") if "，" in text else text.index("kg.") + 2
    assert labels[elsewhere] == SENTENCE_END
