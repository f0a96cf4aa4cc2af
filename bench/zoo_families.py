"""Model families tried as a new user would (docs/Results.md, "Models tried
as a new user would, round three"): transformers and torchvision families
at tiny configurations with random weights, each judged by the zoo's rule
(model_zoo.compare and model_zoo.verdict: the compiled step in N
micro-batches against PyTorch's full-batch step, both against a float64
copy). A refusal prints its whole message (is it at the model's line, in
PyTorch's words, with a code?).

    PYTHONPATH=build/python_packages:test/python/torch OMP_NUM_THREADS=1 \\
        .venv/bin/python bench/zoo_families.py NAME [NAME ...] \\
        [--optimizers adamw,sgd] [--n 1,4]

Without names it lists the families.
"""
import argparse
import os
import sys
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "python", "torch"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import model_zoo  # noqa: E402
from model_zoo import (Case, _hf, classification,  # noqa: E402
                       hf_image_classification, hf_loss, images, padded_text,
                       text_classes)

V, D, H = model_zoo.VOCAB, 16, 2
NO_DROPOUT = dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def causal_lm(config, model, **extra):
    """A transformers causal LM of 2 layers, d 16, 2 heads."""
    options = dict(vocab_size=V, hidden_size=D, intermediate_size=2 * D,
                   num_hidden_layers=2, num_attention_heads=H,
                   max_position_embeddings=16, bos_token_id=1,
                   eos_token_id=1, pad_token_id=0)
    options.update(extra)
    return lambda: _hf(config, model, **options)


def seq2seq(config, model, **extra):
    return lambda: _hf(config, model, vocab_size=V, d_model=D,
                       encoder_layers=1, decoder_layers=1,
                       encoder_attention_heads=H, decoder_attention_heads=H,
                       encoder_ffn_dim=2 * D, decoder_ffn_dim=2 * D,
                       max_position_embeddings=16, pad_token_id=0,
                       decoder_start_token_id=0, bos_token_id=1,
                       eos_token_id=1, dropout=0.0, **extra)


def encoder(config, model, **extra):
    """A BERT-like sequence classifier, 2 layers, d 16, no dropout."""
    options = dict(vocab_size=V, hidden_size=D, num_hidden_layers=2,
                   num_attention_heads=H, intermediate_size=2 * D,
                   max_position_embeddings=16, num_labels=3, pad_token_id=0)
    options.update(NO_DROPOUT)
    options.update(extra)
    return lambda: _hf(config, model, **options)


def vision(config, model, image=8, **extra):
    options = dict(image_size=image, patch_size=4, num_channels=3,
                   hidden_size=D, num_hidden_layers=1, num_attention_heads=H,
                   intermediate_size=2 * D, num_labels=3)
    options.update(extra)
    return lambda: _hf(config, model, **options)


def lm_no_mask(model, ids, mask, labels):
    """A causal LM's loss without the attention mask (models whose forward
    takes none: RWKV)."""
    return model(input_ids=ids, labels=labels.masked_fill(mask == 0,
                                                          -100)).loss


def pretraining_loss(model, x, y):
    """ViTMAE's own reconstruction loss (the labels unused)."""
    return model(pixel_values=x).loss


def segmentation(gen, b, size=16):
    return (torch.randn(b, 3, size, size, generator=gen),
            torch.randint(0, 3, (b, size, size), generator=gen))


def segmentation_loss(model, x, y):
    return model(pixel_values=x, labels=y).loss


def siglip_pairs(gen, b):
    ids, _, _ = padded_text(gen, b)
    return torch.randn(b, 3, 8, 8, generator=gen), ids


def siglip_loss(model, pixels, ids):
    return model(input_ids=ids, pixel_values=pixels, return_loss=True).loss


def siglip():
    import transformers
    text = dict(vocab_size=V, hidden_size=D, intermediate_size=2 * D,
                num_hidden_layers=1, num_attention_heads=H,
                max_position_embeddings=8)
    image = dict(hidden_size=D, intermediate_size=2 * D, num_hidden_layers=1,
                 num_attention_heads=H, image_size=8, patch_size=4)
    return transformers.SiglipModel(transformers.SiglipConfig(
        text_config=text, vision_config=image))


def siglip_classifier():
    import transformers
    image = dict(hidden_size=D, intermediate_size=2 * D, num_hidden_layers=1,
                 num_attention_heads=H, image_size=8, patch_size=4)
    config = transformers.SiglipConfig(vision_config=image,
                                       text_config=dict(vocab_size=V))
    config.num_labels = 3
    return transformers.SiglipForImageClassification(config)


def inception_v3():
    """Without its auxiliary head (which needs 299 x 299 images)."""
    from torchvision.models import Inception3
    return Inception3(num_classes=3, aux_logits=False, init_weights=False)


