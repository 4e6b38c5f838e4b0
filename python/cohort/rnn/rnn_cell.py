"""Recurrent cells (MXNet 1.x's mx.rnn.rnn_cell): each call of a cell adds one time step to a
symbol; `unroll` adds `length` of them. A begin state is (0, num_hidden) until the graph gives its
batch (zeros of a partly known shape, filled in by shape inference as in MXNet)."""
from .. import initializer as init
from .. import ndarray
from .. import symbol
from ..base import MXNetError

__all__ = ['RNNParams', 'BaseRNNCell', 'RNNCell', 'LSTMCell', 'GRUCell', 'FusedRNNCell',
           'SequentialRNNCell', 'ModifierCell', 'DropoutCell', 'ZoneoutCell', 'ResidualCell',
           'BidirectionalCell']


class RNNParams(object):
    """The variables of one or more cells by name (prefix + name), made on first use: cells
    given the same RNNParams share their weights."""

    def __init__(self, prefix=''):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable prefix + name, made with `kwargs` (symbol.Variable's) if new."""
        full = self._prefix + name
        if full not in self._params:
            self._params[full] = symbol.Variable(full, **kwargs)
        return self._params[full]


def _split_steps(length, inputs, layout, merge, in_layout=None):
    """Inputs as `length` step symbols (merge False), one symbol along the layout's T axis
    (merge True) or as they are (None); and the T axis."""
    axis = layout.find('T')
    in_axis = axis if in_layout is None else in_layout.find('T')
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise MXNetError('unroll takes one symbol of all steps or a list of steps, not a '
                                 'grouped symbol')
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    else:
        if length is not None and len(inputs) != length:
            raise MXNetError('unroll: %d inputs for %d steps' % (len(inputs), length))
        if merge is True:
            inputs = symbol.Concat(*[symbol.expand_dims(x, axis=axis) for x in inputs], dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        order = [0, 1, 2]
        order[axis], order[in_axis] = in_axis, axis
        inputs = symbol.transpose(inputs, axes=tuple(order))
    return inputs, axis


class BaseRNNCell(object):
    """A cell: `cell(inputs, states)` gives (output, next states) for one step. `prefix` names its
    nodes (and its weights when `params` is None: then they are its own)."""

    def __init__(self, prefix='', params=None):
        self._own_params = params is None
        self._params = RNNParams(prefix) if params is None else params
        self._prefix = prefix
        self._modified = False
        self.reset()

    def reset(self):
        """Restarts the step and begin-state counters (before building another graph)."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, '_cells', []):
            cell.reset()

    def __call__(self, inputs, states):
        raise NotImplementedError()

    @property
    def params(self):
        """The cell's RNNParams (handing them out makes them shared)."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        """Each state's description: {'shape': (0, hidden), '__layout__': 'NC'}."""
        raise NotImplementedError()

    @property
    def state_shape(self):
        """Each state's shape."""
        return [info['shape'] for info in self.state_info]

    @property
    def _gate_names(self):
        return ()

    def begin_state(self, func=symbol.zeros, **kwargs):
        """A symbol per state from `func` (symbol.zeros, or symbol.Variable to feed the states),
        named PREFIXbegin_state_N; `kwargs` go to func beside each state's info."""
        if self._modified:
            raise MXNetError('a cell wrapped by a modifier cell (DropoutCell, ResidualCell, ...) '
                             'is called through it, not directly')
        states = []
        for info in self.state_info:
            self._init_counter += 1
            args = dict(info or {})
            args.update(kwargs)
            states.append(func(name='%sbegin_state_%d' % (self._prefix, self._init_counter),
                               **args))
        return states

    def unpack_weights(self, args):
        """The fused i2h/h2h weights and biases in `args` split per gate (PREFIXi2h_i_weight,
        ...); returns a new dict."""
        args = dict(args)
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group in ('i2h', 'h2h'):
            weight = args.pop('%s%s_weight' % (self._prefix, group))
            bias = args.pop('%s%s_bias' % (self._prefix, group))
            for j, gate in enumerate(self._gate_names):
                args['%s%s%s_weight' % (self._prefix, group, gate)] = \
                    weight[j * h:(j + 1) * h].copy()
                args['%s%s%s_bias' % (self._prefix, group, gate)] = bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args):
        """unpack_weights undone: the gates' weights joined into i2h/h2h; returns a new dict."""
        args = dict(args)
        if not self._gate_names:
            return args
        for group in ('i2h', 'h2h'):
            for kind in ('weight', 'bias'):
                parts = [args.pop('%s%s%s_%s' % (self._prefix, group, gate, kind))
                         for gate in self._gate_names]
                args['%s%s_%s' % (self._prefix, group, kind)] = ndarray.concatenate(parts)
        return args

    def unroll(self, length, inputs=None, begin_state=None, input_prefix='', layout='NTC',
               merge_outputs=None):
        """`length` steps over `inputs` (one symbol along layout's T axis, a list of steps, or
        None: variables PREFIXtN_data); returns (outputs, states): outputs as one symbol with
        merge_outputs, a list of steps without (None: as they come)."""
        self.reset()
        if inputs is None:
            inputs = [symbol.Variable('%st%d_data' % (input_prefix, i)) for i in range(length)]
        inputs, _ = _split_steps(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
        outputs, _ = _split_steps(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs, activation, **kwargs):
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


def _hidden_states(num_hidden, count):
    return [{'shape': (0, num_hidden), '__layout__': 'NC'} for _ in range(count)]


class RNNCell(BaseRNNCell):
    """h' = activation(W_i x + b_i + W_h h + b_h)."""

    def __init__(self, num_hidden, activation='tanh', prefix='rnn_', params=None):
        super(RNNCell, self).__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._activation = activation
        self._iW, self._iB = self.params.get('i2h_weight'), self.params.get('i2h_bias')
        self._hW, self._hB = self.params.get('h2h_weight'), self.params.get('h2h_bias')

    @property
    def state_info(self):
        return _hidden_states(self._num_hidden, 1)

    @property
    def _gate_names(self):
        return ('',)

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden, name='%si2h' % name)
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden, name='%sh2h' % name)
        output = self._get_activation(i2h + h2h, self._activation, name='%sout' % name)
        return output, [output]


