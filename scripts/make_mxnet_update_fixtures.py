#!/usr/bin/env python3
"""Runs MXNet 1.9.1's optimizer update operators (sgd_update, adam_update, ...) on seeded random
arrays and saves what they read and wrote, for tests/python/test_update_ops.py:

    tests/data/mxnet/update_ops.params   "<case>:in:<i>" the inputs before the call (weight,
                                         grad, states), "<case>:out" the new weight (the op's
                                         output, written over the weight, out=weight, as
                                         optimizers call it), "<case>:after:<i>" every input
                                         after the call (the states it mutated)
    tests/data/mxnet/update_ops.json     [[case, op, {attr: value}, in_place], ...] (LAMB's
                                         phase 1 outputs a direction, not the weight: not in
                                         place)

    pip install mxnet==1.9.1 'numpy<1.24'   (in a venv; run this with that venv's python)
    python scripts/make_mxnet_update_fixtures.py"""
import json
import os

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'data', 'mxnet')
COMMON = {'lr': 0.1, 'wd': 0.01, 'rescale_grad': 0.5}
CLIPPED = dict(COMMON, clip_gradient=0.3)

# case, op, number of arrays (weight, grad, states...), attributes; states start positive, as
# the square roots of some need.
CASES = [
    ('sgd', 'sgd_update', 2, COMMON),
    ('sgd_clip', 'sgd_update', 2, CLIPPED),
    ('sgd_mom', 'sgd_mom_update', 3, dict(COMMON, momentum=0.9)),
    ('sgd_mom_clip', 'sgd_mom_update', 3, dict(CLIPPED, momentum=0.9)),
    ('nag_mom', 'nag_mom_update', 3, dict(COMMON, momentum=0.9)),
    ('nag_mom_clip', 'nag_mom_update', 3, dict(CLIPPED, momentum=0.9)),
    ('signsgd', 'signsgd_update', 2, CLIPPED),
    ('signum', 'signum_update', 3, dict(COMMON, momentum=0.9, wd_lh=0.05)),
    ('signum_clip', 'signum_update', 3, dict(CLIPPED, momentum=0.9)),
    ('adam', 'adam_update', 4, dict(COMMON, beta1=0.8, beta2=0.99, epsilon=1e-6)),
    ('adam_clip', 'adam_update', 4, CLIPPED),
    ('rmsprop', 'rmsprop_update', 3, dict(COMMON, gamma1=0.9, epsilon=1e-6)),
    ('rmsprop_clip', 'rmsprop_update', 3, dict(CLIPPED, clip_weights=0.5)),
    ('rmspropalex', 'rmspropalex_update', 5, dict(COMMON, gamma1=0.9, gamma2=0.8)),
    ('rmspropalex_clip', 'rmspropalex_update', 5, dict(CLIPPED, clip_weights=0.5)),
    ('ftrl', 'ftrl_update', 4, dict(COMMON, lamda1=0.05, beta=0.5)),
    ('ftrl_clip', 'ftrl_update', 4, CLIPPED),
    ('ftml', 'ftml_update', 5, dict(lr=0.1, wd=0.01, rescale_grad=0.5, t=3, beta1=0.7)),
    ('ftml_clip', 'ftml_update', 5, dict(lr=0.1, wd=0.01, rescale_grad=0.5, t=1, clip_grad=0.3)),
    ('lamb1', 'lamb_update_phase1', 4, dict(wd=0.01, t=3, rescale_grad=0.5, beta1=0.8)),
    ('lamb1_clip_nobias', 'lamb_update_phase1', 4,
     dict(wd=0.01, t=1, clip_gradient=0.3, bias_correction=False)),
    ('lamb2', 'lamb_update_phase2', 4, dict(lr=0.1)),
    ('lamb2_bounds', 'lamb_update_phase2', 4, dict(lr=0.1, lower_bound=0.5, upper_bound=0.9)),
]


def main():
    rng = np.random.RandomState(7)
    arrays, cases = {}, []
    for name, op, count, attrs in CASES:
        inputs = [rng.uniform(-1, 1, (3, 4)).astype(np.float32) for _ in range(2)]
        inputs += [rng.uniform(0.1, 1, (3, 4)).astype(np.float32) for _ in range(count - 2)]
        if op == 'lamb_update_phase2':  # r1 and r2: the norms, one element each
            inputs[2:] = [np.array([np.abs(x).sum()], np.float32) for x in inputs[2:]]
        if op == 'rmspropalex_update':
            inputs[3] *= np.float32(0.3)  # its mean gradient g: n - g^2 stays positive
        nds = [mx.nd.array(x) for x in inputs]
        # In place, as MXNet's optimizers call them (nag_mom's momentum then reads the new weight).
        in_place = op != 'lamb_update_phase1'
        out = nds[0] if in_place else mx.nd.zeros((3, 4))
        getattr(mx.nd, op)(*nds, out=out, **attrs)
        out = out.copy()
        for i, x in enumerate(inputs):
            arrays['%s:in:%d' % (name, i)] = mx.nd.array(x)
            arrays['%s:after:%d' % (name, i)] = nds[i]
        arrays['%s:out' % name] = out
        cases.append([name, op, {k: str(v) for k, v in attrs.items()}, in_place])
    os.makedirs(OUT, exist_ok=True)
    mx.nd.save(os.path.join(OUT, 'update_ops.params'), arrays)
    with open(os.path.join(OUT, 'update_ops.json'), 'w') as f:
        json.dump(cases, f, indent=1)
        f.write('\n')
    print('wrote %d cases to %s' % (len(cases), OUT))


if __name__ == '__main__':
    main()