def efficientnet_v2():
    """torchvision's EfficientNet with V2 blocks (FusedMBConv, then MBConv
    with squeeze-excitation), one block per stage, narrow."""
    from torchvision.models.efficientnet import (EfficientNet,
                                                 FusedMBConvConfig,
                                                 MBConvConfig)
    setting = [FusedMBConvConfig(1, 3, 1, 8, 8, 1),
               FusedMBConvConfig(4, 3, 2, 8, 16, 1),
               MBConvConfig(4, 3, 2, 16, 24, 1)]
    return EfficientNet(setting, dropout=0.0, stochastic_depth_prob=0.0,
                        num_classes=3, last_channel=32)


def regnet_y():
    """torchvision's RegNet with the Y blocks' squeeze-excitation."""
    from torchvision.models.regnet import BlockParams, RegNet
    params = BlockParams.from_init_params(depth=3, w_0=8, w_a=8.0, w_m=2.0,
                                          group_width=8, se_ratio=0.25)
    return RegNet(params, num_classes=3)


def densenet121(growth=4):
    """torchvision's DenseNet-121 layout (blocks 6, 12, 24, 16), narrow."""
    from torchvision.models import DenseNet
    return DenseNet(growth_rate=growth, block_config=(6, 12, 24, 16),
                    num_init_features=8, bn_size=2, num_classes=3)


def googlenet():
    from torchvision.models import GoogLeNet
    return GoogLeNet(num_classes=3, aux_logits=False, init_weights=False)


def shufflenet():
    from torchvision.models import shufflenet_v2_x0_5
    return shufflenet_v2_x0_5(num_classes=3)


def mnasnet():
    from torchvision.models import mnasnet0_5
    return mnasnet0_5(num_classes=3)


