"""Tests of the representation-learning building blocks."""

from __future__ import annotations

import pytest
import torch

from otfair.models.representation import EncoderClassifier, GroupFlows, SigmoidCritic


def test_encoder_classifier_shapes_and_composition():
    torch.manual_seed(0)
    net = EncoderClassifier(6, latent_dim=4, encoder_hidden=(8,), head_hidden=(5,))
    x = torch.randn(7, 6)
    z, logit = net(x)
    assert z.shape == (7, 4) and logit.shape == (7,)
    torch.testing.assert_close(logit, net.head(net.encoder(x))[:, 0])
    with pytest.raises(ValueError, match="latent_dim"):
        EncoderClassifier(3, latent_dim=0)


def test_sigmoid_critic_is_sigmoid_of_affine():
    critic = SigmoidCritic(3)
    z = torch.randn(5, 3)
    expected = torch.sigmoid(z @ critic.theta + critic.mu)
    torch.testing.assert_close(critic(z), expected)


def test_group_flows_route_rows_and_invert():
    torch.manual_seed(1)
    flows = GroupFlows(4, n_blocks=2, hidden=(8,))
    for p in flows.parameters():  # leave the identity initialization
        p.data.add_(0.1 * torch.randn_like(p))
    x = torch.randn(10, 4, dtype=torch.float32)
    s = torch.tensor([0, 1] * 5)
    z, logdet = flows(x, s)
    for g in (0, 1):
        zg, ldg = flows.group(g)(x[s == g])
        torch.testing.assert_close(z[s == g], zg)
        torch.testing.assert_close(logdet[s == g], ldg)
        back, _ = flows.group(g).inverse(z[s == g])
        torch.testing.assert_close(back, x[s == g], atol=1e-5, rtol=1e-5)
    assert not torch.allclose(flows.group(0)(x)[0], flows.group(1)(x)[0])
