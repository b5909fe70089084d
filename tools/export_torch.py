#!/usr/bin/env python3
"""Export the training graph (forward and backward) of a PyTorch model as a gantry.graph JSON file.

The joint forward+backward graph is traced at the aten level with make_fx around
torch.autograd.grad (the same joint graph AOTAutograd builds), every node is timed on this machine
by an fx Interpreter (median of K runs after W warm-up runs), and the graph is written in the
format read by gantry::read_graph (.json, or .json.gz when the output name ends in .gz).
See tools/README.md for what each field means and how backward vertices are paired with forward ones.
"""

import argparse
import ctypes
import datetime
import gzip
import json
import math
import os
import platform
import statistics
import sys
import time

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.experimental import proxy_tensor
from torch.fx.passes.shape_prop import _extract_tensor_metadata
from torch.overrides import TorchFunctionMode
from torch.utils import _pytree as pytree

try:
    from torch.func import functional_call  # torch >= 2.0
except ImportError:  # torch 1.13
    from torch.nn.utils.stateless import functional_call


# ----------------------------------------------------------------------------------------------
# Models. Each builder returns (module, example inputs, loss function of (output, *targets)).

class MLP(nn.Module):
    def __init__(self, features=64, hidden=128, classes=10):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class SmallConvNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.conv2(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class DecoderBlock(nn.Module):
    """A GPT-2 decoder block: pre-LayerNorm causal self-attention and a 4x GELU MLP."""

    def __init__(self, hidden, heads, dropout):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.fc_out = nn.Linear(4 * hidden, hidden)
        self.dropout = dropout

    def forward(self, x, mask):
        batch, seq, hidden = x.shape
        head_dim = hidden // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(hidden, dim=2)
        q = q.view(batch, seq, self.heads, head_dim).transpose(1, 2)
        k = k.view(batch, seq, self.heads, head_dim).transpose(1, 2)
        v = v.view(batch, seq, self.heads, head_dim).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(head_dim))
        scores = scores.masked_fill(mask, float("-inf"))
        attention = F.dropout(F.softmax(scores, dim=-1), self.dropout, self.training)
        y = (attention @ v).transpose(1, 2).reshape(batch, seq, hidden)
        x = x + F.dropout(self.proj(y), self.dropout, self.training)
        x = x + F.dropout(self.fc_out(F.gelu(self.fc(self.ln2(x)))), self.dropout, self.training)
        return x


