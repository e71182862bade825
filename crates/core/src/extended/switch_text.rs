//! The switches of extended mode as text: each switch's value by key
//! ([`ExtendedOptions::value_of`], [`ExtendedOptions::set_switch`], [`ExtendedOptions::describe`])
//! and the text form of a whole setting, `key=value,key=value` with only the switches that differ
//! from [`ExtendedOptions::realistic`] ([`ExtendedOptions::to_text`],
//! [`ExtendedOptions::from_text`]) — what the CLI's `--ext` flag and the page's `ext` URL key
//! hold — with the edits a form makes to such a text as typed ([`text_value`], [`edit_text`]).
//! The switches themselves (keys, kinds, aliases) are in [`super::switches`].
//!
//! Values: toggles `on`/`off` (also `true`/`false`, `1`/`0`, `yes`/`no`), choices by name
//! (`recompute=full`, `sharding=fsdp`), numbers as decimals (`matmul_efficiency=0.7`,
//! `weight_sparsity=0.9`), counts as integers, `shard_group=all` for "no hybrid sharding".

use super::options::{
    AttentionKernel, ExtendedOptions, Fp8Recipe, Fusion, GradReduce, OptimizerStates, Recompute, Sharding,
    TransformerImpl,
};
use super::pipeline::StageSplitRule;
use super::switches::{SWITCHES, SwitchInfo, SwitchKind, switch};
use crate::Error;
use crate::catalog::Precision;
use crate::hint;

fn on_off(b: bool) -> String {
    if b { "on" } else { "off" }.to_string()
}

fn parse_toggle(key: &str, v: &str) -> Result<bool, Error> {
    match v.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        _ => Err(Error::invalid(key, v, "must be on or off")),
    }
}

fn parse_number(info: &SwitchInfo, v: &str) -> Result<f64, Error> {
    let SwitchKind::Number { min, max, open_min, open_max } = info.kind else {
        return Err(Error::invalid(info.key, v, "is not a number switch"));
    };
    let x = v.trim().parse::<f64>().ok().filter(|x| x.is_finite());
    let ok =
        x.is_some_and(|x| (if open_min { x > min } else { x >= min }) && (if open_max { x < max } else { x <= max }));
    match x {
        Some(x) if ok => Ok(x),
        _ => Err(Error::invalid(
            info.key,
            v,
            format!(
                "must be a number {}{min}, {max}{}",
                if open_min { "in (" } else { "in [" },
                if open_max { ")" } else { "]" }
            ),
        )),
    }
}

/// An integer switch's value within its [`SwitchKind::Count`] range; errors name `field`.
fn parse_count(info: &SwitchInfo, field: &str, v: &str) -> Result<u64, Error> {
    let SwitchKind::Count { min, max } = info.kind else {
        return Err(Error::invalid(field, v, "is not a count switch"));
    };
    v.trim()
        .parse::<u64>()
        .ok()
        .filter(|x| (min..=max).contains(x))
        .ok_or_else(|| Error::invalid(field, v, format!("must be an integer from {min} to {max}")))
}

impl ExtendedOptions {
    /// Every switch as `(name, value, what it models)`, for tables and the page (the order and
    /// words of [`SWITCHES`]).
    pub fn describe(&self) -> Vec<(&'static str, String, &'static str)> {
        SWITCHES.iter().map(|s| (s.key, self.value_of(s.key).unwrap_or_default(), s.what)).collect()
    }

