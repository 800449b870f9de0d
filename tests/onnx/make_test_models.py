#!/usr/bin/python3
"""Writes the ONNX models tests/mapper_onnx_import_test.cpp reads (tests/onnx/README.md lists them).

Run with Debian's Python (python3-onnx 1.12 and numpy): /usr/bin/python3 tests/onnx/make_test_models.py
Seeded: the files come out the same every time. They are committed, so a build needs no Python.

- ok_*.onnx: float models the import accepts, each with ok_*.expect (the layer list the import must give,
  its weights and exponents) and ok_*_calib.txt (the calibration input). The expectation is worked out here,
  independently of the C++ import: a small numpy interpreter runs the float graph, and the post-training
  quantization of docs/real_networks.md is applied to its maps. ok_*_qdq.onnx and ok_*_qlinear.onnx are the
  same network in ONNX's int8 forms, with those weights and scales: they must import to the same .expect.
- bad_*.onnx: models the import refuses; REFUSED below gives the node, op type and reason the test expects.
- broken_*.onnx: files that are not usable models.
"""
import math
import os
import sys

import numpy as np
import json
import onnx
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 13          # float and QDQ models
OPSET_QLINEAR = 14  # int8 Relu
rng = np.random.default_rng(20240611)


def save(model, name, check=True):
    if check:
        # the outputs' types and shapes as ONNX infers them (the checker wants them given)
        inferred = onnx.shape_inference.infer_shapes(model)
        for o, i in zip(model.graph.output, inferred.graph.output):
            o.CopyFrom(i)
        onnx.checker.check_model(model, full_check=True)
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(model.SerializeToString())


def make_model(nodes, inputs, outputs, inits, opset=OPSET, name="g"):
    graph = oh.make_graph(nodes, name, inputs, outputs, initializer=inits)
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)], producer_name="make_test_models.py")


def vinfo(name, shape, t=TP.FLOAT):
    return oh.make_tensor_value_info(name, t, shape)


# ---------------------------------------------------------------- a numpy interpreter of the float ops

def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return oh.get_attribute_value(a)
    return default