class GPT2(nn.Module):
    """GPT-2-style decoder-only language model written in plain torch (weights tied as in GPT-2)."""

    def __init__(self, layers=12, hidden=768, heads=12, vocabulary=50257, sequence=1024, dropout=0.1):
        super().__init__()
        self.token_embedding = nn.Embedding(vocabulary, hidden)
        self.position_embedding = nn.Embedding(sequence, hidden)
        self.blocks = nn.ModuleList(DecoderBlock(hidden, heads, dropout) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.dropout = dropout

    def forward(self, tokens):
        seq = tokens.shape[1]
        positions = torch.arange(seq, device=tokens.device)
        x = F.dropout(self.token_embedding(tokens) + self.position_embedding(positions),
                      self.dropout, self.training)
        mask = torch.triu(torch.ones(seq, seq, dtype=torch.bool, device=tokens.device), diagonal=1)
        for block in self.blocks:
            x = block(x, mask)
        return F.linear(self.ln_f(x), self.token_embedding.weight)


class GNMT(nn.Module):
    """GNMT-like seq2seq: stacked LSTM encoder (bidirectional first layer, residuals from layer 3),
    stacked LSTM decoder with normalised Bahdanau attention, both unrolled one LSTMCell per step."""

    def __init__(self, vocabulary=30000, hidden=512, layers=4, dropout=0.2):
        super().__init__()
        self.hidden = hidden
        self.embed_source = nn.Embedding(vocabulary, hidden)
        self.embed_target = nn.Embedding(vocabulary, hidden)
        self.encoder_forward = nn.LSTMCell(hidden, hidden)
        self.encoder_backward = nn.LSTMCell(hidden, hidden)
        self.encoder = nn.ModuleList(
            nn.LSTMCell(2 * hidden if i == 0 else hidden, hidden) for i in range(layers - 1))
        self.attention_query = nn.Linear(hidden, hidden, bias=False)
        self.attention_key = nn.Linear(hidden, hidden, bias=False)
        self.attention_v = nn.Linear(hidden, 1, bias=False)
        self.decoder = nn.ModuleList(
            nn.LSTMCell(2 * hidden, hidden) for _ in range(layers))
        self.classifier = nn.Linear(hidden, vocabulary)
        self.dropout = dropout

    def run_layer(self, cell, inputs, reverse=False):
        batch = inputs[0].shape[0]
        h = inputs[0].new_zeros(batch, self.hidden)
        c = inputs[0].new_zeros(batch, self.hidden)
        outputs = [None] * len(inputs)
        steps = range(len(inputs) - 1, -1, -1) if reverse else range(len(inputs))
        for t in steps:
            h, c = cell(inputs[t], (h, c))
            outputs[t] = h
        return outputs

    def forward(self, source, target):
        d = lambda x: F.dropout(x, self.dropout, self.training)
        embedded = d(self.embed_source(source))
        steps = [embedded[:, t] for t in range(embedded.shape[1])]
        forward = self.run_layer(self.encoder_forward, steps)
        backward = self.run_layer(self.encoder_backward, steps, reverse=True)
        layer = [torch.cat((f, b), dim=1) for f, b in zip(forward, backward)]
        for i, cell in enumerate(self.encoder):
            out = self.run_layer(cell, [d(x) for x in layer])
            layer = [o + x for o, x in zip(out, layer)] if i >= 1 else out
        memory = torch.stack(layer, dim=1)
        keys = self.attention_key(memory)
        embedded = d(self.embed_target(target))
        batch = source.shape[0]
        states = [(memory.new_zeros(batch, self.hidden), memory.new_zeros(batch, self.hidden))
                  for _ in self.decoder]
        logits = []
        for t in range(embedded.shape[1]):
            # Attention from the first decoder layer's previous state, as in GNMT.
            query = self.attention_query(states[0][0]).unsqueeze(1)
            scores = self.attention_v(torch.tanh(query + keys)).squeeze(2)
            context = torch.bmm(F.softmax(scores, dim=1).unsqueeze(1), memory).squeeze(1)
            x = embedded[:, t]
            for i, cell in enumerate(self.decoder):
                h, c = cell(torch.cat((d(x), context), dim=1), states[i])
                states[i] = (h, c)
                x = h + x if i >= 2 else h
            logits.append(self.classifier(x))
        return torch.stack(logits, dim=1)


def cross_entropy_sequence(logits, labels):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


def build_model(args):
    """Returns (module, inputs tuple, targets tuple, loss_fn, description of sizes)."""
    name = args.model
    gen = torch.Generator().manual_seed(0)
    batch = args.batch_size
    if name == "mlp":
        model = MLP()
        x = torch.randn(batch, 64, generator=gen)
        y = torch.randint(0, 10, (batch,), generator=gen)
        return model, (x,), (y,), F.cross_entropy, {"features": 64, "hidden": 128}
    if name == "small_cnn":
        size = args.image_size or 32
        model = SmallConvNet()
        x = torch.randn(batch, 3, size, size, generator=gen)
        y = torch.randint(0, 10, (batch,), generator=gen)
        return model, (x,), (y,), F.cross_entropy, {"image_size": size}
    if name in ("inception_v3", "resnet50", "vit_b_16", "efficientnet_b0"):
        import torchvision
        size = args.image_size or (299 if name == "inception_v3" else 224)
        if name == "inception_v3":
            # Auxiliary logits are left out: the exported step is the main classifier's loss.
            model = torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=True)
        elif name == "vit_b_16":
            model = torchvision.models.vit_b_16(weights=None, image_size=size)
        elif name == "efficientnet_b0":
            model = torchvision.models.efficientnet_b0(weights=None)
        else:
            model = torchvision.models.resnet50(weights=None)
        x = torch.randn(batch, 3, size, size, generator=gen)
        y = torch.randint(0, 1000, (batch,), generator=gen)
        return model, (x,), (y,), F.cross_entropy, {"image_size": size}
    if name == "gpt2":
        layers = args.layers or 12
        hidden = args.hidden or 768
        sequence = args.sequence or 512
        vocabulary = args.vocabulary or 50257
        model = GPT2(layers=layers, hidden=hidden, heads=hidden // 64, vocabulary=vocabulary,
                     sequence=sequence)
        tokens = torch.randint(0, vocabulary, (batch, sequence), generator=gen)
        labels = torch.randint(0, vocabulary, (batch, sequence), generator=gen)
        return model, (tokens,), (labels,), cross_entropy_sequence, {
            "layers": layers, "hidden": hidden, "heads": hidden // 64, "sequence": sequence,
            "vocabulary": vocabulary}
    if name == "gnmt":
        layers = args.layers or 4
        hidden = args.hidden or 512
        sequence = args.sequence or 40
        vocabulary = args.vocabulary or 30000
        model = GNMT(vocabulary=vocabulary, hidden=hidden, layers=layers)
        source = torch.randint(0, vocabulary, (batch, sequence), generator=gen)
        target = torch.randint(0, vocabulary, (batch, sequence), generator=gen)
        labels = torch.randint(0, vocabulary, (batch, sequence), generator=gen)
        return model, (source, target), (labels,), cross_entropy_sequence, {
            "layers": layers, "hidden": hidden, "sequence": sequence, "vocabulary": vocabulary}
    raise SystemExit(f"export_torch.py: unknown model '{name}'")


