"""larmor's simulation as a PyTorch operation: the forward pass runs larmor's kernels, the
backward pass larmor's adjoint (one reverse-mode run for every input's gradient).

    import torch, larmor, larmor.torch
    seq = larmor.build("mese", echoes=32, echo_spacing_ms=10.0)
    t2 = torch.tensor([40.0, 80.0], requires_grad=True)
    y = larmor.torch.simulate(seq, t1_ms=1000.0, t2_ms=t2)     # complex64 [2, 32]
    (y.abs() ** 2).sum().backward()                             # t2.grad: per ms

The kernels compute in float32: tissue tensors are taken as float32 (results are float32 and
complex64); gradients flow to the tissue tensors and, optionally, to the pulses' flip angles.
"""
import math

import numpy as np
import torch

__all__ = ["SimulateFunction", "simulate"]

from . import DIRECTIONS, Simulator, Tissue, simulator as _simulator


def _numpy(t):
    return t.detach().to(device="cpu", dtype=torch.float64).numpy()


class SimulateFunction(torch.autograd.Function):
    """apply(simulator, flip_deg, m0, t1_ms, t2_ms, b1, off_resonance_hz) -> signals [V, S].

    flip_deg: None (the sequence's flips) or a tensor with one flip angle (degrees) per pulse
    event; the five tissue tensors have shape [V]. Gradients: per deck unit for the tissue,
    per degree for the flips."""

    @staticmethod
    def forward(ctx, simulator, flip_deg, m0, t1_ms, t2_ms, b1, off_resonance_hz):
        sim = simulator
        if flip_deg is not None:
            sequence = simulator.sequence.with_flip_deg(_numpy(flip_deg))
            sim = Simulator(sequence, simulator.max_order)
        values = dict(zip(DIRECTIONS, (m0, t1_ms, t2_ms, b1, off_resonance_hz)))
        tissue = Tissue(**{name: _numpy(v) for name, v in values.items()})
        ctx.simulator = sim
        ctx.tissue = tissue
        return torch.from_numpy(sim.simulate(tissue))

    @staticmethod
    def backward(ctx, grad_signals):
        # PyTorch's gradient of a complex output is dL/dRe y + i dL/dIm y: the w of larmor's
        # adjoint loss sum Re(conj(w) y).
        w = grad_signals.detach().to("cpu").resolve_conj().to(torch.complex64).contiguous()
        # The sequence derivatives only where the flips want a gradient.
        tissue_grad, sequence_grad = ctx.simulator.vjp(ctx.tissue, w.numpy(), 0,
                                                       ctx.needs_input_grad[1])
        grads = [torch.from_numpy(np.ascontiguousarray(tissue_grad[:, k])) if ctx.needs_input_grad[2 + k]
                 else None for k in range(len(DIRECTIONS))]
        flip_grad = None
        if ctx.needs_input_grad[1]:
            pulses = ctx.simulator.sequence.pulse_events
            flip_grad = torch.from_numpy(sequence_grad[pulses, 0] * (math.pi / 180.0))
            flip_grad = flip_grad.to(torch.float32)
        return (None, flip_grad, *grads)


def simulate(sequence, *, t1_ms, t2_ms, b1=1.0, m0=1.0, off_resonance_hz=0.0, flip_deg=None,
             max_order=None):
    """Simulate `sequence` for tissue tensors, differentiably.

    Parameters
    ----------
    sequence : Sequence, Deck or Simulator
    t1_ms, t2_ms, b1, m0, off_resonance_hz : tensor or number
        Tissue in deck units, broadcast together to a batch shape B (any number of dimensions;
        numbers give B = ()).
    flip_deg : tensor of shape [pulses], optional
        One flip angle (degrees) per pulse event, in place of the sequence's.
    max_order : int, optional
        The highest EPG order kept (default: the sequence's automatic cap).

    Returns
    -------
    tensor of shape B + [samples], complex64
        Differentiable in every tensor given with requires_grad (per deck unit; per degree for
        `flip_deg`).
    """
    sim = _simulator(sequence, max_order)
    values = [torch.as_tensor(v, dtype=torch.float32)
              for v in (m0, t1_ms, t2_ms, b1, off_resonance_hz)]
    values = torch.broadcast_tensors(*values)
    batch = values[0].shape
    values = [v.reshape(-1) for v in values]
    if flip_deg is not None:
        flip_deg = torch.as_tensor(flip_deg, dtype=torch.float32)
    # The broadcast's backward sums each voxel's gradient into a shared value; the batch's
    # shape comes back on the signals (a reshape, which autograd follows).
    signals = SimulateFunction.apply(sim, flip_deg, *values)
    return signals.reshape(*batch, signals.shape[-1])
