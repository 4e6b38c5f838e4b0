#!/usr/bin/env python3
"""Runs each operator case through MXNet 1.9.1 (simple_bind, forward, backward) and saves the
inputs, outputs, gradients and auxiliary states to tests/data/mxnet_ops/<case>.params, with
tests/data/mxnet_ops/cases.txt listing  name|op|attr=value;...|is_train  per line. The C++ test
tests/operator/mxnet_ops_test.cc runs the same cases through Cohort and compares.

    pip install mxnet==1.9.1 'numpy<1.24'
    MXNET_MKLDNN_ENABLED=0 python3 scripts/make_mxnet_op_fixtures.py

(oneDNN's slice cannot take a negative step: "could not construct a sub-memory". The cases
before "min_axis" were made with oneDNN on; their values agree within the test's tolerance.)

Array names in each file: "in:<arg>" inputs, "aux:<name>" aux states before forward,
"out:<i>" visible outputs, "head:<i>" head gradients, "grad:<arg>" input gradients,
"auxout:<name>" aux states after forward."""
import os

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "mxnet_ops")
# MXNet 1.9.1's sort cannot run backward through simple_bind (its _backward_topk gets axis='',
# "Invalid Parameter format for axis"): forward only; tests/operator/grad_check_test.cc checks
# Cohort's gradient against finite differences instead.
BACKWARD_BROKEN = {"sort"}
# No gradient at all (MXNet's backward of these is an error or nothing): forward only.
NO_BACKWARD = {"one_hot", "shape_array", "size_array", "_slice_assign", "_slice_assign_scalar"}
LOSS_OPS = {"SoftmaxOutput", "LinearRegressionOutput", "LogisticRegressionOutput",
            "MAERegressionOutput", "MakeLoss"}

