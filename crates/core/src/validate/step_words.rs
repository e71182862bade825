//! Megatron-LM's per-step statistics a run's words state: `--log-num-zeros-in-grad` and
//! `--log-params-norm` ([`crate::extended::step_host`]); and its gradient-accumulation fusion
//! (`--no-gradient-accumulation-fusion`, [`read_grad_accumulation_fusion`]); its RoPE fusion
//! (`--no-rope-fusion`, [`read_rope_fusion`]); and its layer spec
//! (`--transformer-impl`, [`read_transformer_impl`]). A flag is on where its name appears as a
//! Megatron argument not followed by `false`, `0` or `off` (`--log-params-norm`,
//! `--log-params-norm True`, `log_params_norm: true`); off otherwise, as in Megatron-LM's
//! defaults. A flag stated both on and off is an error naming `parallel.other` and the flag, not a
//! silent pick. Read only from the arguments a row carries (`parallel.other`, where the functional
//! tests' rows hold their `MODEL_ARGS`), not from prose.

use super::words::Words;
use crate::extended::{AttentionKernel, TransformerImpl};
use crate::vocab::Note;

/// What the words state of the store-true flag whose tokens are `flag` (`"permute fusion"` matches
/// `--moe-permute-fusion`, `moe_permute_fusion` and the prose): `Some(true)` where it is named and
/// never set false, `Some(false)` where it is only set false (followed by `false`/`0`/`off`/`disabled`, or
/// preceded by `no`: `--no-…` flags and "no permute fusion"), `None` where it is not named; an error
/// on `field` naming `argument` where one statement sets it and another unsets it.
pub(super) fn stated_flag(
    words: &Words,
    flag: &str,
    field: &str,
    argument: &str,
) -> Result<Option<bool>, crate::Error> {
    let want = Words::new(flag).tokens;
    let t = &words.tokens;
    if want.is_empty() || want.len() > t.len() {
        return Ok(None);
    }
    let states: Vec<bool> = (0..=t.len() - want.len())
        .filter(|&i| t[i..i + want.len()] == want[..])
        .map(|i| {
            let set = !matches!(t.get(i + want.len()).map(String::as_str), Some("false" | "0" | "off" | "disabled"));
            // `--no-x` set on turns x off (`--no-x false` leaves it on).
            if i > 0 && t[i - 1] == "no" { !set } else { set }
        })
        .collect();
    match (states.contains(&true), states.contains(&false)) {
        (true, true) => {
            Err(crate::Error::invalid(field, argument, format!("states {argument} both on and off: say it once")))
        }
        (true, false) => Ok(Some(true)),
        (false, true) => Ok(Some(false)),
        (false, false) => Ok(None),
    }
}

/// What the words state of Megatron's gradient-accumulation fusion (`gradient_accumulation_fusion`,
/// on by default; the flag `--no-gradient-accumulation-fusion` turns it off,
/// `megatron/training/arguments.py` l. 2944–2948 at d98e8a6): `Some(false)` where
/// `--no-gradient-accumulation-fusion` is named not followed by `false`/`0`/`off`, or
/// `gradient_accumulation_fusion` is set `false` (NeMo's and Megatron-Bridge's key); `Some(true)`
/// where either says the other way; `None` where neither is named. Stated both ways: an error
/// naming `parallel.other` and the flag.
pub fn read_grad_accumulation_fusion(other: &Words) -> Result<(Option<bool>, Option<Note>), crate::Error> {
    const FLAG: &str = "--no-gradient-accumulation-fusion";
    let fusion = stated_flag(other, "gradient accumulation fusion", "parallel.other", FLAG)?;
    let note = (fusion == Some(false)).then(|| {
        Note::reading(format!(
            "{FLAG}: each weight's 16-bit gradient added into the FP32 main gradient by DDP's backward hook (a launch \
             per weight matrix and micro-batch, 4 B more HBM traffic per weight; grad_accumulation_fusion=off)"
        ))
    });
    Ok((fusion, note))
}

/// What the words state of Megatron-Core's RoPE fusion (`apply_rope_fusion`, on by default for
/// RoPE models; `--no-rope-fusion` turns it off, `megatron/training/arguments.py` l. 2902–2905 at
/// d98e8a6): `Some(false)` where `--no-rope-fusion` is named not followed by `false`/`0`/`off`, or
/// `apply_rope_fusion` is set `false` (NeMo's and Megatron-Bridge's key); `Some(true)` where
/// either says the other way; `None` where neither is named. Stated both ways: an error naming
/// `parallel.other` and the flag.
pub fn read_rope_fusion(other: &Words) -> Result<(Option<bool>, Option<Note>), crate::Error> {
    const FLAG: &str = "--no-rope-fusion";
    let fusion = stated_flag(other, "rope fusion", "parallel.other", FLAG)?;
    let note = (fusion == Some(false)).then(|| {
        Note::reading(format!(
            "{FLAG}: RoPE as Megatron-Core's unfused element-wise kernels over the queries and keys (their HBM bytes, \
             each launch's host time; rope_fusion=off)"
        ))
    });
    Ok((fusion, note))
}

