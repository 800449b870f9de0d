#!/usr/bin/python3
"""Small real networks and their bit-exact integer references (vectors/nets/README.md).

For each network: a float PyTorch model (fixed seed, no biases) exported to ONNX, the same network in
ONNX's QDQ int8 form (and, for mlp and tiny_cnn, in QLinear form) with power-of-two scales, a float input
(also the calibration input), that input quantized, the integer network's output computed with exact
integer arithmetic as docs/real_networks.md says, the network's layer list (mapper/README.md) with each
layer's shift, and the exponents in JSON. Then a second, "hot" input (3 times the first plus another N(0,1)
draw) through the same integer network, exponents and shifts unchanged, with its integer reference: it
drives the input, QUAN and residual-addition clamps into saturation, which the first input never does.

Run it with Debian's Python (it has torch and onnx):  /usr/bin/python3 tools/make_reference_nets.py
It writes vectors/nets/ and prints, per network, every layer's exponents, shift and int8 ranges and the
quantization error, and for the hot input how many values each clamp changes; it checks every ONNX file
(onnx.checker), re-reads every .npy, evaluates the ONNX graphs on both inputs with a small NumPy/PyTorch
interpreter of the operators they use (and with onnxruntime if present), and stops if the hot inputs leave
a clamp that must saturate unsaturated (check_saturation).

Then the graph networks (GRAPH_NETWORKS: fire_cnn, dense_cnn, shuffle_cnn, se_cnn), one for each form of
docs/real_networks.md, "Graphs, layouts and element-wise operations": concatenation, slice and shuffle,
tables (SiLU, Sigmoid, Hardswish, Hardsigmoid), Affine (a BatchNorm no convolution absorbs, its ReLU folded),
Add, Mul and channel multiply, an identity residual unit whose input is a named map, ceil-mode max pooling.
Each is a list of nodes naming the maps they read; the float model is written as torchvision (and timm)
write these blocks (x.chunk, torch.cat, channel_shuffle's view/transpose/view, nn.SiLU, ...), exported
the same way, its folded weights and its BatchNormalization parameters read back from the file; exponents
are calibrated per group of maps that share planes (a concatenation and its inputs), the integer reference
follows the docs integer by integer, the QDQ file is built by hand, and the layer list uses the graph syntax
(`in=`, `as=`, concat, slice, shuffle, act, affine, add, mul, `residual end ... in=X`, `pool ... padend=E`).
Their checks: the float ONNX file evaluated against the torch model, the QDQ file evaluated with each
QuantizeLinear rounding as the integer network does there (QUAN floors, tables round half to even, Add and
Mul round half up, average pooling truncates) equal to the reference map by map (an Affine's and a
Hardswish's map may be one step away from the float graph's: counted and printed), and the correlation of
the float model's output with the dequantized reference.
"""

import json
import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "vectors", "nets")
ACC_LIMIT = 1 << 28      # the MLA's accumulator is 29-bit two's complement: |acc| < 2^28 never wraps
MAX_SHIFT = 31           # the layer list's shift=N bound (mapper/network.cpp)
OPSET = 13
OPSET_QLINEAR = 14       # int8 Relu needs opset 14
HOT_GAIN = 3.0           # the hot input: HOT_GAIN * the input + N(0, 1) drawn with seed + HOT_SEED_OFFSET
HOT_SEED_OFFSET = 2


def fail(msg):
    raise SystemExit("make_reference_nets.py: error: " + msg)


# --------------------------------------------------------------------------------------------------
# Networks as layer lists (the same vocabulary as mapper/README.md, "Layer-list files")

def conv(D, C, k, stride=1, pad=0, relu=True, bn=False, relu6=False, groups=1):
    """bn: a BatchNorm2d after it (non-trivial statistics), which torch.onnx.export folds into the
    convolution's weights and bias; relu6: ReLU6 instead of ReLU (a Clip(0, 6) in ONNX); groups: a grouped
    (groups = D: depthwise) convolution."""
    return dict(kind="conv", D=D, C=C, k=k, stride=stride, pad=pad, relu=relu or relu6, bn=bn, relu6=relu6,
                groups=groups)


def pool(ptype, k, stride=None, pad=0, global_avg=False):
    return dict(kind="pool", ptype=ptype, k=k, stride=k if stride is None else stride, pad=pad, global_avg=global_avg)


def flatten():
    return dict(kind="flatten")


def fc(IN, OUT, relu=True):
    return dict(kind="fc", D=IN, C=OUT, relu=relu)


def res_begin():
    return dict(kind="res_begin")


def res_end(shortcut, stride=1, bn=False):
    return dict(kind="res_end", shortcut=shortcut, stride=stride, relu=True, bn=bn)


NETWORKS = [
    dict(name="mlp", seed=101, input=(1, 64), qlinear=True,
         what="64 inputs; FC 64->32 + ReLU, FC 32->16 + ReLU, FC 16->10",
         layers=[fc(64, 32), fc(32, 16), fc(16, 10, relu=False)]),
    dict(name="tiny_cnn", seed=202, input=(1, 3, 16, 16), qlinear=True,
         what="[1,3,16,16]; conv 3x3 pad 1 ->8 + ReLU, max pool 2x2/2 (fused); conv 3x3 pad 1 ->16 + ReLU, "
              "max pool 2x2/2 (fused); flatten; FC 256->10",
         layers=[conv(3, 8, 3, pad=1), pool("max", 2),
                 conv(8, 16, 3, pad=1), pool("max", 2),
                 flatten(), fc(256, 10, relu=False)]),
    dict(name="res_cnn", seed=303, input=(1, 4, 16, 16), qlinear=False,
         what="[1,4,16,16]; conv 3x3 pad 1 ->8 + ReLU; max pool 3x3/2 pad 1 (a pooling block); identity "
              "residual unit (conv 3x3 + ReLU, conv 3x3, add, ReLU); projection residual unit (conv 1x1/2 "
              "->16 + ReLU, conv 3x3, add a 1x1/2 projection, ReLU); global average pool; flatten; FC 16->10",
         layers=[conv(4, 8, 3, pad=1), pool("max", 3, stride=2, pad=1),
                 res_begin(), conv(8, 8, 3, pad=1), conv(8, 8, 3, pad=1, relu=False), res_end("identity"),
                 res_begin(), conv(8, 16, 1, stride=2), conv(16, 16, 3, pad=1, relu=False),
                 res_end("projection", stride=2),
                 pool("avg", 4, global_avg=True), flatten(), fc(16, 10, relu=False)]),
    dict(name="stride_cnn", seed=404, input=(1, 3, 17, 17), qlinear=False,
         what="[1,3,17,17]; conv 3x3/2 pad 1 ->8 + ReLU; conv 5x5 pad 2 ->10 + ReLU; average pool 3x3/2 "
              "(a pooling block, 9x9 -> 4x4); conv 1x1 ->16 without ReLU, max pool 2x2/2 (fused); flatten; "
              "FC 64->10",
         layers=[conv(3, 8, 3, stride=2, pad=1), conv(8, 10, 5, pad=2),
                 pool("avg", 3, stride=2),
                 conv(10, 16, 1, relu=False), pool("max", 2),
                 flatten(), fc(64, 10, relu=False)]),
    # networks as PyTorch writes them: default biases (nn.Conv2d, nn.Linear), BatchNorm folded by the exporter
    dict(name="lenet_bias", seed=505, input=(1, 1, 28, 28), qlinear=False, bias=True,
         what="[1,1,28,28] (one channel); LeNet-5 with PyTorch's default biases: conv 5x5 pad 2 ->6 + BatchNorm + "
              "ReLU, max pool 2x2/2 (fused); conv 5x5 ->16 + BatchNorm + ReLU, max pool 2x2/2 (fused); flatten; "
              "FC 400->32 + ReLU; FC 32->10 (biases everywhere)",
         layers=[conv(1, 6, 5, pad=2, bn=True), pool("max", 2),
                 conv(6, 16, 5, bn=True), pool("max", 2),
                 flatten(), fc(400, 32), fc(32, 10, relu=False)]),
    dict(name="bn_res_cnn", seed=606, input=(1, 3, 12, 12), qlinear=False, bias=True,
         what="[1,3,12,12]; conv 3x3 pad 1 ->8 + BatchNorm + ReLU; identity residual unit (conv 3x3 + BatchNorm + "
              "ReLU, conv 3x3 + BatchNorm, add, ReLU); projection residual unit (conv 3x3/2 pad 1 ->16 + BatchNorm + "
              "ReLU, conv 3x3 + BatchNorm, add a 1x1/2 projection with BatchNorm, ReLU); global average pool; "
              "flatten; FC 16->10 with bias",
         layers=[conv(3, 8, 3, pad=1, bn=True),
                 res_begin(), conv(8, 8, 3, pad=1, bn=True), conv(8, 8, 3, pad=1, relu=False, bn=True),
                 res_end("identity"),
                 res_begin(), conv(8, 16, 3, stride=2, pad=1, bn=True), conv(16, 16, 3, pad=1, relu=False, bn=True),
                 res_end("projection", stride=2, bn=True),
                 pool("avg", 6, global_avg=True), flatten(), fc(16, 10, relu=False)]),
    dict(name="dw_cnn", seed=707, input=(1, 3, 16, 16), qlinear=False, bias=True,
         what="[1,3,16,16]; conv 3x3 pad 1 ->8 + BatchNorm + ReLU6; a depthwise separable block: depthwise conv "
              "3x3 pad 1 (groups 8) + BatchNorm + ReLU6, pointwise conv 1x1 ->16 + BatchNorm + ReLU; max pool 2x2/2 "
              "(fused); global average pool; flatten; FC 16->10 with bias",
         layers=[conv(3, 8, 3, pad=1, bn=True, relu6=True),
                 conv(8, 8, 3, pad=1, bn=True, relu6=True, groups=8),
                 conv(8, 16, 1, bn=True), pool("max", 2),
                 pool("avg", 8, global_avg=True), flatten(), fc(16, 10, relu=False)]),
]


