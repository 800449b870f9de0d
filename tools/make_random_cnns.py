#!/usr/bin/python3
"""Small random bias-free CNNs in PyTorch, exported as float ONNX models with a float input each: networks
nobody tuned the model to, for checking the chip model against the chip RTL (docs/figures.md, "The clocked
NoC").

    /usr/bin/python3 tools/make_random_cnns.py OUT_DIR SEED [SEED ...]

Each SEED gives OUT_DIR/netSEED.onnx and OUT_DIR/inSEED.npy: a 3x3 or 5x5 convolution (4, 8 or 12 filters,
same padding) with ReLU, most often a 2x2 max pooling, a 3x3 stride-2 convolution, a 1x1 convolution, most
often added to its input (a residual unit), a global average pooling and one or two FC layers, on an input of
1, 3 or 4 channels and a non-square size. Run each on both backends with
    build/s2cosim run-net --net OUT_DIR/netS.onnx --input OUT_DIR/inS.npy --target s2 --preset mini --whole --backend both
Needs Debian's python3-torch (not the project's build or tests).
"""
import os
import random
import sys

import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, rng, cin):
        super().__init__()
        c1 = rng.choice([4, 8, 12])
        k1 = rng.choice([3, 5])
        self.c1 = nn.Conv2d(cin, c1, k1, padding=k1 // 2, bias=False)
        self.pool = nn.MaxPool2d(2) if rng.random() < 0.7 else None
        c2 = rng.choice([8, 10, 16])
        self.c2 = nn.Conv2d(c1, c2, 3, stride=2, padding=1, bias=False)
        self.c3 = nn.Conv2d(c2, c2, 1, bias=False)
        self.res = rng.random() < 0.7
        two_fc = rng.random() < 0.5
        self.fc1 = nn.Linear(c2, 16 if two_fc else 10, bias=False)
        self.fc2 = nn.Linear(16, 10, bias=False) if two_fc else None

    def forward(self, x):
        x = torch.relu(self.c1(x))
        if self.pool is not None:
            x = self.pool(x)
        x = torch.relu(self.c2(x))
        y = self.c3(x)
        x = torch.relu(y + x) if self.res else torch.relu(y)
        x = torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)  # exported as GlobalAveragePool
        x = self.fc1(x)
        if self.fc2 is not None:
            x = self.fc2(torch.relu(x))
        return x


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for seed in map(int, sys.argv[2:]):
        rng = random.Random(seed)
        torch.manual_seed(seed)
        cin = rng.choice([1, 3, 4])
        h, w = rng.choice([12, 16, 20, 24, 30]), rng.choice([14, 20, 28, 40])
        net = Net(rng, cin).eval()
        x = torch.randn(1, cin, h, w)
        torch.onnx.export(net, x, os.path.join(out, f"net{seed}.onnx"), opset_version=13, input_names=["x"],
                          output_names=["y"])
        np.save(os.path.join(out, f"in{seed}.npy"), x.numpy().astype(np.float32))
        print(f"net{seed}: input {cin}x{h}x{w}")


if __name__ == "__main__":
    main()