def default_loss(output, *targets):
    """The loss of a user's module when none is given: the mean of every floating-point output
    tensor, summed, so that the backward pass reaches every parameter that shapes the output."""
    if targets:
        raise SystemExit("export_torch.py: targets were given without a loss function")
    tensors = [t for t in pytree.tree_flatten(output)[0]
               if isinstance(t, torch.Tensor) and t.is_floating_point()]
    if not tensors:
        raise SystemExit("export_torch.py: the module's output has no floating-point tensor to train on")
    return sum(t.mean() for t in tensors)


def load_user_model(spec, batch_size):
    """--model MODULE:CALLABLE (or FILE.py:CALLABLE): imports the module, calls the callable (with
    batch_size=N when --batch-size is given) and returns what build_model returns. The callable
    returns (module, example_inputs) or (module, example_inputs, targets, loss_fn); example inputs
    and targets are a tensor or a tuple of tensors, and loss_fn(output, *targets) a scalar."""
    import importlib
    import importlib.util
    module_name, _, callable_name = spec.rpartition(":")
    if not module_name or not callable_name:
        raise SystemExit(f"export_torch.py: --model '{spec}': expected a built-in name or MODULE:CALLABLE")
    if module_name.endswith(".py"):
        if not os.path.isfile(module_name):
            raise SystemExit(f"export_torch.py: --model '{spec}': no file '{module_name}'")
        loader_spec = importlib.util.spec_from_file_location(
            os.path.splitext(os.path.basename(module_name))[0], module_name)
        module = importlib.util.module_from_spec(loader_spec)
        loader_spec.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise SystemExit(f"export_torch.py: --model '{spec}': cannot import '{module_name}': {error}")
    factory = getattr(module, callable_name, None)
    if not callable(factory):
        raise SystemExit(f"export_torch.py: --model '{spec}': '{module_name}' has no callable '{callable_name}'")
    built = factory(batch_size=batch_size) if batch_size is not None else factory()
    if not isinstance(built, tuple) or len(built) not in (2, 4) or not isinstance(built[0], nn.Module):
        raise SystemExit(f"export_torch.py: --model '{spec}': the callable must return (module, inputs) or "
                         "(module, inputs, targets, loss_fn)")
    model, inputs = built[0], _as_tuple(built[1])
    targets, loss_fn = ((), default_loss) if len(built) == 2 else (_as_tuple(built[2]), built[3])
    return model, inputs, targets, loss_fn, {}


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


# ----------------------------------------------------------------------------------------------
# Tracing the joint graph, with forward/backward pairing.

class _CapturingTracer(proxy_tensor.PythonKeyTracer):
    """make_fx's tracer, remembered so that hooks can see how many nodes exist at any moment."""
    current = None

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        _CapturingTracer.current = self