# name, op, attrs, input shapes (in argument order), is_train
CASES = [
    ("fc", "FullyConnected", {"num_hidden": "5"}, [(3, 4)], True),
    ("fc_nobias_3d", "FullyConnected", {"num_hidden": "3", "no_bias": "True", "flatten": "False"},
     [(2, 3, 4)], True),
    ("fc_flatten_4d", "FullyConnected", {"num_hidden": "4"}, [(2, 2, 2, 3)], True),
    ("conv3x3", "Convolution", {"kernel": "(3, 3)", "num_filter": "4"}, [(2, 3, 6, 5)], True),
    ("conv_pad_stride", "Convolution",
     {"kernel": "(3, 3)", "num_filter": "4", "pad": "(1, 1)", "stride": "(2, 2)"},
     [(2, 3, 7, 7)], True),
    ("conv_dilate", "Convolution", {"kernel": "(3, 3)", "num_filter": "2", "dilate": "(2, 2)"},
     [(1, 2, 7, 7)], True),
    ("conv_group", "Convolution",
     {"kernel": "(3, 3)", "num_filter": "4", "num_group": "2", "no_bias": "True"},
     [(2, 4, 5, 5)], True),
    ("conv1x1", "Convolution", {"kernel": "(1, 1)", "num_filter": "3"}, [(2, 4, 3, 3)], True),
    ("pool_max", "Pooling", {"kernel": "(2, 2)", "stride": "(2, 2)", "pool_type": "max"},
     [(2, 3, 6, 6)], True),
    ("pool_max_full", "Pooling",
     {"kernel": "(3, 3)", "stride": "(2, 2)", "pool_type": "max", "pooling_convention": "full"},
     [(1, 2, 6, 6)], True),
    ("pool_avg_pad", "Pooling",
     {"kernel": "(3, 3)", "stride": "(2, 2)", "pad": "(1, 1)", "pool_type": "avg"},
     [(2, 2, 5, 5)], True),
    ("pool_avg_nopadcount", "Pooling",
     {"kernel": "(3, 3)", "stride": "(2, 2)", "pad": "(1, 1)", "pool_type": "avg",
      "count_include_pad": "False"}, [(1, 2, 5, 5)], True),
    ("pool_sum", "Pooling", {"kernel": "(2, 2)", "stride": "(1, 1)", "pool_type": "sum"},
     [(1, 2, 4, 4)], True),
    ("pool_global_avg", "Pooling", {"kernel": "(1, 1)", "global_pool": "True", "pool_type": "avg"},
     [(2, 3, 4, 5)], True),
    ("relu", "Activation", {"act_type": "relu"}, [(3, 5)], True),
    ("sigmoid", "Activation", {"act_type": "sigmoid"}, [(3, 5)], True),
    ("tanh", "Activation", {"act_type": "tanh"}, [(3, 5)], True),
    ("softrelu", "Activation", {"act_type": "softrelu"}, [(3, 5)], True),
    ("softsign", "Activation", {"act_type": "softsign"}, [(3, 5)], True),
    ("leaky", "LeakyReLU", {"act_type": "leaky", "slope": "0.1"}, [(3, 5)], True),
    ("elu", "LeakyReLU", {"act_type": "elu", "slope": "0.7"}, [(3, 5)], True),
    ("bn_train", "BatchNorm", {"fix_gamma": "False"}, [(4, 3, 2, 2)], True),
    ("bn_fix_gamma", "BatchNorm", {}, [(4, 3, 2, 2)], True),
    ("bn_global", "BatchNorm", {"use_global_stats": "True", "fix_gamma": "False"},
     [(4, 3, 2, 2)], True),
    ("bn_2d_momentum", "BatchNorm", {"fix_gamma": "False", "momentum": "0.5", "eps": "0.01"},
     [(5, 4)], True),
    ("softmax", "softmax", {}, [(3, 4)], True),
    ("log_softmax_axis1", "log_softmax", {"axis": "1"}, [(2, 3, 4)], True),
    ("softmax_output", "SoftmaxOutput", {}, [(4, 5)], True),
    ("softmax_output_batch_scale", "SoftmaxOutput",
     {"normalization": "batch", "grad_scale": "2"}, [(4, 5)], True),
    ("softmax_output_ignore_valid", "SoftmaxOutput",
     {"use_ignore": "True", "ignore_label": "1", "normalization": "valid"}, [(6, 3)], True),
    ("softmax_output_multi", "SoftmaxOutput", {"multi_output": "True"}, [(2, 3, 4)], True),
    ("linear_regression", "LinearRegressionOutput", {}, [(4, 3)], True),
    ("logistic_regression", "LogisticRegressionOutput", {"grad_scale": "0.5"}, [(4, 2)], True),
    ("mae_regression", "MAERegressionOutput", {}, [(4, 2)], True),
    ("make_loss", "MakeLoss", {"grad_scale": "0.3"}, [(2, 3)], True),
    ("block_grad", "BlockGrad", {}, [(2, 3)], True),
    ("add", "elemwise_add", {}, [(2, 3), (2, 3)], True),
    ("sub", "elemwise_sub", {}, [(2, 3), (2, 3)], True),
    ("mul", "elemwise_mul", {}, [(2, 3), (2, 3)], True),
    ("div", "elemwise_div", {}, [(2, 3), (2, 3)], True),
    ("plus_scalar", "_plus_scalar", {"scalar": "1.5"}, [(2, 3)], True),
    ("minus_scalar", "_minus_scalar", {"scalar": "1.5"}, [(2, 3)], True),
    ("rminus_scalar", "_rminus_scalar", {"scalar": "1.5"}, [(2, 3)], True),
    ("mul_scalar", "_mul_scalar", {"scalar": "-2"}, [(2, 3)], True),
    ("div_scalar", "_div_scalar", {"scalar": "4"}, [(2, 3)], True),
    ("rdiv_scalar", "_rdiv_scalar", {"scalar": "3"}, [(2, 3)], True),
    ("flatten", "Flatten", {}, [(2, 3, 2)], True),
    ("reshape", "Reshape", {"shape": "(0, -1, 2)"}, [(2, 3, 4)], True),
    ("reshape_special", "Reshape", {"shape": "(-3, -2)"}, [(2, 3, 4, 5)], True),
    ("concat", "Concat", {"num_args": "3", "dim": "1"}, [(2, 1, 3), (2, 2, 3), (2, 3, 3)], True),
    ("embedding", "Embedding", {"input_dim": "5", "output_dim": "3"}, [(2, 3)], True),
    # The Transformer's operators (issue 12).
    ("gelu", "LeakyReLU", {"act_type": "gelu"}, [(3, 5)], True),
    ("sqrt", "sqrt", {}, [(3, 4)], True),
    ("exp", "exp", {}, [(3, 4)], True),
    ("log", "log", {}, [(3, 4)], True),
    ("square", "square", {}, [(3, 4)], True),
    ("clip", "clip", {"a_min": "-0.5", "a_max": "0.4"}, [(3, 5)], True),
    ("broadcast_add", "broadcast_add", {}, [(2, 3, 4), (1, 3, 1)], True),
    ("broadcast_sub", "broadcast_sub", {}, [(2, 3, 4), (2, 1, 4)], True),
    ("broadcast_mul", "broadcast_mul", {}, [(2, 1, 4), (1, 3, 1)], True),
    ("broadcast_div", "broadcast_div", {}, [(2, 3), (1, 3)], True),
    ("broadcast_maximum", "broadcast_maximum", {}, [(2, 3, 4), (2, 1, 4)], True),
    ("broadcast_minimum", "broadcast_minimum", {}, [(3, 4), (3, 1)], True),
    ("broadcast_power", "broadcast_power", {}, [(2, 3), (2, 1)], True),
    ("broadcast_equal", "broadcast_equal", {}, [(3, 4), (1, 4)], True),
    ("broadcast_not_equal", "broadcast_not_equal", {}, [(3, 4), (1, 4)], True),
    ("broadcast_greater", "broadcast_greater", {}, [(3, 4), (1, 4)], True),
    ("broadcast_greater_equal", "broadcast_greater_equal", {}, [(3, 4), (1, 4)], True),
    ("broadcast_lesser", "broadcast_lesser", {}, [(3, 4), (1, 4)], True),
    ("broadcast_lesser_equal", "broadcast_lesser_equal", {}, [(3, 4), (1, 4)], True),
    ("where", "where", {}, [(3, 4), (3, 4), (3, 4)], True),
    ("where_vector", "where", {}, [(3,), (3, 4), (3, 4)], True),
    ("layer_norm", "LayerNorm", {}, [(2, 3, 5)], True),
    ("layer_norm_axis1", "LayerNorm", {"axis": "1", "eps": "0.01"}, [(2, 4, 3)], True),
    ("layer_norm_mean_var", "LayerNorm", {"output_mean_var": "True"}, [(3, 6)], True),
    ("dot", "dot", {}, [(3, 4), (4, 5)], True),
    ("dot_transposed", "dot", {"transpose_a": "True", "transpose_b": "True"},
     [(4, 2, 3), (5, 4)], True),
    ("batch_dot", "batch_dot", {}, [(2, 3, 4), (2, 4, 5)], True),
    ("batch_dot_transpose_b", "batch_dot", {"transpose_b": "True"}, [(2, 3, 4), (2, 5, 4)], True),
    ("batch_dot_transpose_a", "batch_dot", {"transpose_a": "True"}, [(2, 4, 3), (2, 4, 5)], True),
    ("sum_axis", "sum", {"axis": "1"}, [(2, 3, 4)], True),
    ("sum_all", "sum", {}, [(2, 3)], True),
    ("mean_keepdims", "mean", {"axis": "(0, 2)", "keepdims": "True"}, [(2, 3, 4)], True),
    ("mean_exclude", "mean", {"axis": "1", "exclude": "True"}, [(2, 3, 4)], True),
    ("max_axis", "max", {"axis": "-1"}, [(3, 5)], True),
    ("transpose", "transpose", {"axes": "(0, 2, 1, 3)"}, [(2, 3, 4, 2)], True),
    ("transpose_default", "transpose", {}, [(2, 3, 4)], True),
    ("slice_axis", "slice_axis", {"axis": "1", "begin": "1", "end": "3"}, [(2, 4, 3)], True),
    ("slice_axis_none", "slice_axis", {"axis": "-1", "begin": "-2", "end": "None"},
     [(2, 4, 3)], True),
    ("split", "SliceChannel", {"num_outputs": "3", "axis": "2"}, [(2, 2, 6)], True),
    ("split_squeeze", "split", {"num_outputs": "2", "axis": "0", "squeeze_axis": "True"},
     [(2, 3)], True),
    ("take", "take", {}, [(5, 2, 3), (2, 4)], True),
    ("take_wrap", "take", {"mode": "wrap"}, [(5, 3), (7,)], True),
    ("arange", "_arange", {"start": "2", "stop": "11", "step": "3", "repeat": "2"}, [], True),
    ("arange_like", "_contrib_arange_like", {"axis": "1", "start": "1", "step": "0.5"},
     [(2, 5)], True),
    ("reshape_reverse", "Reshape", {"shape": "(0, -1)", "reverse": "True"}, [(2, 3, 4)], True),
    ("prelu", "LeakyReLU", {"act_type": "prelu"}, [(2, 3, 4)], True),
    ("conv_depthwise", "Convolution",
     {"kernel": "(3, 3)", "num_filter": "4", "num_group": "4", "pad": "(1, 1)"},
     [(2, 4, 5, 6)], True),
    ("conv_depthwise_stride_nobias", "Convolution",
     {"kernel": "(3, 3)", "num_filter": "3", "num_group": "3", "pad": "(1, 1)",
      "stride": "(2, 2)", "no_bias": "True"}, [(2, 3, 7, 6)], True),
    ("conv_depthwise_dilate", "Convolution",
     {"kernel": "(3, 2)", "num_filter": "2", "num_group": "2", "dilate": "(2, 1)"},
     [(1, 2, 7, 5)], True),
    # The third output is MXNet's inverse std, 1 / sqrt(var + eps), of the batch or moving stats.
    ("bn_mean_var", "BatchNorm", {"fix_gamma": "False", "output_mean_var": "True"},
     [(4, 3, 2, 2)], True),
    ("bn_global_mean_var", "BatchNorm",
     {"use_global_stats": "True", "output_mean_var": "True", "eps": "0.01"}, [(4, 3, 2, 2)], True),
    ("concat_last_dim", "Concat", {"num_args": "2", "dim": "-1"}, [(2, 3, 2), (2, 3, 4)], True),
    # What gluon blocks export: F.relu(x), F.maximum(x, 0.1), an identity (Dropout(0)), ...
    ("maximum_scalar", "_maximum_scalar", {"scalar": "0.1"}, [(3, 4)], True),
    ("minimum_scalar", "_minimum_scalar", {"scalar": "-0.2"}, [(3, 4)], True),
    ("copy", "_copy", {}, [(2, 3)], True),
    ("relu_function", "relu", {}, [(3, 4)], True),
    ("sigmoid_function", "sigmoid", {}, [(3, 4)], True),
    ("tanh_function", "tanh", {}, [(3, 4)], True),
    ("softsign_function", "softsign", {}, [(3, 4)], True),
    # Reductions through the layout and softmin (appended: earlier cases keep their inputs).
    ("min_axis", "min", {"axis": "1"}, [(2, 3, 4)], True),
    ("min_all_keepdims", "min", {"keepdims": "True"}, [(3, 4)], True),
    ("prod_axis", "prod", {"axis": "(0, 2)"}, [(2, 3, 2)], True),
    ("nansum_axis", "nansum", {"axis": "0"}, [(3, 4)], True),
    ("nanprod_axis", "nanprod", {"axis": "-1"}, [(3, 4)], True),
    ("norm_all", "norm", {}, [(3, 4)], True),
    ("norm_axis_ord1", "norm", {"axis": "1", "ord": "1", "keepdims": "True"}, [(2, 3, 4)], True),
    ("norm_axis_ord2", "norm", {"axis": "(0, 2)"}, [(2, 3, 4)], True),
    ("softmin", "softmin", {}, [(3, 4)], True),
    ("softmin_axis0_temperature", "softmin", {"axis": "0", "temperature": "2.5"}, [(3, 4)], True),
    # One input replicated (operator/replicate.h).
    ("broadcast_to", "broadcast_to", {"shape": "(2, 0, 4)"}, [(1, 3, 1)], True),
    ("broadcast_axis", "broadcast_axis", {"axis": "(0, 2)", "size": "(2, 3)"}, [(1, 4, 1)], True),
    ("broadcast_like", "broadcast_like", {}, [(1, 3), (4, 3)], True),
    ("broadcast_like_axes", "broadcast_like", {"lhs_axes": "(0, 2)", "rhs_axes": "(1, 0)"},
     [(1, 3, 1), (5, 2)], True),
    ("tile", "tile", {"reps": "(2, 1, 3)"}, [(2, 3)], True),
    ("tile_short_reps", "tile", {"reps": "(2,)"}, [(2, 3)], True),
    ("repeat_flat", "repeat", {"repeats": "2"}, [(2, 3)], True),
    ("repeat_axis", "repeat", {"repeats": "3", "axis": "-2"}, [(2, 2, 3)], True),
    # Sorting (operator/sort.h); distinct values.
    ("sort", "sort", {}, [(3, 5)], True),
    ("sort_descending_axis0", "sort", {"axis": "0", "is_ascend": "False"}, [(4, 3)], True),
    ("argsort", "argsort", {"axis": "1"}, [(2, 4, 3)], True),
    ("topk_value", "topk", {"k": "2", "ret_typ": "value"}, [(3, 5)], True),
    ("topk_indices_axis0", "topk", {"k": "3", "axis": "0"}, [(4, 3)], True),
    ("topk_both_ascend", "topk", {"k": "2", "ret_typ": "both", "is_ascend": "True"}, [(2, 3, 4)],
     True),
    ("topk_mask", "topk", {"k": "2", "ret_typ": "mask", "axis": "1"}, [(2, 4, 3)], True),
    # Strided windows (operator/slice.h).
    ("slice", "slice", {"begin": "(0, 1)", "end": "(2, 3)"}, [(2, 4, 3)], True),
    ("slice_steps", "slice", {"begin": "(None, None, 3)", "end": "(None, None, 0)",
                              "step": "(1, 2, -1)"}, [(2, 3, 4)], True),
    ("slice_clamped", "slice", {"begin": "(-1, -10)", "end": "(None, 2)"}, [(3, 4)], True),
    ("slice_like", "slice_like", {}, [(3, 4), (2, 3)], True),
    ("slice_like_axes", "slice_like", {"axes": "(0, 2)"}, [(3, 4, 5), (2, 7, 3)], True),
    ("flip", "flip", {"axis": "(0, 2)"}, [(2, 3, 4)], True),
    ("one_hot", "one_hot", {"depth": "4", "on_value": "2.5", "off_value": "-1"}, [(2, 3)], False),
    ("shape_array", "shape_array", {}, [(2, 3, 4)], False),
    ("size_array", "size_array", {}, [(2, 3, 4)], False),
    ("reshape_like", "reshape_like", {}, [(2, 6), (3, 4)], True),
    ("reshape_like_ranges", "reshape_like",
     {"lhs_begin": "1", "lhs_end": "None", "rhs_begin": "0", "rhs_end": "2"},
     [(2, 6), (3, 2, 5)], True),
    ("pad_constant", "Pad", {"mode": "constant", "pad_width": "(0, 0, 0, 0, 1, 2, 2, 1)",
                             "constant_value": "0.5"}, [(2, 2, 3, 4)], True),
    ("pad_edge", "Pad", {"mode": "edge", "pad_width": "(0, 0, 0, 0, 2, 1, 1, 3)"},
     [(1, 2, 3, 4)], True),
    ("pad_reflect", "Pad", {"mode": "reflect", "pad_width": "(0, 0, 0, 0, 2, 1, 1, 3)"},
     [(1, 2, 3, 4)], True),
    ("pad_reflect_5d", "Pad", {"mode": "reflect", "pad_width": "(0, 0, 0, 0, 1, 1, 2, 0, 0, 1)"},
     [(1, 1, 2, 3, 2)], True),
    ("add_n", "add_n", {"num_args": "3"}, [(2, 3), (2, 3), (2, 3)], True),
    ("slice_assign", "_slice_assign", {"begin": "(0, 1)", "end": "(2, None)", "step": "(1, 2)"},
     [(3, 5), (2, 2)], True),
    ("slice_assign_scalar", "_slice_assign_scalar",
     {"begin": "(1, None)", "end": "(3, None)", "step": "(1, -1)", "scalar": "2.5"}, [(4, 3)],
     True),
    ("pick_clip", "pick", {"axis": "1"}, [(3, 4), (3,)], True),
    ("pick_wrap_axis0", "pick", {"axis": "0", "mode": "wrap"}, [(3, 4), (4,)], True),
    ("pick_keepdims_3d", "pick", {"axis": "-1", "keepdims": "True"}, [(2, 3, 4), (2, 3, 1)],
     True),
]

