"""The models of the held-out check of issue #42 (recompute_heldout.py):
tiny configurations with dropout (or stochastic depth, Dropout1d/2d,
AlphaDropout) active, each (make_model, make_batch(generator, b),
loss_fn, compile options). None of them is used by the remat/budget
tests. nn.TransformerEncoder sequence-first ([T, B, D], batch_first=False)
is not here: its projections fold [T, B] into rows, which the batch
analysis refuses ("collapsing the batch dimension into an outer dimension
interleaves samples") with the fix in the message.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "python", "torch"))


def models():
    import torch
    from torch import nn
    from torch.nn import functional as F
    import model_zoo as mz
    import zoo
    import torchvision

    def hf(config_class, model_class, **config):
        return mz._hf(config_class, model_class, **config)

    text = lambda g, b: mz.padded_text(g, b, t=8)  # noqa: E731
    d, h = 16, 2

    class ConvBNDropout(nn.Module):
        """Convolutions, BatchNorm, ReLU and Dropout2d (whole channels)."""

        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                nn.Dropout2d(0.2), nn.Conv2d(8, 8, 3, padding=1),
                nn.BatchNorm2d(8), nn.ReLU(), nn.Dropout(0.1))
            self.head = nn.Linear(8 * 8 * 8, 3)

        def forward(self, x):
            return self.head(self.body(x).flatten(1))

    class MixerBlock(nn.Module):
        def __init__(self, tokens, dim, p):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.token_mlp = nn.Sequential(
                nn.Linear(tokens, 2 * tokens), nn.GELU(), nn.Dropout(p),
                nn.Linear(2 * tokens, tokens))
            self.channel_mlp = nn.Sequential(
                nn.Linear(dim, 2 * dim), nn.GELU(), nn.Dropout(p),
                nn.Linear(2 * dim, dim))
            self.drop = nn.Dropout(p)

        def forward(self, x):
            x = x + self.drop(self.token_mlp(self.ln1(x).transpose(1, 2))
                              .transpose(1, 2))
            return x + self.drop(self.channel_mlp(self.ln2(x)))

    class Mixer(nn.Module):
        """MLP-Mixer: 4x4 patches of an 8x8 image, two blocks."""

        def __init__(self, dim=16, p=0.1):
            super().__init__()
            self.patch = nn.Conv2d(3, dim, 4, stride=4)
            self.blocks = nn.Sequential(MixerBlock(4, dim, p),
                                        MixerBlock(4, dim, p))
            self.ln = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, 3)

        def forward(self, x):
            x = self.patch(x).flatten(2).transpose(1, 2)
            return self.head(self.ln(self.blocks(x)).mean(1))

    def lm_loss(model, ids, mask, labels):
        logits = model(ids)
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                               labels[:, 1:].reshape(-1))

    def images8(g, b):
        return mz.images(g, b, 8)

    class TorchEncoder(nn.Module):
        """nn.TransformerEncoder, pre-norm, GELU, dropout, key padding."""

        def __init__(self, batch_first=True):
            super().__init__()
            self.batch_first = batch_first
            self.emb = nn.Embedding(mz.VOCAB, d)
            layer = nn.TransformerEncoderLayer(
                d, h, 2 * d, dropout=p, activation="gelu", norm_first=True,
                batch_first=batch_first)
            self.enc = nn.TransformerEncoder(layer, 2,
                                             enable_nested_tensor=False)
            self.head = nn.Linear(d, 3)

        def forward(self, ids, mask):
            x = self.emb(ids)
            if not self.batch_first:
                x = x.transpose(0, 1)
            x = self.enc(x, src_key_padding_mask=mask == 0)
            if not self.batch_first:
                x = x.transpose(0, 1)
            return self.head(x.mean(1))

    def enc_loss(model, ids, mask, labels):
        return F.cross_entropy(model(ids, mask), labels)

    class GRUClassifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(mz.VOCAB, d)
            self.gru = nn.GRU(d, d, num_layers=2, dropout=0.2,
                              batch_first=True)
            self.drop = nn.Dropout(p)
            self.head = nn.Linear(d, 3)

        def forward(self, ids):
            out, _ = self.gru(self.drop(self.emb(ids)))
            return self.head(out[:, -1])

    def gru_loss(model, ids, mask, labels):
        return F.cross_entropy(model(ids), labels)

    class SeluMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(
                nn.Flatten(), nn.Linear(3 * 8 * 8, 32), nn.SELU(),
                nn.AlphaDropout(0.2), nn.Linear(32, 32), nn.SELU(),
                nn.AlphaDropout(0.1), nn.Linear(32, 3))

        def forward(self, x):
            return self.net(x)

    class Conv1dNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(mz.VOCAB, d)
            self.body = nn.Sequential(
                nn.Conv1d(d, d, 3, padding=1), nn.BatchNorm1d(d), nn.ReLU(),
                nn.Dropout1d(0.2), nn.Conv1d(d, d, 3, padding=1),
                nn.FeatureAlphaDropout(0.1))
            self.head = nn.Linear(d, 3)

        def forward(self, ids):
            x = self.body(self.emb(ids).transpose(1, 2))
            return self.head(F.dropout(x.amax(-1), 0.3, self.training))

    class StochasticDepthNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3, padding=1)
            self.blocks = nn.ModuleList(
                nn.Sequential(nn.BatchNorm2d(8), nn.GELU(),
                              nn.Conv2d(8, 8, 3, padding=1, groups=2))
                for _ in range(2))
            self.sd = torchvision.ops.StochasticDepth(0.3, "row")
            self.head = nn.Sequential(nn.Dropout(0.2), nn.Linear(8, 3))

        def forward(self, x):
            x = self.stem(x)
            for b in self.blocks:
                x = x + self.sd(b(x))
            return self.head(x.mean((2, 3)))

    def tv_vit():
        return torchvision.models.VisionTransformer(
            image_size=8, patch_size=4, num_layers=2, num_heads=h,
            hidden_dim=d, mlp_dim=2 * d, dropout=p, attention_dropout=p,
            num_classes=3)

    p = 0.1

    def causal_lm(config_class, model_class, **config):
        """A two-layer decoder of the Llama family (grouped keys and
        values, attention dropout), `config` over the shared settings."""
        shared = dict(
            vocab_size=mz.VOCAB, hidden_size=d, intermediate_size=2 * d,
            num_hidden_layers=2, num_attention_heads=h,
            num_key_value_heads=1, max_position_embeddings=16,
            attention_dropout=p, bos_token_id=1, eos_token_id=1,
            pad_token_id=0)
        return lambda: hf(config_class, model_class, **dict(shared, **config))

    def encoder(config_class, model_class, **config):
        """A two-layer BERT-family encoder with hidden and attention
        dropout, `config` over the shared settings."""
        shared = dict(
            vocab_size=mz.VOCAB, hidden_size=d, num_hidden_layers=2,
            num_attention_heads=h, intermediate_size=2 * d,
            max_position_embeddings=16, hidden_dropout_prob=p,
            attention_probs_dropout_prob=p, pad_token_id=0)
        return lambda: hf(config_class, model_class, **dict(shared, **config))

    return {
        "bert": (lambda: mz.bert(dropout=p, t=8), mz.text_classes,
                 mz.hf_loss, {}),
        "roberta-mlm": (lambda: hf(
            "RobertaConfig", "RobertaForMaskedLM", vocab_size=mz.VOCAB,
            hidden_size=d, num_hidden_layers=2, num_attention_heads=h,
            intermediate_size=2 * d, max_position_embeddings=16,
            pad_token_id=0, hidden_dropout_prob=p,
            attention_probs_dropout_prob=p), text, mz.hf_loss, {}),
        "vit": (lambda: hf(
            "ViTConfig", "ViTForImageClassification", image_size=8,
            patch_size=4, num_channels=3, hidden_size=d,
            num_hidden_layers=1, num_attention_heads=h,
            intermediate_size=2 * d, num_labels=3, hidden_dropout_prob=p,
            attention_probs_dropout_prob=p), images8,
            mz.hf_image_classification, {}),
        "bart": (lambda: hf(
            "BartConfig", "BartForConditionalGeneration",
            vocab_size=mz.VOCAB, d_model=d, encoder_layers=1,
            decoder_layers=1, encoder_attention_heads=h,
            decoder_attention_heads=h, encoder_ffn_dim=2 * d,
            decoder_ffn_dim=2 * d, max_position_embeddings=16, dropout=p,
            attention_dropout=p, activation_dropout=p, pad_token_id=0,
            bos_token_id=1, eos_token_id=1, decoder_start_token_id=1,
            forced_eos_token_id=None), text, mz.hf_loss, {}),
        "gpt-neo": (lambda: hf(
            "GPTNeoConfig", "GPTNeoForCausalLM", vocab_size=mz.VOCAB,
            hidden_size=d, num_layers=2, num_heads=h,
            attention_types=[[["global", "local"], 1]], window_size=4,
            max_position_embeddings=16, embed_dropout=p,
            attention_dropout=p, resid_dropout=p, bos_token_id=1,
            eos_token_id=1), text, mz.hf_loss, {}),
        "qwen2": (causal_lm("Qwen2Config", "Qwen2ForCausalLM",
                            attn_implementation="eager"),
                  text, mz.hf_loss, {}),
        "gpt2": (lambda: hf(
            "GPT2Config", "GPT2LMHeadModel", vocab_size=mz.VOCAB,
            n_positions=16, n_embd=d, n_layer=2, n_head=h, resid_pdrop=p,
            embd_pdrop=p, attn_pdrop=p, bos_token_id=1, eos_token_id=1,
            attn_implementation="eager"), text, mz.hf_loss, {}),
        "t5": (lambda: hf(
            "T5Config", "T5ForConditionalGeneration", vocab_size=mz.VOCAB,
            d_model=d, d_kv=d // h, d_ff=2 * d, num_layers=1,
            num_decoder_layers=1, num_heads=h,
            relative_attention_num_buckets=8,
            relative_attention_max_distance=8, dropout_rate=p,
            feed_forward_proj="gated-gelu", decoder_start_token_id=0,
            pad_token_id=0, eos_token_id=1), text, mz.hf_loss, {}),
        "bloom": (lambda: hf(
            "BloomConfig", "BloomForCausalLM", vocab_size=mz.VOCAB,
            hidden_size=d, n_layer=2, n_head=h, hidden_dropout=p,
            attention_dropout=p, bos_token_id=1, eos_token_id=1,
            pad_token_id=0), text, mz.hf_loss, {}),
        "mixtral": (causal_lm("MixtralConfig", "MixtralForCausalLM",
                              hidden_size=2 * d, intermediate_size=3 * d,
                              num_local_experts=4, num_experts_per_tok=2),
                    text, mz.hf_loss, {}),
        "albert": (encoder("AlbertConfig", "AlbertForMaskedLM",
                           embedding_size=8), text, mz.hf_loss, {}),
        "distilbert": (lambda: hf(
            "DistilBertConfig", "DistilBertForSequenceClassification",
            vocab_size=mz.VOCAB, dim=d, n_layers=2, n_heads=h,
            hidden_dim=2 * d, max_position_embeddings=16, dropout=p,
            attention_dropout=p, seq_classif_dropout=p, num_labels=3,
            pad_token_id=0), mz.text_classes, mz.hf_loss, {}),
        "electra": (encoder("ElectraConfig", "ElectraForMaskedLM",
                            embedding_size=8), text, mz.hf_loss, {}),
        "deberta-v2": (lambda: hf(
            "DebertaV2Config", "DebertaV2ForMaskedLM", vocab_size=mz.VOCAB,
            hidden_size=d, num_hidden_layers=2, num_attention_heads=h,
            intermediate_size=2 * d, max_position_embeddings=16,
            relative_attention=True, position_buckets=4,
            pos_att_type=["p2c", "c2p"], hidden_dropout_prob=p,
            attention_probs_dropout_prob=p, pad_token_id=0), text,
            mz.hf_loss, {}),
        "gptj": (lambda: hf(
            "GPTJConfig", "GPTJForCausalLM", vocab_size=mz.VOCAB,
            n_positions=16, n_embd=d, n_layer=2, n_head=h, rotary_dim=4,
            resid_pdrop=p, embd_pdrop=p, attn_pdrop=p, bos_token_id=1,
            eos_token_id=1), text, mz.hf_loss, {}),
        "phi": (lambda: hf(
            "PhiConfig", "PhiForCausalLM", vocab_size=mz.VOCAB,
            hidden_size=d, intermediate_size=2 * d, num_hidden_layers=2,
            num_attention_heads=h, max_position_embeddings=16,
            resid_pdrop=p, embd_pdrop=p, attention_dropout=p,
            partial_rotary_factor=0.5, bos_token_id=1, eos_token_id=1,
            pad_token_id=0), text, mz.hf_loss, {}),
        "convnext": (lambda: hf(
            "ConvNextConfig", "ConvNextForImageClassification",
            num_channels=3, patch_size=2, num_stages=2, hidden_sizes=[8, 16],
            depths=[1, 1], drop_path_rate=0.2, num_labels=3,
            image_size=8), images8, mz.hf_image_classification, {}),
        "opt": (lambda: hf(
            "OPTConfig", "OPTForCausalLM", vocab_size=mz.VOCAB,
            hidden_size=d, num_hidden_layers=2, ffn_dim=2 * d,
            num_attention_heads=h, max_position_embeddings=16,
            word_embed_proj_dim=d, dropout=p, attention_dropout=p,
            pad_token_id=0, bos_token_id=1, eos_token_id=1), text,
            mz.hf_loss, {}),
        "gpt-neox": (lambda: hf(
            "GPTNeoXConfig", "GPTNeoXForCausalLM", vocab_size=mz.VOCAB,
            hidden_size=d, num_hidden_layers=2, num_attention_heads=h,
            intermediate_size=2 * d, max_position_embeddings=16,
            rotary_pct=0.5, hidden_dropout=p, attention_dropout=p,
            bos_token_id=1, eos_token_id=1), text, mz.hf_loss, {}),
        "gemma": (causal_lm("GemmaConfig", "GemmaForCausalLM", head_dim=8),
                  text, mz.hf_loss, {}),
        "falcon": (lambda: hf(
            "FalconConfig", "FalconForCausalLM", vocab_size=mz.VOCAB,
            hidden_size=d, num_hidden_layers=2, num_attention_heads=h,
            hidden_dropout=p, attention_dropout=p, bos_token_id=1,
            eos_token_id=1), text, mz.hf_loss, {}),
        "conv-bn-dropout2d": (ConvBNDropout, images8, mz.classification,
                              {"recompute_statistics": True}),
        "mlp-mixer": (Mixer, images8, mz.classification, {}),
        "lstm-lm": (mz.LSTMLM, text, lm_loss, {}),
        "resnet18": (lambda: mz.resnet18(width=4),
                     lambda g, b: mz.images(g, b, 32), mz.classification,
                     {"recompute_statistics": True}),
        "llama-sdpa": (causal_lm("LlamaConfig", "LlamaForCausalLM",
                                 attn_implementation="sdpa"),
                       text, mz.hf_loss, {}),
        "mistral": (causal_lm("MistralConfig", "MistralForCausalLM",
                              sliding_window=4,
                              attn_implementation="eager"),
                    text, mz.hf_loss, {}),
        "gpt2-sdpa": (lambda: hf(
            "GPT2Config", "GPT2ForSequenceClassification",
            vocab_size=mz.VOCAB, n_positions=16, n_embd=d, n_layer=2,
            n_head=h, resid_pdrop=p, embd_pdrop=p, attn_pdrop=p,
            summary_first_dropout=p, num_labels=3, pad_token_id=0,
            attn_implementation="sdpa"), mz.text_classes, mz.hf_loss, {}),
        "torch-encoder": (TorchEncoder, mz.text_classes, enc_loss, {}),
        "gru": (GRUClassifier, mz.text_classes, gru_loss, {}),
        "selu-alpha": (SeluMLP, images8, mz.classification, {}),
        "conv1d-dropout1d": (Conv1dNet, mz.text_classes, gru_loss,
                             {"recompute_statistics": True}),
        "stochastic-depth": (StochasticDepthNet, images8, mz.classification,
                             {"recompute_statistics": True}),
        "tv-vit": (tv_vit, images8, mz.classification, {}),
        "qwen3": (causal_lm("Qwen3Config", "Qwen3ForCausalLM", head_dim=8,
                            attn_implementation="sdpa"),
                  text, mz.hf_loss, {}),
        "mobilebert": (lambda: hf(
            "MobileBertConfig", "MobileBertForSequenceClassification",
            vocab_size=mz.VOCAB, hidden_size=d, embedding_size=8,
            num_hidden_layers=2, num_attention_heads=h,
            intermediate_size=2 * d, intra_bottleneck_size=8,
            true_hidden_size=8, max_position_embeddings=16,
            num_feedforward_networks=2, hidden_dropout_prob=p,
            attention_probs_dropout_prob=p, num_labels=3,
            pad_token_id=0), mz.text_classes, mz.hf_loss, {}),
    }, zoo
