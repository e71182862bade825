//! What several Megatron flags decide together, read once every flag is ([`finish`]): grouped-query
//! attention (`--num-query-groups` only with `--group-query-attention`), recomputation (granularity,
//! method, blocks), the framework's defaults for a run's command (no recomputation, FP32 without a
//! 16-bit flag), Megatron-DeepSpeed's ZeRO stage and BF16 optimizer, precision, and the vocabulary
//! [tokens] from a tokenizer fmperf knows by name.

use super::{Pending, tokenizer};
use crate::settings::SettingOrigin;
use crate::{Format, Launch, why};
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::{Recompute, Sharding};
use fmperf_core::vocab::NoteList;

/// Reads what depends on several flags: GQA groups, recomputation, precision, vocabulary.
pub(crate) fn finish(l: &mut Launch, p: Pending) -> Result<(), Error> {
    // Grouped-query attention: Megatron reads --num-query-groups only with --group-query-attention.
    if let Some((g, o, v)) = p.query_groups.clone() {
        if p.gqa == Some(true) || l.format != Format::Megatron {
            put!(l, kv_heads, g, &o);
        } else {
            l.unused(o.key, v, "ignored by Megatron without --group-query-attention (all heads have their own K/V)");
        }
    }
    // Recomputation.
    if let Some((g, o)) = &p.granularity {
        match g.to_ascii_lowercase().as_str() {
            "selective" => put!(l, recompute, Recompute::Selective, o),
            "full" => {
                put!(l, recompute, Recompute::Full, o);
                let method = p.method.as_ref().map(|(m, mo)| (m.to_ascii_lowercase(), mo.clone()));
                match method.as_ref().map(|(m, mo)| (m.as_str(), mo)) {
                    Some(("uniform", _)) | None => {}
                    Some(("block", mo)) => {
                        let Some((n, no)) = &p.recompute_layers else {
                            return Err(mo.error("block", "needs --recompute-num-layers (blocks recomputed per stage)"));
                        };
                        put!(l, recompute_blocks, *n, no);
                    }
                    Some((m, mo)) => return Err(mo.error(m, "must be uniform or block")),
                }
            }
            _ => return Err(o.error(g, "must be full or selective")),
        }
    } else if let Some((m, mo)) = &p.method {
        l.unused(mo.key.clone(), m.clone(), "ignored by Megatron without --recompute-granularity full");
    }
    if p.granularity.as_ref().is_none_or(|(g, _)| g != "full")
        && let Some((n, o)) = &p.recompute_layers
    {
        l.unused(o.key.clone(), n.to_string(), "ignored by Megatron without --recompute-granularity full");
    }
    // The framework's defaults apply to a run's command, not to a file of flags another script
    // sources, nor to a command with none of the flags this reader knows (a script that takes a
    // YAML of its own).
    let megatron_like = matches!(l.format, Format::Megatron | Format::NemoYaml)
        && !p.partial
        && (l.format != Format::Megatron || p.read_any);
    let (framework, recompute_key) = if p.trainer {
        ("the Hugging Face Trainer", "--gradient_checkpointing")
    } else {
        ("Megatron", "--recompute-granularity")
    };
    if p.granularity.is_none() && megatron_like && l.settings.recompute.get().is_none() {
        l.settings.recompute.put(Recompute::None, &SettingOrigin::new(recompute_key, 0));
        l.notes.reading(format!("no recomputation setting: {framework} keeps every activation (recompute none)"));
    }
    // A Megatron-LM command as written (not Megatron-DeepSpeed's MoE layer, nor the Trainer's):
    // Megatron-Core's defaults hold for what it leaves out, `SequentialMLP` without
    // `--moe-grouped-gemm` among them (`crate::moe_host`).
    if l.format == Format::Megatron && megatron_like && !p.trainer && p.deepspeed.is_none() {
        l.settings.moe.megatron_args.put(true, &SettingOrigin::new("(a Megatron-LM command)", 0));
    }
    // Megatron-DeepSpeed's ZeRO stage. With BF16 and stage 0, DeepSpeed runs its BF16 optimizer
    // (`runtime/bf16_optimizer.py`): optimizer states and FP32 master weights partitioned over the
    // data-parallel ranks, ZeRO-1's layout, and gradients accumulated in an FP32 buffer of every
    // parameter (BLOOM-176B's launch: "bf16 must use z0! it implements its own zero stage 1
    // equivalent").
    if let Some((sharding, o)) = &p.zero_stage {
        let bf16 = matches!(p.half, Some((Precision::Bf16, _))) && p.fp8.is_none();
        if p.deepspeed.is_some() && bf16 && *sharding == Sharding::Ddp {
            put!(l, sharding, Sharding::Zero1, o);
            put!(l, fp32_grad_accumulation, true, o);
            l.notes.reading(
                "DeepSpeed with --bf16 and ZeRO stage 0 runs its BF16 optimizer: optimizer states sharded over data \
                 parallelism (as ZeRO-1), gradients accumulated in FP32 (grad_accumulation_buffer)"
                    .into(),
            );
        } else {
            put!(l, sharding, *sharding, o);
        }
    }
    // Precision: FP8 linear layers, else the 16-bit format, else Megatron's FP32.
    match (&p.fp8, &p.half) {
        (Some((_, o)), _) => put!(l, precision, Precision::Fp8, o),
        (None, Some((h, o))) => put!(l, precision, *h, o),
        (None, None) if megatron_like && p.trainer && p.ds_json => l.notes.reading(
            "no --bf16 or --fp16: the precision is the DeepSpeed JSON's (give it with a second --from)".into(),
        ),
        (None, None) if megatron_like && l.settings.precision.get().is_none() => {
            l.settings.precision.put(Precision::Fp32, &SettingOrigin::new("--bf16", 0));
            l.notes.reading(format!("no bf16, fp16 or fp8 setting: {framework} trains in FP32"));
        }
        (None, None) => {}
    }
    vocabulary(l, p)
}

