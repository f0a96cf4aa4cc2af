"""Mixture-of-experts models of the ga_mlir.torch tests and benchmarks.

- transformers' Mixtral, Qwen3-MoE and OLMoE (tiny configs, random
  initialization, their default grouped-product experts), built like the
  other Hugging Face models of model_zoo (which lists them in its MODELS);
  Mixtral with experts_implementation="eager" and DBRX, whose experts are
  a loop over the experts hit (the expert loop rule, _expert_loop.py);
- DenseMoE, a plain-torch MoE language model: a top-k router over E
  experts computed as a dense mix (every expert on every token, weighted by
  the normalized top-k probabilities), whose router logits feed the
  auxiliary losses (torch-moe-aux-losses.py, bench/moe_aux_prepass.py).

Not a test by itself (lit.local.cfg excludes it).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _hf(config_class, model_class, vocab, **config):
    """model_zoo._hf with the zoo's vocabulary unless `vocab` (model_zoo is
    imported here: it imports this module)."""
    import model_zoo
    return model_zoo._hf(config_class, model_class,
                         vocab_size=vocab or model_zoo.VOCAB, **config)


def _lm(config_class, model_class, vocab, d, heads, t, layers,
        router_logits, **config):
    """A transformers language model of width `d`, `heads` heads, context
    `t`, `layers` layers; the settings all the MoE zoo shares, and
    `config`, each model's own names of its experts and their sizes."""
    return _hf(config_class, model_class, vocab, hidden_size=d,
               num_hidden_layers=layers, num_attention_heads=heads,
               max_position_embeddings=t, output_router_logits=router_logits,
               bos_token_id=1, eos_token_id=1, pad_token_id=0, **config)


def mixtral(d=32, heads=2, t=16, vocab=None, experts=4, top_k=2,
            layers=2, router_logits=False, **config):
    """transformers' Mixtral: every layer's MLP a mixture of `experts`
    SwiGLU experts, `top_k` per token (its default experts, the grouped
    products of transformers.integrations.moe). Sizes multiples of 16."""
    return _lm("MixtralConfig", "MixtralForCausalLM", vocab, d, heads, t,
               layers, router_logits, intermediate_size=3 * d // 2,
               num_key_value_heads=heads // 2, num_local_experts=experts,
               num_experts_per_tok=top_k, **config)


def qwen3_moe(d=32, heads=2, t=16, vocab=None, experts=4, top_k=2,
              layers=2, router_logits=False, **config):
    """transformers' Qwen3-MoE (q/k norms, top-k weights renormalized)."""
    return _lm("Qwen3MoeConfig", "Qwen3MoeForCausalLM", vocab, d, heads, t,
               layers, router_logits, intermediate_size=2 * d,
               moe_intermediate_size=d, num_key_value_heads=heads // 2,
               head_dim=d // heads, num_experts=experts,
               num_experts_per_tok=top_k, norm_topk_prob=True, **config)


def olmoe(d=32, heads=2, t=16, vocab=None, experts=4, top_k=2, layers=2,
          router_logits=False, **config):
    """transformers' OLMoE (top-k weights not renormalized)."""
    return _lm("OlmoeConfig", "OlmoeForCausalLM", vocab, d, heads, t,
               layers, router_logits, intermediate_size=d,
               num_key_value_heads=heads // 2, num_experts=experts,
               num_experts_per_tok=top_k, **config)


def qwen2_moe(d=32, heads=2, t=16, vocab=None, experts=4, top_k=2,
              layers=2, router_logits=False, **config):
    """transformers' Qwen2-MoE: routed experts beside a shared expert whose
    output a sigmoid gate scales."""
    return _lm("Qwen2MoeConfig", "Qwen2MoeForCausalLM", vocab, d, heads, t,
               layers, router_logits, intermediate_size=2 * d,
               moe_intermediate_size=d, shared_expert_intermediate_size=d,
               num_key_value_heads=heads // 2, num_experts=experts,
               num_experts_per_tok=top_k, **config)


def granitemoe(d=32, heads=2, t=16, vocab=None, experts=4, top_k=2,
               layers=2, router_logits=False, **config):
    """transformers' GraniteMoE (its own parallel-experts layers)."""
    return _lm("GraniteMoeConfig", "GraniteMoeForCausalLM", vocab, d, heads,
               t, layers, router_logits, intermediate_size=d,
               num_key_value_heads=heads // 2, num_local_experts=experts,
               num_experts_per_tok=top_k, **config)