def pads_of(node, k, shape_hw):
    pads = list(attr(node, "pads", [0, 0, 0, 0]))
    auto = attr(node, "auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    s = attr(node, "strides", [1, 1])
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        for ax in range(2):
            n = shape_hw[ax]
            total = max((-(-n // s[ax]) - 1) * s[ax] + k[ax] - n, 0)
            small, big = total // 2, total - total // 2
            pads[ax], pads[ax + 2] = (small, big) if auto == "SAME_UPPER" else (big, small)
    return pads


def windows(x, k, s, pads, fill):
    """x [C,H,W] -> patches [C,Ho,Wo,kh,kw] of the padded map."""
    c, h, w = x.shape
    xp = np.full((c, h + pads[0] + pads[2], w + pads[1] + pads[3]), fill, dtype=np.float64)
    xp[:, pads[0]:pads[0] + h, pads[1]:pads[1] + w] = x
    ho = (xp.shape[1] - k[0]) // s[0] + 1
    wo = (xp.shape[2] - k[1]) // s[1] + 1
    out = np.empty((c, ho, wo, k[0], k[1]))
    for i in range(k[0]):
        for j in range(k[1]):
            out[:, :, :, i, j] = xp[:, i:i + s[0] * ho:s[0], j:j + s[1] * wo:s[1]]
    return out


def run_float(model, x):
    """Every tensor of a float model (batch 1, the batch axis dropped) on one input."""
    consts = {t.name: nh.to_array(t).astype(np.float64) for t in model.graph.initializer}
    v = {model.graph.input[0].name: x.astype(np.float64)}
    get = lambda n: v[n] if n in v else consts[n]
    for n in model.graph.node:
        i = [get(t) for t in n.input if t]
        op = n.op_type
        if op == "Conv":
            w = i[1]
            k = list(w.shape[2:])
            p = windows(i[0], k, attr(n, "strides", [1, 1]), pads_of(n, k, i[0].shape[1:]), 0.0)
            y = np.einsum("dhwij,cdij->chw", p, w)
            if len(i) > 2:
                y = y + i[2][:, None, None]
        elif op == "Gemm":
            w = i[1].T if attr(n, "transB", 0) else i[1]
            y = i[0] @ w + (i[2] if len(i) > 2 else 0)
        elif op == "MatMul":
            y = i[0] @ i[1]
        elif op == "Relu":
            y = np.maximum(i[0], 0)
        elif op in ("MaxPool", "AveragePool"):
            k = attr(n, "kernel_shape", None)
            s = attr(n, "strides", [1, 1])
            pads = pads_of(n, k, i[0].shape[1:])
            if op == "MaxPool":
                y = windows(i[0], k, s, pads, -np.inf).max(axis=(3, 4))
            else:
                assert attr(n, "count_include_pad", 0) == 1 or not any(pads)
                y = windows(i[0], k, s, pads, 0.0).sum(axis=(3, 4)) / (k[0] * k[1])
        elif op == "GlobalAveragePool":
            y = i[0].mean(axis=(1, 2), keepdims=True)
        elif op == "Add":
            y = i[0] + i[1]
        elif op in ("Flatten", "Reshape"):
            y = i[0].reshape(1, -1)  # [C][H][W] order
        else:
            raise ValueError(op)
        v[n.output[0]] = y
    return v


# ---------------------------------------------------------------- float networks and their expectation

def e_for(m):
    """docs/real_networks.md: floor(log2(127 / m)), as the largest e with m * 2^e <= 127."""
    assert m > 0
    e = math.floor(math.log2(127 / m))
    while m * 2.0 ** (e + 1) <= 127:
        e += 1
    while m * 2.0 ** e > 127:
        e -= 1
    # the C++ import evaluates in its own summation order: no maximum near a boundary
    r = 127 / (m * 2.0 ** e)
    assert 1 + 1e-6 < r < 2 - 1e-6 or r == 1, f"max {m} too close to a power-of-two boundary"
    return e


def transposed(node):
    """A fully connected layer's weights stored [IN][OUT] (the hardware's order is [OUT][IN])."""
    return node.op_type == "MatMul" or (node.op_type == "Gemm" and not attr(node, "transB", 0))


def e_exact(m):
    """floor(log2(127 / m)) for a weight maximum (exact in both programs: no margin needed)."""
    e = math.floor(math.log2(127 / m))
    while m * 2.0 ** (e + 1) <= 127:
        e += 1
    while m * 2.0 ** e > 127:
        e -= 1
    return e


def quantize_w(w, e_x=None, e_y=None):
    """docs/real_networks.md: e_w per output channel (the first axis of the hardware's order) where the channels'
    exponents differ (a list; an all-zero channel takes the tensor's; with e_x and e_y, a channel whose shift would
    pass 31 takes 31), else one e_w for the tensor; w_q rounded half to even (rint), clamped to +-127."""
    e_t = e_exact(float(np.abs(w).max()))
    m = np.abs(w.reshape(w.shape[0], -1)).max(axis=1)
    e = [e_t if v == 0 else e_exact(float(v)) for v in m]
    if all(x == e_t for x in e):
        return e_t, np.clip(np.rint(w.astype(np.float64) * 2.0 ** e_t), -127, 127).astype(np.int8)
    if e_x is not None:
        e = [min(x, e_y - e_x + 31) for x in e]
        if all(x == e[0] for x in e):  # every channel at shift 31: one exponent again, as the import has it
            return e[0], np.clip(np.rint(w.astype(np.float64) * 2.0 ** e[0]), -127, 127).astype(np.int8)
    sc = (2.0 ** np.array(e, np.float64)).reshape(-1, *[1] * (w.ndim - 1))
    return e, np.clip(np.rint(w.astype(np.float64) * sc), -127, 127).astype(np.int8)


def shift_text(e_x, e_w, e_y):
    """shift=N, or per output channel shift=MIN shifts=A,B,... (docs/real_networks.md)."""
    if isinstance(e_w, list):
        sh = [e_x + x - e_y for x in e_w]
        assert all(0 <= v <= 31 for v in sh), sh
        return f"shift={min(sh)} shifts=" + ",".join(str(v) for v in sh)
    assert 0 <= e_x + e_w - e_y <= 31
    return f"shift={e_x + e_w - e_y}"


class Net:
    """A float model built layer by layer, with what the import must make of it: layer lines, the weights in
    the hardware's order, and which map's float values calibrate each exponent (a map's `key`)."""

    def __init__(self, name, shape):
        self.name = name
        self.shape = {"input": tuple(shape)}
        self.nodes, self.inits, self.layers = [], [], []
        self.key = {"input": "input"}  # map -> the map whose exponent it has (resolved at the end)
        self.also = []                 # (map, tensor): the map's exponent is calibrated over the tensor too
        self.n = 0

    def uid(self, base):
        self.n += 1
        return f"{base}{self.n}"

    def weight(self, name, shape, fan_in, gain=1.0):
        w = (gain * rng.normal(0, math.sqrt(2 / fan_in), shape)).astype(np.float32)
        self.inits.append(nh.from_array(w, name))
        return w

    def node(self, op, ins, name=None, **attrs):
        name = name or self.uid(op.lower())
        out = name + "_out"
        self.nodes.append(oh.make_node(op, ins, [out], name=name, **attrs))
        return out

    def relu(self, x, layer):
        y = self.node("Relu", [x])
        self.shape[y] = self.shape[x]
        self.key[x] = y
        self.key[y] = y
        layer["relu"] = True
        layer["y"] = y
        return y

    def conv(self, x, c, k=3, stride=1, pad=0, relu=True, zero_bias=False, auto_pad=None, layer=True, add_kernel_shape=True,
             gain=1.0):
        d, h, w_ = self.shape[x]
        name = self.uid("conv")
        w = self.weight(name + "_w", (c, d, k, k), d * k * k, gain)
        ins = [x, name + "_w"]
        if zero_bias:
            self.inits.append(nh.from_array(np.zeros(c, np.float32), name + "_b"))
            ins.append(name + "_b")
        attrs = dict(strides=[stride, stride])
        if add_kernel_shape:
            attrs["kernel_shape"] = [k, k]
        if auto_pad:
            attrs["auto_pad"] = auto_pad
            pad = (k - 1) // 2
        elif pad:
            attrs["pads"] = [pad] * 4
        y = self.node("Conv", ins, name, **attrs)
        self.shape[y] = (c, (h + 2 * pad - k) // stride + 1, (w_ + 2 * pad - k) // stride + 1)
        self.key[y] = y
        l = dict(kind="conv", text=f"conv {k} {k} {d} {c} stride={stride} pad={pad}", w=w, x=x, y=y, relu=False, node=name)
        if layer:
            self.layers.append(l)
        if relu:
            y = self.relu(y, l)
        return (y, l) if not layer else y

    def pool(self, x, op, k, stride, pad=0, **extra):
        d, h, w = self.shape[x]
        attrs = dict(kernel_shape=[k, k], strides=[stride, stride], **extra)
        if pad:
            attrs["pads"] = [pad] * 4
        y = self.node(op, [x], **attrs)
        self.shape[y] = (d, (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1)
        self.key[y] = x
        kind = "max" if op == "MaxPool" else "avg"
        self.layers.append(dict(kind="pool", text=f"pool {kind} {k} {k} stride={stride} pad={pad}"))
        return y

    def global_pool(self, x):
        d, h, w = self.shape[x]
        y = self.node("GlobalAveragePool", [x])
        self.shape[y] = (d, 1, 1)
        self.key[y] = x
        self.layers.append(dict(kind="pool", text=f"pool avg {w} {h}"))
        return y

    def flatten(self, x, reshape=False):
        n = int(np.prod(self.shape[x]))
        if reshape:
            sname = self.uid("shape")
            self.inits.append(nh.from_array(np.array([1, -1], np.int64), sname))
            y = self.node("Reshape", [x, sname])
        else:
            y = self.node("Flatten", [x], axis=1)
        self.shape[y] = (n,)
        self.key[y] = x
        return y

    def fc(self, x, out, relu=True, form="gemm_t", zero_bias=False, weights=None):
        (n,) = self.shape[x]
        name = self.uid("fc")
        w = rng.normal(0, math.sqrt(2 / n), (out, n)).astype(np.float32)  # [OUT][IN], the hardware's order
        if weights is not None:
            w = weights.astype(np.float32)
        if form == "gemm_t":
            self.inits.append(nh.from_array(w, name + "_w"))
            ins, op, attrs = [x, name + "_w"], "Gemm", dict(transB=1)
        else:
            self.inits.append(nh.from_array(np.ascontiguousarray(w.T), name + "_w"))  # [IN][OUT]
            ins, op, attrs = [x, name + "_w"], ("Gemm" if form == "gemm" else "MatMul"), {}
        if zero_bias:
            self.inits.append(nh.from_array(np.zeros(out, np.float32), name + "_b"))
            ins.append(name + "_b")
        y = self.node(op, ins, name, **attrs)
        self.shape[y] = (out,)
        self.key[y] = y
        l = dict(kind="fc", text=f"fc {n} {out}", w=w, x=x, y=y, relu=False, node=name)
        self.layers.append(l)
        if relu:
            y = self.relu(y, l)
        return y

    def residual(self, x, branch, projection_stride=None, relu=True, shortcut_first=False, projection_gain=1.0):
        """branch(x) emits the main branch's layers and returns its last map; a projection is a 1x1 conv of x."""
        self.layers.append(dict(kind="begin", text="residual begin"))
        y = branch(x)
        end = dict(kind="end", relu=False, x=x)
        s = x
        if projection_stride is not None:
            s, pl = self.conv(x, self.shape[y][0], k=1, stride=projection_stride, relu=False, layer=False, gain=projection_gain)
            end.update(text=f"residual end shortcut=projection stride={projection_stride}", w=pl["w"], node=pl["node"])
        else:
            end.update(text="residual end shortcut=identity")
        a = self.node("Add", [s, y] if shortcut_first else [y, s])
        self.shape[a] = self.shape[y]
        self.key[a] = a
        self.layers.append(end)
        out = self.relu(a, end) if relu else a
        end["y"] = out
        # docs/real_networks.md: an identity unit's maps take the shortcut's exponent, calibrated over the shortcut
        # and the sum (after its ReLU); a projection unit's last convolution and projection the sum's
        target = x if projection_stride is None else out
        if projection_stride is None:
            self.also.append((x, out))
        for m in (y, s, a, out):
            if m != target:
                self.key[m] = target
        return out

    def model(self, out):
        shape = [1, *self.shape["input"]]
        return make_model(self.nodes, [vinfo("input", shape)], [vinfo(out, None)], self.inits, name=self.name)

    def root(self, m):
        while self.key[m] != m:
            m = self.key[m]
        return m

    def expectation(self, model, calib):
        """Exponents from the float run on `calib`, shifts, int8 weights: the .expect text."""
        maxes = {}
        for x in calib:
            vals = run_float(model, x.reshape(self.shape["input"]))
            for m, v in vals.items():
                maxes[m] = max(maxes.get(m, 0.0), float(np.abs(v).max()))
        extra = {}
        for m, t in self.also:
            extra.setdefault(self.root(m), []).append(t)
        E = lambda m: e_for(max([maxes[self.root(m)]] + [maxes[t] for t in extra.get(self.root(m), [])]))
        s = self.shape["input"]
        lines = [f"# {self.name}: what the import must make of {self.name}.onnx (make_test_models.py)",
                 f"input {s[2]} {s[1]} {s[0]}" if len(s) == 3 else f"input {s[0]} 1 1"]
        for l in self.layers:
            text = l["text"]
            if "w" in l:
                e_w, wq = l["q"] = quantize_w(l["w"], E(l["x"]), E(l["y"]))
                if l["kind"] != "end":
                    text += " act=" + ("relu" if l["relu"] else "none")
                elif not l["relu"]:
                    text += " act=none"
                text += " " + shift_text(E(l["x"]), e_w, E(l["y"]))
                lines.append(text)
                lines.append("#weights " + " ".join(str(int(v)) for v in wq.reshape(-1)))
            else:
                if l["kind"] == "end" and not l["relu"]:
                    text += " act=none"
                lines.append(text)
        lines.append(f"#exponents {E('input')} {E(self.final)}")
        self.E = E
        return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- the int8 forms of a float network

def scale_initializers(inits):
    """scale(e): the name of a float32 initializer 2^-e, added to `inits` the first time e is asked for."""
    scales = {}

    def scale(e):
        """e a list: a 1-D scale, per output channel"""
        n = (f"scale_{e}" if not isinstance(e, list) else "scales_" + "_".join(map(str, e))).replace("-", "m")
        if n not in scales:
            scales[n] = nh.from_array(np.array(2.0 ** -np.array(e, np.float64), np.float32), n)
            inits.append(scales[n])
        return n

    return scale


def qdq_model(net, model, pre_relu=False, dq_per_reader=False, weights_via_q=False):
    """The QDQ form: int8 weights through DequantizeLinear, a QuantizeLinear/DequantizeLinear pair on the
    input and after every map a layer, pooling or Add makes (pre_relu: on a conv's map before its ReLU too)."""
    E = net.E
    nodes, inits = [], []
    zp = nh.from_array(np.array(0, np.int8), "zp")
    inits.append(zp)
    scale = scale_initializers(inits)

    readers = {}
    for n in model.graph.node:
        for t in n.input:
            readers[t] = readers.get(t, 0) + 1
    rename = {}
    dq_count = {}

    def qdq(t, e):
        q = t + "_q"
        nodes.append(oh.make_node("QuantizeLinear", [t, scale(e), "zp"], [q], name=t + "_Q"))
        if dq_per_reader and readers.get(t, 1) > 1:
            rename[t] = ("multi", q, e)
        else:
            nodes.append(oh.make_node("DequantizeLinear", [q, scale(e), "zp"], [t + "_dq"], name=t + "_DQ"))
            rename[t] = t + "_dq"

    def use(t):
        r = rename.get(t, t)
        if isinstance(r, tuple):  # a DequantizeLinear of its own for each reader
            _, q, e = r
            dq_count[t] = dq_count.get(t, 0) + 1
            o = f"{t}_dq{dq_count[t]}"
            nodes.append(oh.make_node("DequantizeLinear", [q, scale(e), "zp"], [o], name=o + "_DQ"))
            return o
        return r

    float_inits = {t.name: t for t in model.graph.initializer}
    qdq("input", E("input"))
    for n in model.graph.node:
        ins = []
        for k, t in enumerate(n.input):
            if t in float_inits:
                arr = nh.to_array(float_inits[t])
                if n.op_type in ("Conv", "Gemm", "MatMul") and k == 1:
                    # the layer's int8 weights (the hardware's order), in the initializer's own layout
                    e_w, wq = net.qinfo_by_name[n.name]
                    wl = np.ascontiguousarray(wq.T) if transposed(n) else wq
                    assert wl.shape == arr.shape
                    # per output channel: along the output axis of the initializer's layout
                    axis = dict(axis=1 if transposed(n) else 0) if isinstance(e_w, list) else {}
                    if weights_via_q:
                        sc = 2.0 ** -np.array(e_w, np.float64)
                        if isinstance(e_w, list):
                            sc = sc.reshape((1, -1) if transposed(n) else (-1,) + (1,) * (wl.ndim - 1))
                        inits.append(nh.from_array((wl.astype(np.float64) * sc).astype(np.float32), t + "_f"))
                        nodes.append(oh.make_node("QuantizeLinear", [t + "_f", scale(e_w), "zp"], [t + "_q"], name=t + "_Q", **axis))
                        src = t + "_q"
                    else:
                        inits.append(nh.from_array(wl, t + "_int8"))
                        src = t + "_int8"
                    nodes.append(oh.make_node("DequantizeLinear", [src, scale(e_w), "zp"], [t + "_dq"], name=t + "_DQ", **axis))
                    ins.append(t + "_dq")
                else:
                    inits.append(float_inits[t])
                    ins.append(t)
            else:
                ins.append(use(t))
        nodes.append(oh.make_node(n.op_type, ins, list(n.output), name=n.name, **{a.name: oh.get_attribute_value(a) for a in n.attribute}))
        o = n.output[0]
        if n.op_type in ("Flatten", "Reshape"):
            continue
        followed_by_relu = any(m.op_type == "Relu" and m.input[0] == o for m in model.graph.node)
        if n.op_type in ("Conv", "Gemm", "MatMul", "Add") and followed_by_relu and not pre_relu:
            continue
        qdq(o, E(o))
    out = model.graph.output[0].name
    return make_model(nodes, [vinfo("input", [1, *net.shape["input"]])], [vinfo(use(out), None)], inits, name=net.name + "_qdq")


def qlinear_model(net, model):
    """The QLinear form: QuantizeLinear on the input, QLinearConv / QLinearMatMul, int8 Relu, MaxPool,
    Flatten; average pooling and Add between a DequantizeLinear and a QuantizeLinear; DequantizeLinear at the end."""
    E = net.E
    nodes, inits = [], [nh.from_array(np.array(0, np.int8), "zp")]
    scale = scale_initializers(inits)

    q = {"input": "input_q"}
    nodes.append(oh.make_node("QuantizeLinear", ["input", scale(E("input")), "zp"], ["input_q"], name="input_Q"))
    float_inits = {t.name: t for t in model.graph.initializer}
    for n in model.graph.node:
        o = n.output[0]
        x = q[n.input[0]]
        if n.op_type in ("Conv", "Gemm", "MatMul"):
            e_w, wq = net.qinfo_by_name[n.name]
            if n.op_type == "Conv":
                inits.append(nh.from_array(wq, n.name + "_w_int8"))
                attrs = {a.name: oh.get_attribute_value(a) for a in n.attribute}
                nodes.append(oh.make_node("QLinearConv", [x, scale(E(n.input[0])), "zp", n.name + "_w_int8", scale(e_w), "zp",
                                                          scale(E(o)), "zp"], [o + "_q"], name=n.name, **attrs))
            else:
                inits.append(nh.from_array(np.ascontiguousarray(wq.T), n.name + "_w_int8"))  # [IN][OUT]
                nodes.append(oh.make_node("QLinearMatMul", [x, scale(E(n.input[0])), "zp", n.name + "_w_int8", scale(e_w), "zp",
                                                            scale(E(o)), "zp"], [o + "_q"], name=n.name))
        elif n.op_type in ("Relu", "MaxPool", "Flatten"):
            attrs = {a.name: oh.get_attribute_value(a) for a in n.attribute}
            nodes.append(oh.make_node(n.op_type, [x], [o + "_q"], name=n.name, **attrs))
        elif n.op_type == "Reshape":
            inits.append(float_inits[n.input[1]])
            nodes.append(oh.make_node("Reshape", [x, n.input[1]], [o + "_q"], name=n.name))
        else:  # AveragePool, GlobalAveragePool, Add: in float between DequantizeLinear and QuantizeLinear
            ins = []
            for t in n.input:
                nodes.append(oh.make_node("DequantizeLinear", [q[t], scale(E(t)), "zp"], [t + "_f_" + n.name], name=t + "_DQ_" + n.name))
                ins.append(t + "_f_" + n.name)
            attrs = {a.name: oh.get_attribute_value(a) for a in n.attribute}
            nodes.append(oh.make_node(n.op_type, ins, [o], name=n.name, **attrs))
            nodes.append(oh.make_node("QuantizeLinear", [o, scale(E(o)), "zp"], [o + "_q"], name=o + "_Q"))
        q[o] = o + "_q"
    out = model.graph.output[0].name
    nodes.append(oh.make_node("DequantizeLinear", [q[out], scale(E(out)), "zp"], ["output"], name="output_DQ"))
    return make_model(nodes, [vinfo("input", [1, *net.shape["input"]])], [vinfo("output", None)], inits,
                      opset=OPSET_QLINEAR, name=net.name + "_qlinear")


def write_accepted(net, out, calib_count=2, qlinear=True, calib=None, **qdq_options):
    net.final = out
    model = net.model(out)
    save(model, net.name + ".onnx")
    if calib is None:
        calib = [rng.normal(0, 1, int(np.prod(net.shape["input"]))).astype(np.float32) for _ in range(calib_count)]
    calib_count = len(calib)
    with open(os.path.join(HERE, net.name + "_calib.txt"), "w") as f:
        f.write(f"# {calib_count} calibration inputs for {net.name}.onnx, one per line, [C][H][W] order\n")
        for x in calib:
            f.write(" ".join(str(v) for v in x) + "\n")  # numpy's shortest text that reads back as the same float32
    text = net.expectation(model, calib)
    with open(os.path.join(HERE, net.name + ".expect"), "w") as f:
        f.write(text)
    # the quantized weights by node name, for the int8 forms
    net.qinfo_by_name = {l["node"]: l["q"] for l in net.layers if "q" in l}
    assert all(n.name in net.qinfo_by_name for n in model.graph.node if n.op_type in ("Conv", "Gemm", "MatMul"))
    save(qdq_model(net, model, **qdq_options), net.name + "_qdq.onnx")
    if qlinear:
        save(qlinear_model(net, model), net.name + "_qlinear.onnx")


def accepted():
    # convolutions: padding given, padding by auto_pad, a stride, a zero bias, no kernel_shape attribute
    n = Net("ok_conv_chain", (3, 9, 9))
    x = n.conv("input", 4, k=3, pad=1, zero_bias=True)
    x = n.conv(x, 6, k=3, auto_pad="SAME_UPPER", add_kernel_shape=False)
    x = n.conv(x, 5, k=5, stride=2, pad=2, relu=False)
    x = n.conv(x, 3, k=1)
    write_accepted(n, x, pre_relu=True)

    # pooling: fused max 2x2/2, padded max after a ReLU, padded average (counting the padding), global average
    n = Net("ok_pools", (2, 12, 12))
    x = n.conv("input", 4, k=3, pad=1)
    x = n.pool(x, "MaxPool", 2, 2)
    x = n.conv(x, 6, k=3, pad=1)
    x = n.pool(x, "MaxPool", 3, 2, pad=1)
    x = n.pool(x, "AveragePool", 2, 1, pad=1, count_include_pad=1)
    x = n.conv(x, 8, k=3, relu=True)
    x = n.global_pool(x)
    x = n.flatten(x)
    x = n.fc(x, 5, relu=False)
    write_accepted(n, x)

    # fully connected: Gemm with B transposed, Gemm with a zero C, MatMul
    n = Net("ok_fc", (24,))
    x = n.fc("input", 16, form="gemm_t")
    x = n.fc(x, 12, form="gemm", zero_bias=True)
    x = n.fc(x, 7, relu=False, form="matmul")
    write_accepted(n, x, weights_via_q=True)

    # rounding: weights w * 2^e_w halfway between two integers round to the even one; a calibration input
    # whose max |x| is 127 / 32 exactly has e = 5 (max * 2^5 <= 127 holds with equality)
    n = Net("ok_rounding", (8,))
    halves = np.array([64, 2.5, 3.5, -2.5, -3.5, 0.5, -0.5, 1.5, -1.5, 126.5, -126.5, 10.5] * 4)[:48].reshape(6, 8) / 64
    x = n.fc("input", 6, relu=False, weights=halves)
    x = n.fc(x, 3, relu=False)
    v = rng.normal(0, 1, 8).astype(np.float32)
    v = (v / np.abs(v).max() * np.float32(127 / 32)).astype(np.float32)
    assert np.abs(v).max() == np.float32(127 / 32)
    write_accepted(n, x, calib=[v])

    # Reshape to [1,-1] before a MatMul
    n = Net("ok_reshape", (3, 6, 5))
    x = n.conv("input", 4, k=3, pad=1)
    x = n.flatten(x, reshape=True)
    x = n.fc(x, 6, relu=False, form="matmul")
    write_accepted(n, x)

    # an identity unit (the Add's shortcut first) and a projection unit (the branch first); the gains make
    # each map the residual rule gives an exponent have another than its own calibration would: the identity
    # branch's sum is far above the shortcut (the unit's exponent is then the sum's), the projection's far above
    # the branch
    n = Net("ok_residual", (4, 10, 10))
    x = n.conv("input", 6, k=3, pad=1)

    def branch_id(x):
        y = n.conv(x, 6, k=3, pad=1)
        return n.conv(y, 6, k=3, pad=1, relu=False, gain=6.0)

    x = n.residual(x, branch_id, shortcut_first=True)

    def branch_proj(x):
        y = n.conv(x, 8, k=3, stride=2, pad=1)
        return n.conv(y, 8, k=3, pad=1, relu=False, gain=0.2)

    x = n.residual(x, branch_proj, projection_stride=2, projection_gain=3.0)
    x = n.global_pool(x)
    x = n.flatten(x)
    x = n.fc(x, 4, relu=False)
    write_accepted(n, x, dq_per_reader=True)

    # a unit without a ReLU after its Add, whose branch is one 1x1 convolution beside a 1x1 projection (the
    # Add's second operand is the shortcut), then an identity unit of one convolution with a ReLU
    n = Net("ok_residual_plain", (3, 6, 6))
    x = n.conv("input", 4, k=1)
    x = n.residual(x, lambda x: n.conv(x, 5, k=1, relu=False), projection_stride=1, relu=False)
    x = n.residual(x, lambda x: n.conv(x, 5, k=3, pad=1, relu=True))
    x = n.conv(x, 2, k=3, relu=False)
    write_accepted(n, x)


# ---------------------------------------------------------------- refused models

REFUSED = []  # (file, node, op type, what the message says)


def refused(name, nodes, inits, node, op, why, in_shape=(1, 3, 8, 8), out="y", opset=OPSET, check=True, inputs=None,
            calibration=""):
    """calibration "ones": refused only when calibrated, on an input of ones."""
    inputs = inputs or [vinfo("x", list(in_shape))]
    model = make_model(nodes, inputs, [vinfo(out, None)] if isinstance(out, str) else out, inits, opset=opset)
    save(model, name + ".onnx", check=check)
    REFUSED.append((name + ".onnx", node, op, why) + ((calibration,) if calibration else ()))


def graph(name, nodes, inits, in_shape=(1, 3, 8, 8), out="y", opset=OPSET):
    """A graph the import takes now (tests/mapper_onnx_import_test.cpp checks its layers)."""
    model = make_model(nodes, [vinfo("x", list(in_shape))], [vinfo(out, None)], inits, opset=opset)
    save(model, name + ".onnx")


def w(name, shape, value=None):
    a = rng.normal(0, 0.3, shape).astype(np.float32) if value is None else np.full(shape, value, np.float32)
    return nh.from_array(a, name)


def conv_node(name, x, wname, out, **a):
    return oh.make_node("Conv", [x, wname], [out], name=name, **a)


def refusals():
    c1 = conv_node("c1", "x", "w1", "c1_out", pads=[1, 1, 1, 1])
    w1 = w("w1", (4, 3, 3, 3))
    # ops with no counterpart
    # a Sigmoid inside the graph is a table; a Softmax is taken only as the graph's last node (left to the host)
    graph("graph_sigmoid_mid", [c1, oh.make_node("Sigmoid", ["c1_out"], ["s"], name="act"), oh.make_node("Relu", ["s"], ["y"], name="r")],
          [w1])
    refused("bad_softmax", [oh.make_node("Gemm", ["x", "wf"], ["g"], name="fc", transB=1), oh.make_node("Softmax", ["g"], ["s"], name="prob"),
                            oh.make_node("Relu", ["s"], ["y"], name="r")],
            [w("wf", (5, 16))], "prob", "Softmax", "last node", in_shape=(1, 16))
    refused("bad_lstm", [oh.make_node("LSTM", ["x", "lw", "lr"], ["", "y"], name="rnn", hidden_size=4)],
            [w("lw", (1, 16, 8)), w("lr", (1, 16, 4))], "rnn", "LSTM", "not supported", in_shape=(1, 2, 8))
    refused("bad_concat", [c1, conv_node("c2", "x", "w2", "c2_out", pads=[1, 1, 1, 1]),
                           oh.make_node("Concat", ["c1_out", "c2_out"], ["y"], name="cat", axis=2)],
            [w1, w("w2", (4, 3, 3, 3))], "cat", "Concat", "only a concatenation of channels")
    refused("bad_domain", [c1, oh.make_node("QLinearAdd", ["c1_out"], ["y"], name="qadd", domain="com.microsoft")], [w1],
            "qadd", "QLinearAdd", "QuantFormat.QDQ", check=False)
    # convolutions the MAC array cannot run
    # groups run as per-group tasks; these cannot be
    refused("bad_conv_grouped", [conv_node("gconv", "x", "wg", "y", group=4)], [w("wg", (6, 2, 3, 3))], "gconv", "Conv", "divisor",
            in_shape=(1, 6, 8, 8), check=False)
    refused("bad_conv_depthwise", [conv_node("dw", "x", "wd", "y", group=4)], [w("wd", (4, 1, 3, 3))], "dw", "Conv", "per group",
            in_shape=(1, 8, 8, 8), check=False)
    refused("bad_conv_dilated", [conv_node("dil", "x", "w1", "y", dilations=[2, 2])], [w1], "dil", "Conv", "dilat")
    # a convolution's pads may differ per side (its kernel framed by zeros: eq_pads_per_side); a pooling's may not
    refused("bad_pool_asym_pads", [oh.make_node("AveragePool", ["x"], ["y"], name="asym", kernel_shape=[2, 2], strides=[2, 2],
                                                pads=[0, 0, 1, 1], count_include_pad=1)], [], "asym", "AveragePool", "differ")
    refused("bad_conv_strides", [conv_node("str", "x", "w1", "y", strides=[1, 2])], [w1], "str", "Conv", "strides")
    refused("bad_conv_bias", [oh.make_node("Conv", ["x", "w1", "b"], ["y"], name="biased")],
            [w1, w("b", (5,), 0.5)], "biased", "Conv", "one value per output channel", check=False)
    # fully connected layers the hardware cannot run
    fcin = (1, 16)
    refused("bad_gemm_alpha", [oh.make_node("Gemm", ["x", "wf"], ["y"], name="g", alpha=0.5, transB=1)], [w("wf", (5, 16))],
            "g", "Gemm", "alpha", in_shape=fcin)
    refused("bad_gemm_transA", [oh.make_node("Gemm", ["x", "wf"], ["y"], name="g", transA=1)], [w("wf", (1, 5))],
            "g", "Gemm", "transA", in_shape=fcin)
    refused("bad_gemm_bias", [oh.make_node("Gemm", ["x", "wf", "b"], ["y"], name="g", transB=1)], [w("wf", (5, 16)), w("b", (3,), 1.0)],
            "g", "Gemm", "one value per output channel", in_shape=fcin, check=False)
    # pooling the hardware computes differently
    refused("bad_maxpool_pad", [c1, oh.make_node("MaxPool", ["c1_out"], ["y"], name="mp", kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])],
            [w1], "mp", "MaxPool", "minus")
    relu = oh.make_node("Relu", ["c1_out"], ["r"], name="r1")
    refused("bad_avgpool_pad", [c1, relu, oh.make_node("AveragePool", ["r"], ["y"], name="ap", kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
            [w1], "ap", "AveragePool", "count_include_pad=0")
    graph("graph_maxpool_ceil", [c1, relu, oh.make_node("MaxPool", ["r"], ["y"], name="mp", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)],
          [w1])
    # ceil_mode: zero padding at the end, exact only on a map that cannot be negative; an average's divisor would differ
    refused("bad_maxpool_ceil", [c1, oh.make_node("MaxPool", ["c1_out"], ["y"], name="mp", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)],
            [w1], "mp", "MaxPool", "may be negative")
    refused("bad_avgpool_ceil", [c1, relu, oh.make_node("AveragePool", ["r"], ["y"], name="ap", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)],
            [w1], "ap", "AveragePool", "ceil_mode")
    # graphs that are not a chain with residual units
    # an Add of two branches: the second a residual end (in= the first); a Sub of maps has no counterpart
    w2 = w("w2", (4, 3, 3, 3))
    graph("graph_two_branches", [c1, conv_node("c2", "x", "w2", "c2_out", pads=[1, 1, 1, 1]),
                                 oh.make_node("Add", ["c1_out", "c2_out"], ["y"], name="sum")], [w1, w2])
    refused("bad_sub", [c1, conv_node("c2", "x", "w2", "c2_out", pads=[1, 1, 1, 1]),
                        oh.make_node("Sub", ["c1_out", "c2_out"], ["y"], name="diff")], [w1, w2], "diff", "Sub", "not supported")
    refused("bad_dead_branch", [c1, conv_node("c2", "c1_out", "w2", "unused"), oh.make_node("Relu", ["c1_out"], ["y"], name="r1")],
            [w1, w("w2", (2, 4, 1, 1))], "c2", "Conv", "not used")
    # a constant added to a Conv's output is its bias; after a ReLU it is not
    refused("bad_add_constant", [c1, oh.make_node("Relu", ["c1_out"], ["r"], name="r1"), oh.make_node("Add", ["r", "bias"], ["y"], name="plus")],
            [w1, w("bias", (1, 4, 1, 1), 0.1)], "plus", "Add", "must come right after the Conv")
    # a unit inside a unit's branch
    nest = [c1, oh.make_node("Relu", ["c1_out"], ["a"], name="r1"),
            conv_node("b1", "a", "w3", "b1_out", pads=[1, 1, 1, 1]),            # the outer branch forks again:
            conv_node("b2", "b1_out", "w3", "b2_out", pads=[1, 1, 1, 1]),
            oh.make_node("Add", ["b1_out", "b2_out"], ["inner"], name="inner_add"),
            oh.make_node("Add", ["a", "inner"], ["y"], name="outer_add")]
    graph("graph_nested", nest, [w1, w("w3", (4, 4, 3, 3))])
    graph("graph_relu_after_pool", [c1, oh.make_node("MaxPool", ["c1_out"], ["p"], name="mp", kernel_shape=[2, 2], strides=[2, 2]),
                                    oh.make_node("Relu", ["p"], ["y"], name="late")], [w1])
    refused("bad_reshape", [c1, oh.make_node("Reshape", ["c1_out", "shp"], ["y"], name="rs")],
            [w1, nh.from_array(np.array([1, 4, 64], np.int64), "shp")], "rs", "Reshape", "[1,-1]")
    # a Flatten is taken into a fully connected layer or as the graph's output, not before anything else
    refused("bad_flatten_mid", [c1, oh.make_node("Flatten", ["c1_out"], ["f"], name="fl"), oh.make_node("Relu", ["f"], ["y"], name="r")],
            [w1], "fl", "Flatten", "fully connected")
    # a node with no output at all (found by fuzz_onnx: the final-activation check read its missing output)
    refused("bad_softmax_no_output", [c1, oh.make_node("Softmax", ["c1_out"], [], name="prob")], [w1], "prob", "Softmax",
            "has no output", out="c1_out", check=False)
    # QDQ and QLinear forms the hardware cannot take
    s5 = nh.from_array(np.array(2.0 ** -5, np.float32), "s5")
    s7 = nh.from_array(np.array(2.0 ** -7, np.float32), "s7")
    zp = nh.from_array(np.array(0, np.int8), "zp")
    wi8 = nh.from_array(rng.integers(-100, 100, (4, 3, 3, 3)).astype(np.int8), "w_int8")

    def qdq_conv(in_scale="s5", in_zp="zp", w_scale="s7", extra_inits=()):
        nodes = [oh.make_node("QuantizeLinear", ["x", in_scale, in_zp], ["xq"], name="in_q"),
                 oh.make_node("DequantizeLinear", ["xq", in_scale, in_zp], ["xd"], name="in_dq"),
                 oh.make_node("DequantizeLinear", ["w_int8", w_scale, "zp"], ["wd"], name="w_dq"),
                 oh.make_node("Conv", ["xd", "wd"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                 oh.make_node("QuantizeLinear", ["c", "s5", "zp"], ["cq"], name="out_q"),
                 oh.make_node("DequantizeLinear", ["cq", "s5", "zp"], ["y"], name="out_dq")]
        return nodes, [s5, s7, zp, wi8, *extra_inits]

    n_, i_ = qdq_conv(in_scale="s01", extra_inits=[nh.from_array(np.array(0.1, np.float32), "s01")])
    refused("bad_qdq_scale", n_, i_, "in_q", "QuantizeLinear", "power of two")
    n_, i_ = qdq_conv(w_scale="s03", extra_inits=[nh.from_array(np.array(0.3, np.float32), "s03")])
    refused("bad_qdq_weight_scale", n_, i_, "w_dq", "DequantizeLinear", "power of two")
    n_, i_ = qdq_conv(in_zp="zp3", extra_inits=[nh.from_array(np.array(3, np.int8), "zp3")])
    refused("bad_qdq_zero_point", n_, i_, "in_q", "QuantizeLinear", "not 0")
    n_, i_ = qdq_conv(in_zp="zpu", extra_inits=[nh.from_array(np.array(0, np.uint8), "zpu")])
    refused("bad_qdq_uint8", n_, i_, "in_q", "QuantizeLinear", "uint8")

    def qlinear(y_scale):
        nodes = [oh.make_node("QuantizeLinear", ["x", "s5", "zp"], ["xq"], name="in_q"),
                 oh.make_node("QLinearConv", ["xq", "s5", "zp", "w_int8", "s7", "zp", y_scale, "zp"], ["cq"], name="qconv", pads=[1, 1, 1, 1]),
                 oh.make_node("DequantizeLinear", ["cq", y_scale, "zp"], ["y"], name="out_dq")]
        return nodes

    # y_scale 2^-13 < x_scale * w_scale = 2^-12: shift -1
    refused("bad_qlinear_negative_shift", qlinear("s13"), [s5, s7, zp, wi8, nh.from_array(np.array(2.0 ** -13, np.float32), "s13")],
            "qconv", "QLinearConv", "negative")
    refused("bad_qlinear_scale", qlinear("s3x"), [s5, s7, zp, wi8, nh.from_array(np.array(0.75 * 2.0 ** -4, np.float32), "s3x")],
            "qconv", "QLinearConv", "power of two")
    # a QDQ model with float weights, with a map left without a scale, and a residual Add whose operands have
    # different scales
    q_in = [oh.make_node("QuantizeLinear", ["x", "s5", "zp"], ["xq"], name="in_q"),
            oh.make_node("DequantizeLinear", ["xq", "s5", "zp"], ["xd"], name="in_dq")]
    q_out = [oh.make_node("QuantizeLinear", ["c", "s5", "zp"], ["cq"], name="out_q"),
             oh.make_node("DequantizeLinear", ["cq", "s5", "zp"], ["y"], name="out_dq")]
    refused("bad_qdq_float_weights", q_in + [oh.make_node("Conv", ["xd", "w1"], ["c"], name="conv", pads=[1, 1, 1, 1])] + q_out,
            [s5, zp, w1], "conv", "Conv", "float weights")
    refused("bad_qdq_no_scale", q_in + [oh.make_node("DequantizeLinear", ["w_int8", "s7", "zp"], ["wd"], name="w_dq"),
                                        oh.make_node("Conv", ["xd", "wd"], ["y"], name="conv", pads=[1, 1, 1, 1])],
            [s5, s7, zp, wi8], "conv", "Conv", "has no scale")
    w33 = nh.from_array(rng.integers(-100, 100, (3, 3, 3, 3)).astype(np.int8), "w33")
    s4 = nh.from_array(np.array(2.0 ** -4, np.float32), "s4")
    refused("bad_qdq_residual_scales", q_in + [
        oh.make_node("DequantizeLinear", ["w33", "s7", "zp"], ["wd"], name="w_dq"),
        oh.make_node("Conv", ["xd", "wd"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        oh.make_node("QuantizeLinear", ["c", "s4", "zp"], ["cq"], name="c_q"),
        oh.make_node("DequantizeLinear", ["cq", "s4", "zp"], ["cd"], name="c_dq"),
        oh.make_node("Add", ["cd", "xd"], ["sum"], name="add"),
        oh.make_node("QuantizeLinear", ["sum", "s5", "zp"], ["sq"], name="sum_q"),
        oh.make_node("DequantizeLinear", ["sq", "s5", "zp"], ["y"], name="sum_dq")], [s4, s5, s7, zp, w33],
        "add", "Add", "one exponent")
    # a float model whose calibrated shift is negative: on an input of ones, weights 1 and -0.999 leave
    # 0.001 (e_y 16) of a product whose exponents are e_x 6 and e_w 6
    refused("bad_calibrated_shift", [conv_node("cancel", "x", "wc", "y")],
            [nh.from_array(np.array([1, -0.999], np.float32).reshape(1, 2, 1, 1), "wc")], "cancel", "Conv", "negative",
            in_shape=(1, 2, 4, 4), calibration="ones")
    # the graph's inputs and outputs (no node: the message names the tensors)
    refused("bad_two_inputs", [oh.make_node("Add", ["x", "x2"], ["y"], name="sum")], [], "", "", "2 inputs",
            inputs=[vinfo("x", [1, 3, 8, 8]), vinfo("x2", [1, 3, 8, 8])])
    refused("bad_two_outputs", [c1, oh.make_node("Relu", ["c1_out"], ["y"], name="r1")], [w1], "", "", "2 outputs",
            out=[vinfo("y", None), vinfo("c1_out", None)])
    refused("bad_batch2", [c1, oh.make_node("Relu", ["c1_out"], ["y"], name="r1")], [w1], "", "", "batch 2", in_shape=(2, 3, 8, 8))
    # the ops around trained layers, where the hardware cannot follow (no random draws: the files above stay as they were)
    f0, f1, f6 = (nh.from_array(np.array(v, np.float32), n) for v, n in ((-1.0, "m1"), (1.0, "p1"), (6.0, "p6")))
    refused("bad_clip_min", [c1, oh.make_node("Clip", ["c1_out", "m1", "p1"], ["y"], name="clip")], [w1, f0, f1],
            "clip", "Clip", "only min 0")
    bn = [w("g4", (4,), 1.0), w("b4", (4,), 0.0), w("m4", (4,), 0.0), w("v4", (4,), 1.0)]
    graph("graph_bn_after_pool", [c1, oh.make_node("Relu", ["c1_out"], ["r"], name="r1"),
                                  oh.make_node("MaxPool", ["r"], ["p"], name="mp", kernel_shape=[2, 2], strides=[2, 2]),
                                  oh.make_node("BatchNormalization", ["p", "g4", "b4", "m4", "v4"], ["y"], name="bn")],
          [w1] + bn)
    pads1 = nh.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads1")
    refused("bad_pad_reflect", [oh.make_node("Pad", ["x", "pads1"], ["xp"], name="pad", mode="reflect"),
                                conv_node("c1", "xp", "w1", "y")], [w1, pads1], "pad", "Pad", "only constant")
    refused("bad_pad_before_pool", [oh.make_node("Pad", ["x", "pads1"], ["xp"], name="pad"),
                                    oh.make_node("MaxPool", ["xp"], ["y"], name="mp", kernel_shape=[2, 2], strides=[2, 2])],
            [pads1], "mp", "MaxPool", "only right before a Conv")
    refused("bad_dropout_training", [c1, oh.make_node("Dropout", ["c1_out", "", "train"], ["y"], name="drop")],
            [w1, nh.from_array(np.array(True), "train")], "drop", "Dropout", "training_mode")
    b32 = nh.from_array(np.arange(4, dtype=np.int32) * 100, "b_int32")
    n_, i_ = qdq_conv(extra_inits=[b32])
    for nd in n_:
        if nd.name == "conv":
            nd.input.append("bd")
    n_.insert(3, oh.make_node("DequantizeLinear", ["b_int32", "s5"], ["bd"], name="b_dq"))   # not 2^-5 * 2^-7
    refused("bad_qdq_bias_scale", n_, i_, "conv", "Conv", "x_scale * w_scale")
    del f6
    # three problems in one model: s2cosim check lists them all (the import stops at the first, the Tanh)
    refused("bad_many", [conv_node("dil", "x", "wdil", "d", dilations=[2, 2]), oh.make_node("Elu", ["d"], ["t"], name="elu"),
                         conv_node("gconv", "t", "wg5", "y", group=5)],
            [w("wdil", (4, 3, 3, 3), 0.1), w("wg5", (5, 1, 3, 3), 0.1)], "elu", "Elu", "not supported", check=False)
    # one problem, then nodes that fit the shapes ONNX gives: check reports the one, not what would follow from
    # taking the refused node's input shape for its output
    refused("bad_cascade", [conv_node("dil", "x", "wa", "a", dilations=[2, 2]), conv_node("c2", "a", "wc", "c", pads=[1, 1, 1, 1]),
                            oh.make_node("Flatten", ["c"], ["f"], name="flat", axis=1),
                            oh.make_node("Gemm", ["f", "wfc"], ["y"], name="fc", transB=1)],
            [w("wa", (4, 3, 3, 3), 0.1), w("wc", (6, 4, 3, 3), 0.1), w("wfc", (10, 6 * 4 * 4), 0.1)], "dil", "Conv", "dilat")


# ---------------------------------------------------------------- malformed files

BROKEN = []  # (file, what the message says)


def broken():
    good = open(os.path.join(HERE, "ok_conv_chain.onnx"), "rb").read()
    with open(os.path.join(HERE, "broken_truncated.onnx"), "wb") as f:
        f.write(good[: len(good) * 2 // 3])
    BROKEN.append(("broken_truncated.onnx", ""))
    with open(os.path.join(HERE, "broken_not_protobuf.onnx"), "wb") as f:
        f.write(b"this is a text file, not an ONNX model\n")
    BROKEN.append(("broken_not_protobuf.onnx", "not an ONNX model"))
    open(os.path.join(HERE, "broken_empty.onnx"), "wb").close()
    BROKEN.append(("broken_empty.onnx", "no graph"))
    c1 = conv_node("c1", "x", "w1", "y", pads=[1, 1, 1, 1])
    # weights for 2 input channels on a 3-channel input
    save(make_model([c1], [vinfo("x", [1, 3, 8, 8])], [vinfo("y", None)], [w("w1", (4, 2, 3, 3))]), "broken_wrong_init_shape.onnx", check=False)
    BROKEN.append(("broken_wrong_init_shape.onnx", "input channels"))
    # an initializer whose data is shorter than its dims
    t = nh.from_array(rng.normal(0, 1, (4, 3, 3, 3)).astype(np.float32), "w1")
    t.raw_data = t.raw_data[:100]
    save(make_model([c1], [vinfo("x", [1, 3, 8, 8])], [vinfo("y", None)], [t]), "broken_init_size.onnx", check=False)
    BROKEN.append(("broken_init_size.onnx", "need 432"))
    save(make_model([c1], [vinfo("x", [1, 3, 8, 8])], [vinfo("y", None)], []), "broken_missing_init.onnx", check=False)
    BROKEN.append(("broken_missing_init.onnx", "missing initializer"))
    relu = oh.make_node("Relu", ["nowhere"], ["y"], name="r1")
    save(make_model([relu], [vinfo("x", [1, 3, 8, 8])], [vinfo("y", None)], []), "broken_dangling.onnx", check=False)
    BROKEN.append(("broken_dangling.onnx", "dangling"))
    t = nh.from_array(np.zeros((4, 3, 3, 3), np.float32), "w1")
    t.ClearField("raw_data")
    t.data_location = TP.EXTERNAL
    t.external_data.add(key="location", value="weights.bin")
    save(make_model([c1], [vinfo("x", [1, 3, 8, 8])], [vinfo("y", None)], [t]), "broken_external.onnx", check=False)
    BROKEN.append(("broken_external.onnx", "external"))
    # dims that declare far more than the data present (2^40 filters; dims whose product is beyond 2^64):
    # refused before anything is allocated
    t = nh.from_array(np.zeros((4, 3, 3, 3), np.float32), "w1")
    t.dims[0] = 1 << 40
    save(make_model([c1], [vinfo("x", [1, 3, 8, 8])], [vinfo("y", None)], [t]), "broken_forged_dims.onnx", check=False)
    BROKEN.append(("broken_forged_dims.onnx", "holds 432 bytes, its dims [1099511627776,3,3,3] need 118747255799808"))
    t = nh.from_array(np.zeros((4, 3, 3, 3), np.float32), "w1")
    t.dims[0] = 1 << 40
    t.dims[1] = 1 << 40
    save(make_model([c1], [vinfo("x", [1, 3, 8, 8])], [vinfo("y", None)], [t]), "broken_dims_overflow.onnx", check=False)
    BROKEN.append(("broken_dims_overflow.onnx", "need more than 18446744073709551615"))


# ---------------------------------------------------------------- external data

def external():
    """external/: ok_conv_chain.onnx saved with its data outside, as onnx.save(save_as_external_data=True)
    writes it (every tensor, however small: size_threshold=0): all in one file (one_file.onnx, one_file.data)
    and one file per tensor (per_tensor/model.onnx and a file per initializer, named after it); both must
    import as ok_conv_chain.onnx does. Then the same with what the reader must refuse: a missing file, a file
    too short, locations outside the model's directory, an offset and a length beyond the data."""
    from onnx.external_data_helper import convert_model_to_external_data
    out = os.path.join(HERE, "external")
    if os.path.isdir(out):
        for root, _, files in os.walk(out):
            for f in files:
                os.remove(os.path.join(root, f))
    os.makedirs(os.path.join(out, "per_tensor"), exist_ok=True)
    src = os.path.join(HERE, "ok_conv_chain.onnx")
    m = onnx.load(src)
    onnx.save(m, os.path.join(out, "one_file.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="one_file.data", size_threshold=0)
    m = onnx.load(src)
    onnx.save(m, os.path.join(out, "per_tensor", "model.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=False, size_threshold=0)

    def bad(name, edit, data=None):
        """one_file.onnx with its first initializer's external_data entries edited (edit(dict) -> dict)."""
        m = onnx.load(os.path.join(out, "one_file.onnx"), load_external_data=False)
        t = m.graph.initializer[0]
        kv = {e.key: e.value for e in t.external_data}
        kv = edit(kv)
        del t.external_data[:]
        for k, v in kv.items():
            t.external_data.add(key=k, value=v)
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(m.SerializeToString())
        if data is not None:
            with open(os.path.join(out, name + ".data"), "wb") as f:
                f.write(data)

    # the fuzz target's seed (tests/fuzz/fuzz_onnx.cpp): each tensor's location is the file the target writes
    # the model to ("fuzz.onnx"), whose data sits in an unused uint8 initializer's raw_data; the offsets are
    # written with a fixed width, so the serialization's length does not change when they are filled in
    blob = open(os.path.join(out, "one_file.data"), "rb").read()
    m = onnx.load(os.path.join(out, "one_file.onnx"), load_external_data=False)
    for t in m.graph.initializer:
        for e in t.external_data:
            if e.key == "location":
                e.value = "fuzz.onnx"
            elif e.key == "offset":
                e.value = "%010d" % int(e.value)
    m.graph.initializer.append(nh.from_array(np.frombuffer(blob, np.uint8), "fuzz_data"))
    ser = m.SerializeToString()
    base = ser.find(blob)
    for t in m.graph.initializer:
        for e in t.external_data:
            if e.key == "offset":
                e.value = "%010d" % (int(e.value) + base)
    ser2 = m.SerializeToString()
    assert len(ser2) == len(ser) and ser2.find(blob) == base
    with open(os.path.join(HERE, "..", "fuzz", "corpus", "onnx", "external_data.onnx"), "wb") as f:
        f.write(ser2)

    whole = open(os.path.join(out, "one_file.data"), "rb").read()
    bad("bad_missing", lambda kv: {**kv, "location": "missing.data"})
    bad("bad_short", lambda kv: {**kv, "location": "bad_short.data"}, whole[:200])  # conv1_w needs 432 bytes
    bad("bad_outside", lambda kv: {**kv, "location": "../ok_conv_chain.onnx"})
    bad("bad_outside_deep", lambda kv: {**kv, "location": "per_tensor/../../ok_conv_chain.onnx"})
    bad("bad_absolute", lambda kv: {**kv, "location": "/etc/hostname"})
    bad("bad_offset", lambda kv: {**kv, "offset": str(len(whole) + 4)})
    bad("bad_offset_end", lambda kv: {**kv, "offset": str(len(whole) - 100)})  # starts inside, ends beyond
    bad("bad_length", lambda kv: {**kv, "length": "400"})
    bad("bad_offset_text", lambda kv: {**kv, "offset": "-4"})
    bad("bad_key", lambda kv: {**kv, "basepath": "/tmp"})
    bad("bad_dims", lambda kv: {k: v for k, v in kv.items() if k != "length"})  # dims forged below: 2^40 filters
    m = onnx.load(os.path.join(out, "bad_dims.onnx"), load_external_data=False)
    m.graph.initializer[0].dims[0] = 1 << 40
    m.graph.initializer[0].external_data[0].value = "one_file.data"
    with open(os.path.join(out, "bad_dims.onnx"), "wb") as f:
        f.write(m.SerializeToString())

    # tests/bad_inputs/onnx/: the corpus's cases, each a directory with model.onnx and its data
    corpus = os.path.join(HERE, "..", "bad_inputs", "onnx")
    for name, edit, data in [
            ("external_missing", lambda kv: {**kv, "location": "weights.data"}, None),
            ("external_short", lambda kv: {**kv, "location": "weights.data"}, whole[:200]),
            ("external_outside", lambda kv: {**kv, "location": "../external_short/weights.data"}, None),
            ("external_absolute", lambda kv: {**kv, "location": "/dev/zero"}, None),
            ("external_offset", lambda kv: {**kv, "location": "weights.data", "offset": "100000"}, whole),
            ("external_length", lambda kv: {**kv, "location": "weights.data", "length": "4"}, whole)]:
        d = os.path.join(corpus, name)
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
        m = onnx.load(os.path.join(out, "one_file.onnx"), load_external_data=False)
        for t in m.graph.initializer:
            kv = edit({e.key: e.value for e in t.external_data})
            del t.external_data[:]
            for k, v in kv.items():
                t.external_data.add(key=k, value=v)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(m.SerializeToString())
        if data is not None:
            with open(os.path.join(d, "weights.data"), "wb") as f:
                f.write(data)


# ---------------------------------------------------------------- equivalent pairs

EQUIVALENT = []  # (name, what): eq_NAME_a.onnx and eq_NAME_b.onnx must import alike (eq_NAME_calib.txt)


def equivalents():
    """Pairs of float models that compute the same: what an exporter writes (a), and the same network in the
    import's plain vocabulary (b). Calibrated on eq_NAME_calib.txt, both must give the same layers, int8
    weights, int32 biases, shifts and exponents (tests/mapper_onnx_import_test.cpp)."""
    def pair(name, what, a_nodes, a_inits, b_nodes, b_inits, in_shape, opset=OPSET, a_batch=None, a_out=None):
        # a_batch: model a's input has a symbolic batch of that name; a_out: its output's shape, which ONNX
        # cannot infer through a Reshape to a computed shape
        for suffix, nodes, inits in (("_a", a_nodes, a_inits), ("_b", b_nodes, b_inits)):
            a = suffix == "_a"
            dims = [a_batch] + list(in_shape[1:]) if a_batch and a else list(in_shape)
            save(make_model(nodes, [vinfo("x", dims)], [vinfo("y", a_out if a else None)], inits, opset=opset),
                 "eq_" + name + suffix + ".onnx")
        x = rng.normal(0, 1, in_shape).astype(np.float32)
        with open(os.path.join(HERE, "eq_" + name + "_calib.txt"), "w") as f:
            f.write(" ".join(repr(float(v)) for v in x.ravel()) + "\n")
        EQUIVALENT.append((name, what))

    def arr(name, a):
        return nh.from_array(np.asarray(a), name)

    W = rng.normal(0, 0.3, (6, 3, 3, 3)).astype(np.float32)
    Wf = rng.normal(0, 0.2, (10, 6 * 8 * 8)).astype(np.float32)
    bf = rng.normal(0, 0.5, (10,)).astype(np.float32)
    tail = [oh.make_node("Relu", ["c"], ["r"], name="relu"), oh.make_node("Flatten", ["r"], ["f"], name="flat"),
            oh.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1)]
    tail_inits = [arr("wf", Wf), arr("bf", bf)]
    # BatchNormalization with non-trivial statistics, folded by the import / by hand
    g, beta = rng.uniform(0.5, 1.5, 6).astype(np.float32), rng.normal(0, 0.3, 6).astype(np.float32)
    mean, var = rng.normal(0, 0.5, 6).astype(np.float32), rng.uniform(0.5, 2, 6).astype(np.float32)
    k = g.astype(np.float64) / np.sqrt(var.astype(np.float64) + 1e-5)
    W_f = (W.astype(np.float64) * k.reshape(-1, 1, 1, 1)).astype(np.float32)
    b_f = ((0 - mean.astype(np.float64)) * k + beta).astype(np.float32)
    pair("batchnorm", "Conv + BatchNormalization (epsilon 1e-5) against the Conv with the statistics folded into its weights and bias",
         [conv_node("conv", "x", "w", "c0", pads=[1, 1, 1, 1]),
          oh.make_node("BatchNormalization", ["c0", "g", "beta", "mean", "var"], ["c"], name="bn", epsilon=1e-5)] + tail,
         [arr("w", W), arr("g", g), arr("beta", beta), arr("mean", mean), arr("var", var)] + tail_inits,
         [oh.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1])] + tail,
         [arr("w", W_f), arr("b", b_f)] + tail_inits, (1, 3, 8, 8))
    bc = rng.normal(0, 0.5, (6,)).astype(np.float32)
    pair("identity_dropout", "Identity and an inference Dropout (a second, unused output left empty) against neither",
         [oh.make_node("Conv", ["x", "w", "b"], ["c0"], name="conv", pads=[1, 1, 1, 1]),
          oh.make_node("Identity", ["c0"], ["c1"], name="id"), oh.make_node("Dropout", ["c1"], ["c"], name="drop")] + tail,
         [arr("w", W), arr("b", bc)] + tail_inits,
         [oh.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1])] + tail, [arr("w", W), arr("b", bc)] + tail_inits,
         (1, 3, 8, 8))
    pair("pad", "Pad (zeros, 1 on every side of H and W) before an unpadded Conv, against the Conv with pads 1",
         [oh.make_node("Pad", ["x", "pads"], ["xp"], name="pad"), oh.make_node("Conv", ["xp", "w", "b"], ["c"], name="conv")] + tail,
         [arr("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64)), arr("w", W), arr("b", bc)] + tail_inits,
         [oh.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1])] + tail, [arr("w", W), arr("b", bc)] + tail_inits,
         (1, 3, 8, 8))
    Wm = rng.normal(0, 0.3, (16, 5)).astype(np.float32)
    bm = rng.normal(0, 0.5, (5,)).astype(np.float32)
    pair("matmul_add", "MatMul + Add of a bias (PyTorch's Linear written out) against Gemm with C",
         [oh.make_node("MatMul", ["x", "wm"], ["m"], name="mm"), oh.make_node("Add", ["m", "bm"], ["y"], name="plus")],
         [arr("wm", Wm), arr("bm", bm)],
         [oh.make_node("Gemm", ["x", "wm", "bm"], ["y"], name="fc")], [arr("wm", Wm), arr("bm", bm)], (1, 16))
    Wg = rng.normal(0, 0.3, (6, 2, 3, 3)).astype(np.float32)   # groups 2: 4 input channels, 3 filters each
    Wb = np.zeros((6, 4, 3, 3), np.float32)
    Wb[:3, :2], Wb[3:, 2:] = Wg[:3], Wg[3:]
    pair("grouped", "a Conv with group 2 against one over every channel with block-diagonal weights",
         [oh.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1], group=2)] + tail, [arr("w", Wg), arr("b", bc)] + tail_inits,
         [oh.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1])] + tail, [arr("w", Wb), arr("b", bc)] + tail_inits,
         (1, 4, 8, 8))
    pair("softmax", "a final Softmax (left to the host) against none",
         [oh.make_node("Gemm", ["x", "wm", "bm"], ["g"], name="fc"), oh.make_node("Softmax", ["g"], ["y"], name="prob")],
         [arr("wm", Wm), arr("bm", bm)],
         [oh.make_node("Gemm", ["x", "wm", "bm"], ["y"], name="fc")], [arr("wm", Wm), arr("bm", bm)], (1, 16))
    # ReLU6 as the last layer, as nn.ReLU6 exports it (Clip(0, 6)) and as F.relu6 does (Relu, then Clip(0, 6)):
    # a ReLU and QUAN's clamp at floor(6 * 2^e_y) (the test checks it against the output exponent); weights
    # large enough that the calibration sees values above 6
    Wr = rng.normal(0, 1.5, (4, 3, 3, 3)).astype(np.float32)
    six = [arr("w", Wr), arr("lo", np.array(0, np.float32)), arr("hi", np.array(6, np.float32))]
    pair("relu6", "Conv + Clip(0, 6) (nn.ReLU6) against Conv + Relu + Clip(0, 6) (F.relu6)",
         [oh.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
          oh.make_node("Clip", ["c", "lo", "hi"], ["y"], name="relu6")], six,
         [oh.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]), oh.make_node("Relu", ["c"], ["r"], name="relu"),
          oh.make_node("Clip", ["r", "lo", "hi"], ["y"], name="clip")], six, (1, 3, 8, 8))
    Ws = rng.normal(0, 0.3, (5, 6)).astype(np.float32)
    pair("squeeze", "GlobalAveragePool + Squeeze(axes 2, 3) (x.squeeze(-1).squeeze(-1)) against GlobalAveragePool + Flatten",
         [conv_node("conv", "x", "w", "c", pads=[1, 1, 1, 1]), oh.make_node("Relu", ["c"], ["r"], name="relu"),
          oh.make_node("GlobalAveragePool", ["r"], ["g"], name="gap"), oh.make_node("Squeeze", ["g", "axes"], ["f"], name="sq"),
          oh.make_node("Gemm", ["f", "ws"], ["y"], name="fc", transB=1)],
         [arr("w", W), arr("axes", np.array([2, 3], np.int64)), arr("ws", Ws)],
         [conv_node("conv", "x", "w", "c", pads=[1, 1, 1, 1]), oh.make_node("Relu", ["c"], ["r"], name="relu"),
          oh.make_node("GlobalAveragePool", ["r"], ["g"], name="gap"), oh.make_node("Flatten", ["g"], ["f"], name="flat"),
          oh.make_node("Gemm", ["f", "ws"], ["y"], name="fc", transB=1)],
         [arr("w", W), arr("ws", Ws)], (1, 3, 8, 8))
    # int8 forms with a bias: QLinearConv's int32 B against a QDQ Conv whose bias is an int32 DequantizeLinear at x_scale * w_scale
    wi = rng.integers(-100, 100, (4, 3, 3, 3)).astype(np.int8)
    bi = rng.integers(-3000, 3000, (4,)).astype(np.int32)
    sc = lambda e, n: arr(n, np.array(2.0 ** -e, np.float32))
    zp = arr("zp", np.array(0, np.int8))
    pair("qlinear_bias", "QLinearConv with an int32 bias against the QDQ Conv with that bias through a DequantizeLinear at 2^-12",
         [oh.make_node("QuantizeLinear", ["x", "s5", "zp"], ["xq"], name="in_q"),
          oh.make_node("QLinearConv", ["xq", "s5", "zp", "wi", "s7", "zp", "s4", "zp", "bi"], ["cq"], name="qconv", pads=[1, 1, 1, 1]),
          oh.make_node("DequantizeLinear", ["cq", "s4", "zp"], ["y"], name="out_dq")],
         [sc(5, "s5"), sc(7, "s7"), sc(4, "s4"), zp, arr("wi", wi), arr("bi", bi)],
         [oh.make_node("QuantizeLinear", ["x", "s5", "zp"], ["xq"], name="in_q"),
          oh.make_node("DequantizeLinear", ["xq", "s5", "zp"], ["xd"], name="in_dq"),
          oh.make_node("DequantizeLinear", ["wi", "s7", "zp"], ["wd"], name="w_dq"),
          oh.make_node("DequantizeLinear", ["bi", "s12"], ["bd"], name="b_dq"),
          oh.make_node("Conv", ["xd", "wd", "bd"], ["c"], name="conv", pads=[1, 1, 1, 1]),
          oh.make_node("QuantizeLinear", ["c", "s4", "zp"], ["cq"], name="out_q"),
          oh.make_node("DequantizeLinear", ["cq", "s4", "zp"], ["y"], name="out_dq")],
         [sc(5, "s5"), sc(7, "s7"), sc(4, "s4"), sc(12, "s12"), zp, arr("wi", wi), arr("bi", bi)], (1, 3, 8, 8))
    pair("logsoftmax", "a final LogSoftmax (F.log_softmax, left to the host) against none",
         [oh.make_node("Gemm", ["x", "wm", "bm"], ["g"], name="fc"), oh.make_node("LogSoftmax", ["g"], ["y"], name="logprob", axis=1)],
         [arr("wm", Wm), arr("bm", bm)],
         [oh.make_node("Gemm", ["x", "wm", "bm"], ["y"], name="fc")], [arr("wm", Wm), arr("bm", bm)], (1, 16))
    # nn.AvgPool2d(3, 1, 1) with its default count_include_pad=True exports as Pad + AveragePool (and with no
    # padding as a Pad of zeros + AveragePool): the hardware's average pooling pads with zeros and divides by
    # the whole window, as that pair does
    conv_relu = [oh.make_node("Conv", ["x", "w", "b"], ["c0"], name="conv", pads=[1, 1, 1, 1]), oh.make_node("Relu", ["c0"], ["r0"], name="relu0")]
    pool_tail = [oh.make_node("Flatten", ["p"], ["f"], name="flat"), oh.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1)]
    pair("avgpool_pad", "Pad (1) + AveragePool 3x3/1 (nn.AvgPool2d(3, 1, 1)) against AveragePool with pads 1, count_include_pad=1",
         conv_relu + [oh.make_node("Pad", ["r0", "pads"], ["rp"], name="pad"),
                      oh.make_node("AveragePool", ["rp"], ["p"], name="pool", kernel_shape=[3, 3], strides=[1, 1])] + pool_tail,
         [arr("w", W), arr("b", bc), arr("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))] + tail_inits,
         conv_relu + [oh.make_node("AveragePool", ["r0"], ["p"], name="pool", kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1],
                                   count_include_pad=1)] + pool_tail,
         [arr("w", W), arr("b", bc)] + tail_inits, (1, 3, 8, 8))
    Wq = rng.normal(0, 0.2, (10, 6 * 4 * 4)).astype(np.float32)
    pair("zero_pad", "a Pad of nothing + AveragePool 2x2 (nn.AvgPool2d(2)) against the AveragePool alone",
         conv_relu + [oh.make_node("Pad", ["r0", "pads"], ["rp"], name="pad"),
                      oh.make_node("AveragePool", ["rp"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2])] + pool_tail,
         [arr("w", W), arr("b", bc), arr("pads", np.zeros(8, np.int64)), arr("wf", Wq), arr("bf", bf)],
         conv_relu + [oh.make_node("AveragePool", ["r0"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2])] + pool_tail,
         [arr("w", W), arr("b", bc), arr("wf", Wq), arr("bf", bf)], (1, 3, 8, 8))
    # x.view(x.size(0), -1) exported with a dynamic batch (or without constant folding): Shape, Gather,
    # Unsqueeze and Concat compute the Reshape's [1, -1], which the import evaluates
    pair("shape_arithmetic", "a dynamic batch and x.view(x.size(0), -1) (Shape, Gather, Unsqueeze, Concat, Reshape) against Flatten",
         conv_relu + [oh.make_node("Shape", ["r0"], ["s"], name="shape"), oh.make_node("Gather", ["s", "i0"], ["n"], name="gather", axis=0),
                      oh.make_node("Unsqueeze", ["n", "ax"], ["n1"], name="unsq"),
                      oh.make_node("Concat", ["n1", "minus1"], ["to"], name="cat", axis=0),
                      oh.make_node("Reshape", ["r0", "to"], ["f"], name="view"),
                      oh.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1)],
         [arr("w", W), arr("b", bc), arr("i0", np.array(0, np.int64)), arr("ax", np.array([0], np.int64)),
          arr("minus1", np.array([-1], np.int64))] + tail_inits,
         conv_relu + [oh.make_node("Flatten", ["r0"], ["f"], name="flat"), oh.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1)],
         [arr("w", W), arr("b", bc)] + tail_inits, (1, 3, 8, 8), a_batch="batch", a_out=["batch", 10])
    # an all-convolutional head ends in a Flatten of its [C,1,1] map with no fully connected layer after it
    pair("flatten_out", "GlobalAveragePool + Flatten as the graph's output against the GlobalAveragePool alone",
         conv_relu + [oh.make_node("GlobalAveragePool", ["r0"], ["g"], name="gap"), oh.make_node("Flatten", ["g"], ["y"], name="flat")],
         [arr("w", W), arr("b", bc)],
         conv_relu + [oh.make_node("GlobalAveragePool", ["r0"], ["y"], name="gap")], [arr("w", W), arr("b", bc)], (1, 3, 8, 8))
    # torchvision's VGG: AdaptiveAvgPool2d((7, 7)) on a 7x7 map exports as a 1x1 AveragePool of stride 1
    pair("pool_1x1", "1x1 AveragePool and MaxPool of stride 1 (identities) against none",
         conv_relu + [oh.make_node("AveragePool", ["r0"], ["p"], name="avg1", kernel_shape=[1, 1], strides=[1, 1]),
                      oh.make_node("MaxPool", ["p"], ["q"], name="max1", kernel_shape=[1, 1]),
                      oh.make_node("GlobalAveragePool", ["q"], ["y"], name="gap")],
         [arr("w", W), arr("b", bc)],
         conv_relu + [oh.make_node("GlobalAveragePool", ["r0"], ["y"], name="gap")], [arr("w", W), arr("b", bc)], (1, 3, 8, 8))
    # pads that differ per side: inception's 1x3 at pads (0, 1) and 3x1 at (1, 0), TensorFlow's SAME_UPPER with an
    # even kernel (pads 0 before, 1 after), against 3x3 kernels framed by zeros at one pad
    w13, w31 = rng.normal(0, 0.3, (4, 3, 1, 3)).astype(np.float32), rng.normal(0, 0.3, (5, 4, 3, 1)).astype(np.float32)
    w22 = rng.normal(0, 0.3, (6, 5, 2, 2)).astype(np.float32)
    f13, f31, f22 = (np.zeros((4, 3, 3, 3), np.float32), np.zeros((5, 4, 3, 3), np.float32),
                     np.zeros((6, 5, 3, 3), np.float32))
    f13[:, :, 1:2, :], f31[:, :, :, 1:2], f22[:, :, 1:, 1:] = w13, w31, w22
    pair("pads_per_side", "1x3 at pads (0,1), 3x1 at (1,0), 2x2/2 SAME_UPPER against 3x3 kernels framed by zeros at pad 1",
         [conv_node("c13", "x", "w13", "a", pads=[0, 1, 0, 1]), oh.make_node("Relu", ["a"], ["ra"], name="ra"),
          conv_node("c31", "ra", "w31", "b", pads=[1, 0, 1, 0]), oh.make_node("Relu", ["b"], ["rb"], name="rb"),
          oh.make_node("Conv", ["rb", "w22"], ["y"], name="c22", strides=[2, 2], auto_pad="SAME_UPPER")],
         [arr("w13", w13), arr("w31", w31), arr("w22", w22)],
         [conv_node("c13", "x", "w13", "a", pads=[1, 1, 1, 1]), oh.make_node("Relu", ["a"], ["ra"], name="ra"),
          conv_node("c31", "ra", "w31", "b", pads=[1, 1, 1, 1]), oh.make_node("Relu", ["b"], ["rb"], name="rb"),
          oh.make_node("Conv", ["rb", "w22"], ["y"], name="c22", strides=[2, 2], pads=[1, 1, 1, 1])],
         [arr("w13", f13), arr("w31", f31), arr("w22", f22)], (1, 3, 7, 7))


# ---------------------------------------------------------------- graphs (issue 45): their own draws, after the rest

def qdq(m, e, name):
    """QuantizeLinear / DequantizeLinear of map m at 2^-e: the dequantized name."""
    return [oh.make_node("QuantizeLinear", [m, f"s{e}", "zp"], [m + "_q"], name=name + "_q"),
            oh.make_node("DequantizeLinear", [m + "_q", f"s{e}", "zp"], [m + "_d"], name=name + "_dq")]


def table(f, ex, ey):
    """docs/real_networks.md: t[x + 128] = clamp(round_half_even(f(x * 2^-ex) * 2^ey)), in double precision."""
    x = np.arange(-128, 128, dtype=np.float64) * 2.0 ** -ex
    return np.clip(np.round(f(x) * 2.0 ** ey), -128, 127).astype(int).tolist()


def graph_models():
    g = np.random.default_rng(45)

    def wg(name, shape):
        return nh.from_array(g.normal(0, 0.3, shape).astype(np.float32), name)

    def const(name, v, t=np.int64):
        return nh.from_array(np.array(v, t), name)

    # a float graph: Split, Concat, Slice, a channel shuffle, LeakyRelu, PRelu, Tanh, HardSigmoid, Mul of two maps,
    # SiLU as x * Sigmoid(x), ReduceMean, a channel Mul, a BatchNorm no convolution absorbs with its Relu, ceil-mode
    # max pooling, ReduceMax keepdims=0 and a Gemm
    nodes = [conv_node("c1", "x", "w1", "c1_out", pads=[1, 1, 1, 1]), oh.make_node("Relu", ["c1_out"], ["r1"], name="r1"),
             oh.make_node("Split", ["r1", "sizes"], ["sa", "sb"], name="split", axis=1),
             conv_node("cb", "sb", "wb", "cb_out", pads=[1, 1, 1, 1]),
             oh.make_node("Concat", ["sa", "cb_out"], ["cat"], name="cat", axis=1),
             oh.make_node("Reshape", ["cat", "to5"], ["g5"], name="rs1"),
             oh.make_node("Transpose", ["g5"], ["t5"], name="tr", perm=[0, 2, 1, 3, 4]),
             oh.make_node("Reshape", ["t5", "to4"], ["shuf"], name="rs2"),
             oh.make_node("Slice", ["shuf", "st", "en", "ax"], ["sl"], name="slice"),
             oh.make_node("LeakyRelu", ["sl"], ["lr"], name="leaky", alpha=0.1),
             oh.make_node("PRelu", ["lr", "slope"], ["pr"], name="prelu"),
             oh.make_node("Tanh", ["pr"], ["th"], name="tanh"),
             oh.make_node("HardSigmoid", ["pr"], ["hs"], name="hsig", alpha=0.25, beta=0.5),
             oh.make_node("Mul", ["th", "hs"], ["mu"], name="mul"),
             oh.make_node("Sigmoid", ["mu"], ["sg"], name="sig"),
             oh.make_node("Mul", ["mu", "sg"], ["silu"], name="silu"),
             oh.make_node("ReduceMean", ["silu"], ["gate"], name="mean", axes=[2, 3], keepdims=1),
             oh.make_node("Mul", ["gate", "silu"], ["se"], name="se"),
             oh.make_node("BatchNormalization", ["se", "g4", "b4", "m4", "v4"], ["bn"], name="bn"),
             oh.make_node("Relu", ["bn"], ["bnr"], name="bn_relu"),
             oh.make_node("MaxPool", ["bnr"], ["mp"], name="mp", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
             oh.make_node("ReduceMax", ["mp"], ["mx"], name="max", axes=[2, 3], keepdims=0),
             oh.make_node("Gemm", ["mx", "wf"], ["y"], name="fc", transB=1)]
    inits = [wg("w1", (8, 3, 3, 3)), const("sizes", [3, 5]), wg("wb", (3, 5, 3, 3)), const("to5", [1, 2, 3, 8, 8]),
             const("to4", [1, 6, 8, 8]), const("st", [1]), const("en", [5]), const("ax", [1]),
             nh.from_array(np.array([0.1, 0.2, 0.3, 0.4], np.float32).reshape(4, 1, 1), "slope"),
             nh.from_array(np.array([1.5, 0.5, 2.0, 1.0], np.float32), "g4"), nh.from_array(np.array([0.1, -0.2, 0.3, 0.0], np.float32), "b4"),
             nh.from_array(np.array([0.05, 0.1, -0.1, 0.2], np.float32), "m4"), nh.from_array(np.array([0.5, 1.0, 2.0, 0.25], np.float32), "v4"),
             wg("wf", (5, 4))]
    graph("graph_ops", nodes, inits)
    x = g.normal(0, 1, (2, 3 * 8 * 8)).astype(np.float32)
    with open(os.path.join(HERE, "graph_ops_calib.txt"), "w") as f:
        for row in x:
            f.write(" ".join(f"{v:.9g}" for v in row) + "\n")

    # a QDQ graph whose exponents are known: an affine BatchNorm + Relu, SiLU as x * Sigmoid(x), LeakyRelu, an
    # element-wise Add, a Mul and a channel Mul; the integers worked out here, in graph_qdq.json
    e = dict(x=5, bn=4, silu=4, lr=5, add=4, mul=6, cm=8)
    gam, bet, mean, var = (np.array(v, np.float32) for v in ([1.5, 0.5, 2.0, 1.0], [0.1, -0.2, 0.3, 0.0], [0.05, 0.1, -0.1, 0.2],
                                                             [0.5, 1.0, 2.0, 0.25]))
    nodes = qdq("x", 5, "in") + [
        oh.make_node("BatchNormalization", ["x_d", "g4", "b4", "m4", "v4"], ["bn"], name="bn")] + qdq("bn", 4, "bn") + [
        oh.make_node("Relu", ["bn_d"], ["r"], name="relu")] + qdq("r", 4, "r") + [
        oh.make_node("Sigmoid", ["r_d"], ["sg"], name="sig")] + qdq("sg", 7, "sg") + [
        oh.make_node("Mul", ["r_d", "sg_d"], ["silu"], name="silu")] + qdq("silu", 4, "silu") + [
        oh.make_node("LeakyRelu", ["silu_d"], ["lr"], name="leaky", alpha=0.1)] + qdq("lr", 5, "lr") + [
        oh.make_node("Add", ["lr_d", "silu_d"], ["add"], name="add")] + qdq("add", 4, "add") + [
        oh.make_node("Mul", ["add_d", "lr_d"], ["mul"], name="mul")] + qdq("mul", 6, "mul") + [
        oh.make_node("ReduceMean", ["mul_d"], ["gate"], name="mean", axes=[2, 3])] + qdq("gate", 6, "gate") + [
        oh.make_node("Mul", ["mul_d", "gate_d"], ["y"], name="cmul")] + qdq("y", 8, "y")
    nodes[-1].output[0] = "out"
    inits = [nh.from_array(np.array(2.0 ** -k, np.float32), f"s{k}") for k in (4, 5, 6, 7, 8)] + [
        nh.from_array(np.array(0, np.int8), "zp"), nh.from_array(gam, "g4"), nh.from_array(bet, "b4"),
        nh.from_array(mean, "m4"), nh.from_array(var, "v4")]
    model = make_model(nodes, [vinfo("x", [1, 4, 4, 4])], [vinfo("out", None)], inits)
    save(model, "graph_qdq.onnx")
    eps = float(np.float32(1e-5))
    sc = gam.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
    b = bet.astype(np.float64) - mean.astype(np.float64) * sc
    S = 16
    while S > 0 and np.any(np.abs(np.round(sc * 2.0 ** (S + e["bn"] - e["x"]))) >= 2 ** 23):
        S -= 1
    alpha = float(np.float32(0.1))
    E = max(e["lr"], e["silu"], e["add"])
    expect = {
        "affine": {"S": S, "m": np.round(sc * 2.0 ** (S + e["bn"] - e["x"])).astype(int).tolist(),
                   "o": (np.round(b * 2.0 ** (S + e["bn"])) + 2 ** (S - 1)).astype(int).tolist()},
        "silu": table(lambda v: v / (1 + np.exp(-v)), e["bn"], e["silu"]),
        "leaky": table(lambda v: np.where(v >= 0, v, alpha * v), e["silu"], e["lr"]),
        "add": {"shift_a": E - e["lr"], "shift_b": E - e["silu"], "shift": E - e["add"]},
        "mul": {"shift": e["add"] + e["lr"] - e["mul"]},
        "channel_mul": {"shift": e["mul"] + e["mul"] - e["cm"]},
        "exponents": [e["x"], e["cm"]]}
    with open(os.path.join(HERE, "graph_qdq.json"), "w") as f:
        json.dump(expect, f, indent=1)

    # refusals the graph forms bring
    c1 = conv_node("c1", "x", "w1", "c1_out", pads=[1, 1, 1, 1])
    w1 = wg("w1", (4, 3, 3, 3))
    relu = oh.make_node("Relu", ["c1_out"], ["r"], name="r1")
    refused("bad_transpose", [c1, oh.make_node("Transpose", ["c1_out"], ["y"], name="tr", perm=[0, 1, 3, 2])], [w1],
            "tr", "Transpose", "channel shuffle")
    refused("bad_reshape_5d", [c1, oh.make_node("Reshape", ["c1_out", "to5"], ["g5"], name="rs"),
                               oh.make_node("Relu", ["g5"], ["y"], name="late")], [w1, const("to5", [1, 2, 2, 8, 8])],
            "late", "Relu", "channel shuffle", check=False)
    refused("bad_split_axis", [c1, oh.make_node("Split", ["c1_out"], ["y", "z"], name="split", axis=2)], [w1],
            "split", "Split", "only a split of channels", out=[vinfo("y", None)], check=False)
    refused("bad_slice_step", [c1, oh.make_node("Slice", ["c1_out", "st", "en", "ax", "sp"], ["y"], name="slice")],
            [w1, const("st", [0]), const("en", [4]), const("ax", [1]), const("sp", [2])], "slice", "Slice", "step 2")
    refused("bad_reduce_axes", [c1, oh.make_node("ReduceMean", ["c1_out"], ["y"], name="mean", axes=[1], keepdims=1)], [w1],
            "mean", "ReduceMean", "only over H and W")
    refused("bad_mul_constant", [c1, oh.make_node("Mul", ["c1_out", "k"], ["y"], name="scale")],
            [w1, nh.from_array(np.array(0.5, np.float32), "k")], "scale", "Mul", "by a constant")
    refused("bad_clip_table", [c1, relu, oh.make_node("MaxPool", ["r"], ["p"], name="mp", kernel_shape=[2, 2], strides=[2, 2]),
                               oh.make_node("Clip", ["p", "lo", "hi"], ["y"], name="clip")],
            [w1, nh.from_array(np.array(0.0, np.float32), "lo"), nh.from_array(np.array(4.0, np.float32), "hi")],
            "clip", "Clip", "max 6 (ReLU6) only")
    refused("bad_prelu_slope", [c1, oh.make_node("PRelu", ["c1_out", "sl"], ["y"], name="prelu")],
            [w1, nh.from_array(np.array([0.1, 0.2, 0.3], np.float32), "sl")], "prelu", "PRelu", "one per channel", check=False)
    # three problems in a graph: check names each once, the nodes after them checked against the shapes ONNX gives
    refused("bad_many_graph", [c1, oh.make_node("ReduceMean", ["c1_out"], ["m"], name="mean", axes=[1], keepdims=1),
                               conv_node("c2", "m", "wc2", "c2_out", pads=[1, 1, 1, 1]),
                               oh.make_node("Transpose", ["c2_out"], ["t"], name="tr", perm=[0, 1, 3, 2]),
                               oh.make_node("Slice", ["t", "st", "en", "ax", "sp"], ["s"], name="slice"),
                               conv_node("c3", "s", "wc3", "y", pads=[1, 1, 1, 1])],
            [w1, wg("wc2", (2, 1, 3, 3)), const("st", [0]), const("en", [2]), const("ax", [1]), const("sp", [2]),
             wg("wc3", (2, 1, 3, 3))], "mean", "ReduceMean", "only over H and W")
    # quantized: Concat inputs at two scales, a Mul whose output is finer than its product
    n_ = qdq("x", 5, "in") + [c1] + qdq("c1_out", 4, "c1") + [
        oh.make_node("Concat", ["c1_out_d", "x_d"], ["y"], name="cat", axis=1)] + qdq("y", 4, "y")
    n_[2].input[0] = "x_d"
    n_[2].input[1] = "w1q_d"
    n_[-1].output[0] = "out"
    qi = [nh.from_array(np.array(2.0 ** -k, np.float32), f"s{k}") for k in (4, 5, 7)] + [
        nh.from_array(np.array(0, np.int8), "zp"), nh.from_array(g.integers(-100, 100, (4, 3, 3, 3)).astype(np.int8), "w1q")]
    n_.insert(2, oh.make_node("DequantizeLinear", ["w1q", "s7", "zp"], ["w1q_d"], name="w_dq"))
    refused("bad_concat_scales", n_, qi, "cat", "Concat", "one exponent", out=[vinfo("out", None)])
    n_ = qdq("x", 5, "in") + [oh.make_node("Mul", ["x_d", "x_d"], ["y"], name="square")] + qdq("y", 11, "y")
    n_[-1].output[0] = "out"
    # opset 14: HardSwish as an op; a BatchNorm after it, read by a convolution it could fold into (a note)
    graph("graph_hardswish", [conv_node("c1", "x", "w1", "c1_out", pads=[1, 1, 1, 1]), oh.make_node("HardSwish", ["c1_out"], ["hs"], name="hswish"),
                              oh.make_node("BatchNormalization", ["hs", "g4", "b4", "m4", "v4"], ["bn"], name="bn"),
                              conv_node("c2", "bn", "wc2h", "y", pads=[1, 1, 1, 1])],
          [w1, nh.from_array(gam, "g4"), nh.from_array(bet, "b4"), nh.from_array(mean, "m4"), nh.from_array(var, "v4"),
           nh.from_array(np.full((2, 4, 3, 3), 0.1, np.float32), "wc2h")], opset=14)
    refused("bad_mul_shift", n_, [nh.from_array(np.array(2.0 ** -11, np.float32), "s11"), nh.from_array(np.array(2.0 ** -5, np.float32), "s5"),
                                  nh.from_array(np.array(0, np.int8), "zp")], "square", "Mul", "negative", out=[vinfo("out", None)])


def per_channel_models():
    """Weights per output channel (docs/real_networks.md, "Per-channel weight scales"): a float model whose filters
    differ in range (conv c1's filter 2 is 100 times the others; c2's filter 1 so small that its shift would pass 31;
    the Gemm's rows differ), its QDQ twin with per-channel scales (weights along their output axis, the bias's
    x_scale * w_scale[c]), and what the import must make of both, worked out here: per_channel.json."""
    g = np.random.default_rng(77)
    w1 = g.normal(0, 0.2, (4, 3, 3, 3)).astype(np.float32)
    w1[2] *= 100
    b1 = g.normal(0, 0.5, 4).astype(np.float32)
    w2 = g.normal(0, 0.3, (3, 4, 1, 1)).astype(np.float32)
    w2[1] *= np.float32(2.0 ** -40)
    wf = g.normal(0, 0.3, (5, 3)).astype(np.float32)
    wf[0] *= 20
    bf = g.normal(0, 0.5, 5).astype(np.float32)
    nodes = [conv_node("c1", "x", "w1", "c1_out", pads=[1, 1, 1, 1]), oh.make_node("Relu", ["c1_out"], ["r1"], name="r1"),
             conv_node("c2", "r1", "w2", "c2_out"),
             oh.make_node("GlobalAveragePool", ["c2_out"], ["gap"], name="gap"),
             oh.make_node("Flatten", ["gap"], ["fl"], name="flat", axis=1),
             oh.make_node("Gemm", ["fl", "wf", "bf"], ["y"], name="fc", transB=1)]
    nodes[0].input.append("b1")
    model = make_model(nodes, [vinfo("x", [1, 3, 6, 6])], [vinfo("y", None)],
                       [nh.from_array(w1, "w1"), nh.from_array(b1, "b1"), nh.from_array(w2, "w2"), nh.from_array(wf, "wf"),
                        nh.from_array(bf, "bf")])
    save(model, "per_channel.onnx")
    calib = [g.normal(0, 1, 3 * 6 * 6).astype(np.float32) for _ in range(2)]
    with open(os.path.join(HERE, "per_channel_calib.txt"), "w") as f:
        f.write("# 2 calibration inputs for per_channel.onnx, one per line, [C][H][W] order\n")
        for x in calib:
            f.write(" ".join(str(v) for v in x) + "\n")
    mx = {}
    for x in calib:
        for m, v in run_float(model, x.reshape(3, 6, 6)).items():
            mx[m] = max(mx.get(m, 0.0), float(np.abs(v).max()))
    E = {m: e_for(mx[k]) for m, k in (("x", "x"), ("r1", "r1"), ("c2", "c2_out"), ("y", "y"))}
    layers = []
    for name, w, b, ex, ey in (("c1", w1, b1, "x", "r1"), ("c2", w2, None, "r1", "c2"), ("fc", wf, bf, "c2", "y")):
        e_x, e_y = E[ex], E[ey]
        e_w, wq = quantize_w(w, e_x, e_y)
        assert isinstance(e_w, list), name
        l = dict(name=name, e_x=e_x, e_y=e_y, e_w=e_w, shifts=[e_x + v - e_y for v in e_w], weights=wq.reshape(-1).tolist())
        if b is not None:
            l["bias"] = [int(v) for v in np.rint(b.astype(np.float64) * 2.0 ** (e_x + np.array(e_w, np.float64)))]
        layers.append(l)
    assert max(layers[1]["shifts"]) == 31 and layers[1]["e_w"][1] == E["c2"] - E["r1"] + 31, layers[1]
    with open(os.path.join(HERE, "per_channel.json"), "w") as f:
        json.dump(dict(exponents=[E["x"], E["y"]], layers=layers), f, indent=1)

    # the QDQ twin: int8 weights at 2^-e_w[c] along the output axis, int32 biases at 2^-(e_x + e_w[c])
    sc = lambda name, e: nh.from_array(np.array(2.0 ** -np.array(e, np.float64), np.float32), name)
    inits = [nh.from_array(np.array(0, np.int8), "zp")]
    qn = []

    def q(t, e, name):
        inits.append(sc(name + "_s", e))
        qn.extend([oh.make_node("QuantizeLinear", [t, name + "_s", "zp"], [name + "_q"], name=name + "_Q"),
                   oh.make_node("DequantizeLinear", [name + "_q", name + "_s", "zp"], [name + "_d"], name=name + "_DQ")])
        return name + "_d"

    def wdq(l, bias):
        n = l["name"]
        shape = {"c1": w1.shape, "c2": w2.shape, "fc": wf.shape}[n]
        inits.extend([nh.from_array(np.array(l["weights"], np.int8).reshape(shape), n + "_w8"), sc(n + "_ws", l["e_w"])])
        qn.append(oh.make_node("DequantizeLinear", [n + "_w8", n + "_ws", "zp"], [n + "_w"], name=n + "_wDQ", axis=0))
        ins = [n + "_w"]
        if bias:
            inits.extend([nh.from_array(np.array(l["bias"], np.int32), n + "_b32"),
                          sc(n + "_bs", [l["e_x"] + v for v in l["e_w"]])])
            qn.append(oh.make_node("DequantizeLinear", [n + "_b32", n + "_bs"], [n + "_b"], name=n + "_bDQ", axis=0))
            ins.append(n + "_b")
        return ins

    x = q("x", E["x"], "in")
    qn.append(oh.make_node("Conv", [x] + wdq(layers[0], True), ["c1"], name="c1", pads=[1, 1, 1, 1]))
    qn.append(oh.make_node("Relu", ["c1"], ["r1"], name="r1"))
    x = q("r1", E["r1"], "r1")
    qn.append(oh.make_node("Conv", [x] + wdq(layers[1], False), ["c2"], name="c2"))
    x = q("c2", E["c2"], "c2")
    qn.append(oh.make_node("GlobalAveragePool", [x], ["gap"], name="gap"))
    x = q("gap", E["c2"], "gap")
    qn.append(oh.make_node("Flatten", [x], ["fl"], name="flat", axis=1))
    qn.append(oh.make_node("Gemm", ["fl"] + wdq(layers[2], True), ["fc"], name="fc", transB=1))
    y = q("fc", E["y"], "out")
    qn[-1].output[0] = "y"
    save(make_model(qn, [vinfo("x", [1, 3, 6, 6])], [vinfo("y", None)], inits), "per_channel_qdq.onnx")

    # refusals: a per-channel scale that is not a power of two, one along the filters' input axis, and a bias whose
    # one scale cannot be x_scale * w_scale[c] for every channel
    s5, s7, zp = (nh.from_array(np.array(2.0 ** -5, np.float32), "s5"), nh.from_array(np.array(2.0 ** -7, np.float32), "s7"),
                  nh.from_array(np.array(0, np.int8), "zp"))
    wi8 = nh.from_array(g.integers(-100, 100, (4, 3, 3, 3)).astype(np.int8), "w_int8")

    def conv_qdq(w_scale, axis, bias=None):
        nodes = [oh.make_node("QuantizeLinear", ["x", "s5", "zp"], ["xq"], name="in_q"),
                 oh.make_node("DequantizeLinear", ["xq", "s5", "zp"], ["xd"], name="in_dq"),
                 oh.make_node("DequantizeLinear", ["w_int8", "ws", "zp"], ["wd"], name="w_dq", axis=axis),
                 oh.make_node("Conv", ["xd", "wd"] + (["bd"] if bias else []), ["c"], name="conv", pads=[1, 1, 1, 1]),
                 oh.make_node("QuantizeLinear", ["c", "s5", "zp"], ["cq"], name="out_q"),
                 oh.make_node("DequantizeLinear", ["cq", "s5", "zp"], ["y"], name="out_dq")]
        inits = [s5, s7, zp, wi8, nh.from_array(np.array(w_scale, np.float32), "ws")]
        if bias:
            nodes.insert(3, oh.make_node("DequantizeLinear", ["b32", bias], ["bd"], name="b_dq"))
            inits.append(nh.from_array(np.array([5, -3, 7, 1], np.int32), "b32"))
        return nodes, inits

    n_, i_ = conv_qdq([2.0 ** -7, 0.3, 2.0 ** -7, 2.0 ** -6], 0)
    refused("bad_qdq_per_channel", n_, i_, "w_dq", "DequantizeLinear", "value 1 is 0.3")
    n_, i_ = conv_qdq([2.0 ** -7, 2.0 ** -6, 2.0 ** -7], 1)
    refused("bad_qdq_per_channel_axis", n_, i_, "conv", "Conv", "per-channel scales along axis 1")
    n_, i_ = conv_qdq([2.0 ** -7, 2.0 ** -6, 2.0 ** -7, 2.0 ** -7], 0, bias="s7")
    refused("bad_qdq_per_channel_bias", n_, i_, "conv", "Conv", "of output channel 0 is not x_scale * w_scale = 2^-12")


def main():
    if not onnx.__version__.startswith("1.12"):
        print(f"warning: ONNX {onnx.__version__}; the committed files were made with 1.12", file=sys.stderr)
    for f in os.listdir(HERE):
        if f.endswith((".onnx", ".expect", "_calib.txt")):
            os.remove(os.path.join(HERE, f))
    accepted()
    refusals()
    broken()
    equivalents()
    graph_models()
    per_channel_models()
    external()
    with open(os.path.join(HERE, "refused.txt"), "w") as f:
        f.write("# file | node | op type | what the message says [| ones: refused when calibrated on an input of ones]\n")
        f.write("# (make_test_models.py; tests/mapper_onnx_import_test.cpp reads it)\n")
        for r in REFUSED:
            f.write(" | ".join(r) + "\n")
        for name, why in BROKEN:
            f.write(f"{name} |  |  | {why}\n")
    with open(os.path.join(HERE, "equivalent.txt"), "w") as f:
        f.write("# name | what: eq_NAME_a.onnx and eq_NAME_b.onnx import alike, calibrated on eq_NAME_calib.txt\n")
        f.write("# (make_test_models.py; tests/mapper_onnx_import_test.cpp reads it)\n")
        for name, what in EQUIVALENT:
            f.write(f"{name} | {what}\n")


if __name__ == "__main__":
    main()