/// The vocabulary from the tokenizer when `--vocab-size` is not given: `--tokenizer-model` (a
/// model name or path), `--vocab-file` (`gpt2-vocab.json`), `--tokenizer-type` (see
/// [`tokenizer::known`]); a tokenizer fmperf does not know is an error asking for `--vocab-size`.
/// Megatron's `NullTokenizer` counts an end-of-document token after the `--vocab-size` ones
/// (`megatron/training/tokenizer/tokenizer.py`, `_NullTokenizer.vocab_size`).
fn vocabulary(l: &mut Launch, p: Pending) -> Result<(), Error> {
    let mut vocab_from: Option<SettingOrigin> = None;
    let null = p.tokenizer_type.as_ref().is_some_and(|(t, _)| t.eq_ignore_ascii_case("NullTokenizer"));
    if null && let (Some(v), Some(o)) = (l.settings.vocab.copied(), l.settings.vocab.origin.clone()) {
        l.settings.vocab.put(v + 1, &o);
        l.notes.reading_of(
            &o.key,
            format!(
                "vocabulary {} = {} (line {}) + 1: Megatron's NullTokenizer adds an end-of-document token",
                v + 1,
                o.key,
                o.line
            ),
        );
    }
    let sources = [&p.tokenizer_model, &p.vocab_file, &p.tokenizer_type];
    if l.settings.vocab.get().is_none() {
        let named =
            sources.into_iter().flatten().find_map(|(name, o)| tokenizer::known(name).map(|k| (k, name, o.clone())));
        match named {
            Some((k, name, o)) => {
                l.settings.vocab.put(k.vocab, &o);
                vocab_from = Some(o.clone());
                let counted = match k.counted {
                    tokenizer::Counted::Tokenizer => "the tokenizer's own size",
                    tokenizer::Counted::Config => "the model's config.json vocab_size",
                };
                l.notes.reading_of(
                    &o.key,
                    format!(
                        "vocabulary {} read from {} {name} (line {}): {}, {counted}; padded as Megatron pads",
                        k.vocab, o.key, o.line, k.source
                    ),
                );
            }
            None => {
                // Not a guess: the vocabulary stays unknown, and the estimate says what that leaves
                // out (see `scenario::vocab`).
                if let Some((name, o)) = sources.into_iter().flatten().next() {
                    l.notes.reading_of(
                        &o.key,
                        format!(
                            "{} {name} (line {}): fmperf knows the vocabularies of the common tokenizers by name, not \
                         a tokenizer file's contents; add --vocab-size N to the file for the embedding and output \
                         head",
                            o.key, o.line
                        ),
                    );
                }
            }
        }
    }
    for (name, o) in [p.tokenizer_model, p.vocab_file, p.tokenizer_type].into_iter().flatten() {
        if vocab_from.as_ref() != Some(&o) {
            l.unused(o.key, name, why::DATA);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::megatron::parse;

    #[test]
    fn recompute_and_errors_name_the_flag() {
        let l = parse("python pretrain_gpt.py --recompute-granularity full --recompute-method block --recompute-num-layers 2 --num-layers 8").unwrap();
        assert_eq!(l.settings.recompute.copied(), Some(Recompute::Full));
        assert_eq!(l.settings.recompute_blocks.copied(), Some(2));
        let e = parse("python pretrain_gpt.py --recompute-granularity partial").unwrap_err();
        assert_eq!(e.field(), Some("--recompute-granularity"));
        let e = parse("python pretrain_gpt.py --num-layers eighty").unwrap_err();
        assert_eq!(e.field(), Some("--num-layers"));
        let e = parse("python pretrain_gpt.py --tensor-model-parallel-size $TP").unwrap_err();
        assert!(e.to_string().contains("$TP"), "{e}");
        // A tokenizer file fmperf cannot size: no vocabulary, and a note saying how to give it.
        let l = parse("python pretrain_gpt.py --tokenizer-model /data/tok.model").unwrap();
        assert!(l.settings.vocab.get().is_none());
        assert!(l.notes.iter().any(|n| n.contains("--tokenizer-model /data/tok.model") && n.contains("--vocab-size")));
        let l = parse("python pretrain_gpt.py --num-attention-heads 64 --num-key-value-heads 8").unwrap();
        assert_eq!(l.settings.kv_heads.copied(), Some(8));
        let l = parse("python pretrain_gpt.py --tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Meta-Llama-3-70B")
            .unwrap();
        assert_eq!(l.settings.vocab.copied(), Some(128_256));
        assert!(parse("echo hello").is_err());
    }
}
