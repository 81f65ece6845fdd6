"""The few neural-network pieces the parameterisations need, with hand-written backward.

Parameters live in a flat ``dict`` of float64 arrays (plain numpy, so models
pickle); every forward function returns its output and a cache, and the
matching backward function adds into a gradient dict of the same keys.
"""

import numpy as np

from ..kernels.rank_space import adam_update, sum_of_squares


def xavier_normal(rng, fan_in, fan_out):
    return rng.normal(0.0, np.sqrt(2.0 / (fan_in + fan_out)), size=(fan_in, fan_out))


def add_linear(params, rng, name, fan_in, fan_out):
    params[f"{name}.weight"] = xavier_normal(rng, fan_in, fan_out)
    params[f"{name}.bias"] = np.zeros(fan_out)


def add_mlp(params, rng, name, dim, out_dim):
    """Linear(dim, dim), two residual ReLU layers, Linear(dim, out_dim) (Yang et al. 2021b)."""
    add_linear(params, rng, f"{name}.in", dim, dim)
    for layer in ("res1", "res2"):
        add_linear(params, rng, f"{name}.{layer}.a", dim, dim)
        add_linear(params, rng, f"{name}.{layer}.b", dim, dim)
    add_linear(params, rng, f"{name}.out", dim, out_dim)


def linear(params, name, x):
    return x @ params[f"{name}.weight"] + params[f"{name}.bias"]


def linear_backward(params, name, x, grad_out, grads):
    grads[f"{name}.weight"] += x.T @ grad_out
    grads[f"{name}.bias"] += grad_out.sum(axis=0)
    return grad_out @ params[f"{name}.weight"].T


def relu_linear(params, name, x):
    """ReLU(Linear(x)), the one-layer MLP of the rule roles."""
    return np.maximum(linear(params, name, x), 0.0)


def relu_linear_backward(params, name, x, out, grad_out, grads):
    return linear_backward(params, name, x, grad_out * (out > 0), grads)


def mlp(params, name, x):
    """Forward of :func:`add_mlp`'s network; returns ``(output, cache)``."""
    h = linear(params, f"{name}.in", x)
    cache = [h]
    for layer in ("res1", "res2"):
        a = relu_linear(params, f"{name}.{layer}.a", h)
        b = relu_linear(params, f"{name}.{layer}.b", a)
        cache.append((h, a, b))
        h = h + b
    return linear(params, f"{name}.out", h), (x, cache, h)


def mlp_backward(params, name, cache, grad_out, grads):
    x, layers, top = cache
    grad = linear_backward(params, f"{name}.out", top, grad_out, grads)
    for layer, (h, a, b) in zip(("res2", "res1"), reversed(layers[1:])):
        grad_a = relu_linear_backward(params, f"{name}.{layer}.b", a, b, grad, grads)
        grad = grad + relu_linear_backward(params, f"{name}.{layer}.a", h, a, grad_a, grads)
    return linear_backward(params, f"{name}.in", x, grad, grads)


class Adam:
    """Adam (Kingma & Ba 2015) on a dict of arrays, with global gradient-norm clipping.

    Its moments are plain arrays in ``state`` so that a fitted model that keeps
    them still pickles. The learning rate lives in ``state`` too, so that a
    decayed rate carries over to a warm-started or resumed run.
    """

    def __init__(self, learning_rate, betas, max_grad_norm, eps=1e-8):
        self.initial_learning_rate = learning_rate
        self.betas = betas
        self.max_grad_norm = max_grad_norm
        self.eps = eps
        self.state = {"step": 0, "m": {}, "v": {}, "learning_rate": learning_rate}

    @property
    def learning_rate(self):
        # a state saved before the rate was kept there starts from the initial rate
        return self.state.setdefault("learning_rate", self.initial_learning_rate)

    @learning_rate.setter
    def learning_rate(self, value):
        self.state["learning_rate"] = value

    def step(self, params, grads):
        """Update ``params`` in place to *decrease* the loss whose gradient is ``grads``.

        Returns the gradient norm before clipping. The moments take the dtype
        of the parameters.
        """
        norm = np.sqrt(sum(sum_of_squares(g) for g in grads.values()))
        scale = min(1.0, self.max_grad_norm / (norm + 1e-12))
        b1, b2 = self.betas
        state = self.state
        state["step"] += 1
        t = state["step"]
        for key, grad in grads.items():
            m = state["m"].setdefault(key, np.zeros_like(params[key]))
            v = state["v"].setdefault(key, np.zeros_like(params[key]))
            adam_update(params[key], np.ascontiguousarray(grad, params[key].dtype), m, v, scale,
                        self.learning_rate, b1, b2, 1 - b1**t, 1 - b2**t, self.eps)
        return norm