def _node_count():
    return len(_CapturingTracer.current.graph.nodes)


class _PairingMode(TorchFunctionMode):
    """Watches torch-level calls while the forward pass is traced. Every call that produces a
    tensor with an autograd node records which fx nodes it created, and hooks that autograd node
    so that the aten ops its backward runs are attributed to it (see tools/README.md)."""

    def __init__(self, recorder):
        super().__init__()
        self.recorder = recorder

    def __torch_function__(self, func, types, args=(), kwargs=None):
        before = _node_count()
        out = func(*args, **(kwargs or {}))
        after = _node_count()
        if after > before:
            # Autograd nodes made by torch calls nested inside this one (cross_entropy's
            # log_softmax, say) are found by walking back to nodes registered earlier.
            pending = [t.grad_fn for t in pytree.tree_flatten(out)[0]
                       if isinstance(t, torch.Tensor) and t.grad_fn is not None]
            while pending:
                grad_fn = pending.pop()
                if grad_fn is None or not self.recorder.register(grad_fn, before, after):
                    continue
                pending.extend(next_fn for next_fn, _ in grad_fn.next_functions)
        return out


class _PairingRecorder:
    def __init__(self):
        self.forward_range = {}    # id(grad_fn) -> (first node index, end index) in forward
        self.backward_owner = {}   # node index -> id(grad_fn) whose backward created it
        self.keep = []             # keeps grad_fn objects alive so that ids stay unique
        self.active = None

    def register(self, grad_fn, before, after):
        key = id(grad_fn)
        if key in self.forward_range or "AccumulateGrad" in grad_fn.name():
            return False
        self.forward_range[key] = (before, after)
        self.keep.append(grad_fn)
        try:
            grad_fn.register_prehook(lambda grads, key=key: self._enter(key))
            grad_fn.register_hook(lambda inputs, outputs, key=key: self._leave(key))
        except (AttributeError, RuntimeError):
            pass  # an autograd node that takes no hooks: its backward stays unpaired
        return True

    def _enter(self, key):
        self.active = (key, _node_count())

    def _leave(self, key):
        if self.active and self.active[0] == key:
            for index in range(self.active[1], _node_count()):
                self.backward_owner[index] = key
        self.active = None


def trace_training_step(model, inputs, targets, loss_fn):
    params = dict(model.named_parameters())
    buffers = dict(model.named_buffers())
    param_names = list(params)
    buffer_names = list(buffers)
    recorder = _PairingRecorder()
    boundary = {}

    def step(param_values, buffer_values, inputs, targets):
        state = dict(zip(param_names, param_values))
        state.update(zip(buffer_names, buffer_values))
        with _PairingMode(recorder):
            out = functional_call(model, state, inputs)
            loss = loss_fn(out, *targets)
        boundary["backward_starts"] = _node_count()
        grads = torch.autograd.grad(loss, param_values)
        return loss, grads

    original = proxy_tensor.PythonKeyTracer
    proxy_tensor.PythonKeyTracer = _CapturingTracer
    try:
        param_values = [p.detach().requires_grad_(True) for p in params.values()]
        buffer_values = [b.detach().clone() for b in buffers.values()]
        gm = proxy_tensor.make_fx(step)(param_values, buffer_values, inputs, targets)
    finally:
        proxy_tensor.PythonKeyTracer = original
    args = (param_values, buffer_values, inputs, targets)
    return gm, args, param_names, buffer_names, recorder, boundary["backward_starts"]


# ----------------------------------------------------------------------------------------------
# Per-node timing.

class TimingInterpreter(torch.fx.Interpreter):
    """Runs the graph node by node and records each call_function node's wall time."""

    def __init__(self, gm, synchronize):
        super().__init__(gm)
        self.synchronize = synchronize
        self.times = {}

    def run_node(self, n):
        if n.op != "call_function":
            result = super().run_node(n)
        else:
            self.synchronize()
            start = time.perf_counter()
            result = super().run_node(n)
            self.synchronize()
            self.times.setdefault(n.name, []).append(time.perf_counter() - start)
        if n.meta.get("tensor_meta") is None:
            n.meta["tensor_meta"] = pytree.tree_map(
                lambda x: _extract_tensor_metadata(x) if isinstance(x, torch.Tensor) else None, result)
        return result


