#!/usr/bin/env python3
"""Prints the C++ OpSpec entries (operator/common/op_spec.h) of MXNet 1.9.1 operators, read from
MXNet's own registry: the inputs, then every parameter with its type, default and description,
in MXNet's order. Paste an entry into the Specs() table of the file that registers the operator,
then edit it where Cohort takes less than MXNet (an enum's choices, a dtype list) so that it
states what Cohort's parser accepts: the table is the one declaration the C++ parser, the
Python constructors and `cohort-model ops` read.

    pip install mxnet==1.9.1 'numpy<1.24'   (in a venv; run this with that venv's python)
    python scripts/make_op_specs.py FullyConnected Convolution ..."""
import ctypes
import re
import sys

import mxnet as mx
from mxnet.base import _LIB, c_str, check_call, py_str

DOC_CHARS = 600


def mxnet_info(name):
    handle = mx.base.OpHandle()
    if _LIB.NNGetOpHandle(c_str(name), ctypes.byref(handle)) != 0 or not handle.value:
        return None
    real_name, desc, key_var, ret_type = (ctypes.c_char_p() for _ in range(4))
    num_args = mx.base.mx_uint()
    names, types, descs = (ctypes.POINTER(ctypes.c_char_p)() for _ in range(3))
    check_call(_LIB.MXSymbolGetAtomicSymbolInfo(
        handle, ctypes.byref(real_name), ctypes.byref(desc), ctypes.byref(num_args),
        ctypes.byref(names), ctypes.byref(types), ctypes.byref(descs), ctypes.byref(key_var),
        ctypes.byref(ret_type)))
    inputs, params = [], []
    for i in range(num_args.value):
        arg, kind, doc = py_str(names[i]), py_str(types[i]), py_str(descs[i])
        # (legacy NDArray functions, fill_element_0index, type their inputs 'NDArray')
        if kind.startswith('NDArray-or-Symbol') or kind.split(',')[0] == 'NDArray':
            inputs.append(arg)
            continue
        default = re.search(r"default=(.*)$", kind)
        params.append({'name': arg, 'type': kind.split(',')[0] if not kind.startswith('{')
                       else kind[:kind.index('}') + 1],
                       'default': default.group(1).strip("'") if default else None,
                       'doc': ' '.join(doc.split())})
    text = py_str(desc.value).split('\n\nDefined in')[0].strip()
    # The first paragraph: the rest is MXNet's long-form documentation.
    text = ' '.join(text.split('\n\n')[0].split())
    if len(text) > DOC_CHARS:
        text = text[:DOC_CHARS].rsplit(' ', 1)[0] + ' ...'
    return {'inputs': inputs, 'params': params, 'doc': text,
            'var_inputs': py_str(key_var.value) if key_var.value else ''}


def literal(text):
    if text is None:
        return 'kRequired'
    return '"%s"' % text.replace('\\', '\\\\').replace('"', '\\"')


def spec_entry(name, info):
    params = ',\n      '.join('{%s, %s, %s, %s}' % (literal(p['name']), literal(p['type']),
                                                   literal(p['default']), literal(p['doc']))
                               for p in info['params'])
    return '    {%s,\n     %s,\n     {%s},\n     %s,\n     {%s}},' % (
        literal(name), literal(info['doc']), ', '.join(literal(i) for i in info['inputs']),
        literal(info['var_inputs']), params)


def main():
    for name in sys.argv[1:]:
        info = mxnet_info(name)
        if info is None:
            sys.exit('%s: MXNet 1.9.1 has no such operator' % name)
        print(spec_entry(name, info))


if __name__ == '__main__':
    main()