POSITIVE_OPS = {"sqrt", "log", "broadcast_div", "broadcast_power", "elemwise_div",
                "_rdiv_scalar", "prod", "nanprod"}
# Ops whose gradients switch between inputs: distinct values, no ties between inputs.
DISTINCT_OPS = {"Pooling", "max", "min", "sort", "argsort", "topk", "clip", "broadcast_maximum", "broadcast_minimum",
                "_maximum_scalar", "_minimum_scalar", "relu",
                "broadcast_greater", "broadcast_greater_equal", "broadcast_lesser",
                "broadcast_lesser_equal"}


def make_inputs(name, op, shapes, sym, rng):
    arg_shapes, _, aux_shapes = sym.infer_shape(**dict(zip(sym.list_arguments(), shapes)))
    args = {}
    for arg, shape in zip(sym.list_arguments(), arg_shapes):
        if arg.endswith("label"):
            if op == "SoftmaxOutput":
                classes = shapes[0][1]
                args[arg] = rng.randint(0, classes, size=shape).astype("float32")
            else:
                args[arg] = rng.uniform(0, 1, size=shape).astype("float32")
        elif op == "Embedding" and arg == "data":
            args[arg] = rng.randint(0, 5, size=shape).astype("float32")
        elif op == "one_hot":
            args[arg] = rng.randint(-1, 6, size=shape).astype("float32")  # some out of range
        elif op == "pick" and arg == "index":
            args[arg] = rng.randint(-2, 6, size=shape).astype("float32")  # some out of range
        elif op == "take" and arg == "x1":
            args[arg] = rng.randint(-2, 8, size=shape).astype("float32")  # some out of range
        elif op == "where" and arg == "x0":
            args[arg] = rng.randint(0, 2, size=shape).astype("float32")
        elif op in ("broadcast_equal", "broadcast_not_equal"):
            args[arg] = rng.randint(0, 3, size=shape).astype("float32")  # with ties
        elif op in DISTINCT_OPS or name in ("relu", "prelu"):
            # distinct values far from ties and from relu's kink; each input shifted apart
            n = int(np.prod(shape))
            spaced = (rng.permutation(n) - n / 2 + 0.5).reshape(shape).astype("float32") * 0.1
            args[arg] = spaced + np.float32(0.03 * len(args))
        elif op in POSITIVE_OPS:
            args[arg] = rng.uniform(0.5, 2, size=shape).astype("float32")
        else:
            args[arg] = rng.uniform(-1, 1, size=shape).astype("float32")
    aux = {a: rng.uniform(0.5, 1.5, size=s).astype("float32")
           for a, s in zip(sym.list_auxiliary_states(), aux_shapes)}
    return args, aux