    /// The value of the switch `key` as text (`None`: no such switch).
    pub fn value_of(&self, key: &str) -> Option<String> {
        let info = switch(key)?;
        Some(match info.key {
            "precision" => self.hardware.precision.as_str().to_string(),
            "matmul_efficiency" => self.hardware.matmul_efficiency.to_string(),
            "attention_efficiency" => self.hardware.attention_efficiency.to_string(),
            "measured_ceiling" => on_off(self.hardware.measured_ceiling),
            "zero3_per_nic" => on_off(self.hardware.zero3_per_nic),
            "memory_bound_ops" => on_off(self.hardware.memory_bound_ops),
            "recompute" => self.recompute.to_string(),
            "stack" => self.stack.as_str().to_string(),
            "sharding" => self.sharding.as_str().to_string(),
            "shard_group" => self.shard_group.map_or("all".to_string(), |g| g.to_string()),
            "interleave" => self.interleave.to_string(),
            "uneven_stages" => on_off(self.uneven_stages),
            "stage_split" => self.stage_split.as_str().to_string(),
            "causal" => on_off(self.model.causal),
            "cp_ring_overlap" => on_off(self.cp_ring_overlap),
            "cp_comm" => self.cp_comm.as_str().to_string(),
            "cp_ulysses" => self.cp_ulysses.to_string(),
            "sequence_parallel" => on_off(self.sequence_parallel),
            "grouped_query_attention" => on_off(self.model.grouped_query_attention),
            "gated_mlp" => on_off(self.model.gated_mlp),
            "embeddings_and_head" => on_off(self.model.embeddings_and_head),
            "memory_overheads" => on_off(self.hardware.memory_overheads),
            "weight_sparsity" => self.model.weight_sparsity.to_string(),
            "grad_reduce" => self.grad_reduce.as_str().to_string(),
            "tp_comm_overlap" => on_off(self.tp_comm_overlap),
            "tp_grad_overlap" => on_off(self.tp_grad_overlap),
            "dp_overlap" => on_off(self.dp_overlap),
            "param_broadcast" => on_off(self.param_broadcast),
            "gemm_half_dim" => self.hardware.gemm_half_dim.to_string(),
            "attention_half_seq" => self.hardware.attention_half_seq.to_string(),
            "fp8_recipe" => self.fp8_recipe.as_str().to_string(),
            "optimizer_states" => self.optimizer_states.as_str().to_string(),
            "optimizer" => self.optimizer.as_str().to_string(),
            "reshard_after_forward" => on_off(self.reshard_after_forward),
            "grad_accumulation_buffer" => on_off(self.grad_accumulation_buffer),
            "optimizer_in_backward" => on_off(self.optimizer_in_backward),
            "grads_freed" => on_off(self.grads_freed),
            "loss_chunks" => self.loss_chunks.to_string(),
            "loss_head_chunked" => on_off(self.loss_head_chunked),
            "compiled_loss" => on_off(self.compiled_loss),
            "loss_fp32_upcast" => on_off(self.loss_fp32_upcast),
            "op_saves_attention" => on_off(self.op_saves_attention),
            "fp32_params_autocast" => on_off(self.fp32_params_autocast),
            "outputs_hold_kv" => on_off(self.outputs_hold_kv),
            "log_num_zeros_in_grad" => on_off(self.log_num_zeros_in_grad),
            "log_params_norm" => on_off(self.log_params_norm),
            "hf_trainer_step" => on_off(self.hf_trainer_step),
            "grad_accumulation_fusion" => on_off(self.grad_accumulation_fusion),
            "rope_fusion" => on_off(self.rope_fusion),
            "transformer_impl" => self.transformer_impl.as_str().to_string(),
            "fusion" => self.fusion.as_str().to_string(),
            "attention_kernel" => self.attention_kernel.as_str().to_string(),
            _ => return None,
        })
    }