# ----------------------------------------------------------------------------------------------
# FLOP estimates, per aten op (multiply-add = 2 FLOPs).

def _shape(arg):
    metas = _tensor_metas(arg.meta.get("tensor_meta")) if isinstance(arg, torch.fx.Node) else []
    return tuple(metas[0].shape) if len(metas) == 1 else None


def _prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


def estimate_flops(node, output_elements):
    op = node.target.__name__ if hasattr(node.target, "__name__") else str(node.target)
    base = op.split(".")[0]
    a = node.args
    if base in ("mm", "addmm", "bmm", "baddbmm"):
        x, y = (a[1], a[2]) if base in ("addmm", "baddbmm") else (a[0], a[1])
        sx, sy = _shape(x), _shape(y)
        if sx and sy:
            return 2.0 * _prod(sx) * sy[-1]
    if base == "convolution" and _shape(a[1]):
        w = _shape(a[1])  # (out, in/groups, k...)
        return 2.0 * output_elements * _prod(w[1:])
    if base == "convolution_backward":
        grad, x, w = _shape(a[0]), _shape(a[1]), _shape(a[2])
        mask = a[-1] if isinstance(a[-1], (list, tuple)) else [True, True, True]
        if grad and w:
            one = 2.0 * _prod(grad) * _prod(w[1:])
            return one * (int(bool(mask[0])) + int(bool(mask[1]))) + (_prod(grad) if mask[2] else 0)
    if base in ("native_batch_norm", "native_batch_norm_backward", "native_layer_norm",
                "native_layer_norm_backward", "_softmax", "_log_softmax", "_softmax_backward_data",
                "_log_softmax_backward_data"):
        return 5.0 * output_elements
    if base in ("max_pool2d_with_indices", "avg_pool2d", "max_pool2d_with_indices_backward",
                "avg_pool2d_backward", "_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward"):
        inputs = _shape(a[0]) or ()
        return float(max(_prod(inputs), output_elements))
    if base in ("sum", "mean", "amax", "nll_loss_forward", "nll_loss_backward", "var_mean"):
        return float(max(_prod(_shape(a[0]) or ()), output_elements))
    return float(output_elements)


# ----------------------------------------------------------------------------------------------
# Building the gantry graph from the traced and timed fx graph.

VIEW_OPS = {
    "t", "view", "_unsafe_view", "expand", "detach", "alias", "permute", "transpose", "squeeze",
    "unsqueeze", "reshape", "as_strided", "slice", "select", "split", "split_with_sizes", "unbind",
    "chunk", "narrow", "lift_fresh", "lift_fresh_copy", "_reshape_alias", "unfold",
    "expand_as", "view_as", "numpy_T",
}


def _op_name(node):
    target = node.target
    if hasattr(target, "_schema"):
        return "aten." + target.__name__.split(".")[0]
    if target.__module__ == "_operator" or getattr(target, "__name__", "") == "getitem":
        return "getitem"
    return str(getattr(target, "__name__", target))


def _tensor_metas(meta):
    """The TensorMetadata records in a node's meta (one, or several for a tuple output)."""
    if meta is None:
        return []
    if hasattr(meta, "shape") and hasattr(meta, "dtype"):
        return [meta]
    if isinstance(meta, (list, tuple)):
        return [m for x in meta for m in _tensor_metas(x)]
    return []


def _bytes(meta):
    return sum(int(m.shape.numel()) * torch.empty((), dtype=m.dtype).element_size()
               for m in _tensor_metas(meta))