/// What the words state of Megatron-Core's layer spec (`--transformer-impl`, NeMo's and
/// Megatron-Bridge's `transformer_impl`; `megatron/core/transformer/transformer_config.py`
/// l. 1314–1318 at d98e8a6, default `transformer_engine`): the value after the name
/// (`transformer_engine` or `local`), with a note for the local spec; `None` where it is not
/// named. A value fmperf does not model (`inference_optimized`, or another word) or the spec
/// stated two ways: an error naming `parallel.other` and the flag.
pub fn read_transformer_impl(other: &Words) -> Result<(Option<TransformerImpl>, Option<Note>), crate::Error> {
    const FLAG: &str = "--transformer-impl";
    let t = &other.tokens;
    let mut stated = None;
    for i in (0..t.len().saturating_sub(1)).filter(|&i| t[i] == "transformer" && t[i + 1] == "impl") {
        let spec = match (t.get(i + 2).map(String::as_str), t.get(i + 3).map(String::as_str)) {
            (Some("transformer"), Some("engine")) | (Some("te"), _) => TransformerImpl::TransformerEngine,
            (Some("local"), _) => TransformerImpl::Local,
            (v, _) => {
                let v = v.unwrap_or("nothing");
                return Err(crate::Error::invalid(
                    "parallel.other",
                    format!("{FLAG} {v}"),
                    "must be transformer_engine or local (the layer specs fmperf counts)",
                ));
            }
        };
        if stated.is_some_and(|s| s != spec) {
            return Err(crate::Error::invalid("parallel.other", FLAG, format!("states {FLAG} two ways: say it once")));
        }
        stated = Some(spec);
    }
    let note = (stated == Some(TransformerImpl::Local)).then(|| {
        Note::reading(format!(
            "{FLAG} local: Megatron-Core's own modules, no Transformer Engine linear module's Python in each layer's \
             forward (transformer_impl=local)"
        ))
    });
    Ok((stated, note))
}

/// The attention kernel of a run whose words state the layer spec `spec` and read the kernel
/// `kernel` with `note` (`None`: the words name none): the local spec's core attention is
/// Megatron-Core's `DotProductAttention` (`LocalSpecProvider.core_attention`,
/// `megatron/core/models/backends.py` l. 129–131 at d98e8a6: the score matrix computed by
/// `baddbmm`, softmax, dropout and `bmm`, and kept), so unfused where no kernel is named; the
/// reading as it is otherwise.
pub fn spec_attention(
    spec: Option<TransformerImpl>,
    kernel: AttentionKernel,
    note: Option<Note>,
) -> (AttentionKernel, Option<Note>) {
    if spec == Some(TransformerImpl::Local) && note.is_none() {
        let why = "attention kernel unfused: --transformer-impl local runs Megatron-Core's DotProductAttention";
        (AttentionKernel::Unfused, Some(Note::reading(why.to_string())))
    } else {
        (kernel, note)
    }
}