    /// Sets the switch `key` from its text `value`. Errors name the switch (`ext.<key>`) and the
    /// values it takes; an unknown key suggests the nearest.
    pub fn set_switch(&mut self, key: &str, value: &str) -> Result<(), Error> {
        let Some(info) = switch(key) else {
            let keys = SWITCHES.iter().map(|s| s.key);
            return Err(Error::invalid("ext", key, "is not a switch of extended mode").with_hint(match hint::nearest(
                key.trim(),
                keys,
            ) {
                Some(n) => format!("did you mean `{n}`?"),
                None => format!("switches: {}", SWITCHES.map(|s| s.key).join(", ")),
            }));
        };
        let field = format!("ext.{}", info.key);
        let named = |e: Error| match e {
            Error::InvalidField { value, rule, hint, .. } => {
                Error::InvalidField { field: field.clone(), value, rule, hint }
            }
            Error::UnknownName { name, known, .. } => {
                Error::invalid(field.clone(), name, format!("must be one of {}", known.join(", ")))
            }
            other => other,
        };
        let toggle = || parse_toggle(info.key, value).map_err(named);
        match info.key {
            "precision" => self.hardware.precision = value.parse::<Precision>().map_err(named)?,
            "matmul_efficiency" => self.hardware.matmul_efficiency = parse_number(info, value).map_err(named)?,
            "attention_efficiency" => self.hardware.attention_efficiency = parse_number(info, value).map_err(named)?,
            "measured_ceiling" => self.hardware.measured_ceiling = toggle()?,
            "zero3_per_nic" => self.hardware.zero3_per_nic = toggle()?,
            "memory_bound_ops" => self.hardware.memory_bound_ops = toggle()?,
            "recompute" => self.recompute = value.parse::<Recompute>().map_err(named)?,
            "stack" => self.stack = value.parse::<super::stack::Stack>().map_err(named)?,
            "sharding" => self.sharding = value.parse::<Sharding>().map_err(named)?,
            "shard_group" => {
                self.shard_group = if value.trim().eq_ignore_ascii_case("all") {
                    None
                } else {
                    Some(value.trim().parse::<u64>().ok().filter(|g| *g >= 1).ok_or_else(|| {
                        Error::invalid(field.clone(), value, "must be all or a positive integer [devices]")
                    })?)
                }
            }
            "interleave" => self.interleave = parse_count(info, &field, value)?,
            "uneven_stages" => self.uneven_stages = toggle()?,
            "stage_split" => self.stage_split = value.parse::<StageSplitRule>().map_err(named)?,
            "causal" => self.model.causal = toggle()?,
            "cp_ring_overlap" => self.cp_ring_overlap = toggle()?,
            "cp_comm" => self.cp_comm = value.parse::<super::context_parallel::CpComm>().map_err(named)?,
            "cp_ulysses" => self.cp_ulysses = parse_count(info, &field, value)?,
            "sequence_parallel" => self.sequence_parallel = toggle()?,
            "grouped_query_attention" => self.model.grouped_query_attention = toggle()?,
            "gated_mlp" => self.model.gated_mlp = toggle()?,
            "embeddings_and_head" => self.model.embeddings_and_head = toggle()?,
            "memory_overheads" => self.hardware.memory_overheads = toggle()?,
            "weight_sparsity" => self.model.weight_sparsity = parse_number(info, value).map_err(named)?,
            "grad_reduce" => self.grad_reduce = value.parse::<GradReduce>().map_err(named)?,
            "tp_comm_overlap" => self.tp_comm_overlap = toggle()?,
            "tp_grad_overlap" => self.tp_grad_overlap = toggle()?,
            "dp_overlap" => self.dp_overlap = toggle()?,
            "param_broadcast" => self.param_broadcast = toggle()?,
            "gemm_half_dim" => self.hardware.gemm_half_dim = parse_number(info, value).map_err(named)?,
            "attention_half_seq" => self.hardware.attention_half_seq = parse_number(info, value).map_err(named)?,
            "fp8_recipe" => self.fp8_recipe = value.parse::<Fp8Recipe>().map_err(named)?,
            "optimizer_states" => self.optimizer_states = value.parse::<OptimizerStates>().map_err(named)?,
            "optimizer" => self.optimizer = value.parse::<super::muon::Optimizer>().map_err(named)?,
            "reshard_after_forward" => self.reshard_after_forward = toggle()?,
            "grad_accumulation_buffer" => self.grad_accumulation_buffer = toggle()?,
            "optimizer_in_backward" => self.optimizer_in_backward = toggle()?,
            "grads_freed" => self.grads_freed = toggle()?,
            "loss_chunks" => self.loss_chunks = parse_count(info, &field, value)?,
            "loss_head_chunked" => self.loss_head_chunked = toggle()?,
            "compiled_loss" => self.compiled_loss = toggle()?,
            "loss_fp32_upcast" => self.loss_fp32_upcast = toggle()?,
            "op_saves_attention" => self.op_saves_attention = toggle()?,
            "fp32_params_autocast" => self.fp32_params_autocast = toggle()?,
            "outputs_hold_kv" => self.outputs_hold_kv = toggle()?,
            "log_num_zeros_in_grad" => self.log_num_zeros_in_grad = toggle()?,
            "log_params_norm" => self.log_params_norm = toggle()?,
            "hf_trainer_step" => self.hf_trainer_step = toggle()?,
            "grad_accumulation_fusion" => self.grad_accumulation_fusion = toggle()?,
            "rope_fusion" => self.rope_fusion = toggle()?,
            "transformer_impl" => self.transformer_impl = value.parse::<TransformerImpl>().map_err(named)?,
            "fusion" => self.fusion = value.parse::<Fusion>().map_err(named)?,
            "attention_kernel" => self.attention_kernel = value.parse::<AttentionKernel>().map_err(named)?,
            _ => {}
        }
        Ok(())
    }