def gpt_oss(d=32, heads=2, t=16, vocab=None, experts=4, top_k=2, layers=2,
            router_logits=False, **config):
    """transformers' gpt-oss: experts with biases (looked up by the sorted
    expert ids), a clamped SwiGLU on interleaved gate/up columns, attention
    sinks."""
    return _lm("GptOssConfig", "GptOssForCausalLM", vocab, d, heads, t,
               layers, router_logits, intermediate_size=d,
               num_key_value_heads=heads // 2, head_dim=d // heads,
               num_local_experts=experts, num_experts_per_tok=top_k,
               layer_types=["full_attention"] * layers, **config)


def deepseek_v3(d=32, heads=2, t=16, vocab=None, experts=4, top_k=2,
                layers=2, groups=2, router_logits=False, **config):
    """transformers' DeepSeek-V3: sigmoid router scores with a correction
    bias, group-limited top-k (an unsorted top-k of the groups, their mask
    written by a scatter), a shared expert, multi-head latent attention
    with interleaved rotary dimensions; the first layer dense."""
    return _lm("DeepseekV3Config", "DeepseekV3ForCausalLM", vocab, d, heads,
               t, layers, router_logits, intermediate_size=2 * d,
               moe_intermediate_size=d // 2, first_k_dense_replace=1,
               num_key_value_heads=heads, n_routed_experts=experts,
               n_shared_experts=1, num_experts_per_tok=top_k,
               n_group=groups, topk_group=1, kv_lora_rank=d // 2,
               q_lora_rank=d // 2, qk_rope_head_dim=8, qk_nope_head_dim=8,
               v_head_dim=16, **config)


def dbrx(d=32, heads=2, t=16, vocab=None, experts=4, top_k=2, layers=2,
         router_logits=False, **config):
    """transformers' DBRX: its experts always the per-expert loop
    (DbrxExperts: a loop over the experts hit, each expert's rows gathered
    by torch.where, its matrices views of [E * F, d] parameters), top-k
    weights normalized by their 1-norm. transformers 5.23's DBRX attention
    reads attn_config.rope_theta, which its config does not define, and
    clamps q, k, v by clip_qkv even when it is None: both given here."""
    return _hf("DbrxConfig", "DbrxForCausalLM", vocab, d_model=d,
               n_heads=heads, n_layers=layers, max_seq_len=t,
               output_router_logits=router_logits,
               attn_config={"kv_n_heads": 1, "rope_theta": 10000.0,
                            "clip_qkv": 8.0},
               ffn_config={"ffn_hidden_size": 3 * d // 2,
                           "moe_num_experts": experts, "moe_top_k": top_k},
               bos_token_id=1, eos_token_id=1, pad_token_id=0, **config)


class DenseMoELayer(nn.Module):
    """A top-k router over `experts` two-layer SiLU MLPs, computed as a
    dense mix; returns the output and the router logits. `scales`: of the
    random initial weights of the experts' two layers."""

    def __init__(self, d, experts, top_k, gate_bias=True, scales=(0.3, 0.3)):
        super().__init__()
        self.d, self.experts, self.top_k = d, experts, top_k
        self.gate = nn.Linear(d, experts, bias=gate_bias)
        self.w1 = nn.Parameter(torch.randn(experts, d, 2 * d) * scales[0])
        self.w2 = nn.Parameter(torch.randn(experts, 2 * d, d) * scales[1])

    def forward(self, x):
        h = x.reshape(-1, self.d)
        logits = self.gate(h)  # router
        probs = F.softmax(logits, dim=-1)
        # The chosen probabilities picked by a one-hot product (topk's own
        # backward writes by index, which ga-mlir does not compile yet).
        hot = F.one_hot(torch.topk(probs, self.top_k, dim=-1).indices,
                        self.experts).float()
        weights = (hot * probs.unsqueeze(1)).sum(-1)
        weights = weights / weights.sum(-1, keepdim=True)
        mix = (hot * weights.unsqueeze(-1)).sum(1)
        y = F.silu(torch.einsum("td,edf->tef", h, self.w1))
        y = torch.einsum("tef,efd->ted", y, self.w2)
        return (mix.unsqueeze(-1) * y).sum(1).reshape(x.shape), logits


