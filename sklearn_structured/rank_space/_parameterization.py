"""From free parameters to the normalised factors of the grammar / HMM, and back.

Two parameterisations for each model:

``"direct"``
    a free logit for every probability, softmax-normalised.
``"neural"``
    Yang, Liu & Tu (2022), appendices A and B: symbol embeddings fed to small
    MLPs (two residual ReLU layers), and one rank projection shared by the
    factors of the CPD, softmax-normalised in the directions that make the
    decomposed tensor a proper distribution.

``*_probabilities`` returns the factors and a cache; ``*_backward`` maps the
gradients w.r.t. the factors to gradients w.r.t. the parameters.
"""

import numpy as np

from ..kernels.rank_space import (
    softmax_columns,
    softmax_columns_backward,
    softmax_rows,
    softmax_rows_backward,
)
from ._nn import (
    add_linear,
    add_mlp,
    mlp,
    mlp_backward,
    relu_linear,
    relu_linear_backward,
    xavier_normal,
)

# PCFG factors and the axis each is normalised over:
# root over nonterminals, U rows over the rank, V and W columns over all
# symbols, emissions rows over the vocabulary.
PCFG_AXES = {"root": 0, "U": 1, "V": 0, "W": 0, "emission": 1}
# HMM: start over states, U rows over the rank, V columns over the states,
# W columns over the vocabulary (the word is emitted from the rank variable).
HMM_AXES = {"start": 0, "U": 1, "V": 0, "W": 0}


def _softmax_in_place(x, axis):
    """Softmax of the (1-D or 2-D) ``x`` over ``axis``, in place."""
    if x.ndim == 1:
        softmax_rows(x.reshape(1, -1))
    elif axis == 1:
        softmax_rows(x)
    else:
        softmax_columns(x)
    return x


def _softmax_backward_in_place(probs, grad, axis):
    """The gradient w.r.t. the logits, written over ``grad`` (w.r.t. the probabilities)."""
    if probs.ndim == 1:
        softmax_rows_backward(probs.reshape(1, -1), grad.reshape(1, -1))
    elif axis == 1:
        softmax_rows_backward(probs, grad)
    else:
        softmax_columns_backward(probs, grad)
    return grad