    /// The switches that differ from [`Self::realistic`], as `key=value,key=value` in
    /// [`SWITCHES`] order (empty for the defaults).
    pub fn to_text(&self) -> String {
        let base = ExtendedOptions::realistic();
        SWITCHES
            .iter()
            .filter_map(|s| {
                let v = self.value_of(s.key)?;
                (Some(&v) != base.value_of(s.key).as_ref()).then(|| format!("{}={v}", s.key))
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// [`Self::realistic`] with the switches of `text` (`key=value,…`; empty: the defaults).
    /// A switch given twice (also by an alias) with different values is an error naming both
    /// (`ext.recompute = none: given twice (full, then none); give it once`); the same value twice
    /// is accepted. See [`edit_text`] for changing one switch of such a text as typed.
    pub fn from_text(text: &str) -> Result<ExtendedOptions, Error> {
        ExtendedOptions::realistic().with_text(text)
    }

    /// These options with the switches of `text` set over them, read and checked as
    /// [`Self::from_text`] reads them (what `fmperf estimate --from FILE --ext …` sets over the
    /// switches a launch file implied). Errors name the switch (`ext.<key>`) or, for a setting
    /// the switches cannot hold together, the field [`Self::validate`] names.
    pub fn with_text(self, text: &str) -> Result<ExtendedOptions, Error> {
        let mut o = self;
        // Each switch set so far: its key, the item as typed, its value as read.
        let mut seen: Vec<(&'static str, &str, String)> = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = item.split_once('=').ok_or_else(|| {
                Error::invalid("ext", item, "must be written key=value")
                    .with_hint("e.g. recompute=full,sharding=zero3,weight_sparsity=0.9")
            })?;
            o.set_switch(k, v)?;
            let Some(info) = switch(k) else { continue };
            let now = o.value_of(info.key).unwrap_or_default();
            match seen.iter().find(|(key, _, _)| *key == info.key) {
                Some((_, first, was)) if *was != now => return Err(Error::given_twice("ext", info.key, first, item)),
                Some(_) => {}
                None => seen.push((info.key, item, now)),
            }
        }
        o.validate()?;
        Ok(o)
    }
}

/// The value of switch `key` (or an alias) as written in the text form `text`, if it is there (as
/// typed, valid or not).
pub fn text_value(text: &str, key: &str) -> Option<String> {
    let want = switch(key)?.key;
    text.split(',')
        .filter_map(|item| item.split_once('='))
        .filter(|(k, _)| switch(k).is_some_and(|s| s.key == want))
        .map(|(_, v)| v.trim().to_string())
        .next_back()
}

/// The text form `text` (`key=value,…`) with switch `key` set to `value` as typed (kept even when
/// invalid, so a form can show it with its error), for forms that edit one switch at a time: keys
/// are written by their canonical names in [`SWITCHES`] order, a value equal to the default (as
/// [`ExtendedOptions::value_of`] writes it) is dropped, and items that are not switches are kept
/// at the end (so their error stays visible).
pub fn edit_text(text: &str, key: &str, value: &str) -> String {
    let defaults = ExtendedOptions::realistic();
    let mut known: Vec<(usize, String, String)> = Vec::new();
    let mut other: Vec<String> = Vec::new();
    let mut put = |k: &str, v: &str| match switch(k) {
        Some(info) => {
            let at = SWITCHES.iter().position(|s| s.key == info.key).unwrap_or(0);
            known.retain(|(i, _, _)| *i != at);
            known.push((at, info.key.to_string(), v.trim().to_string()));
        }
        None => other.push(format!("{}={}", k.trim(), v.trim())),
    };
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item.split_once('=').unwrap_or((item, ""));
        put(k, v);
    }
    put(key, value);
    crate::sort::sort_by_key(&mut known, |(i, _, _)| *i);
    let mut out: Vec<String> = known
        .into_iter()
        .filter(|(_, k, v)| defaults.value_of(k).as_deref() != Some(v.as_str()))
        .map(|(_, k, v)| format!("{k}={v}"))
        .collect();
    out.extend(other);
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_switch_reads_and_writes_its_field() {
        // Set to its default, a switch leaves the options as they are; set to another value, it
        // reads back that value and is the only switch that differs: `set_switch` and `value_of`
        // reach the same field, in whichever group (`model`, `hardware`, execution) it lives.
        let d = ExtendedOptions::realistic();
        for s in SWITCHES {
            let v = d.value_of(s.key).unwrap();
            let mut o = d;
            o.set_switch(s.key, &v).unwrap();
            assert_eq!(o, d, "{}", s.key);
            let other = match s.kind {
                SwitchKind::Toggle => (if v == "on" { "off" } else { "on" }).to_string(),
                SwitchKind::Choice(names) => names.iter().find(|n| **n != v).unwrap().to_string(),
                SwitchKind::Number { min, max, .. } => ((min + max) / 2.0).to_string(),
                SwitchKind::Count { min, .. } => (min + 1).to_string(),
                SwitchKind::CountOrAll => "8".to_string(),
            };
            o.set_switch(s.key, &other).unwrap();
            assert_eq!(o.value_of(s.key).as_deref(), Some(other.as_str()), "{}", s.key);
            assert_eq!(o.to_text(), format!("{}={other}", s.key));
            assert_eq!(ExtendedOptions::from_text(&o.to_text()).unwrap(), o, "{}", s.key);
        }
        assert_eq!(d.to_text(), "");
        assert_eq!(ExtendedOptions::from_text("").unwrap(), d);
    }