def build_graph(gm, param_names, buffer_names, recorder, backward_starts, times, keep_views):
    nodes = list(gm.graph.nodes)
    index_of = {n: i for i, n in enumerate(nodes)}
    placeholders = [n for n in nodes if n.op == "placeholder"]
    n_params, n_buffers = len(param_names), len(buffer_names)

    # The vertex that holds the data a node refers to: itself, or for a view, its base's vertex.
    holder = {}
    vertices = []
    vertex_of_name = {}

    def add_vertex(node, **fields):
        vertex = {"name": node.name}
        vertex.update(fields)
        vertex_of_name[node.name] = vertex
        vertices.append(vertex)
        holder[node] = node.name

    for i, p in enumerate(placeholders):
        meta = p.meta.get("tensor_meta")
        size = _bytes(meta)
        if i < n_params:
            add_vertex(p, compute=0.0, persistent=size, output=0, temporary=0,
                       op="parameter", flops=0.0, label=param_names[i])
        elif i < n_params + n_buffers:
            add_vertex(p, compute=0.0, persistent=size, output=0, temporary=0,
                       op="buffer", flops=0.0, label=buffer_names[i - n_params])
        else:
            add_vertex(p, compute=0.0, persistent=0, output=size, temporary=0,
                       op="input", flops=0.0)

    edges = {}

    def add_edge(source, target, size):
        if source == target:
            return
        key = (source, target)
        edges[key] = max(edges.get(key, 0), size)

    for node in nodes:
        if node.op != "call_function":
            continue
        op = _op_name(node)
        meta = node.meta.get("tensor_meta")
        size = _bytes(meta)
        inputs = [x for x in node.all_input_nodes if x in holder]
        if not keep_views and (op == "getitem" or op[5:] in VIEW_OPS) and len(inputs) == 1:
            holder[node] = holder[inputs[0]]
            continue
        elapsed = times.get(node.name)
        compute = statistics.median(elapsed) if elapsed else 0.0
        output_elements = sum(int(m.shape.numel()) for m in _tensor_metas(meta))
        add_vertex(node, compute=compute, persistent=0, output=size, temporary=0, op=op,
                   flops=estimate_flops(node, output_elements))
        vertex_of_name[node.name]["_index"] = index_of[node]
        for x in node.all_input_nodes:
            if x in holder:
                add_edge(holder[x], node.name, _bytes(x.meta.get("tensor_meta")))

    # Forward/backward pairing: a backward vertex created while autograd ran the backward of a
    # torch call is paired with the most expensive vertex that call created in the forward pass.
    forward_vertex = {}
    for key, (begin, end) in recorder.forward_range.items():
        created = [nodes[i] for i in range(begin, min(end, len(nodes))) if nodes[i].op == "call_function"]
        candidates = [vertex_of_name[n.name] for n in created if n.name in vertex_of_name]
        if not candidates:
            # A call that only made views (x[:, t]) pairs with the vertex holding their data.
            candidates = [vertex_of_name[holder[n]] for n in created
                          if n in holder and "_index" in vertex_of_name.get(holder[n], {})]
        if candidates:
            forward_vertex[key] = max(candidates, key=lambda v: (v["flops"], -v["_index"]))["name"]
    for vertex in vertices:
        index = vertex.pop("_index", None)
        if index is None or index < backward_starts:
            continue
        owner = recorder.backward_owner.get(index)
        if owner is not None and owner in forward_vertex:
            vertex["forward"] = forward_vertex[owner]

    # Bookkeeping on buffers alone (BatchNorm's num_batches_tracked += 1) feeds nothing in the
    # step: such dead ends are dropped, and with them the buffers they touched.
    buffer_vertices = {v["name"] for v in vertices if v["op"] == "buffer"}
    sources_of = {}
    for s, t in edges:
        sources_of.setdefault(t, set()).add(s)
    has_consumer = {s for s, _ in edges}
    dead = {v["name"] for v in vertices if v["name"] not in has_consumer and v["op"] not in ("buffer", "parameter")
            and sources_of.get(v["name"]) and sources_of[v["name"]] <= buffer_vertices}
    edges = {(s, t): b for (s, t), b in edges.items() if t not in dead}
    vertices = [v for v in vertices if v["name"] not in dead]

    # Keep only vertices that matter to the step: drop unused placeholders and dead nodes.
    # Parameter and buffer vertices take the module path of the tensor as their name.
    used = {s for s, _ in edges} | {t for _, t in edges}
    vertices = [v for v in vertices if v["name"] in used]
    taken = {v["name"] for v in vertices}
    renamed = {}
    for v in vertices:
        label = v.pop("label", None)
        if label and label not in taken:
            renamed[v["name"]] = label
            taken.add(label)
            v["name"] = label
    for v in vertices:
        if "forward" in v:
            v["forward"] = renamed.get(v["forward"], v["forward"])
    edges = {(renamed.get(s, s), renamed.get(t, t)): b for (s, t), b in edges.items()}
    edge_list = [{"from": s, "to": t, "bytes": b} for (s, t), b in edges.items()]
    return vertices, edge_list