class LSTMCell(BaseRNNCell):
    """Long short-term memory: gates i, f, c, o from one FullyConnected of the input and one of
    the hidden state; states [h, c]. `forget_bias` starts the forget gate's bias (LSTMBias)."""

    def __init__(self, num_hidden, prefix='lstm_', params=None, forget_bias=1.0):
        super(LSTMCell, self).__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get('i2h_weight')
        self._hW = self.params.get('h2h_weight')
        self._iB = self.params.get('i2h_bias', init=init.LSTMBias(forget_bias=forget_bias))
        self._hB = self.params.get('h2h_bias')

    @property
    def state_info(self):
        return _hidden_states(self._num_hidden, 2)

    @property
    def _gate_names(self):
        return ('_i', '_f', '_c', '_o')

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden * 4, name='%si2h' % name)
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden * 4, name='%sh2h' % name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, name='%sslice' % name)
        in_gate = symbol.Activation(gates[0], act_type='sigmoid', name='%si' % name)
        forget_gate = symbol.Activation(gates[1], act_type='sigmoid', name='%sf' % name)
        in_transform = symbol.Activation(gates[2], act_type='tanh', name='%sc' % name)
        out_gate = symbol.Activation(gates[3], act_type='sigmoid', name='%so' % name)
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * in_transform,
                                        name='%sstate' % name)
        next_h = symbol._internal._mul(out_gate, symbol.Activation(next_c, act_type='tanh'),
                                       name='%sout' % name)
        return next_h, [next_h, next_c]


