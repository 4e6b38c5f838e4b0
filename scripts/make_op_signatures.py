#!/usr/bin/env python3
"""Writes python/cohort/_signatures.json: for every operator Cohort registers that MXNet 1.9.1
has, MXNet's own parameter list (inputs, then parameters in MXNet's order, each with its type,
default and description) and the operator's description, read from MXNet's registry. The
generated cohort.nd / cohort.sym functions take parameters by position in this order and show
it in help(); the values are still parsed and checked by Cohort's C++ operators.

    pip install mxnet==1.9.1 'numpy<1.24'   (in a venv; run this with that venv's python)
    python scripts/make_op_signatures.py build/python"""
import ctypes
import json
import os
import re
import subprocess
import sys

import mxnet as mx
from mxnet.base import _LIB, c_str, check_call, py_str

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
OUT = os.path.join(ROOT, 'python', 'cohort', '_signatures.json')


def cohort_op_names(build_python):
    # The extension alone (the package's import reads the table this script writes).
    code = 'import _cohort; print("\\n".join(_cohort.op_names()))'
    env = dict(os.environ, PYTHONPATH=os.path.join(build_python, 'cohort'))
    text = subprocess.check_output(['/usr/bin/python3', '-c', code], env=env, text=True)
    return text.split()


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
                       'required': 'required' in kind,
                       'default': default.group(1).strip("'") if default else None,
                       'doc': doc})
    text = py_str(desc.value).split('\n\nDefined in')[0].strip()
    if len(text) > 1200:
        text = text[:1200].rsplit('\n', 1)[0] + '\n...'
    return {'inputs': inputs, 'params': params, 'doc': text,
            'var_inputs': py_str(key_var.value) if key_var.value else None}


def main():
    build_python = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'build', 'python')
    table = {}
    for name in cohort_op_names(build_python):
        info = mxnet_info(name)
        if info is not None:
            table[name] = info
    with open(OUT, 'w') as f:
        json.dump(table, f, indent=0, sort_keys=True)
        f.write('\n')
    print('wrote %d operators to %s' % (len(table), OUT))


if __name__ == '__main__':
    main()