def blas_library():
    """Path of the BLAS shared library this process loaded (Debian picks it through alternatives)."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if "blas" in os.path.basename(path).lower() and path.startswith("/"):
                    return path
    except OSError:
        pass
    return None


def match_blas_threads(threads):
    """OpenBLAS runs its own thread pool; give it torch's thread count so that every op is timed
    with the same parallelism."""
    path = blas_library()
    if path and "openblas" in path:
        try:
            ctypes.CDLL(path).openblas_set_num_threads(int(threads))
        except (OSError, AttributeError):
            pass


def device_description(device):
    if device.type == "cuda":
        return "cuda: " + torch.cuda.get_device_name(device)
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"cpu: {model} ({torch.get_num_threads()} threads)"


def command_arguments(arguments):
    """The command line for the metadata, with the output file by its name only: a graph file must
    not record where on the exporting machine it was written."""
    out = []
    after_output = after_model = False
    for argument in arguments:
        if after_output:
            argument = os.path.basename(argument)
        elif after_model:
            argument = model_label(argument)
        elif argument.startswith(("--out=", "--output=")):
            flag, _, path = argument.partition("=")
            argument = flag + "=" + os.path.basename(path)
        elif argument.startswith("--model="):
            argument = "--model=" + model_label(argument[len("--model="):])
        after_output, after_model = argument in ("--out", "-o", "--output"), argument == "--model"
        out.append(argument)
    return out


def model_label(spec):
    """--model as the metadata records it: a FILE.py:CALLABLE by the file's name only."""
    module_name, _, callable_name = spec.rpartition(":")
    if module_name.endswith(".py"):
        return os.path.basename(module_name) + ":" + callable_name
    return spec