    #[test]
    fn text_form_round_trips_the_changed_switches() {
        let o = ExtendedOptions::from_text("sparsity=0.9, recompute=FULL,sharding=fsdp,gqa=off,shard_group=8").unwrap();
        assert_eq!(o.model.weight_sparsity, 0.9);
        assert_eq!(o.recompute, Recompute::Full);
        assert_eq!(o.sharding, Sharding::Zero3);
        assert!(!o.model.grouped_query_attention);
        assert_eq!(o.shard_group, Some(8));
        let text = o.to_text();
        assert_eq!(text, "recompute=full,sharding=zero3,shard_group=8,grouped_query_attention=off,weight_sparsity=0.9");
        assert_eq!(ExtendedOptions::from_text(&text).unwrap(), o);
    }

    #[test]
    fn one_switch_is_edited_as_typed() {
        assert_eq!(edit_text("", "recompute", "full"), "recompute=full");
        assert_eq!(edit_text("weight_sparsity=0.9", "gqa", "off"), "grouped_query_attention=off,weight_sparsity=0.9");
        // Back to the default: dropped; an invalid value is kept for its error.
        assert_eq!(edit_text("recompute=full,causal=off", "recompute", "selective"), "causal=off");
        assert_eq!(edit_text("", "interleave", "0"), "interleave=0");
        assert_eq!(edit_text("zz=1", "causal", "off"), "causal=off,zz=1");
        assert_eq!(text_value("gqa=off,recompute=full", "grouped_query_attention").as_deref(), Some("off"));
        assert_eq!(text_value("recompute=full", "causal"), None);
        let o = ExtendedOptions::from_text(&edit_text("", "matmul_efficiency", "0.6")).unwrap();
        assert_eq!(o.hardware.matmul_efficiency, 0.6);
    }

    #[test]
    fn bad_text_names_the_switch() {
        let e = ExtendedOptions::from_text("recompte=full").unwrap_err();
        assert!(e.to_string().contains("recompute"), "{e}");
        assert_eq!(ExtendedOptions::from_text("weight_sparsity=1").unwrap_err().field(), Some("ext.weight_sparsity"));
        assert_eq!(
            ExtendedOptions::from_text("matmul_efficiency=0").unwrap_err().field(),
            Some("ext.matmul_efficiency")
        );
        assert_eq!(ExtendedOptions::from_text("causal=maybe").unwrap_err().field(), Some("ext.causal"));
        assert_eq!(ExtendedOptions::from_text("interleave=0").unwrap_err().field(), Some("ext.interleave"));
        assert_eq!(ExtendedOptions::from_text("precision=fp4").unwrap_err().field(), Some("ext.precision"));
        assert!(ExtendedOptions::from_text("recompute").is_err());
    }

    #[test]
    fn a_switch_given_twice_differently_is_an_error_naming_both() {
        let e = ExtendedOptions::from_text("recompute=full,recompute=none").unwrap_err();
        assert_eq!(e.field(), Some("ext.recompute"));
        assert_eq!(e.to_string(), "ext.recompute = none: given twice (full, then none); give it once");
        // An alias is the same switch.
        let e = ExtendedOptions::from_text("zero=zero1,causal=off,sharding=zero3").unwrap_err();
        assert_eq!(e.to_string(), "ext.sharding = zero3: given twice (zero=zero1, then sharding=zero3); give it once");
        // The same value twice (as read: case, alias, fsdp = zero3) is accepted.
        let o = ExtendedOptions::from_text("recompute=full,recompute=FULL,sharding=fsdp,zero=zero3").unwrap();
        assert_eq!((o.recompute, o.sharding), (Recompute::Full, Sharding::Zero3));
        assert!(ExtendedOptions::from_text("weight_sparsity=0.5,sparsity=0.50").is_ok());
    }
}
