#!/usr/bin/python3
"""A torchvision network with random weights exported to ONNX as a user would export it, with an input and
PyTorch's float output beside it, for `s2cosim check`, `map` and `run-net` (docs/real_networks.md,
"torchvision's VGG-16 beside the thesis's").

    /usr/bin/python3 tools/export_torchvision.py NETWORK INPUT_SIZE OUT.onnx [--seed N] [--external]

NETWORK is a torchvision.models constructor (vgg16, resnet18, mobilenet_v2, ...), INPUT_SIZE the square
image side (224). Writes OUT.onnx (opset 13, eval mode, constant folding, batch 1, input 'input', output
'output'; with --external its weights in OUT.onnx.data beside it), OUT_input.npy (float32 (1, 3, S, S),
N(0, 1): an input normalized as torchvision's transforms leave it) and OUT_output.npy (PyTorch's float
output for it). Then e.g.

    build/s2cosim run-net --net OUT.onnx --input OUT_input.npy --reference OUT_output.npy --target s2 --whole

Weights are torchvision's random initialization (seeded: --seed, default 1), not trained ones. What that
initialization leaves at a constant is drawn as a trained network has it: the biases of convolutions and
linear layers (torchvision sets them to 0, which the import would take as no bias) ~ N(0, 0.05); a
BatchNorm's running statistics and affine parameters (0 and 1) running_mean ~ N(0, 0.1), running_var ~
U(0.5, 1.5), weight ~ U(0.5, 1.5), bias ~ N(0, 0.1), so the exporter's folding of them into the
convolutions is not an identity. Needs Debian's python3-torch,
python3-torchvision and python3-onnx; nothing in the project runs it.
"""

import argparse
import os

import numpy as np
import onnx
import torch
import torchvision


def build(name, seed=1, draw_affine=True):
    """torchvision's definition NAME with random weights (seeded), in eval mode, and the generator that drew
    what its initialization leaves constant: a BatchNorm's running statistics always; with draw_affine also its
    weight and bias and the biases of convolutions and linear layers (the module docstring)."""
    torch.manual_seed(seed)
    kwargs = dict(weights=None)
    if name in ("googlenet", "inception_v3"):
        kwargs.update(aux_logits=False, init_weights=True)
    model = getattr(torchvision.models, name)(**kwargs)
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                n = m.num_features
                m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(n, generator=gen) + 0.5)
                if draw_affine:
                    m.weight.copy_(torch.rand(n, generator=gen) + 0.5)
                    m.bias.copy_(torch.randn(n, generator=gen) * 0.1)
            elif draw_affine and isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)) and m.bias is not None:
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.05)
    return model.eval(), gen


def export(model, gen, input_size, output, external=False):
    """OUT.onnx (and OUT.onnx.data with external), OUT_input.npy, OUT_output.npy; returns (input, output) paths."""
    x = torch.randn(1, 3, input_size, input_size, generator=gen)
    with torch.no_grad():
        y = model(x)
    stem = os.path.splitext(output)[0]
    torch.onnx.export(model, x, output, opset_version=13, do_constant_folding=True, input_names=["input"],
                      output_names=["output"])
    if external:
        m = onnx.load(output)
        onnx.save(m, output, save_as_external_data=True, all_tensors_to_one_file=True,
                  location=os.path.basename(output) + ".data", size_threshold=0)
    np.save(stem + "_input.npy", x.numpy().astype(np.float32))
    np.save(stem + "_output.npy", y.numpy().astype(np.float32))
    return stem + "_input.npy", stem + "_output.npy"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("network")
    ap.add_argument("input_size", type=int)
    ap.add_argument("output")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--external", action="store_true", help="weights in OUT.onnx.data (save_as_external_data)")
    a = ap.parse_args()
    model, gen = build(a.network, a.seed)
    xin, yout = export(model, gen, a.input_size, a.output, a.external)
    params = sum(p.numel() for p in model.parameters())
    print(f"{a.output}: {a.network} at {a.input_size}x{a.input_size}, {params} parameters, "
          f"{os.path.getsize(a.output)} bytes; {xin}, {yout}")


if __name__ == "__main__":
    main()