class GRUCell(BaseRNNCell):
    """Gated recurrent unit in cuDNN's form: r and z gates, the candidate from the input plus r
    times the hidden state's transform; states [h]."""

    def __init__(self, num_hidden, prefix='gru_', params=None):
        super(GRUCell, self).__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW, self._iB = self.params.get('i2h_weight'), self.params.get('i2h_bias')
        self._hW, self._hB = self.params.get('h2h_weight'), self.params.get('h2h_bias')

    @property
    def state_info(self):
        return _hidden_states(self._num_hidden, 1)

    @property
    def _gate_names(self):
        return ('_r', '_z', '_o')

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        previous = states[0]
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden * 3, name='%si2h' % name)
        h2h = symbol.FullyConnected(data=previous, weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden * 3, name='%sh2h' % name)
        i_r, i_z, i_h = list(symbol.SliceChannel(i2h, num_outputs=3, name='%si2h_slice' % name))
        h_r, h_z, h_h = list(symbol.SliceChannel(h2h, num_outputs=3, name='%sh2h_slice' % name))
        reset = symbol.Activation(i_r + h_r, act_type='sigmoid', name='%sr_act' % name)
        update = symbol.Activation(i_z + h_z, act_type='sigmoid', name='%sz_act' % name)
        candidate = symbol.Activation(i_h + reset * h_h, act_type='tanh', name='%sh_act' % name)
        next_h = symbol._internal._plus((1. - update) * candidate, update * previous,
                                        name='%sout' % name)
        return next_h, [next_h]


class FusedRNNCell(BaseRNNCell):
    """MXNet's cuDNN-fused RNN layer needs the RNN operator, which Cohort does not have: stack
    LSTMCell/GRUCell/RNNCell in a SequentialRNNCell instead (the same weights, unfused)."""

    def __init__(self, num_hidden, num_layers=1, mode='lstm', bidirectional=False, dropout=0.,
                 get_next_state=False, forget_bias=1.0, prefix=None, params=None):
        raise MXNetError("FusedRNNCell: Cohort has no fused RNN operator; stack %s cells in a "
                         "SequentialRNNCell (%d layer(s)) instead"
                         % ({'lstm': 'LSTMCell', 'gru': 'GRUCell'}.get(mode, 'RNNCell'),
                            num_layers))


class _CellGroup(BaseRNNCell):
    """Cells used together (stacked, or both ways): their states in order, their weights
    unpacked and packed in turn, their variables shared with this cell's params."""

    def __init__(self, params=None):
        super(_CellGroup, self).__init__(prefix='', params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def _adopt(self, cells):
        """Adds `cells`, sharing this cell's params with them when it was given some."""
        if self._override_cell_params:
            if not all(cell._own_params for cell in cells):
                raise MXNetError('a %s given params shares them with its cells, which must then '
                                 'own theirs' % type(self).__name__)
            for cell in cells:
                cell.params._params.update(self.params._params)
        for cell in cells:
            self.params._params.update(cell.params._params)
        self._cells.extend(cells)

    @property
    def state_info(self):
        return [info for cell in self._cells for info in cell.state_info]

    def begin_state(self, **kwargs):
        if self._modified:
            raise MXNetError('a cell wrapped by a modifier cell is called through it')
        return [state for cell in self._cells for state in cell.begin_state(**kwargs)]

    def unpack_weights(self, args):
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args):
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args


class SequentialRNNCell(_CellGroup):
    """Cells stacked: each step's output feeds the next cell; the states are all cells' in
    order."""

    def add(self, cell):
        """Stacks `cell` on top (sharing this cell's params when it was given some)."""
        self._adopt([cell])

    def _per_cell(self, states):
        at = 0
        for cell in self._cells:
            n = len(cell.state_info)
            yield cell, states[at:at + n]
            at += n

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        for cell, cell_states in self._per_cell(states):
            inputs, cell_states = cell(inputs, cell_states)
            next_states.extend(cell_states)
        return inputs, next_states

    def unroll(self, length, inputs=None, begin_state=None, input_prefix='', layout='NTC',
               merge_outputs=None):
        self.reset()
        states = self.begin_state() if begin_state is None else begin_state
        next_states = []
        last = len(self._cells) - 1
        for i, (cell, cell_states) in enumerate(self._per_cell(states)):
            inputs, cell_states = cell.unroll(
                length, inputs=inputs, begin_state=cell_states, input_prefix=input_prefix,
                layout=layout, merge_outputs=merge_outputs if i == last else None)
            next_states.extend(cell_states)
        return inputs, next_states