def run_case(name, op, attrs, shapes, is_train, rng):
    arg_names = [f"x{i}" for i in range(len(shapes))]
    inputs = [mx.sym.var(n) for n in arg_names]
    make = (getattr(mx.sym, op, None) or getattr(mx.sym._internal, op, None)
            or getattr(mx.sym.contrib, op.replace("_contrib_", "")))
    sym = make(*inputs, name="op", **attrs)
    args, aux = make_inputs(name, op, shapes, sym, rng)
    # Indices and conditions take no gradient in MXNet: their grad_req is null (no "grad:").
    no_grad = {("Embedding", "x0"), ("take", "x1"), ("where", "x0"),
               ("_contrib_arange_like", "x0")}
    forward_only = op in BACKWARD_BROKEN or op in NO_BACKWARD
    req = {a: "null" if (op, a) in no_grad or forward_only else "write" for a in args}
    exe = sym.simple_bind(mx.cpu(), grad_req=req or "null", **{a: v.shape for a, v in args.items()})
    for a, v in args.items():
        exe.arg_dict[a][:] = v
    for a, v in aux.items():
        exe.aux_dict[a][:] = v
    exe.forward(is_train=is_train)
    outs = [o.asnumpy() for o in exe.outputs]
    heads = [rng.uniform(-1, 1, size=o.shape).astype("float32") for o in outs]
    if forward_only:
        pass
    elif op in LOSS_OPS:
        exe.backward()
    else:
        exe.backward([mx.nd.array(h) for h in heads])
    save = {}
    positional = sym.list_arguments()
    for i, a in enumerate(positional):
        save[f"in:{i}"] = mx.nd.array(args[a])
        if exe.grad_dict.get(a) is not None:
            save[f"grad:{i}"] = exe.grad_dict[a].copy()
    for i, a in enumerate(sym.list_auxiliary_states()):
        save[f"aux:{i}"] = mx.nd.array(aux[a])
        save[f"auxout:{i}"] = exe.aux_dict[a].copy()
    for i, o in enumerate(outs):
        save[f"out:{i}"] = mx.nd.array(o)
        save[f"head:{i}"] = mx.nd.array(heads[i])
    mx.nd.save(os.path.join(OUT, name + ".params"), save)
    return f"{name}|{op}|{';'.join(f'{k}={v}' for k, v in attrs.items())}|{int(is_train)}"


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.RandomState(0)
    lines = [run_case(*case, rng) for case in CASES]
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} cases to {OUT}")


if __name__ == "__main__":
    main()
