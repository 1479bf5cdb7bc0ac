"""larmor.torch: the autograd Function's gradients against larmor's forward mode and against
central differences of the float32 kernels."""
import numpy as np
import pytest

import larmor
from conftest import SOURCE_DIR

torch = pytest.importorskip("torch")
import larmor.torch as lt  # noqa: E402


def make_inputs(requires_grad=True):
    def tensor(values):
        return torch.tensor(values, dtype=torch.float32, requires_grad=requires_grad)
    return dict(m0=tensor([1.0, 0.7, 1.3]), t1_ms=tensor([800.0, 1200.0, 1500.0]),
                t2_ms=tensor([60.0, 90.0, 150.0]), b1=tensor([0.9, 1.0, 1.1]),
                off_resonance_hz=tensor([3.0, -2.0, 5.0]))


def target_loss(y, target):
    return ((y - target).abs() ** 2).sum()


def test_forward_is_larmors_simulate(train):
    x = make_inputs(False)
    y = lt.simulate(train, **x)
    expected = larmor.simulate(train, larmor.Tissue(**{k: v.numpy() for k, v in x.items()}))
    assert y.dtype == torch.complex64
    np.testing.assert_array_equal(y.numpy(), expected)


def test_tissue_gradients_match_forward_mode(train, rng):
    x = make_inputs()
    target = torch.from_numpy((0.1 * rng.standard_normal((3, train.samples))).astype(np.complex64))
    y = lt.simulate(train, **x)
    target_loss(y, target).backward()
    # dL/dp = sum 2 Re(conj(y - target) dy/dp): forward mode's tangents, in float64 here.
    d = larmor.jvp(train, larmor.Tissue(**{k: v.detach().numpy() for k, v in x.items()}))
    residual = (d.signals - target.numpy()).astype(np.complex128)
    for k, name in enumerate(larmor.DIRECTIONS):
        expected = 2 * np.einsum("vs,vs->v", np.conj(residual), d.tangents[:, k]).real
        # The adjoint and forward mode round differently in float32 (~1e-5 relative over ~100
        # event updates); 1e-4 of the largest component leaves a factor of ten.
        np.testing.assert_allclose(x[name].grad.numpy(), expected, rtol=0,
                                   atol=1e-4 * np.abs(expected).max())


def test_broadcast_scalars_collect_every_voxels_gradient(train):
    t1 = torch.tensor(1000.0, requires_grad=True)
    t2 = torch.tensor([50.0, 80.0, 120.0], requires_grad=True)
    y = lt.simulate(train, t1_ms=t1, t2_ms=t2)
    (y.abs() ** 2).sum().backward()
    per_voxel = torch.tensor([1000.0] * 3, requires_grad=True)
    y2 = lt.simulate(train, t1_ms=per_voxel, t2_ms=t2.detach())
    (y2.abs() ** 2).sum().backward()
    assert t1.grad.shape == ()
    assert t1.grad.item() == pytest.approx(per_voxel.grad.sum().item(), rel=1e-6)


def test_gradients_match_central_differences_in_float32(rng):
    # 100 rows of the schedule: long enough for T2 to weigh in against the float32 rounding.
    train = larmor.build("mrf", schedule=str(SOURCE_DIR / "inputs" / "mrf-schedule-1000.csv"),
                         repetitions=100)
    x = {k: v[:2].detach().requires_grad_() for k, v in make_inputs().items()}
    flips = torch.tensor(train.flip_deg, dtype=torch.float32, requires_grad=True)
    # A fit's loss: the signals of a nearby tissue as the target (residuals ~0.02).
    target = torch.from_numpy(larmor.simulate(train, larmor.Tissue(
        m0=[1.1, 0.6], t1_ms=[900.0, 1000.0], t2_ms=[70.0, 80.0], b1=[1.0, 0.95],
        off_resonance_hz=[1.0, -1.0])))
    target_loss(lt.simulate(train, flip_deg=flips, **x), target).backward()

    def loss_at(name, h, direction):
        with torch.no_grad():
            values = {k: v.detach().clone() for k, v in x.items()}
            f = flips.detach().clone()
            if name == "flip_deg":
                f += h * direction
            else:
                values[name] += h * direction
            y = lt.simulate(train, flip_deg=f, **values).to(torch.complex128)
            return float(target_loss(y, target.to(torch.complex128)))

    # torch.autograd.gradcheck's defaults (step 1e-6, tolerance 1e-5) assume float64. Here the
    # float32 signals (|y| ~ 0.1) are rounded to ~1e-8, so the loss is known to about
    # 2 sum|r| 1e-8 ~ 1e-7; over 2h that is up to 5e-4 of the weakest directional derivative
    # (T2's, ~1e-4 per ms), and the steps keep the truncation h^2/6 |L'''| below 6e-4 too.
    # Each direction follows the gradient's signs, so that voxels do not cancel; along the flips
    # it moves 101 pulses at once, whose curvature adds up: a step of 0.05 degrees keeps it small.
    steps = dict(m0=0.1, t1_ms=5.0, t2_ms=0.5, b1=3e-3, off_resonance_hz=0.1, flip_deg=0.05)
    for name, h in steps.items():
        grad = flips.grad if name == "flip_deg" else x[name].grad
        direction = torch.sign(grad)
        difference = (loss_at(name, h, direction) - loss_at(name, -h, direction)) / (2 * h)
        analytic = float((grad.double() * direction.double()).sum())
        assert analytic == pytest.approx(difference, rel=2e-3), name


def test_batch_shapes_survive_the_simulation(train):
    """A [2, 3] grid of tissue gives signals [2, 3, samples], each the voxel's own, with
    gradients of the grid's shape."""
    t1 = torch.tensor([[800.0], [1400.0]])
    t2 = torch.tensor([50.0, 80.0, 120.0], requires_grad=True)
    y = lt.simulate(train, t1_ms=t1, t2_ms=t2)
    assert y.shape == (2, 3, train.samples)
    flat = larmor.simulate(train, larmor.Tissue(t1_ms=np.repeat([800.0, 1400.0], 3),
                                                t2_ms=np.tile([50.0, 80.0, 120.0], 2)))
    np.testing.assert_array_equal(y.detach().numpy().reshape(6, -1), flat)
    (y.abs() ** 2).sum().backward()
    assert t2.grad.shape == (3,)
    assert lt.simulate(train, t1_ms=1000.0, t2_ms=80.0).shape == (train.samples,)