def init_pcfg(kind, n_nonterminals, n_preterminals, rank, n_words, dim, rng):
    n_symbols = n_nonterminals + n_preterminals
    if kind == "direct":
        shapes = {
            "root": (n_nonterminals,),
            "U": (n_nonterminals, rank),
            "V": (n_symbols, rank),
            "W": (n_symbols, rank),
            "emission": (n_preterminals, n_words),
        }
        return {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    params = {
        "symbol_embedding": xavier_normal(rng, n_symbols, dim),
        "root_embedding": xavier_normal(rng, 1, dim),
        "rank_projection": xavier_normal(rng, dim, rank),
    }
    add_mlp(params, rng, "root_mlp", dim, n_nonterminals)
    add_mlp(params, rng, "term_mlp", dim, n_words)
    for role in ("parent", "left", "right"):
        add_linear(params, rng, role, dim, dim)
    return params


def pcfg_probabilities(kind, params, n_nonterminals):
    """The factors, each softmax taken in place on a fresh array of logits."""
    if kind == "direct":
        return {name: _softmax_in_place(params[name].copy(), axis) for name, axis in PCFG_AXES.items()}, None
    emb = params["symbol_embedding"]
    root_logits, root_cache = mlp(params, "root_mlp", params["root_embedding"])
    term_logits, term_cache = mlp(params, "term_mlp", emb[n_nonterminals:])
    hidden = {
        "U": relu_linear(params, "parent", emb[:n_nonterminals]),
        "V": relu_linear(params, "left", emb),
        "W": relu_linear(params, "right", emb),
    }
    probs = {
        "root": _softmax_in_place(np.ascontiguousarray(root_logits[0]), 0),
        "emission": _softmax_in_place(term_logits, 1),
    }
    for name, h in hidden.items():
        probs[name] = _softmax_in_place(h @ params["rank_projection"], PCFG_AXES[name])
    return probs, (root_cache, term_cache, hidden)


_ROLE_OF = {"U": "parent", "V": "left", "W": "right"}


def pcfg_backward(kind, params, probs, cache, prob_grads, n_nonterminals):
    """Gradients of the parameters; ``prob_grads`` is overwritten (by the logits' gradients)."""
    logit_grads = {name: _softmax_backward_in_place(probs[name], prob_grads[name], axis)
                   for name, axis in PCFG_AXES.items()}
    if kind == "direct":
        return logit_grads
    grads = {key: np.zeros_like(value) for key, value in params.items()}
    root_cache, term_cache, hidden = cache
    grads["root_embedding"] += mlp_backward(params, "root_mlp", root_cache, logit_grads["root"][None, :], grads)
    emb = params["symbol_embedding"]
    grads["symbol_embedding"][n_nonterminals:] += mlp_backward(
        params, "term_mlp", term_cache, logit_grads["emission"], grads
    )
    projection = params["rank_projection"]
    for name, role in _ROLE_OF.items():
        h = hidden[name]
        grads["rank_projection"] += h.T @ logit_grads[name]
        inputs = emb[:n_nonterminals] if name == "U" else emb
        grad_emb = relu_linear_backward(params, role, inputs, h, logit_grads[name] @ projection.T, grads)
        grads["symbol_embedding"][: inputs.shape[0]] += grad_emb
    return grads


def init_hmm(kind, n_states, rank, n_words, dim, rng):
    if kind == "direct":
        shapes = {"start": (n_states,), "U": (n_states, rank), "V": (n_states, rank), "W": (n_words, rank)}
        return {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    # embeddings drawn from a standard normal, the rest Xavier (the reference's initialisation)
    params = {
        "state_embedding": rng.standard_normal((n_states, dim)),
        "next_state_embedding": rng.standard_normal((n_states, dim)),
        "start_embedding": rng.standard_normal((n_states, dim)),
        "word_embedding": rng.standard_normal((n_words, dim)),
        "rank_projection": xavier_normal(rng, dim, rank),
    }
    add_mlp(params, rng, "start_mlp", dim, 1)
    add_mlp(params, rng, "word_mlp", dim, rank)
    return params


def hmm_dropout_masks(kind, params, rate, rng):
    """The entries a training step drops, drawn from ``rng`` at ``rate`` (the
    reference's recipe): of the U and V logits (set to -inf, so that the step
    sees the transitions renormalised without them) and, neural only, of the
    start embeddings (zeroed, the rest scaled by ``1 / (1 - rate)``). A row of U
    or a column of V is never dropped whole."""
    if kind == "direct":
        n_states, rank = params["U"].shape
    else:
        n_states, rank = params["state_embedding"].shape[0], params["rank_projection"].shape[1]
    masks = {}
    for name, axis in (("U", 1), ("V", 0)):
        dropped = rng.random((n_states, rank)) < rate
        # a softmax needs an entry left: a row (U) or column (V) that lost all keeps all
        whole = dropped.all(axis=axis)
        if axis == 1:
            dropped[whole, :] = False
        else:
            dropped[:, whole] = False
        masks[name] = dropped
    if kind != "direct":
        kept = rng.random(params["start_embedding"].shape) >= rate
        masks["start_embedding"] = (kept / (1.0 - rate)).astype(params["start_embedding"].dtype)
    return masks


def hmm_probabilities(kind, params, masks=None):
    """The factors, each softmax taken in place on a fresh array of logits (the
    large (m, r) arrays are not copied again); ``masks`` from
    :func:`hmm_dropout_masks` drop entries, as in a training step."""
    masks = masks or {}
    if kind == "direct":
        logits = {name: params[name].copy() for name in HMM_AXES}
        cache = None
    else:
        start_input = params["start_embedding"]
        if "start_embedding" in masks:
            start_input = start_input * masks["start_embedding"]
        start_logits, start_cache = mlp(params, "start_mlp", start_input)
        word_logits, word_cache = mlp(params, "word_mlp", params["word_embedding"])
        projection = params["rank_projection"]
        logits = {
            "start": np.ascontiguousarray(start_logits[:, 0]),
            "U": params["state_embedding"] @ projection,
            "V": params["next_state_embedding"] @ projection,
            "W": word_logits,
        }
        cache = (start_cache, word_cache, masks.get("start_embedding"))
    for name in ("U", "V"):
        if name in masks:
            logits[name][masks[name]] = -np.inf
    probs = {name: _softmax_in_place(logits[name], axis) for name, axis in HMM_AXES.items()}
    return probs, cache


def hmm_backward(kind, params, probs, cache, prob_grads):
    """Gradients of the parameters; ``prob_grads`` is overwritten (by the logits' gradients)."""
    logit_grads = {name: _softmax_backward_in_place(probs[name], prob_grads[name], axis)
                   for name, axis in HMM_AXES.items()}
    if kind == "direct":
        return logit_grads
    # the MLPs add into their gradients; the embeddings' are written once
    grads = {key: np.zeros_like(value) for key, value in params.items() if "_mlp." in key}
    start_cache, word_cache, start_scale = cache
    grads["start_embedding"] = mlp_backward(params, "start_mlp", start_cache, logit_grads["start"][:, None], grads)
    if start_scale is not None:
        grads["start_embedding"] *= start_scale
    grads["word_embedding"] = mlp_backward(params, "word_mlp", word_cache, logit_grads["W"], grads)
    projection = params["rank_projection"]
    grads["rank_projection"] = params["state_embedding"].T @ logit_grads["U"]
    grads["rank_projection"] += params["next_state_embedding"].T @ logit_grads["V"]
    grads["state_embedding"] = logit_grads["U"] @ projection.T
    grads["next_state_embedding"] = logit_grads["V"] @ projection.T
    return grads