def export_module(model, example_inputs, out, *, targets=(), loss_fn=None, runs=5, warmup=1, device="auto",
                  threads=None, keep_views=False, name=None, note="", metadata=None):
    """Exports the training step of `model` on `example_inputs` (a tensor or a tuple of tensors) to
    `out` (.json, or .json.gz), timing every node on this machine: the median of `runs` runs after
    `warmup` untimed ones. The step is loss_fn(model(*inputs), *targets) and its gradients; without
    loss_fn the loss is the mean of every floating-point output (default_loss). `name` goes into
    the metadata as the model (default: the module's class name), with `metadata` added to it.
    Returns the document written."""
    if runs < 1 or warmup < 0:
        raise SystemExit("export_torch.py: runs must be >= 1 and warmup >= 0")
    if threads:
        torch.set_num_threads(threads)
    match_blas_threads(torch.get_num_threads())
    device = torch.device("cuda" if device == "auto" and torch.cuda.is_available()
                          else ("cpu" if device == "auto" else device))
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("export_torch.py: --device cuda, but this torch has no usable CUDA device")
    inputs, targets = _as_tuple(example_inputs), _as_tuple(targets)
    loss_fn = loss_fn or default_loss

    started = time.time()
    # Traced on the timing device: ops that create tensors (arange, ones) record their device.
    model.train().to(device)
    inputs = tuple(x.to(device) for x in inputs)
    targets = tuple(x.to(device) for x in targets)
    gm, example, param_names, buffer_names, recorder, backward_starts = trace_training_step(
        model, inputs, targets, loss_fn)
    print(f"traced {len(gm.graph.nodes)} fx nodes in {time.time() - started:.1f} s", file=sys.stderr)

    moved = pytree.tree_map(lambda x: x.detach() if isinstance(x, torch.Tensor) else x, example)
    synchronize = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    interpreter = TimingInterpreter(gm, synchronize)
    flat = pytree.tree_flatten(moved)[0]
    with torch.no_grad():
        for run in range(warmup + runs):
            if run == warmup:
                interpreter.times.clear()
            interpreter.run(*flat)
            if run < warmup:
                print(f"warm-up run {run + 1}/{warmup} done", file=sys.stderr)
            else:
                print(f"run {run - warmup + 1}/{runs} done", file=sys.stderr)

    vertices, edges = build_graph(gm, param_names, buffer_names, recorder, backward_starts,
                                  interpreter.times, keep_views)
    batch = inputs[0].shape[0] if inputs and isinstance(inputs[0], torch.Tensor) and inputs[0].dim() > 0 else None
    document = {
        "format": "gantry.graph",
        "version": 1,
        "metadata": {
            "model": name or type(model).__name__,
            "batch_size": batch,
            "device": device_description(device),
            "torch_version": torch.__version__,
            "threads": torch.get_num_threads(),
            "blas": os.path.basename(blas_library() or "unknown"),
            "created": datetime.date.today().isoformat(),
            "timing": f"median of {runs} runs after {warmup} warm-up",
            "units": "compute in seconds, memory and edge sizes in bytes",
            "pairing": "backward vertices name their forward vertex in 'forward'",
            "note": note,
            **(metadata or {}),
        },
        "vertices": vertices,
        "edges": edges,
    }
    text = json.dumps(document, separators=(",", ":"))
    out = os.fspath(out)
    opener = gzip.open if out.endswith(".gz") else open
    with opener(out, "wt", encoding="utf-8") as f:
        f.write(text)
    total = sum(v["compute"] for v in vertices)
    paired = sum(1 for v in vertices if "forward" in v)
    print(f"wrote {out}: {len(vertices)} vertices ({paired} paired backward), "
          f"{len(edges)} edges, total compute {total:.4f} s", file=sys.stderr)
    return document


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True,
                        help="mlp, small_cnn, inception_v3, resnet50, vit_b_16, efficientnet_b0, gpt2 or gnmt; or your own model as "
                             "MODULE:CALLABLE or FILE.py:CALLABLE, a callable that returns (module, inputs) or "
                             "(module, inputs, targets, loss_fn)")
    parser.add_argument("--out", "-o", "--output", dest="out", required=True,
                        help="output file (.json or .json.gz); --output is its former name")
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--runs", type=int, default=5, help="timed runs per node (median taken)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs before timing")
    parser.add_argument("--device", default="auto", help="auto (cuda if available), cpu or cuda")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--image-size", type=int, default=None)
    parser.add_argument("--layers", type=int, default=None)
    parser.add_argument("--hidden", type=int, default=None)
    parser.add_argument("--sequence", type=int, default=None)
    parser.add_argument("--vocabulary", type=int, default=None)
    parser.add_argument("--keep-views", action="store_true",
                        help="keep view/alias ops as vertices instead of folding them into their base")
    parser.add_argument("--note", default="", help="free text stored in the metadata")
    args = parser.parse_args(argv)

    user_model = ":" in args.model
    defaults = {"mlp": 32, "small_cnn": 8, "inception_v3": 32, "resnet50": 32, "vit_b_16": 2, "efficientnet_b0": 4,
                "gpt2": 8, "gnmt": 32}
    if args.batch_size is None and not user_model:
        args.batch_size = defaults.get(args.model, 8)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    if user_model:
        model, inputs, targets, loss_fn, sizes = load_user_model(args.model, args.batch_size)
    else:
        model, inputs, targets, loss_fn, sizes = build_model(args)
    command = "tools/export_torch.py " + " ".join(command_arguments(argv if argv is not None else sys.argv[1:]))
    document = export_module(model, inputs, args.out, targets=targets, loss_fn=loss_fn, runs=args.runs,
                             warmup=args.warmup, device=args.device, threads=args.threads,
                             keep_views=args.keep_views, name=model_label(args.model), note=args.note,
                             metadata={"command": command, **({"sizes": sizes} if sizes else {}),
                                       **({"batch_size": args.batch_size} if args.batch_size is not None else {})})
    return 0 if document["vertices"] else 1


if __name__ == "__main__":
    sys.exit(main())