class DenseMoE(nn.Module):
    """Embedding, `layers` residual DenseMoELayers (after a layer norm with
    `norm`), a head; returns the logits and every layer's router logits.
    `seed`: torch.manual_seed before the parameters are drawn."""

    def __init__(self, vocab, d, experts, top_k, layers=2, norm=False,
                 seed=None, **layer):
        super().__init__()
        if seed is not None:
            torch.manual_seed(seed)
        self.d, self.norm = d, norm
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([DenseMoELayer(d, experts, top_k, **layer)
                                     for _ in range(layers)])
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        x = self.embed(ids)
        gates = []
        for layer in self.layers:
            y, logits = layer(F.layer_norm(x, (self.d,)) if self.norm else x)
            x = x + y
            gates.append(logits)
        return self.head(x), tuple(gates)


# ------------------------------------------------- the MoE zoo's test cases
_MODELS = {"mixtral": mixtral, "qwen3-moe": qwen3_moe, "olmoe": olmoe,
           "qwen2-moe": qwen2_moe, "granitemoe": granitemoe,
           "gpt-oss": gpt_oss, "deepseek-v3": deepseek_v3, "dbrx": dbrx}


def zoo_case(model, router_logits=False, **config):
    """A model_zoo Case of transformers' `model` (a key of _MODELS) with
    one layer (DeepSeek-V3: two, its first dense; the compile time of a
    test), with the batch-level load-balancing loss in its loss when
    `router_logits` (its coefficient 1, so that a loss computed per
    micro-batch would show)."""
    import model_zoo
    if router_logits:
        config.update(router_logits=True, router_aux_loss_coef=1.0)
    layers = 2 if model == "deepseek-v3" else 1
    return model_zoo.Case(
        lambda: _MODELS[model](layers=layers, **config),
        model_zoo.padded_text, model_zoo.hf_loss)


def empty_expert_mixtral():
    """Mixtral, one expert per token, whose router's row of the last expert
    is a copy of the one before: their logits tie, topk takes the lower
    index, so the last expert receives no token in any batch (with one
    expert per token the routing weight is 1 and the router gets no
    gradient: the rows stay equal)."""
    model = mixtral(layers=1, top_k=1)
    with torch.no_grad():
        for layer in model.model.layers:
            layer.mlp.gate.weight[-1] = layer.mlp.gate.weight[-2]
    return model


def expert_counts(model, ids, mask):
    """The tokens routed to each expert by the first layer (top-k of its
    router logits over the unpadded and padded tokens alike)."""
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask,
                    output_router_logits=True)
    logits = out.router_logits[0]
    k = model.config.num_experts_per_tok
    chosen = torch.topk(logits, k, dim=-1).indices.reshape(-1)
    return torch.bincount(chosen, minlength=logits.shape[-1]).tolist()


class CapacityMoE(nn.Module):
    """A Switch-style top-1 MoE language model with an expert capacity:
    each token's position in its expert's queue is counted over the tokens
    of the whole batch (a cumsum of the one-hot routing), and tokens past
    `capacity_factor * tokens / experts` are dropped (their MLP output is
    zero, the residual passes). The experts as a dense mix (each token's
    kept weight times every expert's output)."""

    def __init__(self, vocab=29, d=16, experts=4, capacity_factor=1.0):
        super().__init__()
        self.d, self.experts = d, experts
        self.capacity_factor = capacity_factor
        self.embed = nn.Embedding(vocab, d)
        self.gate = nn.Linear(d, experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(experts, d, 2 * d) * 0.3)
        self.w2 = nn.Parameter(torch.randn(experts, 2 * d, d) * 0.3)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        x = self.embed(ids)
        h = x.reshape(-1, self.d)
        probs = F.softmax(self.gate(h), dim=-1)
        hot = F.one_hot(probs.argmax(-1), self.experts).to(h.dtype)
        capacity = int(self.capacity_factor * h.shape[0] / self.experts)
        position = torch.cumsum(hot, dim=0) * hot  # queue position
        kept = hot * (position <= capacity).to(h.dtype)  # capacity
        y = F.silu(torch.einsum("td,edf->tef", h, self.w1))
        y = torch.einsum("tef,efd->ted", y, self.w2)
        mix = (kept * probs).unsqueeze(-1)
        return self.head(x + (mix * y).sum(1).reshape(x.shape))