def chain(net):
    """Names the layers as the mapper's parser does (one counter over conv, pool and fc; CONV_SC_n and
    MAT_ELE_n take the number of the block's last convolution), fills in shapes, marks fused poolings and
    each residual block's last convolution."""
    shape = list(net["input"])
    n = 0
    last_kind = None
    last_conv = None
    begin = None
    for L in net["layers"]:
        k = L["kind"]
        L["in_shape"] = list(shape)
        if k == "conv":
            n += 1
            L["name"] = "CONV_%d" % n
            assert L["D"] == shape[1]
            h = (shape[2] + 2 * L["pad"] - L["k"]) // L["stride"] + 1
            w = (shape[3] + 2 * L["pad"] - L["k"]) // L["stride"] + 1
            shape = [1, L["C"], h, w]
            last_conv = L
        elif k == "pool":
            n += 1
            L["name"] = "POOL_%d" % n
            if L["global_avg"]:
                assert L["k"] == shape[2] == shape[3] and L["pad"] == 0
            # only max pooling fuses (mapper/README.md, "Operations and blocks")
            L["fused"] = (L["ptype"] == "max" and L["stride"] == L["k"] and L["pad"] == 0 and last_kind == "conv")
            h = (shape[2] + 2 * L["pad"] - L["k"]) // L["stride"] + 1
            w = (shape[3] + 2 * L["pad"] - L["k"]) // L["stride"] + 1
            shape = [1, shape[1], h, w]
        elif k == "flatten":
            L["name"] = "flatten"
            shape = [1, int(np.prod(shape[1:]))]
        elif k == "fc":
            n += 1
            L["name"] = "FC_%d" % n
            assert len(shape) == 2 and L["D"] == shape[1], (L, shape)
            shape = [1, L["C"]]
        elif k == "res_begin":
            L["name"] = "residual_begin"
            begin = L
        elif k == "res_end":
            assert last_kind == "conv" and begin is not None
            m = last_conv["name"].split("_")[1]
            L["name"] = "MAT_ELE_" + m
            last_conv["branch_last_of"] = L
            unit_in = begin["in_shape"]
            if L["shortcut"] == "projection":
                L["sc_name"] = "CONV_SC_" + m
                L["D"], L["C"] = unit_in[1], shape[1]
                s = L["stride"]
                assert [(unit_in[2] - 1) // s + 1, (unit_in[3] - 1) // s + 1] == shape[2:]
            else:
                assert unit_in == shape
            L["begin"] = begin
            begin = None
        L["out_shape"] = list(shape)
        last_kind = k
    net["out_shape"] = shape


# --------------------------------------------------------------------------------------------------
# The float model

class FloatNet(nn.Module):
    """with_bn False: the network with its BatchNorms folded (the convolutions' weights and biases are then
    loaded from the exported ONNX file, load_folded)."""
    def __init__(self, net, with_bn=True):
        super().__init__()
        self.layers = net["layers"]
        self.mods = nn.ModuleDict()
        self.bns = nn.ModuleDict()
        bias = net.get("bias", False)
        for L in self.layers:
            if L["kind"] == "conv":
                # with a BatchNorm after it, a convolution has no bias of its own (as torchvision writes it)
                self.mods[L["name"]] = nn.Conv2d(L["D"], L["C"], L["k"], stride=L["stride"], padding=L["pad"],
                                                 groups=L["groups"], bias=bias and (not L["bn"] or not with_bn))
                if L["bn"] and with_bn:
                    self.bns[L["name"]] = nn.BatchNorm2d(L["C"])
            elif L["kind"] == "fc":
                self.mods[L["name"]] = nn.Linear(L["D"], L["C"], bias=bias)
            elif L["kind"] == "res_end" and L["shortcut"] == "projection":
                self.mods[L["sc_name"]] = nn.Conv2d(L["D"], L["C"], 1, stride=L["stride"],
                                                    bias=bias and (not L["bn"] or not with_bn))
                if L["bn"] and with_bn:
                    self.bns[L["sc_name"]] = nn.BatchNorm2d(L["C"])
        # kaiming-like normal init: std sqrt(2 / fan_in) before a ReLU, sqrt(1 / fan_in) without one
        for L in self.layers:
            if L["kind"] in ("conv", "fc"):
                w = self.mods[L["name"]].weight
                gain = 2.0 if L["relu"] else 1.0
                if "branch_last_of" in L:
                    gain = 1.0   # a residual branch's last convolution: the sum stays near the input's range
                nn.init.normal_(w, 0.0, math.sqrt(gain / (w[0].numel())))
            if L["kind"] == "res_end" and L["shortcut"] == "projection":
                w = self.mods[L["sc_name"]].weight
                nn.init.normal_(w, 0.0, math.sqrt(1.0 / w[0].numel()))
        # BatchNorm statistics as training leaves them, not the identity: mean N(0, 0.5), var U(0.5, 2),
        # scale U(0.5, 1.5), shift N(0, 0.3); biases keep PyTorch's default init, U(+-1/sqrt(fan_in))
        with torch.no_grad():
            for bn in self.bns.values():
                bn.running_mean.normal_(0.0, 0.5)
                bn.running_var.uniform_(0.5, 2.0)
                bn.weight.uniform_(0.5, 1.5)
                bn.bias.normal_(0.0, 0.3)

    def conv_bn(self, name, x):
        x = self.mods[name](x)
        return self.bns[name](x) if name in self.bns else x

    def forward(self, x, record=None):
        saved = None
        for L in self.layers:
            k = L["kind"]
            if k == "conv" or k == "fc":
                x = self.conv_bn(L["name"], x)
                if L.get("relu6"):
                    x = F.relu6(x)
                elif L["relu"]:
                    x = F.relu(x)
            elif k == "pool":
                if L["global_avg"]:
                    x = F.adaptive_avg_pool2d(x, 1)
                elif L["ptype"] == "max":
                    x = F.max_pool2d(x, L["k"], L["stride"], L["pad"])
                else:
                    # nn.AvgPool2d's default, count_include_pad=True, which torch exports as a Pad node (of
                    # nothing, when unpadded) before the AveragePool: the import takes it as the hardware's
                    # padding
                    x = F.avg_pool2d(x, L["k"], L["stride"], L["pad"])
            elif k == "flatten":
                x = torch.flatten(x, 1)
            elif k == "res_begin":
                saved = x
            elif k == "res_end":
                if L["shortcut"] == "projection":
                    sc = self.conv_bn(L["sc_name"], saved)
                    if record is not None:
                        record[L["sc_name"]] = sc
                else:
                    sc = saved
                x = F.relu(x + sc)
            if record is not None:
                record[L["name"]] = x
        return x


# --------------------------------------------------------------------------------------------------
# Post-training quantization (docs/real_networks.md)

def exponent(maxabs, what):
    """floor(log2(127 / maxabs)): the largest e with maxabs * 2^e <= 127, computed exactly."""
    maxabs = float(maxabs)
    if not (maxabs > 0 and math.isfinite(maxabs)):
        fail("%s: max |value| is %r, no exponent" % (what, maxabs))
    e = math.floor(math.log2(127.0 / maxabs))
    while maxabs * 2.0 ** e > 127.0:
        e -= 1
    while maxabs * 2.0 ** (e + 1) <= 127.0:
        e += 1
    return e


MARGIN = 1e-3   # a calibrated max |a| this near a power-of-two boundary is refused (see calibrate)


def calibrate(net, map_name, values, what):
    """A map's exponent from its float values; remembers max |a| (the JSON gives it). An importer
    recomputing the float network (another summation order, float32) must find the same exponent, so
    max |a| * 2^e / 127 must not be within MARGIN of 1/2 or 1."""
    m = float(values.abs().max().item())
    e = exponent(m, what)
    r = m * 2.0 ** e / 127.0
    if r - 0.5 < MARGIN or 1.0 - r < MARGIN:
        fail("%s: max |a| %r is within %g of an exponent boundary (max|a| * 2^e / 127 = %.6f); change the seed"
             % (what, m, MARGIN, r))
    net.setdefault("calibrated", {})[map_name] = m
    return e


def quantize_weight(w, what, e_x, e_y):
    """The weights' exponent and int8 values (docs/real_networks.md, "Post-training quantization"): per output
    channel c, e_w[c] from max|w[c]| (an all-zero channel takes the tensor's), a channel whose shift
    e_x + e_w[c] - e_y would pass 31 taken at 31; where every channel's exponent is the tensor's, per tensor (an
    int), else a list of them."""
    w = w.detach().to(torch.float32)
    e_t = exponent(w.abs().max().item(), what + " weights")
    m = w.reshape(w.shape[0], -1).abs().amax(dim=1)
    e = [e_t if float(v) == 0 else exponent(float(v), "%s weights, channel %d" % (what, c)) for c, v in enumerate(m)]
    if all(x == e_t for x in e):
        q = torch.clamp(torch.round(w * 2.0 ** e_t), -127, 127)   # torch.round: half to even; w * 2^e is exact
        return e_t, q.to(torch.int8)
    e = [min(x, e_y - e_x + MAX_SHIFT) for x in e]
    if all(x == e[0] for x in e):              # every channel taken at shift 31: one exponent again (as the import)
        return e[0], torch.clamp(torch.round(w * 2.0 ** e[0]), -127, 127).to(torch.int8)
    scale = torch.tensor([2.0 ** x for x in e], dtype=torch.float32).view(-1, *[1] * (w.dim() - 1))
    return e, torch.clamp(torch.round(w * scale), -127, 127).to(torch.int8)


def sums_e(e_x, e_w):
    """The sums' exponent e_x + e_w: an int, or one per output channel."""
    return [e_x + x for x in e_w] if isinstance(e_w, list) else e_x + e_w


def e_text(e):
    """An exponent or shift for people: N, or A..B per channel."""
    return "%d..%d" % (min(e), max(e)) if isinstance(e, list) else "%d" % e


def shift_fields(s):
    """A layer list's shift=N, and shifts=A,B,... per output channel (shift the smallest, for display)."""
    if isinstance(s, list):
        return "shift=%d shifts=%s" % (min(s), ",".join(str(x) for x in s))
    return "shift=%d" % s


def quantize_bias(b, e, what):
    """A bias at the sums' scale 2^-(e_x + e_w) (per output channel if e is a list), rounded half to even
    (docs/real_networks.md), int64."""
    if b is None:
        return None
    p = torch.tensor([2.0 ** x for x in e], dtype=torch.float64) if isinstance(e, list) else 2.0 ** e
    q = torch.round(b.detach().to(torch.float64) * p)
    if float(q.abs().max()) >= 2 ** 31:
        fail("%s: bias beyond int32" % what)
    return q.to(torch.int64)


def quantize_input(x, e):
    return torch.clamp(torch.round(x.to(torch.float32) * 2.0 ** e), -128, 127).to(torch.int8)


def clamp_count(v, what):
    """How many of v a clamp to [-128, 127] changes: above 127, below -128, of how many."""
    return dict(clamp=what, hi=int((v > 127).sum()), lo=int((v < -128).sum()), n=int(v.numel()))


def input_clamps(x, e):
    return clamp_count(torch.round(x.to(torch.float32) * 2.0 ** e), "input")


def checked_shift(e_x, e_w, e_y, what):
    if isinstance(e_w, list):
        return [checked_shift(e_x, x, e_y, "%s channel %d" % (what, c)) for c, x in enumerate(e_w)]
    s = e_x + e_w - e_y
    if s < 0:
        fail("%s: shift e_x + e_w - e_y = %d + %d - %d = %d is negative" % (what, e_x, e_w, e_y, s))
    if s > MAX_SHIFT:
        fail("%s: shift %d is more than %d" % (what, s, MAX_SHIFT))
    return s


def quantize(net, model, x):
    """Exponents, int8 weights and shifts; every map's exponent from the float model run on x."""
    rec = {}
    with torch.no_grad():
        model(x, rec)
    net["float_maps"] = {k: v.detach().to(torch.float64) for k, v in rec.items()}
    net["float_maps"]["input"] = x.to(torch.float64)
    # an identity unit's shortcut, branch end and sum share one exponent, calibrated over the shortcut and the
    # sum after its ReLU alike (docs/real_networks.md, "Post-training quantization"; chained units join): the
    # map that sets the shortcut's exponent is calibrated over the sums too
    sums, owner, unit_owner = {}, "input", []
    for L in net["layers"]:
        if L["kind"] in ("conv", "fc") and not ("branch_last_of" in L and L["branch_last_of"]["shortcut"] == "identity"):
            owner = L["name"]
        elif L["kind"] == "res_begin":
            unit_owner.append(owner)
        elif L["kind"] == "res_end":
            owner = unit_owner.pop() if L["shortcut"] == "identity" else L["name"]
            if L["shortcut"] == "identity":
                sums.setdefault(owner, []).append(L["name"])

    def with_sums(name, values):
        return torch.cat([values.reshape(-1)] + [rec[t].reshape(-1) for t in sums.get(name, [])])

    e = calibrate(net, "input", with_sums("input", x), "input")
    net["e_input"] = e
    unit_e = None
    for L in net["layers"]:
        k = L["kind"]
        L["e_in"] = e
        if k in ("conv", "fc"):
            if "branch_last_of" in L:
                end = L["branch_last_of"]
                if end["shortcut"] == "identity":
                    L["e_out"] = unit_e                  # quantizes to the shortcut's exponent
                else:                                    # to the exponent calibrated for the sum after ReLU
                    L["e_out"] = calibrate(net, end["name"], with_sums(end["name"], rec[end["name"]]),
                                           end["name"] + " (sum after ReLU)")
            else:
                L["e_out"] = calibrate(net, L["name"], with_sums(L["name"], rec[L["name"]]), L["name"] + " output")
            L["e_w"], L["w_q"] = quantize_weight(model.mods[L["name"]].weight, L["name"], e, L["e_out"])
            L["shift"] = checked_shift(e, L["e_w"], L["e_out"], L["name"])
            L["b_q"] = quantize_bias(model.mods[L["name"]].bias, sums_e(e, L["e_w"]), L["name"])
            if L.get("relu6"):
                L["clamp_high"] = min(127, math.floor(6.0 * 2.0 ** L["e_out"]))   # ReLU6: QUAN saturates at the quantized 6
            e = L["e_out"]
        elif k == "res_begin":
            unit_e = e
        elif k == "res_end":
            if L["shortcut"] == "identity":
                assert e == unit_e
            else:
                L["e_w_sc"], L["w_sc_q"] = quantize_weight(model.mods[L["sc_name"]].weight, L["sc_name"], unit_e, e)
                L["e_in_sc"] = unit_e
                L["shift"] = checked_shift(unit_e, L["e_w_sc"], e, L["sc_name"])
                L["b_sc_q"] = quantize_bias(model.mods[L["sc_name"]].bias, sums_e(unit_e, L["e_w_sc"]), L["sc_name"])
        # pooling (max and average) and flatten keep the exponent
        L["e_out"] = e
    net["e_output"] = e


# --------------------------------------------------------------------------------------------------
# The integer network, exactly (int64 tensors throughout)

def acc_checked(acc, what):
    m = int(acc.abs().max().item())
    if m >= ACC_LIMIT:
        fail("%s: |acc| = %d reaches 2^28: the 29-bit accumulator would wrap" % (what, m))
    return m


def with_rounding(b_q, shift):
    """The bias the import gives the ARM: b_q plus QUAN's rounding term 2^(shift-1) of each output channel, so that
    the shift rounds half up (docs/real_networks.md, "Rounding"); a layer without a bias floors."""
    s = torch.tensor(shift if isinstance(shift, list) else [shift] * b_q.numel(), dtype=torch.int64)
    r = torch.where(s > 0, torch.ones_like(s) << (s - 1).clamp(min=0), torch.zeros_like(s))
    b = b_q.to(torch.int64) + r
    assert int(b.max()) < 2 ** 31, "bias plus rounding term beyond int32"
    return b


def quan(acc, shift, clamps=None, name=None):
    if isinstance(shift, list):                        # per output channel (dimension 1)
        shift = torch.tensor(shift, dtype=torch.int64).view(1, -1, *[1] * (acc.dim() - 2))
        y = acc >> shift
        assert torch.equal(y, torch.div(acc, torch.ones_like(shift) << shift, rounding_mode="floor"))
    else:
        y = acc >> shift                               # arithmetic shift: floor
        assert torch.equal(y, torch.div(acc, 1 << shift, rounding_mode="floor"))
    if clamps is not None:
        clamps[name] = clamp_count(y, "QUAN")
    return torch.clamp(y, -128, 127)


def windows(x, k, stride, pad):
    x = F.pad(x, [pad] * 4)                            # zeros (the ARM's PADD)
    return x.unfold(2, k, stride).unfold(3, k, stride)  # [N, C, OH, OW, k, k]


def int_conv(x, w, stride, pad, groups=1):
    return F.conv2d(F.pad(x, [pad] * 4), w.to(torch.int64), stride=stride, groups=groups)


def int_pool(x, ptype, k, stride, pad):
    """A pooling on an int64 map: zero padding, floor((H + 2 pad - k) / stride) + 1 outputs per side (a
    window that does not fit at the right or bottom edge is dropped), the maximum or the sum divided by
    k * k truncated toward zero."""
    win = windows(x, k, stride, pad)
    if ptype == "max":
        return win.amax(dim=(-2, -1))
    return torch.div(win.sum(dim=(-2, -1)), k * k, rounding_mode="trunc")


def int_pool_loops(x, ptype, k, stride, pad):
    """int_pool again, written out with Python integers, one window at a time (a check of int_pool)."""
    _, C, H, W = x.shape
    v = x[0].tolist()
    at = lambda c, yy, xx: v[c][yy][xx] if 0 <= yy < H and 0 <= xx < W else 0
    OH, OW = (H + 2 * pad - k) // stride + 1, (W + 2 * pad - k) // stride + 1
    out = [[[0] * OW for _ in range(OH)] for _ in range(C)]
    for c in range(C):
        for oy in range(OH):
            for ox in range(OW):
                vals = [at(c, oy * stride - pad + i, ox * stride - pad + j) for i in range(k) for j in range(k)]
                if ptype == "max":
                    out[c][oy][ox] = max(vals)
                else:
                    t = sum(vals)
                    out[c][oy][ox] = (abs(t) // (k * k)) * (1 if t >= 0 else -1)   # toward zero
    return torch.tensor([out], dtype=torch.int64)


def check_int_pool():
    """int_pool against int_pool_loops on a fixed 9x9 map of both signs (4x4/4 and 2x2/2 drop its last
    row and column), and three 3x3 sums, two of which truncate toward zero other than the floor does."""
    x = torch.randint(-128, 128, (1, 3, 9, 9), generator=torch.Generator().manual_seed(1)).to(torch.int64)
    for ptype, k, stride, pad in (("avg", 3, 2, 0), ("avg", 3, 2, 1), ("avg", 4, 4, 0), ("avg", 2, 2, 0),
                                  ("max", 2, 2, 0), ("max", 3, 2, 1), ("max", 3, 2, 0)):
        a, b = int_pool(x, ptype, k, stride, pad), int_pool_loops(x, ptype, k, stride, pad)
        if not torch.equal(a, b):
            fail("int_pool %s %d/%d pad %d differs from the loops" % (ptype, k, stride, pad))
    if int_pool(torch.tensor([[[[-7, 0, 0], [0, 0, 0], [0, 0, 0]]]]), "avg", 3, 3, 0).item() != 0 or \
            int_pool(torch.full((1, 1, 3, 3), -1, dtype=torch.int64), "avg", 3, 3, 0).item() != -1 or \
            int_pool(torch.tensor([[[[-17, 0, 0], [0, 0, 0], [0, 0, 0]]]]), "avg", 3, 3, 0).item() != -1:
        fail("int_pool: average pooling does not truncate toward zero")


def reference(net, x_q):
    """The integer network on x_q (int8): its output (int8), every map (int64), every layer's largest
    |accumulator|, and for every clamp (each QUAN, each residual addition) how many values it changed."""
    x = x_q.to(torch.int64)
    maps = {"input": x}
    acc_max = {}
    clamps = {}
    saved = None
    for L in net["layers"]:
        k = L["kind"]
        if k == "conv":
            acc = int_conv(x, L["w_q"], L["stride"], L["pad"], L["groups"])
        elif k == "fc":
            acc = x @ L["w_q"].to(torch.int64).t()
        if k in ("conv", "fc"):
            acc_max[L["name"]] = acc_checked(acc, L["name"])
            if L.get("b_q") is not None:   # the ARM adds the bias to the sums (32 bits) before ReLU and shift
                b = with_rounding(L["b_q"], L["shift"])
                acc = acc + (b.view(1, -1, 1, 1) if k == "conv" else b.view(1, -1))
                assert int(acc.abs().max()) < 2 ** 31
            if L["relu"]:
                acc = torch.clamp(acc, min=0)
            x = quan(acc, L["shift"], clamps, L["name"])
            if "clamp_high" in L:
                x = torch.clamp(x, max=L["clamp_high"])
        elif k == "pool":
            args = (L["ptype"], L["k"], L["stride"], L["pad"])
            x_in = x
            x = int_pool(x_in, *args)
            if not torch.equal(x, int_pool_loops(x_in, *args)):
                fail("%s: int_pool differs from the loops" % L["name"])
        elif k == "flatten":
            x = x.reshape(1, -1)                         # [C][H][W] order
        elif k == "res_begin":
            saved = x
        elif k == "res_end":
            if L["shortcut"] == "projection":
                acc = int_conv(saved, L["w_sc_q"], L["stride"], 0)
                acc_max[L["sc_name"]] = acc_checked(acc, L["sc_name"])
                if L.get("b_sc_q") is not None:
                    acc = acc + with_rounding(L["b_sc_q"], L["shift"]).view(1, -1, 1, 1)
                sc = quan(acc, L["shift"], clamps, L["sc_name"])
                maps[L["sc_name"]] = sc
            else:
                sc = saved
            clamps[L["name"]] = clamp_count(x + sc, "add")
            x = torch.clamp(torch.clamp(x + sc, -128, 127), min=0)  # MAT_ELE saturating, then ReLU
        assert int(x.min()) >= -128 and int(x.max()) <= 127
        assert list(x.shape) == L["out_shape"], (L["name"], list(x.shape), L["out_shape"])
        maps[L["name"]] = x
    return x.to(torch.int8), maps, acc_max, clamps


# --------------------------------------------------------------------------------------------------
# ONNX: QDQ and QLinear graphs built by hand

class Graph:
    def __init__(self):
        self.nodes, self.inits, self.names = [], [], set()
        self.qtensors = {}            # map name -> its int8 tensor (QuantizeLinear output / QLinear result)

    def init(self, name, array):
        if name not in self.names:
            self.names.add(name)
            self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def scale(self, e, name=None):
        """A scale 2^-e, or per output channel 2^-e[c] (a 1-D initializer named after `name`)."""
        if isinstance(e, list):
            return self.init(name, np.array([2.0 ** -x for x in e], dtype=np.float32))
        return self.init("scale_2^%d" % (-e), np.array(2.0 ** -e, dtype=np.float32))

    def zp(self):
        return self.init("zero_point_int8", np.array(0, dtype=np.int8))

    def node(self, op, inputs, output, name, **attrs):
        self.nodes.append(helper.make_node(op, inputs, [output], name=name, **attrs))
        return output

    def qdq(self, x, e, name, final=False):
        q = self.node("QuantizeLinear", [x, self.scale(e), self.zp()], name + "_q", name + "_quantize")
        self.qtensors[name] = q
        return self.node("DequantizeLinear", [q, self.scale(e), self.zp()], "output" if final else name + "_dq",
                         name + "_dequantize")

    def weight(self, name, w_q, e_w):
        wq = self.init(name + ".weight_int8", w_q.numpy().astype(np.int8))
        axis = dict(axis=0) if isinstance(e_w, list) else {}   # per output channel: Conv's filters, Gemm's B rows (transB)
        return self.node("DequantizeLinear", [wq, self.scale(e_w, name + ".weight_scale"), self.zp()], name + ".weight",
                         name + ".weight_dequantize", **axis)

    def bias(self, name, b_q, e_b):
        """An int32 bias through a DequantizeLinear at the sums' scale 2^-(e_x + e_w) (no zero point: 0)."""
        bq = self.init(name + ".bias_int32", b_q.numpy().astype(np.int32))
        axis = dict(axis=0) if isinstance(e_b, list) else {}
        return self.node("DequantizeLinear", [bq, self.scale(e_b, name + ".bias_scale")], name + ".bias",
                         name + ".bias_dequantize", **axis)

    def model(self, net_name, suffix, in_shape, in_type, out_shape, opset, doc):
        g = helper.make_graph(self.nodes, net_name + suffix,
                              [helper.make_tensor_value_info("input", in_type, list(in_shape))],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, list(out_shape))],
                              initializer=self.inits)
        m = helper.make_model(g, producer_name="s2cosim tools/make_reference_nets.py",
                              opset_imports=[helper.make_opsetid("", opset)])
        m.doc_string = doc
        return m


def pool_node(g, L, x, out):
    if L["global_avg"]:
        return g.node("GlobalAveragePool", [x], out, L["name"])
    a = dict(kernel_shape=[L["k"]] * 2, strides=[L["stride"]] * 2, pads=[L["pad"]] * 4)
    if L["ptype"] == "max":
        return g.node("MaxPool", [x], out, L["name"], **a)
    return g.node("AveragePool", [x], out, L["name"], count_include_pad=1, **a)


def build_qdq(net):
    g = Graph()
    x = g.qdq("input", net["e_input"], "input")
    saved = None
    last = net["layers"][-1]
    for L in net["layers"]:
        k, nm = L["kind"], L["name"]
        final = L is last
        if k in ("conv", "fc"):
            w = [g.weight(nm, L["w_q"], L["e_w"])]
            if L.get("b_q") is not None:
                w.append(g.bias(nm, L["b_q"], sums_e(L["e_in"], L["e_w"])))
        if k == "conv":
            extra = dict(group=L["groups"]) if L["groups"] != 1 else {}
            y = g.node("Conv", [x] + w, nm + "_acc", nm, kernel_shape=[L["k"]] * 2, strides=[L["stride"]] * 2,
                       pads=[L["pad"]] * 4, **extra)
        elif k == "fc":
            y = g.node("Gemm", [x] + w, nm + "_acc", nm, transB=1)
        if k in ("conv", "fc"):
            if L.get("relu6"):
                y = g.node("Clip", [y, g.init("clip_0", np.array(0.0, dtype=np.float32)),
                                    g.init("clip_6", np.array(6.0, dtype=np.float32))], nm + "_relu6", nm + "_relu6")
            elif L["relu"]:
                y = g.node("Relu", [y], nm + "_relu", nm + "_relu")
            x = g.qdq(y, L["e_out"], nm, final)
        elif k == "pool":
            x = g.qdq(pool_node(g, L, x, nm + "_pool"), L["e_out"], nm, final)
        elif k == "flatten":
            x = g.node("Flatten", [x], "flatten", "flatten", axis=1)
        elif k == "res_begin":
            saved = x
        elif k == "res_end":
            if L["shortcut"] == "projection":
                sn = L["sc_name"]
                w = [g.weight(sn, L["w_sc_q"], L["e_w_sc"])]
                if L.get("b_sc_q") is not None:
                    w.append(g.bias(sn, L["b_sc_q"], sums_e(L["e_in_sc"], L["e_w_sc"])))
                sc = g.node("Conv", [saved] + w, sn + "_acc", sn, kernel_shape=[1, 1], strides=[L["stride"]] * 2,
                            pads=[0] * 4)
                sc = g.qdq(sc, L["e_out"], sn)
            else:
                sc = saved
            y = g.node("Add", [x, sc], nm + "_sum", nm)
            y = g.node("Relu", [y], nm + "_relu", nm + "_relu")
            x = g.qdq(y, L["e_out"], nm, final)
    assert x == "output"
    doc = ("%s in QDQ int8 form: int8 weights and power-of-two scales 2^-e, zero points 0 "
           "(vectors/nets/%s_quant.json); made by tools/make_reference_nets.py" % (net["name"], net["name"]))
    return g.model(net["name"], "_qdq", net["input"], TensorProto.FLOAT, net["out_shape"], OPSET, doc), g.qtensors


def build_qlinear(net):
    g = Graph()
    x = g.node("QuantizeLinear", ["input", g.scale(net["e_input"]), g.zp()], "input_q", "input_quantize")
    g.qtensors["input"] = x
    for L in net["layers"]:
        k, nm = L["kind"], L["name"]
        if k == "conv":
            w = g.init(nm + ".weight_int8", L["w_q"].numpy().astype(np.int8))
            x = g.node("QLinearConv", [x, g.scale(L["e_in"]), g.zp(), w, g.scale(L["e_w"], nm + ".weight_scale"), g.zp(),
                                       g.scale(L["e_out"]), g.zp()], nm + "_q", nm,
                       kernel_shape=[L["k"]] * 2, strides=[L["stride"]] * 2, pads=[L["pad"]] * 4)
        elif k == "fc":
            w = g.init(nm + ".weight_int8_t", L["w_q"].numpy().astype(np.int8).T.copy())   # B is [IN, OUT]
            x = g.node("QLinearMatMul", [x, g.scale(L["e_in"]), g.zp(), w, g.scale(L["e_w"], nm + ".weight_scale"), g.zp(),
                                         g.scale(L["e_out"]), g.zp()], nm + "_q", nm)
        elif k == "pool":
            assert L["ptype"] == "max"
            x = pool_node(g, L, x, nm + "_q")
        elif k == "flatten":
            x = g.node("Flatten", [x], "flatten", "flatten", axis=1)
        else:
            fail("QLinear form: %s not supported" % k)
        if k in ("conv", "fc") and L["relu"]:
            x = g.node("Relu", [x], nm + "_relu_q", nm + "_relu")
        if k != "flatten":
            g.qtensors[nm] = x
    g.node("DequantizeLinear", [x, g.scale(net["e_output"]), g.zp()], "output", "output_dequantize")
    doc = ("%s in QLinear int8 form (QLinearConv, QLinearMatMul, int8 Relu and MaxPool); scales 2^-e, zero "
           "points 0; made by tools/make_reference_nets.py" % net["name"])
    return g.model(net["name"], "_qlinear", net["input"], TensorProto.FLOAT, net["out_shape"], OPSET_QLINEAR, doc), g.qtensors


