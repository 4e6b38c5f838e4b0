"""Text from a byte-level causal language model, as cohort-generate makes it (Cohort's own; MXNet
1.x has no counterpart). The GPT of configs/text_gpt.yaml, trained by cohort-train or by
examples/train_gpt.py, or any symbol from token ids ("data", 1 x time) to next-byte
probabilities or logits.

    sym, args, aux = mx.model.load_checkpoint('gpt', 3)
    gen = mx.generation.TextGenerator(sym, args, aux)
    print(gen.generate('The ', length=200, temperature=0.8, top_k=40, seed=1).decode())

The same seed gives the same bytes as `cohort-generate --seed` (one C++ loop runs both; Note
[Text generation])."""
import numpy as np

from . import _cohort
from .context import cpu

__all__ = ['TextGenerator', 'generate']


def _bytes(prompt):
    if isinstance(prompt, str):
        return prompt.encode('utf-8')
    if isinstance(prompt, (bytes, bytearray)):
        return bytes(prompt)
    raise TypeError('prompt: expected str or bytes, got %s' % type(prompt).__name__)


class TextGenerator(object):
    """A model bound once for generation: a prompt shorter than the trained window needs no
    padding, a longer text slides the window. `context`: the window the model was trained on
    (0: the rows of pos_embed_weight). kv_cache: Cohort's GPT decodes a position at a time
    while the text fits the window (Note [KV cache]); False runs the window for every byte."""

    def __init__(self, symbol, arg_params, aux_params=None, ctx=None, context=0, kv_cache=True):
        ctx = ctx or cpu()
        self._handle = _cohort.TextGeneratorHandle(
            symbol.handle, {k: v._handle for k, v in arg_params.items()},
            {k: v._handle for k, v in (aux_params or {}).items()}, ctx._text(), int(context),
            bool(kv_cache))

    @property
    def uses_kv_cache(self):
        """Whether bytes within the window cost one position's work (Cohort's GPT on a CPU)."""
        return self._handle.uses_kv_cache

    @property
    def context(self):
        """The window the model sees."""
        return self._handle.context

    @property
    def vocab(self):
        """The number of tokens (bytes) it gives probabilities for."""
        return self._handle.vocab

    def next_probabilities(self, tokens):
        """The distribution (numpy, vocab entries) of the token after `tokens` (ids or bytes)."""
        if isinstance(tokens, (str, bytes, bytearray)):
            tokens = list(_bytes(tokens))
        return np.asarray(self._handle.next_probabilities([int(t) for t in tokens]))

    def generate(self, prompt, length=200, temperature=1.0, top_k=0, top_p=1.0, seed=0,
                 callback=None):
        """`length` bytes continuing `prompt` (str or bytes), drawn with `temperature` (0: the
        most likely byte), from the `top_k` most likely (0: all) and the fewest most likely
        whose probability reaches `top_p`; `callback(byte)` gets each as it is drawn."""
        return self._handle.generate(_bytes(prompt), int(length), float(temperature),
                                     int(top_k), float(top_p), int(seed), callback)


def generate(symbol, arg_params, aux_params, prompt, length=200, temperature=1.0, top_k=0,
             top_p=1.0, seed=0, ctx=None, context=0):
    """TextGenerator(symbol, arg_params, aux_params, ctx, context).generate(prompt, ...)."""
    return TextGenerator(symbol, arg_params, aux_params, ctx, context).generate(
        prompt, length, temperature, top_k, top_p, seed)
