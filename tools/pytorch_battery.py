#!/usr/bin/python3
"""An acceptance battery: 21 small PyTorch networks written as users write them, run through s2cosim.

Each network is built with fixed seeds, exported to ONNX (opset 13) as docs/real_networks.md says, and run
with its float input and PyTorch's own float output as the reference:

    s2cosim check net.onnx
    s2cosim run-net --net net.onnx --input x.npy --reference ref.npy --backend both                            # QPE-DRAM
    s2cosim run-net --net net.onnx --input x.npy --reference ref.npy --backend both --target s2 --preset mini  # the mini chip

x.npy is the input as PyTorch holds it, (1, C, H, W). A one-channel MNIST-shaped network (1 x 28 x 28) also
runs on QPE-DRAM with the input as (1, 28, 28), whose leading 1 is the channel, not the batch: it must give
the same int8 input (the journal's input_hash) and pass as well.

Run it from anywhere with Debian's Python (it has torch 1.13 and numpy):

    /usr/bin/python3 tools/pytorch_battery.py [--out DIR] [--s2cosim PATH] [--jobs N] [--timeout S] [NET ...]
    /usr/bin/python3 tools/pytorch_battery.py --list

Defaults: --out build/pytorch_battery, --s2cosim build/s2cosim (both relative to the repository's root),
--jobs 2 (runs at once), --timeout 600 (seconds per run). NET names networks to run (default: all).
It writes only into --out: nets/NET/ (net.onnx, x.npy, x_chw.npy, ref.npy, EXPORT_NOTE.txt where the export
fell back), logs/NET__RUN.log (the command, its output, its exit code), reports/NET__RUN.json (run-net's
JSON report and journal), summary.md (the table it prints) and summary.json.
Exit 0 if every network's check exits 0 and every run-net is bit-exact on both backends (every block run's
data on the model and on the RTL equal to the golden block, the network's output equal to the golden run)
with every check passing, the float reference's included; else 1, listing what failed. Not run by CI: it
needs PyTorch, which the project's build and tests do not.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
USAGE = "/usr/bin/python3 tools/pytorch_battery.py [--out DIR] [--s2cosim PATH] [--jobs N] [--timeout S] [NET ...]"
OPSET = 13
MNIST = (1, 28, 28)


# --------------------------------------------------------------------------------------------------
# The networks, as tutorials and users write them (F.relu or nn.ReLU(inplace=True), x.view or
# torch.flatten or nn.Flatten, Dropout left in, a final softmax / log_softmax / sigmoid)

class LeNetView(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(x.size(0), -1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return F.log_softmax(x, dim=1)


class LeNetFlatten(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 4 * 4, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return F.softmax(self.fc3(x), dim=1)


def lenet_sequential():
    return nn.Sequential(
        nn.Conv2d(1, 6, kernel_size=5, padding=2), nn.ReLU(),
        nn.MaxPool2d(kernel_size=2, stride=2),
        nn.Conv2d(6, 16, kernel_size=5), nn.ReLU(),
        nn.MaxPool2d(kernel_size=2, stride=2),
        nn.Flatten(),
        nn.Linear(16 * 5 * 5, 120), nn.ReLU(),
        nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, 10),
        nn.Sigmoid(),
    )


class MnistMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(28 * 28, 256)
        self.fc2 = nn.Linear(256, 128)
        self.fc3 = nn.Linear(128, 10)
        self.drop = nn.Dropout(0.2)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        x = x.view(-1, 28 * 28)
        x = self.drop(self.relu(self.fc1(x)))
        x = self.drop(self.relu(self.fc2(x)))
        return self.fc3(x)


class MnistSigmoidHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.drop = nn.Dropout2d(0.25)
        self.fc = nn.Linear(16 * 7 * 7, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = self.drop(F.relu(self.conv2(x)))
        x = x.view(x.size(0), -1)
        return torch.sigmoid(self.fc(x))


class CifarTutorial(nn.Module):
    """As PyTorch's "Training a classifier" tutorial writes it."""
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def conv_bn_relu(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=stride, padding=1),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class ConvBNNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(conv_bn_relu(3, 16), conv_bn_relu(16, 16), nn.MaxPool2d(2),
                                      conv_bn_relu(16, 32), nn.MaxPool2d(2))
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.features(x)
        x = self.gap(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)