class ModifierCell(BaseRNNCell):
    """A cell around `base_cell` that changes its inputs, outputs or states; the base cell is
    then used through it only."""

    def __init__(self, base_cell):
        super(ModifierCell, self).__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, func=symbol.zeros, **kwargs):
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError()


class DropoutCell(BaseRNNCell):
    """Dropout with probability `dropout` on the inputs (a layer between cells); no state."""

    def __init__(self, dropout, prefix='dropout_', params=None):
        super(DropoutCell, self).__init__(prefix, params)
        if not isinstance(dropout, (int, float)):
            raise MXNetError('DropoutCell: dropout must be a number, not %r' % (dropout,))
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs=None, begin_state=None, input_prefix='', layout='NTC',
               merge_outputs=None):
        self.reset()
        inputs, _ = _split_steps(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):  # one dropout over all steps
            return self(inputs, [])
        return super(DropoutCell, self).unroll(length, inputs, begin_state, input_prefix,
                                               layout, merge_outputs)


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al.): in training, each output and state element keeps its previous
    step's value with probability zoneout_outputs / zoneout_states."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, (BidirectionalCell, SequentialRNNCell)):
            raise MXNetError('ZoneoutCell wraps one cell, not a %s' % type(base_cell).__name__)
        super(ZoneoutCell, self).__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super(ZoneoutCell, self).reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)

        def keep_mask(p, like):  # 1 where the new value is taken (Dropout of ones, rescaled)
            return symbol.Dropout(symbol.ones_like(like), p=p)

        prev_output = self.prev_output if self.prev_output is not None else \
            symbol.zeros_like(next_output)
        output = (symbol.where(keep_mask(self.zoneout_outputs, next_output), next_output,
                               prev_output) if self.zoneout_outputs != 0. else next_output)
        if self.zoneout_states != 0.:
            next_states = [symbol.where(keep_mask(self.zoneout_states, new), new, old)
                           for new, old in zip(next_states, states)]
        self.prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """The base cell's output plus its input (He et al.)."""

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name='%s_plus_residual' % output.name)
        return output, states

    def unroll(self, length, inputs=None, begin_state=None, input_prefix='', layout='NTC',
               merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs)
        finally:
            self.base_cell._modified = True
        merge = isinstance(outputs, symbol.Symbol) if merge_outputs is None else merge_outputs
        inputs, _ = _split_steps(length, inputs, layout, merge)
        if merge:
            outputs = symbol.elemwise_add(outputs, inputs)
        else:
            outputs = [symbol.elemwise_add(o, i) for o, i in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(_CellGroup):
    """`l_cell` over the steps forwards and `r_cell` backwards, each step's two outputs joined
    (output_prefix + tN); unroll only."""

    def __init__(self, l_cell, r_cell, params=None, output_prefix='bi_'):
        super(BidirectionalCell, self).__init__(params=params)
        self._output_prefix = output_prefix
        self._adopt([l_cell, r_cell])

    def __call__(self, inputs, states):
        raise MXNetError('BidirectionalCell runs over whole sequences: call unroll')

    def unroll(self, length, inputs=None, begin_state=None, input_prefix='', layout='NTC',
               merge_outputs=None):
        self.reset()
        if inputs is None:
            inputs = [symbol.Variable('%st%d_data' % (input_prefix, i)) for i in range(length)]
        inputs, axis = _split_steps(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        l_cell, r_cell = self._cells
        n = len(l_cell.state_info)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n],
                                            layout=layout, merge_outputs=False)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                            begin_state=states[n:], layout=layout,
                                            merge_outputs=False)
        r_outputs = list(reversed(r_outputs))
        outputs = [symbol.Concat(l, r, dim=1, name='%st%d' % (self._output_prefix, i))
                   for i, (l, r) in enumerate(zip(l_outputs, r_outputs))]
        if merge_outputs:
            outputs, _ = _split_steps(length, outputs, layout, True)
        return outputs, l_states + r_states