# --------------------------------------------------------------------------------------------------
# A small interpreter of the ONNX operators used here (float64; exact for these integer-valued graphs).
# floor_requant=True makes every QuantizeLinear but the input's floor instead of rounding half to even:
# the hardware's QUAN, so the QDQ graph must then give the integer reference exactly.

def evaluate(model, feeds, floor_requant=False, qmodes=None, force=None, forced=None):
    """qmodes (the graph networks): QuantizeLinear output tensor -> how it rounds, as the integer network
    does there: "floor" (QUAN), "even" (a table: round half to even), "half_up" (Add, Mul: + 2^(s-1), then
    the shift), "trunc" (average pooling: toward zero), "exact" (max pooling, concatenation, slice, shuffle,
    MAT_ELE: the value must be an integer already); any other QuantizeLinear as without qmodes. force: tensor
    -> int array that replaces what the graph computes there (an Affine, whose integer form rounds its
    factors: the graph's float BatchNormalization can be a step away), after counting the differences into
    forced[tensor] = (how many differ, the largest |difference|)."""
    env = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    env.update(feeds)
    graph_inputs = {i.name for i in model.graph.input}
    f64 = np.float64

    def t(a):
        return torch.from_numpy(np.ascontiguousarray(a, dtype=f64))

    def requant(v, zp, floor):
        v = np.floor(v) if floor else np.round(v)         # np.round: half to even
        info = np.iinfo(zp.dtype)
        return np.clip(v + int(zp), info.min, info.max).astype(zp.dtype)

    for n in model.graph.node:
        a = {x.name: helper.get_attribute_value(x) for x in n.attribute}
        i = [env[name] if name else None for name in n.input]
        op = n.op_type
        if op == "QuantizeLinear" and qmodes is not None and n.output[0] in qmodes:
            v = i[0].astype(f64) / f64(i[1])
            mode = qmodes[n.output[0]]
            if mode == "exact":
                assert np.array_equal(v, np.round(v)), n.output[0]
            v = dict(floor=np.floor, even=np.round, trunc=np.trunc, exact=np.round,
                     half_up=lambda u: np.floor(u + 0.5))[mode](v)
            info = np.iinfo(i[2].dtype)
            y = np.clip(v + int(i[2]), info.min, info.max).astype(i[2].dtype)
            if force is not None and n.output[0] in force:
                want = np.asarray(force[n.output[0]]).astype(y.dtype)
                d = np.abs(y.astype(np.int64) - want.astype(np.int64))
                forced[n.output[0]] = (int((d != 0).sum()), int(d.max()))
                y = want
        elif op == "QuantizeLinear":
            floor = floor_requant and n.input[0] not in graph_inputs
            y = requant(i[0].astype(f64) / f64(i[1]), i[2], floor)
        elif op == "DequantizeLinear":
            sc = np.asarray(i[1], dtype=f64)
            if sc.ndim == 1:                           # per axis
                ax = a.get("axis", 1)
                sc = sc.reshape([-1 if d == ax else 1 for d in range(i[0].ndim)])
            y = (i[0].astype(f64) - (f64(i[2]) if len(i) > 2 and i[2] is not None else 0.0)) * sc
        elif op in ("Conv", "QLinearConv"):
            if op == "Conv":
                xx, ww = i[0], i[1]
            else:
                xx, ww = i[0].astype(f64) - f64(i[2]), i[3].astype(f64) - f64(i[5])
            p = list(a.get("pads", [0, 0, 0, 0]))
            assert all(d == 1 for d in a.get("dilations", [1, 1]))
            acc = F.conv2d(F.pad(t(xx), [p[1], p[3], p[0], p[2]]), t(ww), stride=list(a.get("strides", [1, 1])),
                           groups=a.get("group", 1)).numpy()
            if op == "Conv":
                y = acc
                if len(i) > 2 and i[2] is not None:
                    y = y + i[2].astype(f64).reshape(1, -1, 1, 1)
            else:
                w_sc = np.asarray(i[4], dtype=f64).reshape(1, -1, 1, 1) if np.ndim(i[4]) == 1 else f64(i[4])
                y = requant(acc * (f64(i[1]) * w_sc / f64(i[6])), i[7], False)
        elif op == "Gemm":
            A = i[0].astype(f64).T if a.get("transA", 0) else i[0].astype(f64)
            B = i[1].astype(f64).T if a.get("transB", 0) else i[1].astype(f64)
            y = a.get("alpha", 1.0) * (A @ B)
            if len(i) > 2 and i[2] is not None:
                y = y + a.get("beta", 1.0) * i[2]
        elif op == "MatMul":
            y = i[0].astype(f64) @ i[1].astype(f64)
        elif op == "QLinearMatMul":
            acc = (i[0].astype(f64) - f64(i[2])) @ (i[3].astype(f64) - f64(i[5]))
            y = requant(acc * (f64(i[1]) * f64(i[4]) / f64(i[6])), i[7], False)
        elif op == "Relu":
            y = np.maximum(i[0], np.zeros((), i[0].dtype))
        elif op == "Clip":
            y = np.clip(i[0], i[1], i[2])
        elif op in ("MaxPool", "AveragePool"):
            k = list(a["kernel_shape"])
            p = list(a.get("pads", [0, 0, 0, 0]))
            s = list(a.get("strides", [1, 1]))
            ceil = bool(a.get("ceil_mode", 0))
            assert not ceil or op == "MaxPool"
            if op == "MaxPool":
                xp = F.pad(t(i[0]), [p[1], p[3], p[0], p[2]], value=-math.inf)   # ONNX pads with -inf
                # ceil_mode: the last window may run over the edge (what lies beyond is ignored, as -inf)
                y = F.max_pool2d(xp, k, s, ceil_mode=ceil).numpy().astype(i[0].dtype)
            else:
                assert a.get("count_include_pad", 0) == 1 or not any(p)
                xp = F.pad(t(i[0]), [p[1], p[3], p[0], p[2]])
                y = F.avg_pool2d(xp, k, s).numpy()
        elif op == "Pad":
            assert a.get("mode", b"constant") in (b"constant", "constant")
            p = [int(v) for v in i[1]]
            assert len(i) < 3 or i[2] is None or not np.any(i[2])
            half = len(p) // 2
            y = np.pad(i[0], [(p[k], p[k + half]) for k in range(half)])
        elif op == "GlobalAveragePool":
            y = i[0].astype(f64).mean(axis=(2, 3), keepdims=True)
        elif op in ("Add", "Sub", "Mul", "Div") and all(np.issubdtype(v.dtype, np.integer) for v in i):
            # shape arithmetic (torch's chunk: Shape, Gather, Add, Div, Mul give a Slice's ends)
            y = dict(Add=np.add, Sub=np.subtract, Mul=np.multiply)[op](i[0], i[1]) if op != "Div" else \
                (np.sign(i[0]) * np.sign(i[1]) * (np.abs(i[0]) // np.abs(i[1]))).astype(i[0].dtype)
        elif op == "Sub":
            y = i[0].astype(f64) - i[1].astype(f64)
        elif op == "Cast":
            y = i[0].astype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[a["to"]])
        elif op == "ConstantOfShape":
            v = numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
            y = np.full([int(d) for d in i[0]], v.reshape(-1)[0], dtype=v.dtype)
        elif op == "Equal":
            y = np.equal(i[0], i[1])
        elif op == "Where":
            y = np.where(i[0], i[1], i[2])
        elif op == "Expand":
            y = np.broadcast_to(i[0], np.broadcast_shapes(i[0].shape, tuple(int(d) for d in i[1]))).copy()
        elif op == "SplitToSequence":
            # torch's chunk of a map whose channel count its exporter does not know (after a view(b, -1, h, w))
            ax = a.get("axis", 0)
            sp = i[1] if len(i) > 1 and i[1] is not None else np.ones(i[0].shape[ax], np.int64)
            sizes = [int(sp)] * (i[0].shape[ax] // int(sp)) if np.ndim(sp) == 0 else [int(v) for v in sp]
            assert a.get("keepdims", 1) == 1 or len(i) > 1
            y = tuple(np.split(i[0], np.cumsum(sizes)[:-1], axis=ax))
        elif op == "SequenceAt":
            y = i[0][int(i[1])]
        elif op == "Add":
            y = i[0].astype(f64) + i[1].astype(f64)
        elif op == "Mul":
            y = i[0].astype(f64) * i[1].astype(f64)
        elif op == "Sigmoid":
            y = 1.0 / (1.0 + np.exp(-i[0].astype(f64)))
        elif op == "HardSigmoid":
            y = np.clip(f64(a.get("alpha", 0.2)) * i[0].astype(f64) + f64(a.get("beta", 0.5)), 0.0, 1.0)
        elif op == "HardSwish":
            xx = i[0].astype(f64)
            y = xx * np.clip(xx / 6 + 0.5, 0.0, 1.0)
        elif op == "BatchNormalization":
            xx, sc, bb, mean, var = (v.astype(f64) for v in i[:5])
            r = lambda v: v.reshape(1, -1, 1, 1)
            y = (xx - r(mean)) / np.sqrt(r(var) + f64(a.get("epsilon", 1e-5))) * r(sc) + r(bb)
        elif op == "ReduceMean":
            y = i[0].astype(f64).mean(axis=tuple(a["axes"]), keepdims=bool(a.get("keepdims", 1)))
        elif op == "Concat":
            y = np.concatenate(i, axis=a["axis"])
        elif op == "Split":
            ax = a.get("axis", 0)
            sizes = [int(v) for v in i[1]] if len(i) > 1 and i[1] is not None else \
                [i[0].shape[ax] // len(n.output)] * len(n.output)
            y = np.split(i[0], np.cumsum(sizes)[:-1], axis=ax)
        elif op == "Slice":
            starts, ends = [int(v) for v in i[1]], [int(v) for v in i[2]]
            axes = [int(v) for v in i[3]] if len(i) > 3 and i[3] is not None else list(range(len(starts)))
            steps = [int(v) for v in i[4]] if len(i) > 4 and i[4] is not None else [1] * len(starts)
            sl = [slice(None)] * i[0].ndim
            for st, en, ax, sp in zip(starts, ends, axes, steps):
                sl[ax] = slice(st, en, sp)
            y = i[0][tuple(sl)]
        elif op == "Reshape":
            shp = [int(v) for v in i[1]]
            shp = [i[0].shape[k] if v == 0 else v for k, v in enumerate(shp)]   # allowzero = 0: 0 copies the dim
            y = i[0].reshape(shp)
        elif op == "Transpose":
            y = np.transpose(i[0], a["perm"])
        elif op == "Shape":
            y = np.array(i[0].shape, dtype=np.int64)
        elif op == "Gather":
            y = np.take(i[0], i[1], axis=a.get("axis", 0))
        elif op == "Unsqueeze":
            y = i[0]
            for ax in sorted(int(v) for v in i[1]):
                y = np.expand_dims(y, ax)
        elif op == "Flatten":
            ax = a.get("axis", 1)
            y = i[0].reshape(int(np.prod(i[0].shape[:ax])), -1)
        elif op == "Identity":
            y = i[0]
        elif op == "Constant":
            y = numpy_helper.to_array(a["value"])
        else:
            fail("evaluate: operator %s not supported" % op)
        if isinstance(y, list):                      # Split: one array per output
            for name, v in zip(n.output, y):
                env[name] = v
        else:
            env[n.output[0]] = y
    return env


# --------------------------------------------------------------------------------------------------
# Files

def extras(L):
    """What a layer list cannot say: a trained bias (the ONNX files carry it), ReLU6's clamp."""
    t = ""
    if L.get("b_q") is not None:
        t += "; bias in the ONNX files"
    if "clamp_high" in L:
        t += "; ReLU6: QUAN saturates at %d" % L["clamp_high"]
    return t


def layer_list(net):
    lines = ["# %s: %s" % (net["name"], net["what"]),
             "# made by tools/make_reference_nets.py; shift=N is each layer's QUAN shift e_x + e_w - e_y",
             "# (exponents in %s_quant.json; what it computes: docs/real_networks.md)" % net["name"],
             "network %s" % net["name"]]
    s = net["input"]
    inp = "input %d 1 1" % s[1] if len(s) == 2 else "input %d %d %d" % (s[3], s[2], s[1])
    lines.append("%-50s# e=%d" % (inp, net["e_input"]))
    for L in net["layers"]:
        k = L["kind"]
        if k == "conv":
            t = "conv %d %d %d %d" % (L["k"], L["k"], L["D"], L["C"])
            if L["stride"] != 1:
                t += " stride=%d" % L["stride"]
            if L["pad"]:
                t += " pad=%d" % L["pad"]
            t += " act=%s %s" % ("relu" if L["relu"] else "none", shift_fields(L["shift"]))
            if L.get("groups", 1) != 1:
                t += " groups=%d" % L["groups"]
            c = "%s: e_x %d, e_w %s, e_y %d" % (L["name"], L["e_in"], e_text(L["e_w"]), L["e_out"])
            c += extras(L)
        elif k == "fc":
            t = "fc %d %d act=%s %s" % (L["D"], L["C"], "relu" if L["relu"] else "none", shift_fields(L["shift"]))
            c = "%s: e_x %d, e_w %s, e_y %d" % (L["name"], L["e_in"], e_text(L["e_w"]), L["e_out"])
            c += extras(L)
        elif k == "pool":
            t = "pool %s %d %d" % (L["ptype"], L["k"], L["k"])
            if L["stride"] != L["k"] or L["pad"]:
                t += " stride=%d" % L["stride"]
            if L["pad"]:
                t += " pad=%d" % L["pad"]
            c = "%s%s%s, e=%d" % (L["name"], " (fused)" if L["fused"] else "",
                                  " (global average)" if L["global_avg"] else "", L["e_out"])
        elif k == "flatten":
            continue
        elif k == "res_begin":
            t, c = "residual begin", ""
        elif k == "res_end":
            if L["shortcut"] == "identity":
                t = "residual end shortcut=identity"
                c = "%s + ACTI, e=%d" % (L["name"], L["e_out"])
            else:
                t = "residual end shortcut=projection stride=%d %s" % (L["stride"], shift_fields(L["shift"]))
                c = "%s: e_x %d, e_w %s, e_y %d; %s + ACTI" % (L["sc_name"], L["e_in_sc"], e_text(L["e_w_sc"]), L["e_out"],
                                                                 L["name"])
                if L.get("b_sc_q") is not None:
                    c += "; bias in %s_qdq.onnx" % net["name"]
        lines.append(("%-49s # %s" % (t, c)) if c else t)
    return "\n".join(lines) + "\n"


def json_shift(s):
    """shift (the smallest, for display) and, per output channel, shifts."""
    return dict(shift=min(s), shifts=s) if isinstance(s, list) else dict(shift=s)


def quant_json(net, qdq_tensors, ql_tensors):
    layers, maps = [], [dict(map="input", e=net["e_input"], shape=list(net["input"]), qdq_tensor=qdq_tensors["input"])]
    cal = net["calibrated"]
    for L in net["layers"]:
        k = L["kind"]
        d = dict(name=L["name"])
        if k in ("conv", "fc"):
            d.update(op=k, relu=L["relu"])
            if k == "conv":
                d.update(kernel=[L["k"], L["k"]], stride=L["stride"], pad=L["pad"], D=L["D"], C=L["C"])
            else:
                d.update(IN=L["D"], OUT=L["C"])
            d.update(e_x=L["e_in"], e_w=L["e_w"], e_y=L["e_out"], **json_shift(L["shift"]),
                     max_abs_acc=net["acc_max"][L["name"]])
            if L.get("b_q") is not None:
                d["bias"] = L["b_q"].tolist()
            if L.get("bn"):
                d["batchnorm"] = "folded by torch.onnx.export into the weights and bias"
            if "clamp_high" in L:
                d.update(activation="relu6", clamp_high=L["clamp_high"])
            if L.get("groups", 1) != 1:
                d["groups"] = L["groups"]
            if "branch_last_of" in L:
                d["exponent_from"] = ("the shortcut (identity)" if L["branch_last_of"]["shortcut"] == "identity"
                                      else "the sum after ReLU (projection)")
        elif k == "pool":
            d.update(op="pool", type=L["ptype"], kernel=[L["k"], L["k"]], stride=L["stride"], pad=L["pad"],
                     fused=L["fused"], global_average=L["global_avg"], e=L["e_out"])
        elif k == "flatten":
            d.update(op="flatten", order="[C][H][W]", e=L["e_out"])
        elif k == "res_begin":
            d.update(op="residual_begin", e=L["e_out"])
        elif k == "res_end":
            d.update(op="residual_end", shortcut=L["shortcut"], relu=True, e=L["e_out"])
            if L["shortcut"] == "projection":
                d.update(projection=dict(name=L["sc_name"], kernel=[1, 1], stride=L["stride"], D=L["D"], C=L["C"],
                                         e_x=L["e_in_sc"], e_w=L["e_w_sc"], e_y=L["e_out"], **json_shift(L["shift"]),
                                         max_abs_acc=net["acc_max"][L["sc_name"]]))
                if L.get("b_sc_q") is not None:
                    d["projection"]["bias"] = L["b_sc_q"].tolist()
        layers.append(d)
        if k in ("conv", "fc", "pool", "res_end"):
            if k == "res_end" and L["shortcut"] == "projection":
                maps.append(dict(map=L["sc_name"], e=L["e_out"], shape=L["out_shape"],
                                 qdq_tensor=qdq_tensors[L["sc_name"]]))
            m = dict(map=L["name"], e=L["e_out"], shape=L["out_shape"], qdq_tensor=qdq_tensors[L["name"]])
            if ql_tensors:
                m["qlinear_tensor"] = ql_tensors.get(L["name"])
            maps.append(m)
    for m in maps:
        if m["map"] in cal:
            m["calibrated_max_abs"] = cal[m["map"]]
    return dict(network=net["name"], description=net["what"], seed=net["seed"],
                note="real = int8 * 2^-e; shift = e_x + e_w - e_y; docs/real_networks.md",
                input=dict(shape=list(net["input"]), e=net["e_input"]),
                output=dict(shape=net["out_shape"], e=net["e_output"]),
                maps=maps, layers=layers)


def json_text(d):
    """Indented JSON with one line per map and per layer."""
    one = lambda v: json.dumps(v, separators=(", ", ": "))
    out = []
    for k, v in d.items():
        if isinstance(v, list):
            out.append(" %s: [\n%s\n ]" % (json.dumps(k), ",\n".join("  " + one(x) for x in v)))
        else:
            out.append(" %s: %s" % (json.dumps(k), one(v)))
    text = "{\n" + ",\n".join(out) + "\n}\n"
    assert json.loads(text) == d
    return text


def save_npy(path, array):
    np.save(path, array)
    back = np.load(path)
    if back.dtype != array.dtype or back.shape != array.shape or not np.array_equal(back, array):
        fail("%s: re-read differs from what was written" % path)


def save_onnx(path, model):
    onnx.save(model, path)
    onnx.checker.check_model(onnx.load(path), full_check=True)
    return os.path.getsize(path)


# --------------------------------------------------------------------------------------------------

def load_folded(net, path):
    """The network without BatchNorm, its convolutions' and FCs' weights and biases read from the exported
    ONNX file, in whose Conv and Gemm nodes the exporter folded each BatchNorm: the float values an importer
    of that file sees, so that the reference quantizes exactly those."""
    m = onnx.load(path)
    inits = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type == "BatchNormalization":
            fail("%s: the exporter left a BatchNormalization (%s) unfolded" % (path, n.name))
    weighted = [n for n in m.graph.node if n.op_type in ("Conv", "Gemm")]
    names = []
    for L in net["layers"]:   # forward order: a projection runs at its unit's end
        if L["kind"] in ("conv", "fc"):
            names.append(L["name"])
        elif L["kind"] == "res_end" and L["shortcut"] == "projection":
            names.append(L["sc_name"])
    if len(names) != len(weighted):
        fail("%s: %d Conv/Gemm nodes, %d layers" % (path, len(weighted), len(names)))
    folded = FloatNet(net, with_bn=False).eval()
    with torch.no_grad():
        for nm, n in zip(names, weighted):
            mod = folded.mods[nm]
            mod.weight.copy_(inits[n.input[1]])
            if len(n.input) > 2 and n.input[2]:
                if mod.bias is None:
                    fail("%s: node %s has a bias, layer %s none" % (path, n.name, nm))
                mod.bias.copy_(inits[n.input[2]])
    return folded


def argmax_note(yf, ref_row):
    """Where the float model's and the reference's argmax differ: the two outputs in both."""
    a, b = int(yf.argmax()), int(ref_row.argmax())
    if a == b:
        return ""
    return ": float outputs %d and %d are %.4f and %.4f, %.4f apart; the reference has %d and %d%s" % (
        a, b, float(yf[0, a]), float(yf[0, b]), float(yf[0, a] - yf[0, b]), int(ref_row[a]), int(ref_row[b]),
        ", a tie, and argmax takes the first" if int(ref_row[a]) == int(ref_row[b]) else "")


def run(net, ort, summary):
    name = net["name"]
    chain(net)
    torch.manual_seed(net["seed"])
    model = FloatNet(net).eval()
    x = torch.randn(*net["input"], generator=torch.Generator().manual_seed(net["seed"] + 1))
    p = lambda suffix: os.path.join(OUT_DIR, name + suffix)
    # the float model, exported by torch (which folds each BatchNorm into its convolution)
    torch.onnx.export(model, (x,), p(".onnx"), opset_version=OPSET, input_names=["input"], output_names=["output"],
                      do_constant_folding=True)
    onnx.checker.check_model(onnx.load(p(".onnx")), full_check=True)
    if len(model.bns):
        with torch.no_grad():
            y_bn = model(x)
        model = load_folded(net, p(".onnx"))
        with torch.no_grad():
            if not torch.allclose(model(x), y_bn, rtol=1e-4, atol=1e-5):
                fail("%s: the folded network differs from the one with BatchNorm" % name)
    quantize(net, model, x)
    x_q = quantize_input(x, net["e_input"])
    ref, net["int_maps"], net["acc_max"], clamps = reference(net, x_q)
    clamps["input"] = input_clamps(x, net["e_input"])
    with torch.no_grad():
        y_float = model(x)
    # the hot input, through the same integer network (the exponents and shifts calibrated on x)
    x_hot = HOT_GAIN * x + torch.randn(*net["input"],
                                       generator=torch.Generator().manual_seed(net["seed"] + HOT_SEED_OFFSET))
    x_hot_q = quantize_input(x_hot, net["e_input"])
    ref_hot, hot_maps, hot_acc_max, hot_clamps = reference(net, x_hot_q)
    hot_clamps["input"] = input_clamps(x_hot, net["e_input"])
    with torch.no_grad():
        y_float_hot = model(x_hot)

    sizes = {}
    sizes[".onnx"] = os.path.getsize(p(".onnx"))
    qdq, qdq_tensors = build_qdq(net)
    sizes["_qdq.onnx"] = save_onnx(p("_qdq.onnx"), qdq)
    ql_tensors = None
    if net["qlinear"]:
        ql, ql_tensors = build_qlinear(net)
        sizes["_qlinear.onnx"] = save_onnx(p("_qlinear.onnx"), ql)
    save_npy(p("_input.npy"), x.numpy().astype(np.float32))
    save_npy(p("_input_int8.npy"), x_q.numpy())
    save_npy(p("_reference.npy"), ref.numpy())
    save_npy(p("_input_hot.npy"), x_hot.numpy().astype(np.float32))
    save_npy(p("_input_hot_int8.npy"), x_hot_q.numpy())
    save_npy(p("_reference_hot.npy"), ref_hot.numpy())
    with open(p(".net"), "w") as f:
        f.write(layer_list(net))
    with open(p("_quant.json"), "w") as f:
        f.write(json_text(quant_json(net, qdq_tensors, ql_tensors)))
    for s in ("_input.npy", "_input_int8.npy", "_reference.npy", "_input_hot.npy", "_input_hot_int8.npy",
              "_reference_hot.npy", ".net", "_quant.json"):
        sizes[s] = os.path.getsize(p(s))
    for s, b in sizes.items():
        if s.endswith(".onnx") and b > 100 * 1024:
            fail("%s%s is %d bytes, more than 100 KB" % (name, s, b))

    # --- checks with the interpreter
    xin = np.load(p("_input.npy"))
    env = evaluate(onnx.load(p(".onnx")), {"input": xin})
    if not np.allclose(env["output"], y_float.numpy(), rtol=1e-4, atol=1e-5):
        fail("%s.onnx evaluated differs from the torch model" % name)
    qdq_m = onnx.load(p("_qdq.onnx"))
    ql_m = onnx.load(p("_qlinear.onnx")) if ql_tensors else None
    last_q = qdq_tensors[net["layers"][-1]["name"]]

    # a layer with a bias rounds half up (the rounding term in its bias), the others floor
    rounded = {qdq_tensors[L["name"]]: "half_up" for L in net["layers"] if L.get("b_q") is not None}
    rounded.update({qdq_tensors[L["sc_name"]]: "half_up" for L in net["layers"] if L.get("b_sc_q") is not None})

    def check_quantized(xin, maps, what):
        """The QDQ graph with QUAN's requantization (floor, or half up where the layer has a bias) gives the
        integer reference map by map (saturation included: QuantizeLinear clamps to int8); the QLinear graph
        equals the QDQ graph with rounding."""
        env_floor = evaluate(qdq_m, {"input": xin}, floor_requant=True, qmodes=rounded)
        for m, tname in qdq_tensors.items():     # every map, floor requantization: the integer reference exactly
            if not np.array_equal(env_floor[tname].astype(np.int64), maps[m].numpy()):
                fail("%s_qdq.onnx on %s, map %s (%s) with QUAN's requantization differs from the integer reference"
                     % (name, what, m, tname))
        env_round = evaluate(qdq_m, {"input": xin})
        if ql_tensors:
            env_ql = evaluate(ql_m, {"input": xin})
            for m, tname in ql_tensors.items():   # QLinear = QDQ with rounding, map by map
                if not np.array_equal(env_ql[tname], env_round[qdq_tensors[m]]):
                    fail("%s_qlinear.onnx on %s, map %s differs from %s_qdq.onnx evaluated with rounding"
                         % (name, what, m, name))
        return env_round[last_q].astype(np.int64)

    y_round = check_quantized(xin, net["int_maps"], p("_input.npy"))
    xin_hot = np.load(p("_input_hot.npy"))
    if not np.array_equal(quantize_input(torch.from_numpy(xin_hot), net["e_input"]).numpy(), np.load(p("_input_hot_int8.npy"))):
        fail("%s_input_hot_int8.npy is not %s_input_hot.npy quantized" % (name, name))
    y_round_hot = check_quantized(xin_hot, hot_maps, p("_input_hot.npy"))
    ort_note = "onnxruntime not installed: not run"
    if ort is not None:
        notes = []
        for suffix in [".onnx", "_qdq.onnx"] + (["_qlinear.onnx"] if net["qlinear"] else []):
            sess = ort.InferenceSession(p(suffix), providers=["CPUExecutionProvider"])
            for tag, feed, yf_, yr_ in (("", xin, y_float, y_round), (" (hot input)", xin_hot, y_float_hot, y_round_hot)):
                got = sess.run(None, {"input": feed})[0]
                want = yf_.numpy() if suffix == ".onnx" else yr_ * 2.0 ** -net["e_output"]
                d = float(np.abs(got - want).max())
                notes.append("%s%s%s: max |onnxruntime - expected| %.3g" % (name, suffix, tag, d))
        ort_note = "; ".join(notes)

    # --- report
    e_out = net["e_output"]
    y_int = ref.numpy().astype(np.float64) * 2.0 ** -e_out
    yf = y_float.numpy().astype(np.float64)
    err = float(np.abs(yf - y_int).max())
    rel = err / float(np.abs(yf).max())
    agree = int(yf.argmax()) == int(y_int.argmax())
    diff_round = y_round - ref.numpy().astype(np.int64)       # ONNX's rounding minus the hardware's floor
    rows = []
    print("\n== %s: %s" % (name, net["what"]))
    hdr = "%-11s %-14s %4s %4s %4s %5s %9s %12s %7s %7s %8s" % (
        "map", "shape", "e_x", "e_w", "e", "shift", "max|acc|", "int8 range", "nonzero", "satur.", "float/127")
    print(hdr)
    rows.append(hdr)

    def row(m, shape, e_x, e_w, e, shift, acc):
        v = net["int_maps"][m]
        fm = net["float_maps"].get(m)
        use = "" if fm is None else "%.2f" % (float(fm.abs().max()) * 2.0 ** e / 127)
        sat = float(((v == 127) | (v == -128)).double().mean())
        r = "%-11s %-14s %4s %4s %4d %5s %9s %12s %6.0f%% %6.1f%% %8s" % (
            m, "x".join(str(d) for d in shape[1:]), e_x, e_w, e, shift, acc,
            "[%d,%d]" % (int(v.min()), int(v.max())), 100 * float((v != 0).double().mean()), 100 * sat, use)
        print(r)
        rows.append(r)
        return v

    row("input", net["input"], "", "", net["e_input"], "", "")
    warnings = []
    for L in net["layers"]:
        k = L["kind"]
        if k in ("conv", "fc"):
            v = row(L["name"], L["out_shape"], L["e_in"], e_text(L["e_w"]), L["e_out"], e_text(L["shift"]), net["acc_max"][L["name"]])
        elif k == "pool":
            v = row(L["name"], L["out_shape"], "", "", L["e_out"], "", "")
        elif k == "res_end":
            if L["shortcut"] == "projection":
                row(L["sc_name"], L["out_shape"], L["e_in_sc"], e_text(L["e_w_sc"]), L["e_out"], e_text(L["shift"]),
                    net["acc_max"][L["sc_name"]])
            v = row(L["name"], L["out_shape"], "", "", L["e_out"], "", "")
        else:
            continue
        if int((v != 0).sum()) == 0 or int(v.abs().max()) < 16:
            warnings.append("%s: int8 values use little of the range (max |v| = %d)" % (L["name"], int(v.abs().max())))
    corr = float(np.corrcoef(np.ravel(yf), np.ravel(y_int))[0, 1])
    net["correlation"] = corr
    line = ("output e=%d; float model vs dequantized integer reference: correlation r = %.4f, max |error| %.4f (%.1f%% "
            "of max |float| %.3f), argmax %s (float %d, integer %d%s); ONNX rounding (QDQ/QLinear evaluated) vs the "
            "reference: %d of %d outputs differ, by %+d to %+d steps" % (
                e_out, corr, err, 100 * rel, float(np.abs(yf).max()), "agrees" if agree else "DIFFERS", int(yf.argmax()),
                int(y_int.argmax()), argmax_note(yf, ref.numpy()[0]), int((diff_round != 0).sum()), diff_round.size,
                int(diff_round.min()), int(diff_round.max())))
    print(line)
    print("reference int8: %s" % ref.numpy().tolist())
    hit = ["%s %s %d" % (m, c["clamp"], c["hi"] + c["lo"]) for m, c in clamps.items() if c["hi"] + c["lo"]]
    cold_line = ("clamps on %s_input.npy: %s" % (name, ", ".join(hit) if hit else
                 "none changes a value (input, QUAN and residual additions)"))
    print(cold_line)

    # --- the hot input
    print("hot input: %s_input_hot.npy = %g * %s_input.npy + N(0,1) (seed %d), the same integer network"
          % (name, HOT_GAIN, name, net["seed"] + HOT_SEED_OFFSET))
    hot_rows = []
    hdr = "%-11s %-14s %4s %5s %9s %12s %6s %6s %6s %6s" % (
        "map", "shape", "e", "shift", "max|acc|", "int8 range", "clamp", ">127", "<-128", "of")
    print(hdr)
    hot_rows.append(hdr)

    def hot_row(m, shape, e, shift, acc):
        v = hot_maps[m]
        c = hot_clamps.get(m)
        r = "%-11s %-14s %4d %5s %9s %12s" % (m, "x".join(str(d) for d in shape[1:]), e, shift, acc,
                                              "[%d,%d]" % (int(v.min()), int(v.max())))
        r += " %6s %6d %6d %6d" % (c["clamp"], c["hi"], c["lo"], c["n"]) if c else " %6s" % "-"
        print(r)
        hot_rows.append(r)

    hot_row("input", net["input"], net["e_input"], "", "")
    for L in net["layers"]:
        k = L["kind"]
        if k in ("conv", "fc"):
            hot_row(L["name"], L["out_shape"], L["e_out"], e_text(L["shift"]), hot_acc_max[L["name"]])
        elif k == "pool":
            hot_row(L["name"], L["out_shape"], L["e_out"], "", "")
        elif k == "res_end":
            if L["shortcut"] == "projection":
                hot_row(L["sc_name"], L["out_shape"], L["e_out"], e_text(L["shift"]), hot_acc_max[L["sc_name"]])
            hot_row(L["name"], L["out_shape"], L["e_out"], "", "")
    yh_int = ref_hot.numpy().astype(np.float64) * 2.0 ** -e_out
    yhf = y_float_hot.numpy().astype(np.float64)
    errh = float(np.abs(yhf - yh_int).max())
    diff_round_hot = y_round_hot - ref_hot.numpy().astype(np.int64)
    hot_line = ("float model on the hot input vs the dequantized hot reference: max |error| %.4f (%.1f%% of max |float| "
                "%.3f), argmax %s (float %d, integer %d); ONNX rounding vs the hot reference: %d of %d outputs "
                "differ, by %+d to %+d steps" % (
                    errh, 100 * errh / float(np.abs(yhf).max()), float(np.abs(yhf).max()),
                    "agrees" if int(yhf.argmax()) == int(yh_int.argmax()) else "differs", int(yhf.argmax()),
                    int(yh_int.argmax()), int((diff_round_hot != 0).sum()), diff_round_hot.size,
                    int(diff_round_hot.min()), int(diff_round_hot.max())))
    print(hot_line)
    print("hot reference int8: %s" % ref_hot.numpy().tolist())
    print(ort_note)
    for w in warnings:
        print("warning: " + w)
    files = ", ".join("%s%s %d B" % (name, s, b) for s, b in sizes.items())
    print("files: " + files)
    summary.append(dict(name=name, what=net["what"], rows=rows, line=line, files=files, ort=ort_note,
                        warnings=warnings, ref=ref.numpy().tolist(), cold_line=cold_line, hot_rows=hot_rows,
                        hot_line=hot_line, ref_hot=ref_hot.numpy().tolist(), hot_clamps=hot_clamps,
                        hot_seed=net["seed"] + HOT_SEED_OFFSET, saturation=not net.get("bias")))


# --------------------------------------------------------------------------------------------------
# Graph networks (docs/real_networks.md, "Graphs, layouts and element-wise operations"): a layer may read
# any earlier map; concatenation, slice and shuffle are layouts; tables, affine maps (a BatchNorm no
# convolution absorbs), additions and multiplications run on the ARM. Each node names its output map
# (`as=` in the layer list) and the maps it reads (`in=`; by default the node before it).

def g_conv(name, D, C, k, stride=1, pad=0, act="none", bn=False, groups=1, bias=None, inp=None, gain=None):
    """act: "relu", "relu6" or "none" (fused into the layer); bn: a BatchNorm2d after it, which the exporter
    folds; bias: the convolution's own bias (default: PyTorch's, unless a BatchNorm follows, as torchvision
    writes it)."""
    return dict(op="conv", name=name, inputs=inp, D=D, C=C, k=k, stride=stride, pad=pad, act=act, bn=bn,
                groups=groups, bias=(not bn) if bias is None else bias,
                gain=(2.0 if act != "none" else 1.0) if gain is None else gain)


def g_fc(name, IN, OUT, inp=None):
    return dict(op="fc", name=name, inputs=inp, D=IN, C=OUT, act="none", bias=True, gain=1.0)


def g_pool(name, ptype, k, stride=None, pad=0, ceil=False, inp=None):
    return dict(op="pool", name=name, inputs=inp, ptype=ptype, k=k, stride=k if stride is None else stride,
                pad=pad, ceil=ceil)


def g_gap(name, style, inp=None):
    """A global average pooling as networks write it: "adaptive" (nn.AdaptiveAvgPool2d(1): GlobalAveragePool),
    "mean" (x.mean((2, 3), keepdim=True): ReduceMean), "mean_flat" (x.mean([2, 3]): ReduceMean keepdims=0, a
    flattening after it, as torchvision's ShuffleNet ends)."""
    return dict(op="gap", name=name, inputs=inp, style=style)


def g_flatten(name="flatten", inp=None):
    return dict(op="flatten", name=name, inputs=inp)


def g_concat(name, inputs):
    return dict(op="concat", name=name, inputs=list(inputs))


def g_slice(name, first, count, inp=None):
    """torch's x.chunk(n, dim=1)[first // count] (the chunks of one map are computed once)."""
    return dict(op="slice", name=name, inputs=inp, first=first, count=count)


def g_shuffle(name, groups, inp=None):
    return dict(op="shuffle", name=name, inputs=inp, groups=groups)


def g_act(name, func, inp=None):
    return dict(op="act", name=name, inputs=inp, func=func)


def g_affine(name, relu=True, inp=None):
    """A BatchNorm2d no convolution absorbs (DenseNet's pre-activation BN, ReLU, Conv), its ReLU folded in."""
    return dict(op="affine", name=name, inputs=inp, relu=relu)


def g_add(name, inputs, relu=False):
    return dict(op="add", name=name, inputs=list(inputs), relu=relu)


def g_mul(name, inputs):
    return dict(op="mul", name=name, inputs=list(inputs))


def g_residual(name, shortcut, relu=False):
    """An identity residual unit's end: the node before it (a convolution, the branch's last) plus map
    `shortcut`, saturating (MAT_ELE), then the ReLU if any; `residual end shortcut=identity in=SHORTCUT`."""
    return dict(op="residual", name=name, inputs=None, shortcut=shortcut, relu=relu)


GRAPH_NETWORKS = [
    dict(name="fire_cnn", seed=808, input=(1, 3, 16, 16),
         what="[1,3,16,16]; conv 3x3 pad 1 ->8 + ReLU; max pool 3x3/2 ceil_mode (16x16 -> 8x8, one window more "
              "than the floor form: padend=1); a SqueezeNet fire module: squeeze conv 1x1 ->4 + ReLU, expand conv "
              "1x1 ->8 + ReLU and expand conv 3x3 pad 1 ->8 + ReLU, both reading the squeeze, torch.cat along "
              "channels (16); max pool 3x3/2 ceil_mode on the concatenation (8x8 -> 4x4, padend=1); global "
              "average pool (nn.AdaptiveAvgPool2d(1)); flatten; FC 16->10 (PyTorch's default biases everywhere)",
         nodes=[g_conv("conv1", 3, 8, 3, pad=1, act="relu"),
                g_pool("pool1", "max", 3, 2, ceil=True),
                g_conv("squeeze", 8, 4, 1, act="relu"),
                g_conv("expand1x1", 4, 8, 1, act="relu", inp=["squeeze"]),
                g_conv("expand3x3", 4, 8, 3, pad=1, act="relu", inp=["squeeze"]),
                g_concat("fire", ["expand1x1", "expand3x3"]),
                g_pool("pool2", "max", 3, 2, ceil=True),
                g_gap("gap", "adaptive"), g_flatten(), g_fc("fc", 16, 10)]),
    dict(name="dense_cnn", seed=909, input=(1, 3, 16, 16),
         what="[1,3,16,16]; conv 3x3 pad 1 ->8 + BatchNorm + ReLU (folded); a DenseNet dense block of two "
              "pre-activation layers (BatchNorm + ReLU: an Affine; conv 1x1 ->16 + BatchNorm + ReLU (folded); "
              "conv 3x3 pad 1 ->4; torch.cat of the layer's input and its output: 8 -> 12 -> 16 channels); a "
              "transition (BatchNorm + ReLU: an Affine; conv 1x1 ->8; average pool 2x2/2); BatchNorm + ReLU "
              "(an Affine, densenet's norm5); global average pool; flatten; FC 8->10 (convolutions without "
              "bias, as torchvision's DenseNet)",
         nodes=[g_conv("conv0", 3, 8, 3, pad=1, act="relu", bn=True),
                g_affine("norm1a"), g_conv("conv1a", 8, 16, 1, act="relu", bn=True),
                g_conv("conv2a", 16, 4, 3, pad=1, bias=False), g_concat("cat1", ["conv0", "conv2a"]),
                g_affine("norm1b"), g_conv("conv1b", 12, 16, 1, act="relu", bn=True),
                g_conv("conv2b", 16, 4, 3, pad=1, bias=False), g_concat("cat2", ["cat1", "conv2b"]),
                g_affine("norm_t"), g_conv("conv_t", 16, 8, 1, bias=False), g_pool("pool_t", "avg", 2),
                g_affine("norm5"), g_gap("gap", "adaptive"), g_flatten(), g_fc("fc", 8, 10)]),
    dict(name="shuffle_cnn", seed=1010, input=(1, 3, 16, 16),
         what="[1,3,16,16]; conv 3x3 pad 1 ->8 + BatchNorm + ReLU; a ShuffleNet v2 stride-2 unit as torchvision "
              "writes it (branch1: depthwise conv 3x3/2 pad 1 + BatchNorm, conv 1x1 + BatchNorm + ReLU; branch2: "
              "conv 1x1 + BatchNorm + ReLU, depthwise conv 3x3/2 pad 1 + BatchNorm, conv 1x1 + BatchNorm + ReLU; "
              "torch.cat((branch1(x), branch2(x)), 1): 16 channels 8x8; channel_shuffle(out, 2) as view, "
              "transpose, contiguous, view); a stride-1 unit (x1, x2 = x.chunk(2, dim=1); branch2 on x2: conv "
              "1x1 + BatchNorm + ReLU, depthwise conv 3x3 pad 1 + BatchNorm, conv 1x1 + BatchNorm + ReLU; "
              "torch.cat((x1, branch2(x2)), 1); channel_shuffle); conv 1x1 ->32 + BatchNorm + ReLU (conv5); "
              "x.mean([2, 3]) (a global average pool and a flattening); FC 32->10",
         nodes=[g_conv("conv1", 3, 8, 3, pad=1, act="relu", bn=True),
                g_conv("u1_b1_dw", 8, 8, 3, stride=2, pad=1, groups=8, bn=True),
                g_conv("u1_b1_pw", 8, 8, 1, act="relu", bn=True),
                g_conv("u1_b2_pw1", 8, 8, 1, act="relu", bn=True, inp=["conv1"]),
                g_conv("u1_b2_dw", 8, 8, 3, stride=2, pad=1, groups=8, bn=True),
                g_conv("u1_b2_pw2", 8, 8, 1, act="relu", bn=True),
                g_concat("u1_cat", ["u1_b1_pw", "u1_b2_pw2"]), g_shuffle("u1_out", 2),
                g_slice("u2_x1", 0, 8), g_slice("u2_x2", 8, 8, inp=["u1_out"]),
                g_conv("u2_b2_pw1", 8, 8, 1, act="relu", bn=True),
                g_conv("u2_b2_dw", 8, 8, 3, pad=1, groups=8, bn=True),
                g_conv("u2_b2_pw2", 8, 8, 1, act="relu", bn=True),
                g_concat("u2_cat", ["u2_x1", "u2_b2_pw2"]), g_shuffle("u2_out", 2),
                g_conv("conv5", 16, 32, 1, act="relu", bn=True),
                g_gap("gap", "mean_flat"), g_fc("fc", 32, 10)]),
    dict(name="se_cnn", seed=1111, input=(1, 3, 16, 16),
         what="[1,3,16,16]; conv 3x3/2 pad 1 ->16 + BatchNorm, SiLU (nn.SiLU: a table); an EfficientNet MBConv "
              "block (expansion 1): depthwise conv 3x3 pad 1 + BatchNorm, SiLU; squeeze-and-excitation "
              "(nn.AdaptiveAvgPool2d(1), conv 1x1 ->4 with bias, SiLU, conv 1x1 ->16 with bias, Sigmoid, "
              "multiplied with the map: a channel multiply); conv 1x1 ->16 + BatchNorm; the block's input added "
              "(an identity residual unit without ReLU, its input the SiLU's map); a MobileNetV3-like part: conv "
              "1x1 ->24 + BatchNorm, Hardswish; squeeze-and-excitation as timm writes it (x.mean((2, 3), "
              "keepdim=True): ReduceMean, conv 1x1 ->8 + ReLU, conv 1x1 ->24, Hardsigmoid, multiply); two "
              "conv 3x3 pad 1 ->16 of that map added (an Add that is no residual unit) + ReLU; global average "
              "pool; flatten; FC 16->10",
         nodes=[g_conv("stem", 3, 16, 3, stride=2, pad=1, bn=True, gain=2.0), g_act("stem_silu", "silu"),
                g_conv("dw", 16, 16, 3, pad=1, groups=16, bn=True, gain=2.0), g_act("dw_silu", "silu"),
                g_gap("se_pool", "adaptive"),
                g_conv("se_reduce", 16, 4, 1, bias=True, gain=2.0), g_act("se_silu", "silu"),
                g_conv("se_expand", 4, 16, 1, bias=True), g_act("se_gate", "sigmoid"),
                g_mul("se_mul", ["dw_silu", "se_gate"]),
                g_conv("project", 16, 16, 1, bn=True), g_residual("mb_out", "stem_silu"),
                g_conv("expand", 16, 24, 1, bn=True, gain=2.0), g_act("hswish", "hardswish"),
                g_gap("se2_pool", "mean"),
                g_conv("se2_reduce", 24, 8, 1, act="relu", bias=True),
                g_conv("se2_expand", 8, 24, 1, bias=True), g_act("se2_gate", "hardsigmoid"),
                g_mul("se2_mul", ["hswish", "se2_gate"]),
                g_conv("branch_a", 24, 16, 3, pad=1), g_conv("branch_b", 24, 16, 3, pad=1, inp=["se2_mul"], gain=6.0),
                g_add("sum", ["branch_a", "branch_b"], relu=True),
                g_gap("gap", "adaptive"), g_flatten(), g_fc("fc", 16, 10)]),
]

# the ONNX attributes of the activations torch exports (opset 13): nn.Hardsigmoid is HardSigmoid with alpha
# 1/6 (a float32 attribute), beta 0.5; nn.Hardswish is that times x
HARDSIGMOID_ALPHA = float(np.float32(1.0 / 6.0))
ACT_PARAMS = {"hardsigmoid": (HARDSIGMOID_ALPHA, 0.5), "leakyrelu": (0.01, 0.0)}


def act_value(func, x, alpha=0.0, beta=0.0):
    """mapper/activations.cpp's activation_value, operation by operation in double precision."""
    if func == "relu":
        return max(0.0, x)
    if func == "relu6":
        return min(max(x, 0.0), 6.0)
    if func == "sigmoid":
        return 1 / (1 + math.exp(-x))
    if func == "hardsigmoid":
        return min(max(alpha * x + beta, 0.0), 1.0)
    if func == "hardswish":
        return x * min(max(x / 6 + 0.5, 0.0), 1.0)
    if func == "silu":
        return x / (1 + math.exp(-x))
    if func == "tanh":
        return math.tanh(x)
    if func == "leakyrelu":
        return x if x >= 0 else alpha * x
    fail("unknown activation %s" % func)


def act_table(func, e_in, e_out, alpha=0.0, beta=0.0):
    """activation_table: t[x + 128] = clamp(round_half_even(f(x * 2^-e_in) * 2^e_out), -128, 127)."""
    t = []
    for x in range(-128, 128):
        y = round(math.ldexp(act_value(func, math.ldexp(float(x), -e_in), alpha, beta), e_out))   # half to even
        t.append(max(-128, min(127, y)))
    return t


def torch_act(func, x):
    """The activation as PyTorch writes it (nn.SiLU, nn.Sigmoid, nn.Hardswish, nn.Hardsigmoid, ...)."""
    return dict(silu=F.silu, sigmoid=torch.sigmoid, hardswish=F.hardswish, hardsigmoid=F.hardsigmoid,
                relu=F.relu, relu6=F.relu6, tanh=torch.tanh)[func](x)


def graph_shapes(net):
    """Fills in each node's inputs (default: the node before it), input and output shapes, and a ceil-mode
    pooling's end padding (pad_end: zeros after the last row and column, so that the floor formula on the
    padded map gives PyTorch's ceil-mode size)."""
    shapes = {"input": list(net["input"])}
    prev = "input"
    for N in net["nodes"]:
        if N["inputs"] is None:
            N["inputs"] = [prev]
        ins = [shapes[n] for n in N["inputs"]]
        s = list(ins[0])
        op = N["op"]
        if op == "conv":
            assert s[1] == N["D"], (N["name"], s)
            h = (s[2] + 2 * N["pad"] - N["k"]) // N["stride"] + 1
            w = (s[3] + 2 * N["pad"] - N["k"]) // N["stride"] + 1
            s = [1, N["C"], h, w]
        elif op == "fc":
            assert len(s) == 2 and s[1] == N["D"], (N["name"], s)
            s = [1, N["C"]]
        elif op == "pool":
            k, st, p = N["k"], N["stride"], N["pad"]
            out = []
            for side in s[2:]:
                if N["ceil"]:
                    o = -((side + 2 * p - k) // -st) + 1
                    if (o - 1) * st >= side + p:     # PyTorch: the last window must start inside the map
                        o -= 1
                else:
                    o = (side + 2 * p - k) // st + 1
                out.append(o)
            assert out[0] == out[1]
            N["pad_end"] = max(0, (out[0] - 1) * st + k - (s[2] + 2 * p))
            if N["ceil"] and not N["pad_end"]:
                fail("%s: ceil_mode adds no window here" % N["name"])
            s = [1, s[1]] + out
        elif op == "gap":
            assert s[2] == s[3]
            N["k"] = s[2]
            s = [1, s[1]] if N["style"] == "mean_flat" else [1, s[1], 1, 1]
        elif op == "flatten":
            s = [1, int(np.prod(s[1:]))]
        elif op == "concat":
            assert all(t[2:] == s[2:] for t in ins)
            s = [1, sum(t[1] for t in ins)] + s[2:]
        elif op == "slice":
            assert N["first"] + N["count"] <= s[1] and s[1] % N["count"] == 0 and N["first"] % N["count"] == 0
            s = [1, N["count"]] + s[2:]
        elif op == "shuffle":
            assert s[1] % N["groups"] == 0
        elif op in ("add", "mul"):
            b = ins[1]
            N["channel"] = op == "mul" and b[2:] == [1, 1] and s[2:] != [1, 1]
            assert b == s or (N["channel"] and b[1] == s[1]), (N["name"], s, b)
        elif op == "residual":
            assert shapes[N["shortcut"]] == s
            assert net["nodes"][net["nodes"].index(N) - 1]["op"] == "conv"
        N["in_shape"] = ins[0]
        N["out_shape"] = s
        shapes[N["name"]] = s
        prev = N["name"]
    net["out_shape"] = shapes[prev]
    net["shapes"] = shapes


class GraphNet(nn.Module):
    """The float model. folded: the convolutions with their BatchNorms folded in (weights and biases then
    loaded from the exported ONNX file: graph_load_folded); the Affine BatchNorms stay."""
    def __init__(self, net, folded=False):
        super().__init__()
        self.nodes = net["nodes"]
        self.mods = nn.ModuleDict()
        self.bns = nn.ModuleDict()
        for N in self.nodes:
            nm = N["name"]
            if N["op"] == "conv":
                self.mods[nm] = nn.Conv2d(N["D"], N["C"], N["k"], stride=N["stride"], padding=N["pad"],
                                          groups=N["groups"], bias=N["bias"] or (folded and N["bn"]))
                if N["bn"] and not folded:
                    self.bns[nm] = nn.BatchNorm2d(N["C"])
            elif N["op"] == "fc":
                self.mods[nm] = nn.Linear(N["D"], N["C"])
            elif N["op"] == "affine":
                self.bns[nm] = nn.BatchNorm2d(N["in_shape"][1])
        # weights: normal, std sqrt(gain / fan_in); BatchNorm statistics as the chain networks draw them
        for N in self.nodes:
            if N["op"] in ("conv", "fc"):
                w = self.mods[N["name"]].weight
                nn.init.normal_(w, 0.0, math.sqrt(N["gain"] / w[0].numel()))
        with torch.no_grad():
            for bn in self.bns.values():
                bn.running_mean.normal_(0.0, 0.5)
                bn.running_var.uniform_(0.5, 2.0)
                bn.weight.uniform_(0.5, 1.5)
                bn.bias.normal_(0.0, 0.3)

    def forward(self, x, record=None):
        env = {"input": x}
        chunks = {}
        for N in self.nodes:
            op, nm = N["op"], N["name"]
            i = [env[n] for n in N["inputs"]]
            a = i[0]
            if op == "conv":
                y = self.mods[nm](a)
                if nm in self.bns:
                    y = self.bns[nm](y)
                y = F.relu(y) if N["act"] == "relu" else F.relu6(y) if N["act"] == "relu6" else y
            elif op == "fc":
                y = self.mods[nm](a)
            elif op == "pool":
                if N["ptype"] == "max":
                    y = F.max_pool2d(a, N["k"], N["stride"], N["pad"], ceil_mode=N["ceil"])
                else:
                    y = F.avg_pool2d(a, N["k"], N["stride"], N["pad"])
            elif op == "gap":
                y = F.adaptive_avg_pool2d(a, 1) if N["style"] == "adaptive" else \
                    a.mean((2, 3), keepdim=True) if N["style"] == "mean" else a.mean([2, 3])
            elif op == "flatten":
                y = torch.flatten(a, 1)
            elif op == "concat":
                y = torch.cat(i, 1)
            elif op == "slice":
                n = a.shape[1] // N["count"]
                key = (N["inputs"][0], n)
                if key not in chunks:
                    chunks[key] = a.chunk(n, dim=1)           # x1, x2 = x.chunk(2, dim=1)
                y = chunks[key][N["first"] // N["count"]]
            elif op == "shuffle":                              # torchvision's channel_shuffle
                b, c, h, w = a.size()
                y = a.view(b, N["groups"], c // N["groups"], h, w)
                y = torch.transpose(y, 1, 2).contiguous()
                y = y.view(b, -1, h, w)
            elif op == "act":
                y = torch_act(N["func"], a)
            elif op == "affine":
                y = self.bns[nm](a)
                y = F.relu(y) if N["relu"] else y
            elif op == "add":
                y = i[0] + i[1]
                y = F.relu(y) if N["relu"] else y
            elif op == "mul":
                y = i[0] * i[1]
            elif op == "residual":
                y = a + env[N["shortcut"]]
                y = F.relu(y) if N["relu"] else y
            env[nm] = y
            if record is not None:
                record[nm] = y
        return y


def graph_load_folded(net, path, model_bn):
    """The float model an importer of the exported file sees: each Conv and Gemm node's float weights and
    bias (BatchNorms folded by the exporter), in the order of the nodes; each BatchNormalization node left in
    the file (an Affine) gives its node's gamma, beta, mean, var and epsilon (float32 in the file), kept as
    float64 in node["bn"] for the integer parameters."""
    m = onnx.load(path)
    inits = {i.name: numpy_helper.to_array(i).copy() for i in m.graph.initializer}
    weighted = [n for n in m.graph.node if n.op_type in ("Conv", "Gemm")]
    bns = [n for n in m.graph.node if n.op_type == "BatchNormalization"]
    convs = [N for N in net["nodes"] if N["op"] in ("conv", "fc")]
    affines = [N for N in net["nodes"] if N["op"] == "affine"]
    if len(weighted) != len(convs) or len(bns) != len(affines):
        fail("%s: %d Conv/Gemm and %d BatchNormalization nodes, %d layers and %d affine maps"
             % (path, len(weighted), len(bns), len(convs), len(affines)))
    folded = GraphNet(net, folded=True).eval()
    with torch.no_grad():
        for N, n in zip(convs, weighted):
            mod = folded.mods[N["name"]]
            mod.weight.copy_(torch.from_numpy(inits[n.input[1]]))
            if len(n.input) > 2 and n.input[2]:
                if mod.bias is None:
                    fail("%s: node %s has a bias, layer %s none" % (path, n.name, N["name"]))
                mod.bias.copy_(torch.from_numpy(inits[n.input[2]]))
            elif mod.bias is not None:
                fail("%s: node %s has no bias, layer %s has one" % (path, n.name, N["name"]))
        for N, n in zip(affines, bns):
            eps = [helper.get_attribute_value(a) for a in n.attribute if a.name == "epsilon"]
            gamma, beta, mean, var = (inits[t] for t in n.input[1:5])
            bn = folded.bns[N["name"]]
            bn.load_state_dict(model_bn.bns[N["name"]].state_dict())
            for got, want in ((gamma, bn.weight), (beta, bn.bias), (mean, bn.running_mean), (var, bn.running_var)):
                if not np.array_equal(got, want.detach().numpy()):
                    fail("%s: BatchNormalization %s's parameters are not the model's" % (path, n.name))
            bn.eps = float(eps[0]) if eps else 1e-5   # the file's float32 epsilon
            N["bn"] = dict(gamma=gamma.astype(np.float64), beta=beta.astype(np.float64),
                           mean=mean.astype(np.float64), var=var.astype(np.float64),
                           eps=float(eps[0]) if eps else 1e-5, onnx_node=n.name)
    return folded


def affine_params(bn, e_x, e_y, what):
    """docs/real_networks.md, Affine: s_c = gamma_c / sqrt(var_c + eps), b_c = beta_c - mean_c * s_c (double);
    m_c = round_half_even(s_c * 2^(S + e_y - e_x)), o_c = round_half_even(b_c * 2^(S + e_y)) + 2^(S-1), S = 16
    lowered until every |m_c| < 2^23."""
    s = [g / math.sqrt(v + bn["eps"]) for g, v in zip(bn["gamma"].tolist(), bn["var"].tolist())]
    b = [bt - mu * sc for bt, mu, sc in zip(bn["beta"].tolist(), bn["mean"].tolist(), s)]
    S = 16
    while True:
        m = [round(math.ldexp(sc, S + e_y - e_x)) for sc in s]
        if all(abs(v) < 2 ** 23 for v in m):
            break
        S -= 1
        if S < 1:
            fail("%s: no shift keeps the factors below 2^23" % what)
    o = [round(math.ldexp(bc, S + e_y)) + 2 ** (S - 1) for bc in b]
    if any(abs(v) > 2 ** 30 for v in o):
        fail("%s: an offset beyond 2^30" % what)
    return m, o, S


def graph_quantize(net, model, x):
    """Exponents (docs/real_networks.md, "Post-training quantization" and "Graphs"): the maps of a
    concatenation (its inputs, itself, and what shares their planes: slices, shuffles, poolings of them) share
    one exponent, from the largest |value| over the calibrated maps among them; a slice, shuffle, pooling and
    flattening keep their input's; an identity residual unit's last convolution and sum take the shortcut's, calibrated over the shortcut and the
    sum alike;
    every other map (convolution, FC, table, affine, add, mul: after its folded ReLU) is calibrated on its
    float values. Then each node's integers."""
    rec = {}
    with torch.no_grad():
        model(x, rec)
    fm = {k: v.detach().to(torch.float64) for k, v in rec.items()}
    fm["input"] = x.to(torch.float64)
    net["float_maps"] = fm
    parent = {}

    def find(a):
        while parent.get(a, a) != a:
            a = parent[a]
        return a

    def union(a, b):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb

    calibrating = ["input"]
    for k, N in enumerate(net["nodes"]):
        op, nm = N["op"], N["name"]
        if op in ("pool", "gap", "flatten", "slice", "shuffle"):
            union(nm, N["inputs"][0])
        elif op == "concat":
            for i in N["inputs"]:
                union(nm, i)
        elif op == "residual":
            last = net["nodes"][k - 1]["name"]
            union(nm, N["shortcut"])
            union(last, N["shortcut"])
            calibrating.remove(last)
            calibrating.append(nm)          # the sum (after its ReLU) calibrates the unit's exponent too
        else:
            calibrating.append(nm)
    names = ["input"] + [N["name"] for N in net["nodes"]]
    groups = {}
    for nm in names:
        groups.setdefault(find(nm), []).append(nm)
    e_of = {}
    net["group_of"] = {}
    for members in groups.values():
        cal = [m for m in members if m in calibrating]
        if not cal:
            fail("%s: maps %s have no calibrated map" % (net["name"], members))
        key = cal[0] if len(cal) == 1 else "+".join(cal)
        mx = max(float(fm[m].abs().max()) for m in cal)
        e = calibrate(net, key, torch.tensor(mx), "%s (max over %s)" % (key, ", ".join(cal)))
        for m in members:
            e_of[m] = e
            net["group_of"][m] = dict(members=members, calibrated=cal, max_abs=mx, key=key)
    net["e_input"] = e_of["input"]
    net["e_output"] = e_of[names[-1]]
    for N in net["nodes"]:
        op, nm = N["op"], N["name"]
        N["e_in"] = e_of[N["inputs"][0]]
        N["e_out"] = e = e_of[nm]
        if op in ("conv", "fc"):
            mod = model.mods[nm]
            N["e_w"], N["w_q"] = quantize_weight(mod.weight, nm, N["e_in"], e)
            N["shift"] = checked_shift(N["e_in"], N["e_w"], e, nm)
            N["b_q"] = quantize_bias(mod.bias, sums_e(N["e_in"], N["e_w"]), nm)
            if N["act"] == "relu6":
                N["clamp_high"] = min(127, math.floor(6.0 * 2.0 ** e))
        elif op == "act":
            N["alpha"], N["beta"] = ACT_PARAMS.get(N["func"], (0.0, 0.0))
            N["table"] = act_table(N["func"], N["e_in"], e, N["alpha"], N["beta"])
            if N["func"] == "hardsigmoid" and N["table"] != act_table(N["func"], N["e_in"], e, 1.0 / 6.0, 0.5):
                fail("%s: the table differs between alpha = float32(1/6) (ONNX's) and 1/6" % nm)
            if N["func"] == "hardswish":
                # HardSigmoid(alpha = float32(1/6)) times x, as torch exports nn.Hardswish: where it rounds the
                # other way than the table (x / 6 in double, activations.cpp), at a tie of the exact function
                al, be = ACT_PARAMS["hardsigmoid"]
                N["onnx_alpha_differs"] = [
                    [v, N["table"][v + 128]] for v in range(-128, 128)
                    if N["table"][v + 128] != max(-128, min(127, round(math.ldexp(
                        math.ldexp(v, -N["e_in"]) * min(max(al * math.ldexp(v, -N["e_in"]) + be, 0.0), 1.0), e))))]
        elif op == "affine":
            N["m"], N["o"], N["S"] = affine_params(N["bn"], N["e_in"], e, nm)
        elif op == "add":
            ea, eb = e_of[N["inputs"][0]], e_of[N["inputs"][1]]
            E = max(ea, eb, e)
            N["e_a"], N["e_b"], N["shift_a"], N["shift_b"], N["shift"] = ea, eb, E - ea, E - eb, E - e
        elif op == "mul":
            ea, eb = e_of[N["inputs"][0]], e_of[N["inputs"][1]]
            N["e_a"], N["e_b"] = ea, eb
            N["shift"] = checked_shift(ea, eb, e, nm)
        elif op == "residual":
            assert e == e_of[N["shortcut"]] == N["e_in"]


def int_pool_end(x, ptype, k, stride, pad, pad_end):
    """A pooling with pad_end more zeros after the last row and column (a ceil-mode max pooling's last
    window), checked against the loops."""
    xp = F.pad(x, [0, pad_end, 0, pad_end])
    y = int_pool(xp, ptype, k, stride, pad)
    if not torch.equal(y, int_pool_loops(xp, ptype, k, stride, pad)):
        fail("int_pool with end padding differs from the loops")
    return y


def shuffle_index(C, g):
    """Output channel j * g + i is input channel i * (C / g) + j."""
    idx = [0] * C
    for i in range(g):
        for j in range(C // g):
            idx[j * g + i] = i * (C // g) + j
    return idx


def rounding_shift(v, s):
    """(v + r) >> s, r = 2^(s-1) if s > 0: rounds half up."""
    return (v + (1 << (s - 1))) >> s if s > 0 else v


def graph_reference(net, x_q):
    """The integer graph network on x_q (int8), every value an int64: its output (int8), every map, every
    layer's largest |accumulator|, and for every clamp how many values it changed."""
    env = {"input": x_q.to(torch.int64)}
    acc_max, clamps = {}, {}
    for N in net["nodes"]:
        op, nm = N["op"], N["name"]
        a = env[N["inputs"][0]]
        b = env[N["inputs"][1]] if len(N["inputs"]) > 1 else None
        if op in ("conv", "fc"):
            acc = int_conv(a, N["w_q"], N["stride"], N["pad"], N["groups"]) if op == "conv" else \
                a @ N["w_q"].to(torch.int64).t()
            acc_max[nm] = acc_checked(acc, nm)
            if N.get("b_q") is not None:
                bb = with_rounding(N["b_q"], N["shift"])
                acc = acc + (bb.view(1, -1, 1, 1) if op == "conv" else bb.view(1, -1))
                assert int(acc.abs().max()) < 2 ** 31
            if N["act"] in ("relu", "relu6"):
                acc = torch.clamp(acc, min=0)
            y = quan(acc, N["shift"], clamps, nm)
            if "clamp_high" in N:
                y = torch.clamp(y, max=N["clamp_high"])
        elif op == "pool":
            y = int_pool_end(a, N["ptype"], N["k"], N["stride"], N["pad"], N["pad_end"])
        elif op == "gap":
            y = int_pool(a, "avg", N["k"], N["k"], 0)        # truncates toward zero
            if N["style"] == "mean_flat":
                y = y.reshape(1, -1)
        elif op == "flatten":
            y = a.reshape(1, -1)
        elif op == "concat":
            y = torch.cat([env[n] for n in N["inputs"]], 1)
        elif op == "slice":
            y = a[:, N["first"]:N["first"] + N["count"]]
        elif op == "shuffle":
            y = a[:, shuffle_index(a.shape[1], N["groups"])]
        elif op == "act":
            y = torch.tensor(N["table"], dtype=torch.int64)[a + 128]
        elif op == "affine":
            C = a.shape[1]
            v = a * torch.tensor(N["m"], dtype=torch.int64).view(1, C, 1, 1) + \
                torch.tensor(N["o"], dtype=torch.int64).view(1, C, 1, 1)
            assert int(v.abs().max()) < 2 ** 31
            y = v >> N["S"]
            if N["relu"]:
                y = torch.clamp(y, min=0)
            clamps[nm] = clamp_count(y, "affine")
            y = torch.clamp(y, -128, 127)
        elif op == "add":
            acc = (a << N["shift_a"]) + (b << N["shift_b"])
            assert int(acc.abs().max()) < 2 ** 31
            y = rounding_shift(acc, N["shift"])
            if N["relu"]:
                y = torch.clamp(y, min=0)
            clamps[nm] = clamp_count(y, "add")
            y = torch.clamp(y, -128, 127)
        elif op == "mul":
            y = rounding_shift(a * b, N["shift"])              # b [1,C,1,1]: a channel multiply (broadcast)
            clamps[nm] = clamp_count(y, "mul")
            y = torch.clamp(y, -128, 127)
        elif op == "residual":
            s = a + env[N["shortcut"]]
            clamps[nm] = clamp_count(s, "MAT_ELE")
            y = torch.clamp(s, -128, 127)
            if N["relu"]:
                y = torch.clamp(y, min=0)
        assert int(y.min()) >= -128 and int(y.max()) <= 127, nm
        assert list(y.shape) == N["out_shape"], (nm, list(y.shape), N["out_shape"])
        env[nm] = y
    return y.to(torch.int8), env, acc_max, clamps


def build_qdq_graph(net):
    """The QDQ form of a graph network: a QuantizeLinear/DequantizeLinear pair at the map's scale after every
    node that makes a map (Flatten excepted); layouts are ONNX's (Concat, Split, Reshape/Transpose/Reshape),
    tables their activations between the pair (SiLU and Hardswish as torch writes them: Sigmoid or HardSigmoid
    and a Mul by the map), an Affine a float BatchNormalization (the exported file's parameters) and its Relu.
    Returns the model, map -> its int8 tensor, int8 tensor -> how the integer network rounds there (evaluate's
    qmodes), and the int8 tensors that may be a step away from the reference: the Affine maps (their factors
    are rounded) and a Hardswish's (the table's x / 6 against the graph's float32 alpha 1/6: a tie on one side
    is not on the other)."""
    g = Graph()
    env = {"input": g.qdq("input", net["e_input"], "input")}
    qmodes, affine_q = {}, []
    split_outs = {}
    last = net["nodes"][-1]
    f32 = lambda v: np.asarray(v, dtype=np.float32)
    i64 = lambda v: np.asarray(v, dtype=np.int64)
    for N in net["nodes"]:
        op, nm = N["op"], N["name"]
        x = env[N["inputs"][0]]
        mode = "exact"
        if op in ("conv", "fc"):
            w = [g.weight(nm, N["w_q"], N["e_w"])]
            if N.get("b_q") is not None:
                w.append(g.bias(nm, N["b_q"], sums_e(N["e_in"], N["e_w"])))
            if op == "conv":
                extra = dict(group=N["groups"]) if N["groups"] != 1 else {}
                y = g.node("Conv", [x] + w, nm + "_acc", nm, kernel_shape=[N["k"]] * 2, strides=[N["stride"]] * 2,
                           pads=[N["pad"]] * 4, **extra)
            else:
                y = g.node("Gemm", [x] + w, nm + "_acc", nm, transB=1)
            if N["act"] == "relu6":
                y = g.node("Clip", [y, g.init("clip_0", f32(0.0)), g.init("clip_6", f32(6.0))], nm + "_relu6",
                           nm + "_relu6")
            elif N["act"] == "relu":
                y = g.node("Relu", [y], nm + "_relu", nm + "_relu")
            mode = "half_up" if N.get("b_q") is not None else "floor"   # the rounding term in the bias
        elif op == "pool":
            a = dict(kernel_shape=[N["k"]] * 2, strides=[N["stride"]] * 2, pads=[N["pad"]] * 4)
            if N["ptype"] == "max":
                y = g.node("MaxPool", [x], nm + "_pool", nm, ceil_mode=int(N["ceil"]), **a)
            else:
                y = g.node("AveragePool", [x], nm + "_pool", nm, count_include_pad=1, **a)
                mode = "trunc"
        elif op == "gap":
            if N["style"] == "adaptive":
                y = g.node("GlobalAveragePool", [x], nm + "_pool", nm)
            else:
                y = g.node("ReduceMean", [x], nm + "_pool", nm, axes=[2, 3], keepdims=int(N["style"] == "mean"))
            mode = "trunc"
        elif op == "flatten":
            env[nm] = g.node("Flatten", [x], nm, nm, axis=1)
            continue
        elif op == "concat":
            y = g.node("Concat", [env[n] for n in N["inputs"]], nm + "_cat", nm, axis=1)
        elif op == "slice":
            C = N["in_shape"][1]
            key = (N["inputs"][0], N["count"])
            if key not in split_outs:
                n = C // N["count"]
                outs = ["%s_split%d" % (N["inputs"][0], k) for k in range(n)]
                g.nodes.append(helper.make_node("Split", [x, g.init("split_%s" % "_".join([str(N["count"])] * n),
                                                                    i64([N["count"]] * n))],
                                                outs, name=N["inputs"][0] + "_split", axis=1))
                split_outs[key] = outs
            y = split_outs[key][N["first"] // N["count"]]
        elif op == "shuffle":
            _, C, H, W = N["in_shape"]
            G = N["groups"]
            y = g.node("Reshape", [x, g.init("shape_%d_%d_%d_%d_%d" % (1, G, C // G, H, W), i64([1, G, C // G, H, W]))],
                       nm + "_groups", nm + "_reshape")
            y = g.node("Transpose", [y], nm + "_transposed", nm + "_transpose", perm=[0, 2, 1, 3, 4])
            y = g.node("Reshape", [y, g.init("shape_%d_%d_%d_%d" % (1, C, H, W), i64([1, C, H, W]))], nm + "_shuffled",
                       nm + "_reshape_back")
        elif op == "act":
            f = N["func"]
            if f in ("sigmoid", "silu"):
                y = g.node("Sigmoid", [x], nm + "_sigmoid", nm + "_sigmoid")
            elif f in ("hardsigmoid", "hardswish"):
                al, be = ACT_PARAMS["hardsigmoid"]
                y = g.node("HardSigmoid", [x], nm + "_hardsigmoid", nm + "_hardsigmoid", alpha=al, beta=be)
            else:
                fail("QDQ form: activation %s" % f)
            if f in ("silu", "hardswish"):
                y = g.node("Mul", [x, y], nm + "_mul", nm + "_mul")
            mode = "even"
            if f == "hardswish":   # the table computes x / 6, the graph float32(1/6) * x: ties may part
                affine_q.append(nm + "_q")
        elif op == "affine":
            bn = N["bn"]
            p = [g.init("%s.%s" % (nm, k), f32(bn[k])) for k in ("gamma", "beta", "mean", "var")]
            y = g.node("BatchNormalization", [x] + p, nm + "_bn", nm, epsilon=bn["eps"])
            if N["relu"]:
                y = g.node("Relu", [y], nm + "_relu", nm + "_relu")
            mode = "even"
            affine_q.append(nm + "_q")
        elif op in ("add", "mul"):
            y = g.node(op.capitalize(), [x, env[N["inputs"][1]]], nm + "_" + op, nm)
            if N.get("relu"):
                y = g.node("Relu", [y], nm + "_relu", nm + "_relu")
            mode = "half_up"
        elif op == "residual":
            y = g.node("Add", [x, env[N["shortcut"]]], nm + "_sum", nm)
            if N["relu"]:
                y = g.node("Relu", [y], nm + "_relu", nm + "_relu")
        final = N is last
        env[nm] = g.qdq(y, N["e_out"], nm, final)
        qmodes[nm + "_q"] = mode
    assert env[last["name"]] == "output"
    doc = ("%s in QDQ int8 form: int8 weights and power-of-two scales 2^-e, zero points 0 "
           "(vectors/nets/%s_quant.json); made by tools/make_reference_nets.py" % (net["name"], net["name"]))
    return (g.model(net["name"], "_qdq", net["input"], TensorProto.FLOAT, net["out_shape"], OPSET, doc),
            g.qtensors, qmodes, affine_q)


def graph_layer_list(net):
    """The layer list (mapper/README.md) with the graph syntax: `as=NAME` on every line, `in=A,B` where a
    layer does not read the line before it. Returns the text and node name -> its line number."""
    lines = ["# %s: %s" % (net["name"], net["what"]),
             "# made by tools/make_reference_nets.py; shift=N is each layer's QUAN shift e_x + e_w - e_y, an act's",
             "# table is activation_table(FUNC, ein, eout), an affine's per-channel factors and offsets are in",
             "# %s_quant.json (a layer list cannot carry them); what it computes: docs/real_networks.md" % net["name"],
             "network %s" % net["name"]]
    _, C, H, W = net["input"]
    lines.append("%-57s # e=%d" % ("input %d %d %d" % (W, H, C), net["e_input"]))
    line_of = {}
    alias = {}           # a Flatten is no line: the FC after it reads its input
    prev = "input"
    for N in net["nodes"]:
        op, nm = N["op"], N["name"]
        ins = [alias.get(n, n) for n in N["inputs"]]
        if op == "flatten":
            alias[nm] = ins[0]
            continue
        c = ""
        if op == "conv":
            t = "conv %d %d %d %d" % (N["k"], N["k"], N["D"], N["C"])
            if N["stride"] != 1:
                t += " stride=%d" % N["stride"]
            if N["pad"]:
                t += " pad=%d" % N["pad"]
            t += " act=%s %s" % ("none" if N["act"] == "none" else "relu", shift_fields(N["shift"]))
            if N["groups"] != 1:
                t += " groups=%d" % N["groups"]
            c = "e_x %d, e_w %s, e_y %d" % (N["e_in"], e_text(N["e_w"]), N["e_out"])
            if N.get("b_q") is not None:
                c += "; bias in the ONNX files"
            if N["bn"]:
                c += "; BatchNorm folded"
        elif op == "fc":
            t = "fc %d %d act=none %s" % (N["D"], N["C"], shift_fields(N["shift"]))
            c = "e_x %d, e_w %s, e_y %d; bias in the ONNX files" % (N["e_in"], e_text(N["e_w"]), N["e_out"])
        elif op == "pool":
            t = "pool %s %d %d" % (N["ptype"], N["k"], N["k"])
            if N["stride"] != N["k"] or N["pad"] or N["pad_end"]:
                t += " stride=%d" % N["stride"]
            if N["pad"]:
                t += " pad=%d" % N["pad"]
            if N["pad_end"]:
                t += " padend=%d" % N["pad_end"]
            c = "e=%d" % N["e_out"] + ("; ceil_mode" if N["ceil"] else "")
        elif op == "gap":
            t = "pool avg %d %d" % (N["k"], N["k"])
            c = "global average (%s), e=%d" % (dict(adaptive="GlobalAveragePool", mean="ReduceMean",
                                                   mean_flat="ReduceMean keepdims=0: flattened")[N["style"]], N["e_out"])
        elif op == "concat":
            t = "concat"
            c = "e=%d" % N["e_out"]
        elif op == "slice":
            t = "slice %d %d" % (N["first"], N["count"])
            c = "e=%d" % N["e_out"]
        elif op == "shuffle":
            t = "shuffle %d" % N["groups"]
            c = "e=%d" % N["e_out"]
        elif op == "act":
            t = "act %s ein=%d eout=%d" % (N["func"], N["e_in"], N["e_out"])
            if N["func"] in ("hardsigmoid", "leakyrelu"):
                t += " alpha=%r" % N["alpha"]
            if N["func"] == "hardsigmoid":
                t += " beta=%r" % N["beta"]
        elif op == "affine":
            t = "affine shift=%d%s" % (N["S"], " act=relu" if N["relu"] else "")
            c = "e_x %d, e_y %d; BatchNorm %s" % (N["e_in"], N["e_out"], N["bn"]["onnx_node"])
        elif op == "add":
            t = "add%s shift=%d shifta=%d shiftb=%d" % (" act=relu" if N["relu"] else "", N["shift"], N["shift_a"],
                                                       N["shift_b"])
            c = "e_a %d, e_b %d, e_y %d" % (N["e_a"], N["e_b"], N["e_out"])
        elif op == "mul":
            t = "mul shift=%d" % N["shift"]
            c = "e_a %d, e_b %d, e_y %d%s" % (N["e_a"], N["e_b"], N["e_out"],
                                             "; channel multiply" if N["channel"] else "")
        elif op == "residual":
            t = "residual end shortcut=identity act=%s" % ("relu" if N["relu"] else "none")
            c = "MAT_ELE after the convolution above, e=%d" % N["e_out"]
        if op == "residual":
            t += " in=%s" % N["shortcut"]
        elif op in ("concat", "add", "mul") or ins != [prev]:
            t += " in=%s" % ",".join(ins)
        t += " as=%s" % nm
        lines.append(("%-57s # %s" % (t, c)) if c else t)
        line_of[nm] = len(lines)
        prev = nm
    return "\n".join(lines) + "\n", line_of


def graph_quant_json(net, qdq_tensors, line_of):
    maps = [dict(map="input", e=net["e_input"], shape=list(net["input"]), qdq_tensor=qdq_tensors["input"],
                 calibrated_max_abs=net["group_of"]["input"]["max_abs"])]
    layers = []
    for N in net["nodes"]:
        op, nm = N["op"], N["name"]
        d = dict(name=nm, op=op, inputs=N["inputs"])
        if nm in line_of:
            d["net_line"] = line_of[nm]
        if op in ("conv", "fc"):
            if op == "conv":
                d.update(kernel=[N["k"], N["k"]], stride=N["stride"], pad=N["pad"], D=N["D"], C=N["C"])
                if N["groups"] != 1:
                    d["groups"] = N["groups"]
            else:
                d.update(IN=N["D"], OUT=N["C"])
            d.update(relu=N["act"] != "none", e_x=N["e_in"], e_w=N["e_w"], e_y=N["e_out"], **json_shift(N["shift"]),
                     max_abs_acc=net["acc_max"][nm])
            if N.get("b_q") is not None:
                d["bias"] = N["b_q"].tolist()
            if N["bn"] if op == "conv" else False:
                d["batchnorm"] = "folded by torch.onnx.export into the weights and bias"
            if "clamp_high" in N:
                d.update(activation="relu6", clamp_high=N["clamp_high"])
        elif op == "pool":
            d.update(type=N["ptype"], kernel=[N["k"], N["k"]], stride=N["stride"], pad=N["pad"], pad_end=N["pad_end"],
                     ceil_mode=N["ceil"], e=N["e_out"])
        elif op == "gap":
            d.update(op="pool", type="avg", kernel=[N["k"], N["k"]], stride=N["k"], pad=0, global_average=True,
                     onnx=dict(adaptive="GlobalAveragePool", mean="ReduceMean keepdims=1",
                               mean_flat="ReduceMean keepdims=0 (flattened)")[N["style"]], e=N["e_out"])
        elif op == "flatten":
            d.update(order="[C][H][W]", e=N["e_out"])
        elif op == "slice":
            d.update(first=N["first"], count=N["count"], e=N["e_out"])
        elif op == "shuffle":
            d.update(groups=N["groups"], e=N["e_out"],
                     order="output channel j * g + i is input channel i * (C / g) + j")
        elif op == "concat":
            d.update(e=N["e_out"])
        elif op == "act":
            d.update(op="table", function=N["func"], e_x=N["e_in"], e_y=N["e_out"])
            if N["func"] in ("hardsigmoid", "leakyrelu"):
                d["alpha"] = N["alpha"]
            if N["func"] == "hardsigmoid":
                d["beta"] = N["beta"]
            d["table"] = N["table"]
            if N.get("onnx_alpha_differs"):
                d["note"] = ("t[x + 128] for x, t at %s: HardSigmoid with ONNX's float32 alpha 1/6 times x rounds the "
                             "other way there (the exact value is a tie; the table computes x / 6 in double)"
                             % N["onnx_alpha_differs"])
        elif op == "affine":
            d.update(relu=N["relu"], e_x=N["e_in"], e_y=N["e_out"], S=N["S"], m=N["m"], o=N["o"],
                     epsilon=N["bn"]["eps"], onnx_node=N["bn"]["onnx_node"])
        elif op == "add":
            d.update(relu=N["relu"], e_a=N["e_a"], e_b=N["e_b"], e_y=N["e_out"], shift=N["shift"],
                     shift_a=N["shift_a"], shift_b=N["shift_b"])
        elif op == "mul":
            d.update(op="channel_mul" if N["channel"] else "mul", e_a=N["e_a"], e_b=N["e_b"], e_y=N["e_out"],
                     shift=N["shift"])
        elif op == "residual":
            d.update(op="residual_end", shortcut="identity", unit_input=N["shortcut"], relu=N["relu"], e=N["e_out"])
        layers.append(d)
        if op != "flatten":
            m = dict(map=nm, e=N["e_out"], shape=N["out_shape"], qdq_tensor=qdq_tensors[nm])
            grp = net["group_of"][nm]
            if nm in grp["calibrated"]:
                m["calibrated_max_abs"] = float(net["float_maps"][nm].abs().max())
            if len(grp["members"]) > 1:
                m["exponent_from"] = ("max |a| %r over %s" % (grp["max_abs"], ", ".join(grp["calibrated"])))
            maps.append(m)
    return dict(network=net["name"], description=net["what"], seed=net["seed"],
                note="real = int8 * 2^-e; shift = e_x + e_w - e_y; tables t[x + 128]; docs/real_networks.md",
                input=dict(shape=list(net["input"]), e=net["e_input"]),
                output=dict(shape=net["out_shape"], e=net["e_output"]),
                maps=maps, layers=layers)


def run_graph(net, ort, summary):
    name = net["name"]
    graph_shapes(net)
    torch.manual_seed(net["seed"])
    model_bn = GraphNet(net).eval()
    x = torch.randn(*net["input"], generator=torch.Generator().manual_seed(net["seed"] + 1))
    p = lambda suffix: os.path.join(OUT_DIR, name + suffix)
    torch.onnx.export(model_bn, (x,), p(".onnx"), opset_version=OPSET, input_names=["input"], output_names=["output"],
                      do_constant_folding=True)
    onnx.checker.check_model(onnx.load(p(".onnx")), full_check=True)
    model = graph_load_folded(net, p(".onnx"), model_bn)
    with torch.no_grad():
        y_bn = model_bn(x)
        if not torch.allclose(model(x), y_bn, rtol=1e-4, atol=1e-5):
            fail("%s: the folded network differs from the one with BatchNorm" % name)
    graph_quantize(net, model, x)
    x_q = quantize_input(x, net["e_input"])
    ref, net["int_maps"], net["acc_max"], clamps = graph_reference(net, x_q)
    clamps["input"] = input_clamps(x, net["e_input"])
    with torch.no_grad():
        y_float = model(x)
    x_hot = HOT_GAIN * x + torch.randn(*net["input"],
                                       generator=torch.Generator().manual_seed(net["seed"] + HOT_SEED_OFFSET))
    x_hot_q = quantize_input(x_hot, net["e_input"])
    ref_hot, hot_maps, hot_acc_max, hot_clamps = graph_reference(net, x_hot_q)
    hot_clamps["input"] = input_clamps(x_hot, net["e_input"])
    with torch.no_grad():
        y_float_hot = model(x_hot)

    sizes = {".onnx": os.path.getsize(p(".onnx"))}
    qdq, qdq_tensors, qmodes, affine_q = build_qdq_graph(net)
    sizes["_qdq.onnx"] = save_onnx(p("_qdq.onnx"), qdq)
    save_npy(p("_input.npy"), x.numpy().astype(np.float32))
    save_npy(p("_input_int8.npy"), x_q.numpy())
    save_npy(p("_reference.npy"), ref.numpy())
    save_npy(p("_input_hot.npy"), x_hot.numpy().astype(np.float32))
    save_npy(p("_input_hot_int8.npy"), x_hot_q.numpy())
    save_npy(p("_reference_hot.npy"), ref_hot.numpy())
    text, line_of = graph_layer_list(net)
    with open(p(".net"), "w") as f:
        f.write(text)
    with open(p("_quant.json"), "w") as f:
        f.write(json_text(graph_quant_json(net, qdq_tensors, line_of)))
    for s in ("_input.npy", "_input_int8.npy", "_reference.npy", "_input_hot.npy", "_input_hot_int8.npy",
              "_reference_hot.npy", ".net", "_quant.json"):
        sizes[s] = os.path.getsize(p(s))
    for s, b in sizes.items():
        if s.endswith(".onnx") and b > 100 * 1024:
            fail("%s%s is %d bytes, more than 100 KB" % (name, s, b))

    # --- checks with the interpreter
    xin = np.load(p("_input.npy"))
    xin_hot = np.load(p("_input_hot.npy"))
    float_m = onnx.load(p(".onnx"))
    for feed, want, what in ((xin, y_float, "input"), (xin_hot, y_float_hot, "hot input")):
        env = evaluate(float_m, {"input": feed})
        if not np.allclose(env["output"], want.numpy(), rtol=1e-4, atol=1e-5):
            fail("%s.onnx evaluated on the %s differs from the torch model (max |diff| %g)"
                 % (name, what, float(np.abs(env["output"] - want.numpy()).max())))
    float_ops = sorted({n.op_type for n in float_m.graph.node})
    qdq_m = onnx.load(p("_qdq.onnx"))
    forced_notes = []

    def check_quantized(xin, maps, what):
        """The QDQ graph, each QuantizeLinear rounding as the integer network does there, gives the integer
        reference map by map; an Affine's or a Hardswish's map may be a step away (build_qdq_graph), counted,
        and then replaced by the reference's so that what follows is checked exactly."""
        forced = {}
        force = {q: maps[q[:-2]].numpy() for q in affine_q}
        env_exact = evaluate(qdq_m, {"input": xin}, qmodes=qmodes, force=force, forced=forced)
        for m, tname in qdq_tensors.items():
            if not np.array_equal(env_exact[tname].astype(np.int64), maps[m].numpy()):
                fail("%s_qdq.onnx on %s, map %s (%s) differs from the integer reference" % (name, what, m, tname))
        for q, (n, d) in forced.items():
            if d > 1:
                fail("%s_qdq.onnx on %s: the float graph's %s is %d steps from the reference" % (name, what, q, d))
            forced_notes.append("%s on %s: %d of %d values one step from the float graph's"
                                % (q[:-2], os.path.basename(what), n, maps[q[:-2]].numel()))
        env_round = evaluate(qdq_m, {"input": xin})
        return env_round["output_q" if False else qdq_tensors[net["nodes"][-1]["name"]]].astype(np.int64)

    y_round = check_quantized(xin, net["int_maps"], p("_input.npy"))
    if not np.array_equal(quantize_input(torch.from_numpy(xin_hot), net["e_input"]).numpy(),
                          np.load(p("_input_hot_int8.npy"))):
        fail("%s_input_hot_int8.npy is not %s_input_hot.npy quantized" % (name, name))
    y_round_hot = check_quantized(xin_hot, hot_maps, p("_input_hot.npy"))
    ort_note = "onnxruntime not installed: not run"
    if ort is not None:
        notes = []
        for suffix in (".onnx", "_qdq.onnx"):
            sess = ort.InferenceSession(p(suffix), providers=["CPUExecutionProvider"])
            for tag, feed, yf_, yr_ in (("", xin, y_float, y_round), (" (hot input)", xin_hot, y_float_hot, y_round_hot)):
                got = sess.run(None, {"input": feed})[0]
                want = yf_.numpy() if suffix == ".onnx" else yr_ * 2.0 ** -net["e_output"]
                notes.append("%s%s%s: max |onnxruntime - expected| %.3g" % (name, suffix, tag, float(np.abs(got - want).max())))
        ort_note = "; ".join(notes)

    # --- report
    e_out = net["e_output"]
    y_int = ref.numpy().astype(np.float64) * 2.0 ** -e_out
    yf = y_float.numpy().astype(np.float64)
    err = float(np.abs(yf - y_int).max())
    corr = float(np.corrcoef(yf.ravel(), y_int.ravel())[0, 1])
    net["correlation"] = corr
    diff_round = y_round - ref.numpy().astype(np.int64)
    rows = []
    print("\n== %s: %s" % (name, net["what"]))
    hdr = "%-11s %-11s %-9s %6s %4s %4s %8s %9s %11s %7s %6s %8s" % (
        "map", "op", "shape", "e_x", "e_w", "e", "shift", "max|acc|", "int8 range", "nonzero", "satur.", "float/127")
    print(hdr)
    rows.append(hdr)

    def row(m, op, shape, e_x, e_w, e, shift, acc):
        v = net["int_maps"][m]
        fm = net["float_maps"].get(m)
        use = "" if fm is None else "%.2f" % (float(fm.abs().max()) * 2.0 ** e / 127)
        sat = float(((v == 127) | (v == -128)).double().mean())
        r = "%-11s %-11s %-9s %6s %4s %4d %8s %9s %11s %6.0f%% %5.1f%% %8s" % (
            m, op, "x".join(str(d) for d in shape[1:]), e_x, e_w, e, shift, acc,
            "[%d,%d]" % (int(v.min()), int(v.max())), 100 * float((v != 0).double().mean()), 100 * sat, use)
        print(r)
        rows.append(r)

    row("input", "", net["input"], "", "", net["e_input"], "", "")
    warnings = []
    for N in net["nodes"]:
        op, nm = N["op"], N["name"]
        e_x, e_w, sh, acc = N["e_in"], "", "", ""
        if op in ("conv", "fc"):
            e_w, sh, acc = e_text(N["e_w"]), e_text(N["shift"]), net["acc_max"][nm]
        elif op == "affine":
            sh = "S=%d" % N["S"]
        elif op in ("add", "mul"):
            e_x = "%d,%d" % (N["e_a"], N["e_b"])
            sh = "%d" % N["shift"] if op == "mul" else "%d/%d/%d" % (N["shift"], N["shift_a"], N["shift_b"])
        elif op == "flatten":
            continue
        label = N.get("func", "ch_mul" if N.get("channel") else "gap" if op == "gap" else op)
        row(nm, label, N["out_shape"], e_x, e_w, N["e_out"], sh, acc)
        v = net["int_maps"][nm]
        if int(v.abs().max()) < 16:
            warnings.append("%s: int8 values use little of the range (max |v| = %d)" % (nm, int(v.abs().max())))
    line = ("output e=%d; float model vs dequantized integer reference: correlation r = %.4f, max |error| %.4f "
            "(%.1f%% of max |float| %.3f), argmax %s (float %d, integer %d%s); ONNX rounding (QDQ evaluated, half to "
            "even everywhere) vs the reference: %d of %d outputs differ, by %+d to %+d steps" % (
                e_out, corr, err, 100 * err / float(np.abs(yf).max()), float(np.abs(yf).max()),
                "agrees" if int(yf.argmax()) == int(y_int.argmax()) else "DIFFERS", int(yf.argmax()),
                int(y_int.argmax()), argmax_note(yf, ref.numpy()[0]), int((diff_round != 0).sum()), diff_round.size,
                int(diff_round.min()), int(diff_round.max())))
    print(line)
    print("reference int8: %s" % ref.numpy().tolist())
    print("float ONNX operators: %s" % ", ".join(float_ops))
    for fnote in forced_notes:
        print("affine/hardswish vs the QDQ graph's float BatchNormalization/HardSigmoid: " + fnote)
    hit = ["%s %s %d" % (m, c["clamp"], c["hi"] + c["lo"]) for m, c in clamps.items() if c["hi"] + c["lo"]]
    cold_line = ("clamps on %s_input.npy: %s" % (name, ", ".join(hit) if hit else
                 "none changes a value (input, QUAN, affine, add, mul and MAT_ELE)"))
    print(cold_line)
    print("hot input: %s_input_hot.npy = %g * %s_input.npy + N(0,1) (seed %d), the same integer network"
          % (name, HOT_GAIN, name, net["seed"] + HOT_SEED_OFFSET))
    hot_rows = []
    hdr = "%-11s %-9s %4s %8s %9s %11s %7s %6s %6s %6s" % (
        "map", "shape", "e", "shift", "max|acc|", "int8 range", "clamp", ">127", "<-128", "of")
    print(hdr)
    hot_rows.append(hdr)
    for m in ["input"] + [N["name"] for N in net["nodes"] if N["op"] != "flatten"]:
        N = next((N for N in net["nodes"] if N["name"] == m), None)
        v = hot_maps[m]
        c = hot_clamps.get(m)
        sh = "" if N is None or "shift" not in N else N["shift"]
        r = "%-11s %-9s %4d %8s %9s %11s" % (m, "x".join(str(d) for d in v.shape[1:]),
                                            net["e_input"] if N is None else N["e_out"], sh,
                                            hot_acc_max.get(m, ""), "[%d,%d]" % (int(v.min()), int(v.max())))
        r += " %7s %6d %6d %6d" % (c["clamp"], c["hi"], c["lo"], c["n"]) if c else " %7s" % "-"
        print(r)
        hot_rows.append(r)
    yh_int = ref_hot.numpy().astype(np.float64) * 2.0 ** -e_out
    yhf = y_float_hot.numpy().astype(np.float64)
    errh = float(np.abs(yhf - yh_int).max())
    corr_hot = float(np.corrcoef(yhf.ravel(), yh_int.ravel())[0, 1])
    diff_round_hot = y_round_hot - ref_hot.numpy().astype(np.int64)
    hot_line = ("float model on the hot input vs the dequantized hot reference: correlation r = %.4f, max |error| %.4f "
                "(%.1f%% of max |float| %.3f), argmax %s (float %d, integer %d); ONNX rounding vs the hot reference: "
                "%d of %d outputs differ, by %+d to %+d steps" % (
                    corr_hot, errh, 100 * errh / float(np.abs(yhf).max()), float(np.abs(yhf).max()),
                    "agrees" if int(yhf.argmax()) == int(yh_int.argmax()) else "differs", int(yhf.argmax()),
                    int(yh_int.argmax()), int((diff_round_hot != 0).sum()), diff_round_hot.size,
                    int(diff_round_hot.min()), int(diff_round_hot.max())))
    print(hot_line)
    print("hot reference int8: %s" % ref_hot.numpy().tolist())
    print(ort_note)
    for w in warnings:
        print("warning: " + w)
    files = ", ".join("%s%s %d B" % (name, s, b) for s, b in sizes.items())
    print("files: " + files)
    extra = "The float ONNX file's operators: %s. %s" % (
        ", ".join(float_ops),
        ("The QDQ file evaluated with each QuantizeLinear rounding as the integer network does there gives the "
         "reference map by map but for the Affine maps (against the float BatchNormalization) and a Hardswish's "
         "(against HardSigmoid with ONNX's float32 alpha, times x), which may be a step away: %s." % "; ".join(forced_notes))
        if forced_notes else "The QDQ file evaluated with each QuantizeLinear rounding as the integer network does "
                             "there gives the reference map by map.")
    summary.append(dict(name=name, what=net["what"], rows=rows, line=line, files=files, ort=ort_note,
                        warnings=warnings, ref=ref.numpy().tolist(), cold_line=cold_line, hot_rows=hot_rows,
                        hot_line=hot_line, ref_hot=ref_hot.numpy().tolist(), hot_clamps=hot_clamps,
                        hot_seed=net["seed"] + HOT_SEED_OFFSET, saturation=False, net_text=text, extra=extra))


README_HEAD = """# vectors/nets/ — small real networks and their bit-exact integer references

Made by `tools/make_reference_nets.py` (Debian's Python, which has PyTorch 1.13 and ONNX 1.12; fixed seeds,
so the files come out the same every time). Regenerate everything here, this file included, with

    /usr/bin/python3 tools/make_reference_nets.py

What the integer network computes is docs/real_networks.md; the layer-list format and the fusion of
layers into blocks are mapper/README.md ("Layer-list files", "Operations and blocks").

## Files, for each network NAME

| file | what |
| --- | --- |
| `NAME.onnx` | the float model (biases in `lenet_bias`, `bn_res_cnn`, `dw_cnn` only, with their BatchNorms folded in by the exporter), `torch.onnx.export`, opset 13, input `input`, output `output`; an average pooling is exported as torch writes `nn.AvgPool2d`'s default `count_include_pad=1`: a `Pad` node (of nothing, when unpadded) before the `AveragePool`, which the import takes as the pooling's padding |
| `NAME_qdq.onnx` | the same network in ONNX's QDQ int8 form, built with `onnx.helper`, opset 13: int8 weight initializers `L.weight_int8` through DequantizeLinear (scale 2^-e_w, zero point int8 0; a layer whose weights are per output channel has a 1-D scale `L.weight_scale`, 2^-e_w[c], axis 0, and its bias one `L.bias_scale`, 2^-(e_x + e_w[c])); the float input through QuantizeLinear/DequantizeLinear at 2^-e_input; after every Conv/Gemm (and its Relu), pooling and residual Add + Relu a QuantizeLinear/DequantizeLinear pair at the map's scale 2^-e (pooling keeps its input's scale); Flatten and a residual block's start have none. The last DequantizeLinear gives `output` (float) |
| `NAME_qlinear.onnx` | (`mlp`, `tiny_cnn`; not `res_cnn` and `stride_cnn`, whose Add and AveragePool have no QLinear form here) QuantizeLinear on the input, QLinearConv / QLinearMatMul (int8 weights; QLinearMatMul's B is [IN,OUT]; per-channel weights: a 1-D w_scale / b_scale, one per filter or column), int8 Relu (opset 14, so the file is opset 14), int8 MaxPool, Flatten, a DequantizeLinear at the end; scales 2^-e, zero points 0 |
| `NAME_input.npy` | the float32 input, [1,C,H,W] (CNNs) or [1,N] (mlp), drawn from N(0,1); also the calibration input |
| `NAME_input_int8.npy` | that input quantized: `clamp(round_half_even(x * 2^e_input), -128, 127)`, int8 |
| `NAME_reference.npy` | the integer network's output, int8 [1,10], real = value * 2^-e_output |
| `NAME_input_hot.npy` | a second float32 input, same shape: 3 * `NAME_input.npy` + another N(0,1) draw (seed + 2); not a calibration input |
| `NAME_input_hot_int8.npy` | that input quantized with the same e_input: `clamp(round_half_even(x * 2^e_input), -128, 127)`, int8 (many values saturate) |
| `NAME_reference_hot.npy` | the same integer network's output on it (the same exponents and shifts, `NAME_qdq.onnx` / `NAME.net`), int8 [1,10] |
| `NAME.net` | the network as a layer list, `shift=N` on every conv, fc and projection `residual end` (and `shifts=A,B,...`, one per output channel, on those whose weights are per channel; `shift` is then the smallest): what an importer of `NAME_qdq.onnx` must produce (comments give the layer names and exponents) |
| `NAME_quant.json` | for people and tests: every map's exponent e (real = int8 * 2^-e), shape and tensor name in the QDQ (and QLinear) file, and for the calibrated maps the float max abs value the exponent came from; every layer's e_x, e_w (a list, one per output channel, where the weights are per channel; `shifts` then too), e_y, shift and largest accumulator, in order |

The graph networks (`fire_cnn`, `dense_cnn`, `shuffle_cnn`, `se_cnn`, below) have the same files but
`NAME_qlinear.onnx`, with these differences:

- `NAME.onnx`: as `torch.onnx.export` (PyTorch 1.13, opset 13, constant folding) writes the blocks: `torch.cat` a
  `Concat`; `x.chunk(2, dim=1)` a `Slice` whose ends come from `Shape`, `Gather`, `Add`, `Div`, `Mul` (fire and
  dense have none) or, after a `channel_shuffle` (whose `view(b, -1, h, w)` leaves the channel count unknown to
  the exporter), a `SplitToSequence` with `SequenceAt` (its split computed by `ConstantOfShape`, `Equal`,
  `Where`, `Expand`, `Sub`), and the second `channel_shuffle`'s shapes computed by `Shape`, `Gather`, `Div`,
  `Cast`, `Unsqueeze`, `Concat`; `nn.SiLU` is `Sigmoid` and `Mul`, `nn.Hardswish` `HardSigmoid` (alpha 1/6 as
  float32, beta 0.5) and `Mul`, `nn.Hardsigmoid` `HardSigmoid`; `nn.AdaptiveAvgPool2d(1)` a
  `GlobalAveragePool`, `x.mean((2, 3), keepdim=True)` and `x.mean([2, 3])` a `ReduceMean` (keepdims 1 and 0);
  `MaxPool2d(3, 2, ceil_mode=True)` a `MaxPool` with `ceil_mode = 1`; a BatchNorm after a convolution is
  folded, one after a concatenation or a pooling stays a `BatchNormalization`.
- `NAME_qdq.onnx`: a QuantizeLinear/DequantizeLinear pair after every node that makes a map (a Flatten
  excepted), at the map's scale: convolutions and Gemm as above; `Concat`; a slice as `Split` (static sizes);
  a shuffle as `Reshape` [1, g, C/g, H, W], `Transpose` [0, 2, 1, 3, 4], `Reshape` [1, C, H, W]; a table as its
  activation between the pairs (SiLU as `Sigmoid` and `Mul` by the map, Hardswish as `HardSigmoid` and `Mul`);
  an Affine as the exported file's float `BatchNormalization` and its `Relu`; Add and Mul as `Add`/`Mul` (and
  `Relu`); the residual unit as `Add`; pooling as `MaxPool` (`ceil_mode`), `AveragePool`, `GlobalAveragePool`
  or `ReduceMean`.
- `NAME.net`: the layer list with the graph syntax (below); every line has `as=NAME` (the node's name, as in
  the JSON) and `in=A,B` where it does not read the line before it.
- `NAME_quant.json`: every map's e, shape, QDQ tensor, its calibrated max |a| and, for a map that shares its
  exponent with others, which maps it came from (`exponent_from`); every node in order with its `inputs`, its
  `net_line` in `NAME.net`, and its integers: conv/fc as above; `table` with `function`, e_x, e_y (`alpha`,
  `beta`) and the 256 entries `t[x + 128]`; `affine` with `m`, `o`, `S`, `relu`, the ONNX node and its
  float32 epsilon; `add` with `shift`, `shift_a`, `shift_b`, `relu`; `mul` / `channel_mul` with `shift`;
  `slice` first/count, `shuffle` groups, `concat`, a pooling's `pad_end` and `ceil_mode`, `residual_end`
  with its `unit_input`.

## How they were made

- Weights: normal, standard deviation sqrt(2 / fan_in) before a ReLU and sqrt(1 / fan_in) otherwise (a
  residual branch's last convolution, the projection, a convolution without ReLU, the last FC); no biases in
  the first four networks. Input: N(0, 1).
- `lenet_bias`, `bn_res_cnn`, `dw_cnn` are written as PyTorch users write them: `nn.Conv2d` and `nn.Linear`
  with their default biases (PyTorch's init, U(+-1/sqrt(fan_in))), `nn.BatchNorm2d` after the convolutions
  with statistics as training leaves them (mean N(0, 0.5), var U(0.5, 2), scale U(0.5, 1.5), shift
  N(0, 0.3)), ReLU6 and a depthwise convolution in `dw_cnn`, a one-channel 28x28 input in `lenet_bias`.
  `torch.onnx.export` folds each BatchNorm into its convolution's weights and bias; the script reads those
  folded float weights and biases back from `NAME.onnx` and quantizes exactly them (and checks the folded
  network against the one with BatchNorm). Biases: `round_half_even(b * 2^(e_x + e_w))`, int32, added to the
  sums before the ReLU and the shift with QUAN's rounding term `2^(shift[c]-1)` (docs/real_networks.md,
  "Rounding": the import adds it, so a layer with a bias rounds half up, one without floors; `NAME_quant.json`'s
  `bias` is without it); ReLU6: QUAN saturates at `floor(6 * 2^e_y)`; in the QDQ file the bias
  is an int32 initializer `L.bias_int32` through a DequantizeLinear at 2^-(e_x + e_w), ReLU6 a `Clip(0, 6)`.
  These three are not held to the hot inputs' saturation check below.
- Quantization (docs/real_networks.md, "Post-training quantization"): per output channel c,
  `e_w[c] = floor(log2(127 / max|w[c]|))` (an all-zero channel takes the tensor's exponent; a channel whose shift
  would pass 31 takes `e_y - e_x + 31`); where every channel's exponent is the same the layer is per tensor
  (one `e_w`, no `shifts=`), else each channel has its own and `shift[c] = e_x + e_w[c] - e_y`;
  `w_q = clamp(round_half_even(w * 2^e_w[c]), -127, 127)`, the bias `round_half_even(b[c] * 2^(e_x + e_w[c]))`;
  every map's exponent
  `floor(log2(127 / max|a|))` from the float model run on the input (the map after its ReLU; the last FC
  and `stride_cnn`'s CONV_4 have none; before a fused max pooling), computed exactly as the largest e with
  `max|a| * 2^e <= 127` (the script refuses a max |a| within 0.1% of a boundary, so that an importer's own float run finds the same e); pooling keeps the exponent; an
  identity residual's last convolution quantizes to the block input's exponent, a projection unit's last
  convolution and its projection to the exponent of the sum after its ReLU; `shift = e_x + e_w - e_y`
  (the script stops on a negative shift or one above 31).
- The reference is computed on int64 tensors in PyTorch: convolution and matrix product, checked
  `|acc| < 2^28` (the 29-bit accumulator never wraps), the bias with its rounding term, ReLU, `acc >> shift`
  (floor), clamp to [-128, 127];
  fused max pooling on the int8 results (of either sign: `stride_cnn`'s 1x1 convolution has no ReLU);
  stand-alone pooling pads with zeros and takes the maximum or the sum divided by `Wf * Hf` truncated
  toward zero, over `floor((H + 2P - Hf) / S) + 1` windows a side (a window that does not fit at the right or
  bottom edge is dropped; `stride_cnn`'s 3x3/2 average on 9x9 gives 4x4, its last window ending on the last
  row, so none is dropped there); a residual addition saturates to
  int8, then ReLU; flatten in [C][H][W] order. Every pooling is checked against the same pooling written out
  window by window in Python integers, and before the networks both are compared on a fixed 9x9 map of both
  signs (averages 3x3/2, 3x3/2 pad 1, 4x4/4, 2x2/2; maxima 2x2/2, 3x3/2 pad 1, 3x3/2), and `int_pool` on
  the 3x3 sums -7, -9 and -17 must give 0, -1 and -1 (the floor: -1, -1, -2).
- The hot input: every network is calibrated on `NAME_input.npy`, so on that input no clamp ever changes a
  value. `NAME_input_hot.npy` (3 times the input plus another N(0,1) draw, so not a scaled copy) goes
  through the same integer network, exponents and shifts unchanged (not recalibrated), and drives maps
  into saturation: the input's own clamp, QUAN's clamp at +127 (after a ReLU) and at -128 (a layer without
  one), and the residual addition's clamp (at -128 too, which the ReLU after it hides). Its tables count,
  per map, the values the clamp changes (the QUAN result `acc >> shift`, the sum `y + shortcut`, the
  input's `round(x * 2^e_input)` above 127 or below -128). The script stops unless the QUAN clamp at +127
  is hit in every network and at -128 in one, and every residual addition's clamp at +127.
- Checks the script makes: `onnx.checker.check_model` (full check) on every ONNX file, every `.npy`
  re-read and compared; the ONNX graphs are evaluated by a small interpreter in the script: `NAME.onnx`
  against the torch model; `NAME_qdq.onnx` with every QuantizeLinear but the input's flooring (the
  hardware's QUAN) gives the reference exactly, map by map; `NAME_qlinear.onnx` equals `NAME_qdq.onnx`
  evaluated with ONNX's rounding, map by map. Both on `NAME_input.npy` and on `NAME_input_hot.npy` (with
  its saturation: QuantizeLinear clamps to int8 as QUAN does). onnxruntime is used too when it is installed.
- With ONNX's rounding (half to even) instead of the hardware's floor, each layer's int8 result can be one
  step higher than the hardware's for the same input; through the layers the differences spread both ways
  and grow: the last line under each table gives how far a runtime's int8 output is from the reference.

### The graph networks

- Written as torchvision writes the blocks (SqueezeNet's fire module, DenseNet's dense layer and transition,
  ShuffleNet v2's units and `channel_shuffle`, EfficientNet's MBConv with its squeeze-and-excitation), the
  MobileNetV3-like squeeze-and-excitation as timm writes it (`x.mean((2, 3), keepdim=True)`, Hardsigmoid);
  biases as torchvision has them (none before a BatchNorm; DenseNet none at all), BatchNorm statistics, weights
  and inputs drawn as above (weights: sqrt(2 / fan_in) before a ReLU or an activation table, else
  sqrt(1 / fan_in); se_cnn's second 3x3 convolution sqrt(6 / fan_in), so that the Add's operands differ in
  exponent).
- Exponents (docs/real_networks.md, "Post-training quantization" and "Graphs"): the maps joined by a
  concatenation (its inputs, itself, and its slices, shuffles and poolings, transitively: shuffle_cnn's two
  units are one group, dense_cnn's stem, both new-feature maps and both concatenations another) share the
  exponent of the largest |value| over the calibrated maps among them; a slice, shuffle, pooling and flattening
  keep their input's; the identity residual unit's last convolution and sum take its input's; every other map
  (convolution, FC, table, Affine, Add, Mul, after a folded ReLU) is calibrated on its float values.
- Integers: a table is `t[x + 128] = clamp(round_half_even(f(x * 2^-e_x) * 2^e_y))`, f computed in double
  operation by operation as `mapper/activations.cpp` does (Hardsigmoid with alpha = float32(1/6), what the ONNX
  attribute holds; the script checks that exact 1/6 gives the same table); an Affine's `m_c`, `o_c`, `S` from
  the exported file's float32 gamma, beta, mean, var and epsilon in double, `y = (x * m_c + o_c) >> S`, then the
  ReLU; Add `((a << shift_a) + (b << shift_b) + r) >> shift`, Mul `(a * b + r) >> shift` (b per channel for
  squeeze-and-excitation), `r = 2^(shift-1)` if shift > 0; concatenation, slice and shuffle gather channels
  (shuffle: output channel `j * g + i` is input channel `i * (C/g) + j`); the residual unit's MAT_ELE saturates;
  a ceil-mode max pooling pads `pad_end` zeros after the last row and column (its input is after a ReLU); every
  average pooling truncates toward zero (dense_cnn's 2x2 pooling and se_cnn's squeeze-and-excitation poolings
  average maps with negative values).
- Hardswish: torch exports it as `HardSigmoid(alpha = float32(1/6)) * x`; the table (docs: the import takes
  that pattern as the table `hardswish`, `x * clamp(x / 6 + 1/2, 0, 1)` in double) and that float graph round
  differently where the exact value is a tie: se_cnn's table (e_x = e_y = 2) at x = -6 and 6 (-1.5 and 1.5:
  the table gives -2 and 4, half to even; the float32 alpha gives -1 and 5); `se_cnn_quant.json` names them.
- These networks have biases and are not held to the hot inputs' saturation check.

## The networks

Per map: exponent e, shift, the largest |accumulator|, the int8 range, the share of nonzero and of
saturated (127 or -128) values, and `float/127`, the float map's max |a| * 2^e / 127 (above 1: the map
saturates, as a residual block's last convolution may, whose exponent is the shortcut's or the sum's).
The quantization error compares the float model's output with the reference times 2^-e_output.

Hot input, per map: e, shift, the largest |accumulator|, the int8 range, the clamp that ends the map
(`input`, `QUAN`, `add` for a residual addition before its ReLU; `-` for pooling, which cannot saturate),
how many values it changes above 127 and below -128, of how many. On the hot input the float model and the
integer network part ways: the error line shows how far.
"""


def check_saturation(summary):
    """The hot inputs must saturate: the QUAN clamp at +127 in every network, the QUAN clamp at -128 in
    at least one, and every residual addition's clamp at +127 (its clamp at -128 is hidden by the ReLU that
    follows, so it does not count). The networks with biases (written as PyTorch users write them) are not
    held to it: their hot references are printed, saturated or not."""
    missing = []
    summary = [s for s in summary if s["saturation"]]
    for s in summary:
        cl = s["hot_clamps"]
        if not any(c["hi"] for c in cl.values() if c["clamp"] == "QUAN"):
            missing.append("%s: no QUAN result above 127" % s["name"])
        for m, c in cl.items():
            if c["clamp"] == "add" and not c["hi"]:
                missing.append("%s: the residual addition %s never exceeds 127" % (s["name"], m))
    if not any(c["lo"] for s in summary for c in s["hot_clamps"].values() if c["clamp"] == "QUAN"):
        missing.append("no network has a QUAN result below -128")
    if not any(c["clamp"] == "add" for s in summary for c in s["hot_clamps"].values()):
        missing.append("no network has a residual addition")
    if missing:
        fail("the hot inputs do not saturate as they must (change HOT_GAIN or HOT_SEED_OFFSET): " + "; ".join(missing))
    print("\nsaturation check passed: the hot inputs hit the QUAN clamp at +127 in every network and at -128, "
          "and every residual addition's clamp at +127")


def main():
    if len(sys.argv) > 1:
        fail("no arguments expected (writes %s)" % OUT_DIR)
    os.makedirs(OUT_DIR, exist_ok=True)
    torch.use_deterministic_algorithms(True)
    check_int_pool()
    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
    summary = []
    for net in NETWORKS:
        run(net, ort, summary)
    for net in GRAPH_NETWORKS:
        run_graph(net, ort, summary)
    check_saturation(summary)
    text = [README_HEAD]
    for s in summary:
        text.append("### %s\n\n%s.\n\n```\n%s\n```\n\n%s.\n\nReference output (int8): `%s`.\n\n%s.\n" % (
            s["name"], s["what"], "\n".join(s["rows"]), s["line"], s["ref"], s["cold_line"][0].upper() + s["cold_line"][1:]))
        text.append("Hot input `%s_input_hot.npy` = %g * `%s_input.npy` + N(0, 1) drawn with seed %d, through the "
                    "same integer network:\n\n```\n%s\n```\n\n%s.\n\nHot reference output (int8): `%s`.\n" % (
                        s["name"], HOT_GAIN, s["name"], s["hot_seed"], "\n".join(s["hot_rows"]),
                        s["hot_line"][0].upper() + s["hot_line"][1:], s["ref_hot"]))
        if "extra" in s:
            text.append("%s\n\n`%s.net`:\n\n```\n%s```\n" % (s["extra"], s["name"], s["net_text"]))
        text.append("Files: %s.\n" % s["files"])
        for w in s["warnings"]:
            text.append("Warning: %s.\n" % w)
    with open(os.path.join(OUT_DIR, "README.md"), "w") as f:
        f.write("\n".join(text))
    print("\nwrote %s" % OUT_DIR)


if __name__ == "__main__":
    main()