/// The statistics switches `(log_num_zeros_in_grad, log_params_norm)` the arguments `other`
/// state, with a note naming those on; an error when the arguments contradict themselves.
pub fn read_step_statistics(other: &Words) -> Result<(bool, bool, Option<Note>), crate::Error> {
    let zeros =
        stated_flag(other, "log num zeros in grad", "parallel.other", "--log-num-zeros-in-grad")?.unwrap_or(false);
    let norm = stated_flag(other, "log params norm", "parallel.other", "--log-params-norm")?.unwrap_or(false);
    let named: Vec<&str> = [(zeros, "--log-num-zeros-in-grad"), (norm, "--log-params-norm")]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, f)| *f)
        .collect();
    let note = (!named.is_empty()).then(|| {
        Note::reading(format!(
            "per-step statistics {}: their host work (PyTorch calls, synced all-reduces) added to each step",
            named.join(", ")
        ))
    });
    Ok((zeros, norm, note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_as_megatron_states_them() {
        let read = |t: &str| {
            let (z, n, _) = read_step_statistics(&Words::new(t)).unwrap();
            (z, n)
        };
        assert_eq!(read("--use-distributed-optimizer False --log-params-norm True"), (false, true));
        assert_eq!(read("--log-num-zeros-in-grad --log-params-norm"), (true, true));
        assert_eq!(read("log_num_zeros_in_grad: true, log_params_norm: false"), (true, false));
        assert_eq!(read("--log-params-norm 0"), (false, false));
        // Megatron's defaults: neither.
        assert_eq!(read("--use-distributed-optimizer True --log-interval 1"), (false, false));
        assert!(read_step_statistics(&Words::new("--log-params-norm")).unwrap().2.is_some());
        assert!(read_step_statistics(&Words::new("")).unwrap().2.is_none());
        // Stated twice the same way: read; stated on and off: an error naming the field and flag.
        assert_eq!(read("--log-params-norm --log-params-norm True"), (false, true));
        let e = read_step_statistics(&Words::new("--log-params-norm True --log-params-norm False")).unwrap_err();
        assert!(e.to_string().contains("parallel.other") && e.to_string().contains("--log-params-norm"), "{e}");
    }

    #[test]
    fn gradient_accumulation_fusion_as_stated() {
        let read = |t: &str| read_grad_accumulation_fusion(&Words::new(t)).unwrap();
        // Megatron's flag (the functional tests write `--no-gradient-accumulation-fusion: true`).
        assert_eq!(read("--deterministic-mode True --no-gradient-accumulation-fusion True").0, Some(false));
        assert_eq!(read("--no-gradient-accumulation-fusion").0, Some(false));
        assert!(read("--no-gradient-accumulation-fusion").1.is_some());
        assert_eq!(read("--no-gradient-accumulation-fusion false").0, Some(true));
        // NeMo's / Megatron-Bridge's key.
        assert_eq!(read("gradient_accumulation_fusion: false").0, Some(false));
        assert_eq!(read("gradient_accumulation_fusion: true").0, Some(true));
        assert!(read("gradient_accumulation_fusion: true").1.is_none());
        // Not named: Megatron's default, left to the switch.
        assert_eq!(read("--use-distributed-optimizer True --bias-gelu-fusion"), (None, None));
        // Both ways: an error naming the field and the flag.
        let e = read_grad_accumulation_fusion(&Words::new(
            "--no-gradient-accumulation-fusion gradient_accumulation_fusion: true",
        ))
        .unwrap_err();
        assert!(
            e.to_string().contains("parallel.other") && e.to_string().contains("--no-gradient-accumulation-fusion"),
            "{e}"
        );
    }

    #[test]
    fn rope_fusion_as_stated() {
        let read = |t: &str| read_rope_fusion(&Words::new(t)).unwrap();
        // The functional tests' `rope_embeddings_interleaved_no_fusion` cases.
        assert_eq!(read("--rotary-interleaved True --no-rope-fusion True").0, Some(false));
        assert!(read("--no-rope-fusion").1.is_some_and(|n| n.to_string().contains("rope_fusion=off")));
        assert_eq!(read("--no-rope-fusion false").0, Some(true));
        assert_eq!(read("apply_rope_fusion: false").0, Some(false));
        assert_eq!(read("--position-embedding-type rope --no-gradient-accumulation-fusion True"), (None, None));
        let e = read_rope_fusion(&Words::new("--no-rope-fusion apply_rope_fusion: true")).unwrap_err();
        assert!(e.to_string().contains("parallel.other") && e.to_string().contains("--no-rope-fusion"), "{e}");
    }

    #[test]
    fn the_layer_spec_as_megatron_states_it() {
        let read = |t: &str| read_transformer_impl(&Words::new(t)).unwrap().0;
        assert_eq!(
            read("--sequence-parallel True --transformer-impl local --moe-grouped-gemm"),
            Some(TransformerImpl::Local)
        );
        assert_eq!(read("--transformer-impl transformer_engine"), Some(TransformerImpl::TransformerEngine));
        assert_eq!(read("transformer_impl: local"), Some(TransformerImpl::Local));
        // Not named: Megatron's default is left to the caller.
        assert_eq!(read("--use-distributed-optimizer True"), None);
        assert!(read_transformer_impl(&Words::new("--transformer-impl local")).unwrap().1.is_some());
        // A spec fmperf does not count, or two specs: errors naming the field and the flag.
        for t in
            ["--transformer-impl inference_optimized", "--transformer-impl local --transformer-impl transformer_engine"]
        {
            let e = read_transformer_impl(&Words::new(t)).unwrap_err().to_string();
            assert!(e.contains("parallel.other") && e.contains("--transformer-impl"), "{e}");
        }
    }
}