class NoBiasBNStride2(nn.Module):
    def __init__(self):
        super().__init__()
        def blk(cin, cout, s):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, s, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())
        self.body = nn.Sequential(blk(3, 16, 1), blk(16, 32, 2), blk(32, 64, 2))
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.flat = nn.Flatten()
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc(self.flat(self.pool(self.body(x))))


class DepthwiseSeparable(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6(inplace=True))
        self.dw = nn.Sequential(nn.Conv2d(16, 16, 3, 1, 1, groups=16, bias=False), nn.BatchNorm2d(16),
                                nn.ReLU6(inplace=True))
        self.pw = nn.Sequential(nn.Conv2d(16, 32, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6(inplace=True))
        self.dw2 = nn.Sequential(nn.Conv2d(32, 32, 3, 2, 1, groups=32, bias=False), nn.BatchNorm2d(32),
                                 nn.ReLU6(inplace=True))
        self.pw2 = nn.Sequential(nn.Conv2d(32, 64, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU6(inplace=True))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = self.pw2(self.dw2(self.pw(self.dw(self.stem(x)))))
        x = torch.flatten(self.pool(x), 1)
        return self.fc(x)


class BasicBlock(nn.Module):
    """torchvision's ResNet BasicBlock: identity shortcut, or a 1x1 projection with BatchNorm."""
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNetIdentity(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = BasicBlock(16, 16)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


class ResNetProjection(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = BasicBlock(16, 16)
        self.layer2 = BasicBlock(16, 32, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


class AvgPoolDropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.AvgPool2d(2)
        self.dropout = nn.Dropout(0.5)
        self.fc1 = nn.Linear(32 * 8 * 8, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(x.size(0), -1)
        x = self.dropout(F.relu(self.fc1(x)))
        return self.fc2(x)


class SamePadding(nn.Module):
    """same=False: the same layers with padding=k // 2, which equals 'same' for odd kernels at stride 1."""
    def __init__(self, same=True):
        super().__init__()
        p = (lambda k: "same") if same else (lambda k: k // 2)
        self.c1 = nn.Conv2d(3, 16, 3, padding=p(3))
        self.c2 = nn.Conv2d(16, 16, 5, padding=p(5))
        self.relu = nn.ReLU(inplace=True)
        self.mp = nn.MaxPool2d(3, stride=2, padding=1)
        self.c3 = nn.Conv2d(16, 32, 3, padding=p(3))
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = self.relu(self.c1(x))
        x = self.mp(self.relu(self.c2(x)))
        x = self.mp(self.relu(self.c3(x)))
        x = torch.flatten(x, 1)
        return F.log_softmax(self.fc(x), dim=-1)


class VGGSmall(nn.Module):
    def __init__(self):
        super().__init__()
        cfg = [16, 16, "M", 32, 32, "M"]
        layers, c = [], 3
        for v in cfg:
            if v == "M":
                layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
            else:
                layers += [nn.Conv2d(c, v, kernel_size=3, padding=1), nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
                c = v
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(), nn.Linear(32 * 8 * 8, 128),
                                        nn.ReLU(True), nn.Dropout(), nn.Linear(128, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


class Stride2AllConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(32, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(64, 10, 1),
            nn.AdaptiveAvgPool2d(1))

    def forward(self, x):
        return self.net(x).view(-1, 10)


class AllConvFlattenEnd(Stride2AllConv):
    def forward(self, x):
        return torch.flatten(self.net(x), 1)


class BNSigmoidBinary(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.AvgPool2d(4)
        self.fc1 = nn.Linear(8 * 8 * 8, 32)
        self.fc2 = nn.Linear(32, 1)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.conv(x))))
        x = x.reshape(x.shape[0], -1)
        return torch.sigmoid(self.fc2(F.relu(self.fc1(x))))


class MLPNoBias(nn.Module):
    def __init__(self):
        super().__init__()
        self.flat = nn.Flatten()
        self.l1 = nn.Linear(784, 128, bias=False)
        self.l2 = nn.Linear(128, 10, bias=False)

    def forward(self, x):
        return self.l2(F.relu(self.l1(self.flat(x))))


class AvgPool3x3Pad(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.ap = nn.AvgPool2d(3, stride=1, padding=1)
        self.c2 = nn.Conv2d(16, 16, 3, stride=2, padding=1)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.ap(F.relu(self.c1(x)))
        x = F.relu(self.c2(x))
        return self.fc(torch.flatten(self.gap(x), 1))


NAMES_IO = {"input_names": ["input"], "output_names": ["output"]}

# name, constructor, input shape (C, H, W), input drawn from "normal" N(0, 1) or "uniform" [0, 1),
# torch.onnx.export's arguments beyond opset 13 and constant folding, what it is. The position in this
# list seeds the network (keep the order: appending keeps every earlier network's weights and input).
NETS = [
    ("lenet_view_logsoftmax", LeNetView, MNIST, "normal", {},
     "LeNet-5: F.max_pool2d, x.view(x.size(0), -1), F.log_softmax"),
    ("lenet_flatten_softmax", LeNetFlatten, MNIST, "uniform", NAMES_IO,
     "LeNet-5 without padding: torch.flatten(x, 1), F.softmax"),
    ("lenet_seq_nnflatten_sigmoid", lenet_sequential, MNIST, "normal", {},
     "LeNet-5 as nn.Sequential: nn.MaxPool2d, nn.Flatten, nn.Sigmoid"),
    ("mnist_mlp_view_dropout", MnistMLP, MNIST, "normal", NAMES_IO,
     "MLP 784-256-128-10: x.view(-1, 28 * 28), nn.Dropout, nn.ReLU(inplace=True)"),
    ("mnist_stride2_sigmoid", MnistSigmoidHead, MNIST, "uniform", {},
     "two stride-2 nn.Conv2d, nn.Dropout2d, nn.Linear, torch.sigmoid"),
    ("cifar_tutorial", CifarTutorial, (3, 32, 32), "normal", {},
     "PyTorch's 'Training a classifier' tutorial network"),
    ("conv_bn_relu_gap", ConvBNNet, (3, 32, 32), "normal", NAMES_IO,
     "nn.Conv2d (bias) + nn.BatchNorm2d + nn.ReLU, nn.MaxPool2d, nn.AdaptiveAvgPool2d(1), nn.Linear"),
    ("nobias_bn_stride2_adaptive11", NoBiasBNStride2, (3, 32, 32), "normal", {},
     "nn.Conv2d(bias=False) + nn.BatchNorm2d, stride 2, nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten"),
    ("depthwise_separable_relu6", DepthwiseSeparable, (3, 32, 32), "normal", {},
     "MobileNet-style: depthwise nn.Conv2d(groups=C) + 1x1 pointwise, nn.BatchNorm2d, nn.ReLU6"),
    ("resnet_identity_block", ResNetIdentity, (3, 32, 32), "normal", {},
     "stem + torchvision's BasicBlock with an identity shortcut (out += identity)"),
    ("resnet_projection_maxpool_pad", ResNetProjection, (3, 32, 32), "normal", {},
     "stem, nn.MaxPool2d(3, 2, padding=1), BasicBlocks with identity and stride-2 1x1 projection shortcuts"),
    ("avgpool_dropout_linear", AvgPoolDropout, (3, 32, 32), "uniform", {},
     "nn.AvgPool2d(2), nn.Dropout, two nn.Linear"),
    ("same_padding_logsoftmax", SamePadding, (3, 32, 32), "normal", {},
     "nn.Conv2d(padding='same'), nn.MaxPool2d(3, 2, padding=1) after ReLU, F.log_softmax"),
    ("vgg_small_bn", VGGSmall, (3, 32, 32), "normal", {},
     "VGG-style features (Conv + BatchNorm + ReLU, MaxPool) and classifier (nn.Flatten, nn.Dropout, nn.Linear)"),
    ("allconv_stride2", Stride2AllConv, (3, 32, 32), "uniform", {},
     "all-convolutional: stride-2 convolutions, 1x1 head, nn.AdaptiveAvgPool2d(1), .view(-1, 10)"),
    ("bn_sigmoid_binary", BNSigmoidBinary, (3, 32, 32), "normal", {},
     "binary classifier: Conv + BatchNorm + ReLU, nn.AvgPool2d(4), x.reshape, nn.Linear(32, 1), torch.sigmoid"),
    ("lenet_view_dynamic_batch", LeNetView, MNIST, "normal",
     dict(NAMES_IO, dynamic_axes={"input": {0: "batch_size"}, "output": {0: "batch_size"}}),
     "lenet_view_logsoftmax exported with a dynamic batch axis (dynamic_axes)"),
    ("lenet_view_nofold", LeNetView, MNIST, "normal", {"do_constant_folding": False},
     "lenet_view_logsoftmax exported with do_constant_folding=False (Shape, Gather, Concat before the Reshape)"),
    ("allconv_flatten_end", AllConvFlattenEnd, (3, 32, 32), "uniform", {},
     "allconv_stride2 ending in torch.flatten(x, 1): the graph's output is a Flatten"),
    ("mlp_nobias_matmul", MLPNoBias, MNIST, "normal", {},
     "nn.Flatten, nn.Linear(bias=False) (exported as MatMul, not Gemm)"),
    ("avgpool3x3_s1_pad1", AvgPool3x3Pad, (3, 32, 32), "normal", {},
     "nn.AvgPool2d(3, stride=1, padding=1) (count_include_pad=True: a Pad before the AveragePool)"),
]


# --------------------------------------------------------------------------------------------------
# Export

def randomize_bn(model, g):
    """BatchNorm with statistics and affine parameters away from 0 and 1, as after training, so that the
    exporter's folding of it into the convolution is exercised for real."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            C = m.num_features
            with torch.no_grad():
                m.running_mean.copy_(torch.rand(C, generator=g) - 0.5)
                m.running_var.copy_(torch.rand(C, generator=g) * 1.5 + 0.5)
                m.weight.copy_(torch.rand(C, generator=g) + 0.5)
                m.bias.copy_((torch.rand(C, generator=g) - 0.5) * 0.6)


def export(i, name, ctor, shape, kind, kwargs, net_dir):
    """Writes net_dir/{net.onnx, x.npy, ref.npy} (and x_chw.npy for an MNIST shape); returns the note on a
    fallback export, or None."""
    torch.manual_seed(1000 + i)
    model = ctor()
    randomize_bn(model, torch.Generator().manual_seed(2000 + i))
    model.eval()
    rng = np.random.default_rng(3000 + i)
    if kind == "normal":
        x = rng.standard_normal((1,) + shape).astype(np.float32)
    else:
        x = rng.uniform(0.0, 1.0, (1,) + shape).astype(np.float32)
    xt = torch.from_numpy(x)
    with torch.no_grad():
        ref = model(xt).numpy().astype(np.float32)
    os.makedirs(net_dir, exist_ok=True)
    onnx_path = os.path.join(net_dir, "net.onnx")
    kwargs = dict({"do_constant_folding": True}, **kwargs)
    note = None
    note_path = os.path.join(net_dir, "EXPORT_NOTE.txt")
    if os.path.exists(note_path):
        os.remove(note_path)
    try:
        torch.onnx.export(model, xt, onnx_path, opset_version=OPSET, **kwargs)
    except torch.onnx.errors.UnsupportedOperatorError as e:
        if ctor is not SamePadding:
            raise
        # torch 1.13 cannot export padding='same' (aten::_convolution_mode): do what a user then does, the
        # same weights with explicit padding k // 2, checked to compute the same.
        m2 = SamePadding(same=False)
        m2.load_state_dict(model.state_dict())
        m2.eval()
        with torch.no_grad():
            if not torch.allclose(m2(xt), model(xt), atol=1e-6):
                raise SystemExit("pytorch_battery.py: error: %s: padding=k//2 does not compute padding='same'" % name)
        torch.onnx.export(m2, xt, onnx_path, opset_version=OPSET, **kwargs)
        note = ("torch %s cannot export padding='same' (%s); exported the same weights with padding=k//2, "
                "which computes the same" % (torch.__version__, str(e).split(". ")[0]))
        with open(note_path, "w") as f:
            f.write(note + "\n")
    np.save(os.path.join(net_dir, "x.npy"), x)            # (1, C, H, W): the tensor the model was called with
    if shape == MNIST:
        np.save(os.path.join(net_dir, "x_chw.npy"), x[0])  # (1, 28, 28): the leading 1 is the channel
    np.save(os.path.join(net_dir, "ref.npy"), ref)        # PyTorch's float output, (1, classes)
    return note


# --------------------------------------------------------------------------------------------------
# Runs

def runs_for(shape, net_dir, s2cosim):
    """(run, command) for one network: check, run-net on QPE-DRAM and on the mini chip, and for an MNIST
    shape run-net on QPE-DRAM with the (1, 28, 28) input."""
    onnx_path = os.path.join(net_dir, "net.onnx")
    ref = os.path.join(net_dir, "ref.npy")

    def run_net(x, extra):
        return [s2cosim, "run-net", "--net", onnx_path, "--input", os.path.join(net_dir, x),
                "--reference", ref, "--backend", "both"] + extra

    runs = [("check", [s2cosim, "check", onnx_path]),
            ("qpe", run_net("x.npy", [])),
            ("mini", run_net("x.npy", ["--target", "s2", "--preset", "mini"]))]
    if shape == MNIST:
        runs.append(("qpe_chw", run_net("x_chw.npy", [])))
    return runs


def execute(job):
    """Runs one command with its output into its log (and its JSON report); returns (job, exit, wall)."""
    name, run, cmd, log, report, timeout, cwd = job
    if report:
        cmd = cmd + ["--json", report]
        # a run that fails before writing must not leave an earlier run's report to be read as its own
        for p in (report, report + ".jsonl"):
            if os.path.exists(p):
                os.remove(p)
    t = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, cwd=cwd)
        out, code = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        out, code = e.stdout or b"", "timeout"
    wall = time.time() - t
    with open(log, "wb") as f:
        f.write(("$ " + " ".join(cmd) + "\n").encode() + out + ("\n[exit %s, %.1f s]\n" % (code, wall)).encode())
    return job, code, wall


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def input_hash(report):
    """The hash of the int8 data the network ran on: the first line of run-net's journal."""
    try:
        with open(report + ".jsonl") as f:
            return json.loads(f.readline()).get("input_hash")
    except (OSError, ValueError):
        return None


def judge(run, code, wall, report):
    """What one run gave: its exit, and for run-net whether it is bit-exact on both backends, every check
    passing, and the float reference's figures. problems lists why it fails (empty: it passed)."""
    r = {"exit": code, "wall_s": round(wall, 1), "problems": []}
    if code == "timeout":
        r["problems"].append("timed out (--timeout)")
    elif code != 0:
        r["problems"].append("exit %s" % code)
    if run == "check":
        return r
    j = read_json(report)
    if j is None:
        r["problems"].append("no JSON report")
        return r
    counts = j["results"]["counts"]
    r["counts"] = {k: v for k, v in counts.items() if v}
    r["checks"] = sum(counts.values())
    r["passed"] = counts.get("pass", 0)
    ops = j.get("operations", [])
    r["block_runs"] = len(ops)
    # bit-exact: every block run's int8 output equal to the golden block's on the model and on the RTL
    not_exact = ["%s %s" % (o["name"], o["strategy"]) for o in ops
                 if not (o.get("model_data_match") and o.get("rtl_data_match"))]
    out = j.get("output") or {}
    fr = out.get("float_reference") or {}
    r["bit_exact"] = bool(ops) and not not_exact and out.get("equals_golden") is True
    r["correlation"] = fr.get("correlation")
    r["top1"] = ("agrees" if fr.get("top1_agrees") else
                 "tie (%.2f steps)" % fr.get("top1_margin_steps", 0) if fr.get("top1_tie") else
                 "differs" if fr else None)
    r["input_hash"] = input_hash(report)
    failing = ["%s: %s %s" % (c["name"], c["status"], c.get("message", "")) for c in j["results"]["checks"]
               if c["status"] != "pass"]
    if not_exact:
        r["problems"].append("not bit-exact: " + ", ".join(not_exact))
    if out.get("equals_golden") is not True:
        r["problems"].append("network output not equal to the golden run")
    if not fr:
        r["problems"].append("no float reference comparison")
    r["problems"] += failing
    return r


def cell(r):
    if r is None:
        return "-"
    if "checks" not in r:
        return "; ".join(r["problems"]) or "pass"
    text = "%d/%d pass" % (r["passed"], r["checks"])
    text += ", bit-exact" if r["bit_exact"] else ", NOT bit-exact"
    if r["exit"] != 0:
        text = "%s, %s" % (r["problems"][0], text)
    return text


def per_run(runs, value):
    """One value when the runs agree (they should: the same int8 output), else each run's."""
    got = [(k, value(runs[k])) for k in ("qpe", "mini", "qpe_chw") if k in runs and value(runs[k]) is not None]
    if len({v for _, v in got}) <= 1:
        return got[0][1] if got else "-"
    return ", ".join("%s %s" % kv for kv in got)


def table(summary):
    lines = ["| network | check exit | QPE-DRAM | mini | correlation | top-1 | (1, 28, 28) input on QPE-DRAM |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, s in summary.items():
        runs = s["runs"]
        corr = per_run(runs, lambda r: "%.4f" % r["correlation"] if r.get("correlation") is not None else None)
        top1 = per_run(runs, lambda r: r.get("top1"))
        chw = runs.get("qpe_chw")
        chw_cell = cell(chw)
        if chw and chw.get("same_input") is False:
            chw_cell += ", NOT the same int8 input as x.npy"
        elif chw and chw.get("same_input"):
            chw_cell += ", same input"
        lines.append("| %s%s | %s | %s | %s | %s | %s | %s |" % (
            name, " (*)" if s.get("export_note") else "", runs["check"]["exit"], cell(runs.get("qpe")),
            cell(runs.get("mini")), corr, top1, chw_cell))
    notes = ["(*) %s: %s" % (n, s["export_note"]) for n, s in summary.items() if s.get("export_note")]
    return "\n".join(lines) + ("\n\n" + "\n".join(notes) if notes else "") + "\n"


# --------------------------------------------------------------------------------------------------

def parse_args():
    ap = argparse.ArgumentParser(usage=USAGE, description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", metavar="DIR", help="where everything is written (default: build/pytorch_battery)")
    ap.add_argument("--s2cosim", metavar="PATH", help="the s2cosim binary (default: build/s2cosim)")
    ap.add_argument("--jobs", metavar="N", type=int, default=2, help="runs at once (default 2)")
    ap.add_argument("--timeout", metavar="S", type=float, default=600, help="seconds per run (default 600)")
    ap.add_argument("--list", action="store_true", help="print the networks, each with what it is, and exit")
    ap.add_argument("nets", metavar="NET", nargs="*", help="networks to run (default: all)")
    a = ap.parse_args()
    if a.jobs < 1 or a.timeout <= 0:
        ap.error("--jobs and --timeout must be positive")
    known = [n[0] for n in NETS]
    unknown = [n for n in a.nets if n not in known]
    if unknown:
        ap.error("unknown network %s (--list names them)" % ", ".join(unknown))
    # the defaults are the repository's build/, wherever it is run from; paths given are the caller's
    a.out = os.path.abspath(a.out) if a.out else os.path.join(ROOT, "build", "pytorch_battery")
    a.s2cosim = os.path.abspath(a.s2cosim) if a.s2cosim else os.path.join(ROOT, "build", "s2cosim")
    return a


def main():
    a = parse_args()
    if a.list:
        width = max(len(n[0]) for n in NETS)
        for name, _, shape, _, _, what in NETS:
            print("%-*s  %s" % (width, name, what))
        return 0
    if not os.access(a.s2cosim, os.X_OK):
        raise SystemExit("pytorch_battery.py: error: no s2cosim at %s (build it: bash tools/build.sh, or give "
                         "--s2cosim PATH)" % a.s2cosim)
    chosen = [(i, n) for i, n in enumerate(NETS) if not a.nets or n[0] in a.nets]
    for sub in ("nets", "logs", "reports"):
        os.makedirs(os.path.join(a.out, sub), exist_ok=True)
    start = time.time()

    torch.use_deterministic_algorithms(True)
    summary = {}
    jobs = []
    for i, (name, ctor, shape, kind, kwargs, what) in chosen:
        net_dir = os.path.join(a.out, "nets", name)
        note = export(i, name, ctor, shape, kind, kwargs, net_dir)
        if note:
            print("%s: %s" % (name, note))
        summary[name] = {"what": what, "input_shape": [1] + list(shape), "runs": {}}
        if note:
            summary[name]["export_note"] = note
        for run, cmd in runs_for(shape, net_dir, a.s2cosim):
            report = os.path.join(a.out, "reports", "%s__%s.json" % (name, run)) if run != "check" else None
            log = os.path.join(a.out, "logs", "%s__%s.log" % (name, run))
            # cwd: the run's own folder, so that nothing it might write beside itself lands outside --out
            jobs.append((name, run, cmd, log, report, a.timeout, a.out))
    print("exported %d networks in %.0f s; %d runs, %d at once" % (len(chosen), time.time() - start, len(jobs), a.jobs),
          flush=True)

    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for job, code, wall in pool.map(execute, jobs):
            name, run, report = job[0], job[1], job[4]
            r = judge(run, code, wall, report)
            summary[name]["runs"][run] = r
            print("%-30s %-8s %6.1f s  %s" % (name, run, wall, cell(r)), flush=True)

    for name, s in summary.items():
        chw, qpe = s["runs"].get("qpe_chw"), s["runs"]["qpe"]
        if chw:
            if chw.get("input_hash") and qpe.get("input_hash"):
                chw["same_input"] = chw["input_hash"] == qpe["input_hash"]
                if not chw["same_input"]:
                    chw["problems"].append("its int8 input differs from x.npy's (input_hash)")

    failed = ["%s %s: %s" % (name, run, "; ".join(r["problems"]))
              for name, s in summary.items() for run, r in s["runs"].items() if r["problems"]]
    wall = time.time() - start
    text = table(summary)
    print("\n" + text)
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump({"s2cosim": a.s2cosim, "torch": torch.__version__, "jobs": a.jobs, "wall_s": round(wall, 1),
                   "passed": not failed, "failed": failed, "networks": summary}, f, indent=1)
        f.write("\n")
    print("%d networks, %d runs in %.0f s; summary in %s" % (len(summary), len(jobs), wall, a.out))
    if failed:
        print("FAILED:\n  " + "\n  ".join(failed))
        return 1
    print("every network bit-exact on both backends, its float reference passing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