BN = dict(recompute_statistics=True)
FAMILIES = {
    # Encoders.
    "deberta-v2": Case(encoder("DebertaV2Config",
                               "DebertaV2ForSequenceClassification",
                               relative_attention=True, position_buckets=4,
                               max_relative_positions=8,
                               pos_att_type=["p2c", "c2p"]),
                       text_classes, hf_loss),
    "deberta": Case(encoder("DebertaConfig",
                            "DebertaForSequenceClassification",
                            relative_attention=True,
                            max_relative_positions=8,
                            pos_att_type=["p2c", "c2p"]),
                    text_classes, hf_loss),
    "albert": Case(encoder("AlbertConfig", "AlbertForSequenceClassification",
                           embedding_size=8),
                   text_classes, hf_loss),
    "electra": Case(encoder("ElectraConfig",
                            "ElectraForSequenceClassification",
                            embedding_size=8),
                    text_classes, hf_loss),
    "xlnet": Case(lambda: _hf("XLNetConfig", "XLNetLMHeadModel",
                              vocab_size=V, d_model=D, n_layer=2, n_head=H,
                              d_inner=2 * D, dropout=0.0, pad_token_id=0,
                              bos_token_id=1, eos_token_id=1),
                  padded_text, hf_loss),
    "longformer": Case(encoder("LongformerConfig",
                               "LongformerForSequenceClassification",
                               attention_window=4,
                               max_position_embeddings=20),
                       text_classes, hf_loss),
    "bigbird": Case(encoder("BigBirdConfig",
                            "BigBirdForSequenceClassification",
                            attention_type="block_sparse", block_size=2,
                            num_random_blocks=1,
                            max_position_embeddings=32),
                    lambda g, b: text_classes(g, b, t=16), hf_loss),
    # Vision transformers.
    "vitmae": Case(vision("ViTMAEConfig", "ViTMAEForPreTraining", image=16,
                          decoder_hidden_size=D, decoder_num_hidden_layers=1,
                          decoder_num_attention_heads=H,
                          decoder_intermediate_size=2 * D, mask_ratio=0.5),
                   lambda g, b: images(g, b, 16), pretraining_loss),
    "beit": Case(vision("BeitConfig", "BeitForImageClassification",
                        use_relative_position_bias=True,
                        use_mean_pooling=True, layer_scale_init_value=0.1),
                 lambda g, b: images(g, b, 8), hf_image_classification),
    "dinov2": Case(vision("Dinov2Config", "Dinov2ForImageClassification",
                          mlp_ratio=2),
                   lambda g, b: images(g, b, 8), hf_image_classification),
    "segformer": Case(lambda: _hf("SegformerConfig",
                                  "SegformerForSemanticSegmentation",
                                  num_channels=3, num_encoder_blocks=2,
                                  depths=[1, 1], sr_ratios=[2, 1],
                                  hidden_sizes=[8, 16], patch_sizes=[3, 3],
                                  strides=[2, 2], num_attention_heads=[1, 2],
                                  mlp_ratios=[2, 2], decoder_hidden_size=16,
                                  num_labels=3, hidden_dropout_prob=0.0,
                                  attention_probs_dropout_prob=0.0,
                                  classifier_dropout_prob=0.0,
                                  drop_path_rate=0.0),
                      segmentation, segmentation_loss, **BN),
    "siglip-classifier": Case(siglip_classifier,
                              lambda g, b: images(g, b, 8),
                              hf_image_classification),
    "siglip": Case(siglip, siglip_pairs, siglip_loss),
    # Sequence to sequence.
    "marian": Case(seq2seq("MarianConfig", "MarianMTModel"), padded_text,
                   hf_loss),
    # LayerDrop (0.05 by default) branches on a random number: refused.
    "m2m100": Case(seq2seq("M2M100Config", "M2M100ForConditionalGeneration",
                           encoder_layerdrop=0.0, decoder_layerdrop=0.0),
                   padded_text, hf_loss),
    # Causal language models.
    "gpt-bigcode": Case(lambda: _hf("GPTBigCodeConfig",
                                    "GPTBigCodeForCausalLM", vocab_size=V,
                                    n_embd=D, n_layer=2, n_head=H,
                                    n_positions=16, multi_query=True,
                                    resid_pdrop=0.0, embd_pdrop=0.0,
                                    attn_pdrop=0.0, bos_token_id=1,
                                    eos_token_id=1),
                        padded_text, hf_loss),
    "phi": Case(causal_lm("PhiConfig", "PhiForCausalLM",
                          partial_rotary_factor=0.5, resid_pdrop=0.0,
                          embd_pdrop=0.0), padded_text, hf_loss),
    "persimmon": Case(causal_lm("PersimmonConfig", "PersimmonForCausalLM",
                                partial_rotary_factor=0.5, qk_layernorm=True,
                                hidden_dropout=0.0, attention_dropout=0.0),
                      padded_text, hf_loss),
    "nemotron": Case(causal_lm("NemotronConfig", "NemotronForCausalLM",
                               num_key_value_heads=1,
                               partial_rotary_factor=0.5),
                     padded_text, hf_loss),
    "rwkv": Case(lambda: _hf("RwkvConfig", "RwkvForCausalLM", vocab_size=V,
                             context_length=16, hidden_size=D,
                             num_hidden_layers=2, attention_hidden_size=D,
                             intermediate_size=2 * D, bos_token_id=1,
                             eos_token_id=1),
                 padded_text, lm_no_mask),
    "jamba": Case(causal_lm("JambaConfig", "JambaForCausalLM",
                            num_key_value_heads=1, attn_layer_period=2,
                            attn_layer_offset=1, expert_layer_period=2,
                            expert_layer_offset=1, num_experts=2,
                            num_experts_per_tok=1, mamba_d_state=4,
                            mamba_d_conv=2, mamba_expand=2, mamba_dt_rank=4,
                            use_mamba_kernels=False),
                  padded_text, hf_loss),
    # torchvision.
    "inception-v3": Case(inception_v3, lambda g, b: images(g, b, 75),
                         classification, **BN),
    "efficientnet-v2": Case(efficientnet_v2, lambda g, b: images(g, b, 32),
                            classification, **BN),
    "regnet-y": Case(regnet_y, lambda g, b: images(g, b, 32), classification,
                     **BN),
    "densenet121": Case(densenet121, lambda g, b: images(g, b, 32),
                        classification, **BN),
    "googlenet": Case(googlenet, lambda g, b: images(g, b, 32),
                      classification, **BN),
    "shufflenet-v2": Case(shufflenet, lambda g, b: images(g, b, 32),
                          classification, **BN),
    "mnasnet": Case(mnasnet, lambda g, b: images(g, b, 32), classification,
                    **BN),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--optimizers", default="adamw,sgd")
    parser.add_argument("--n", default="1,4")
    parser.add_argument("--batch", type=int, default=6)
    args = parser.parse_args()
    if not args.names:
        print("\n".join(FAMILIES))
        return 0
    model_zoo.quiet()
    model_zoo.MODELS.update(FAMILIES)
    from ga_mlir.torch import CompileError
    failures = 0
    for name in args.names:
        for optimizer in args.optimizers.split(","):
            for n in map(int, args.n.split(",")):
                label = f"{name} {optimizer} N={n}"
                try:
                    r = model_zoo.compare(FAMILIES[name], optimizer, n,
                                          batch=args.batch)
                except CompileError as error:
                    print(f"{label}: refused [{error.code}]: {error}",
                          flush=True)
                    failures += 1
                    continue
                except Exception:  # a crash is a finding too
                    print(f"{label}: CRASH\n{traceback.format_exc()}",
                          flush=True)
                    failures += 1
                    continue
                ok = model_zoo.verdict(optimizer, r)
                failures += not ok
                print(f"{label}: vs PyTorch {r['vs_pytorch']:.2g} vs float64 "
                      f"{r['vs_float64']:.2g} (PyTorch "
                      f"{r['pytorch_vs_float64']:.2g}), rms "
                      f"{r['vs_float64_rms']:.2g} (PyTorch "
                      f"{r['pytorch_vs_float64_rms']:.2g}) compile "
                      f"{r['compile_s']:.1f} s {'OK' if ok else 'FAIL'}",
                      flush=True)
    return failures


if __name__ == "__main__":
    sys.exit(main())
