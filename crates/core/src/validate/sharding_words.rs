//! Sharding words (ZeRO, FSDP, HSDP) read by meaning (see [`super::words`]) into a ZeRO stage and
//! a shard group in devices; every reading that is not plain comes with a note for the row.
//!
//! Sharding, first rule that applies:
//! 1. FSDP/HSDP words that are not negated: `NO_SHARD` → plain data parallel; Megatron-FSDP's
//!    sharding strategy as named (`optim_grads_params` → ZeRO-3, `optim_grads` → ZeRO-2, `optim`
//!    → ZeRO-1, `no_shard` → plain data parallel: `--data-parallel-sharding-strategy`'s choices,
//!    NVIDIA/Megatron-LM d98e8a6 `megatron/training/arguments.py:3190–3191`,
//!    `distributed_data_parallel_config.py:103–105`); `SHARD_GRAD_OP`,
//!    `ZeRO-2`, `reshard_after_forward=False` → ZeRO-2; `HYBRID_SHARD`, `HSDP`, "shard within …,
//!    replicate across …" → ZeRO-3 inside a shard group; anything else (`FSDP`, `FSDP2`,
//!    `FULL_SHARD`, `fully_shard`, "parameters sharded") → ZeRO-3. The shard group is the number
//!    the words give after `fsdp`/`shard`/`over`/`across` (torchtitan and MaxText count it over
//!    the data-parallel ranks, so it is multiplied by the context-parallel degree), or the
//!    data-parallel size over the number after `replicate`; a group that does not divide
//!    `dp·cp` is replaced by the whole group, with a note.
//! 2. a stated `zero_stage` (0–3); for ZeRO-1/2 a shard group the words give after
//!    `shard group` (hierarchical ZeRO, [`crate::extended::data_parallel`]);
//! 3. `distributed_optimizer: true` → ZeRO-1;
//! 4. ZeRO words in the optimizer text (`ZeRO-1`, "states sharded") → that stage;
//! 5. nothing stated → ZeRO-1 (Megatron's distributed optimizer), noted
//!    ([`ShardingReading::stated`] false).
//!
//! One reading for every row: the dense rows' reader ([`super::row`]) and the MoE rows' reader
//! ([`super::moe_runs`]) gather their words into a [`ShardingInput`] and call [`read_sharding`].

use super::stack_words::MEGATRON_FSDP_WORDS;
use super::words::Words;
use crate::extended::Sharding;
use crate::vocab::{Note, NoteList};

/// Sharding read from a row.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardingReading {
    /// ZeRO stage / FSDP.
    pub sharding: Sharding,
    /// Shard group [devices] when smaller than the whole data × context parallel group.
    pub shard_group: Option<u64>,
    /// Notes for the row.
    pub notes: Vec<Note>,
    /// Whether the row states its sharding (false: nothing said, the ZeRO-1 default of rule 5).
    pub stated: bool,
}

/// The sharding words of a row, gathered.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShardingInput<'a> {
    /// `parallel.fsdp` (words; `Some("")` never happens: empty is `None`).
    pub fsdp: Option<&'a str>,
    /// `parallel.fsdp` given as a boolean.
    pub fsdp_flag: Option<bool>,
    /// `parallel.zero_stage`.
    pub zero_stage: Option<u64>,
    /// `parallel.distributed_optimizer`.
    pub distributed_optimizer: Option<bool>,
    /// `optimizer` words (and other words about the optimizer's states, e.g.
    /// `--use-distributed-optimizer`).
    pub optimizer: Option<&'a str>,
    /// Data-parallel size.
    pub dp: u64,
    /// Context-parallel size.
    pub cp: u64,
}

/// A pure integer token within `window` tokens after `at`, skipping numbers that follow
/// `zero`/`stage` (a ZeRO stage, not a degree).
pub(super) fn degree_after(w: &Words, at: usize, window: usize) -> Option<u64> {
    let end = (at + window).min(w.tokens.len());
    // "all" (also a −1 degree, [`minus_one_as_all`]) ends the search: the degree is every rank;
    // so does "replicate" (what follows counts replicas).
    let stop = (at..end).find(|&i| matches!(w.tokens[i].as_str(), "all" | "replicate" | "replicated")).unwrap_or(end);
    (at..stop).find_map(|i| {
        let n = w.tokens[i].parse::<u64>().ok()?;
        let prev = i.checked_sub(1).map(|j| w.tokens[j].as_str());
        let next = w.tokens.get(i + 1).map(String::as_str);
        let replica_count = matches!(next, Some("replicas" | "replica" | "copies" | "nodes" | "groups"));
        (!matches!(prev, Some("zero" | "stage" | "level")) && !replica_count && n > 0).then_some(n)
    })
}

/// The text with a degree of −1 written as `all`: torchtitan's `data_parallel_shard_degree=-1`
/// and MaxText's `ici_fsdp_parallelism=-1` mean "every remaining rank", never a group of one. A
/// `-1` glued to a word (`ZeRO-1`, `stage-1`) is a name, not a degree, and is kept.
fn minus_one_as_all(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let negative_one = chars[i] == '-'
            && chars.get(i + 1) == Some(&'1')
            && !chars.get(i + 2).is_some_and(|c| c.is_ascii_alphanumeric() || *c == '.')
            && !i.checked_sub(1).is_some_and(|j| chars[j].is_alphanumeric());
        if negative_one {
            out.push_str(" all ");
            i += 2;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// The shard degree the FSDP words give, if any.
fn fsdp_degree(w: &Words, dp: u64) -> Option<u64> {
    for key in ["shard", "sharded", "sharding", "fsdp", "fsdp1", "fsdp2", "fully", "zero3"] {
        if let Some(at) = w.find(key)
            && let Some(n) = degree_after(w, at + 1, 4)
        {
            return Some(n);
        }
    }
    let replicas = w.number_before("replicas", 1).or_else(|| w.number_before("replica", 1)).map(|r| r as u64);
    let after = w.find("replicate").or_else(|| w.find("replicated")).and_then(|at| degree_after(w, at + 1, 3));
    if let Some(r) = replicas.or(after)
        && r > 0
        && dp.is_multiple_of(r)
    {
        return Some(dp / r);
    }
    None
}

/// The shard group of a stated ZeRO-1/2 that the words give (`zero shard group 8`, the layout
/// sweeps' `zero_shard_group`; InternLM's hierarchical `zero1` size): `Some(z)` when `z` is
/// smaller than the replica group `dp·cp` and divides it, noted; the whole group (`None`)
/// otherwise, noted when the words named a group that does not divide it.
fn zero_shard_group(words: Option<&str>, replicas: u64, notes: &mut Vec<Note>) -> Option<u64> {
    let w = Words::new(&minus_one_as_all(words?));
    let at = w.find("shard group")?;
    let z = degree_after(&w, at + 2, 2)?;
    if z >= replicas {
        return None;
    }
    if !replicas.is_multiple_of(z) {
        notes.reading(format!("ZeRO shard group {z} does not divide dp·cp = {replicas}: sharded over all {replicas}"));
        return None;
    }
    notes.reading(format!(
        "hierarchical ZeRO: optimizer states sharded within groups of {z} ranks, replicated across {} groups",
        replicas / z
    ));
    Some(z)
}

/// Megatron-FSDP's sharding strategy when the words name one (module documentation, rule 1):
/// `optim_grads_params` shards parameters, gradients and optimizer states (ZeRO-3), `optim_grads`
/// gradients and states (ZeRO-2), `optim` the states (ZeRO-1: only beside words naming
/// Megatron-FSDP or its sharding strategy, the bare word being too common); `no_shard` is read
/// before.
fn megatron_fsdp_strategy(w: &Words) -> Option<Sharding> {
    if w.has("optim grads params") {
        Some(Sharding::Zero3)
    } else if w.has("optim grads") {
        Some(Sharding::Zero2)
    } else if w.has("optim") && (w.any(&MEGATRON_FSDP_WORDS) || w.has("sharding strategy")) {
        Some(Sharding::Zero1)
    } else {
        None
    }
}

/// Reads the sharding of a row (module documentation).
pub fn read_sharding(input: &ShardingInput) -> ShardingReading {
    let mut notes = Vec::new();
    let replicas = input.dp.saturating_mul(input.cp).max(1);
    let fsdp_words = input.fsdp.map(|t| Words::new(&minus_one_as_all(t))).filter(|w| !w.is_empty());
    if fsdp_words.as_ref().is_some_and(|w| w.any(&["no shard", "noshard"])) {
        return ShardingReading { sharding: Sharding::Ddp, shard_group: None, notes, stated: true };
    }
    let negated = fsdp_words.as_ref().is_some_and(|w| {
        let t = &w.tokens;
        t.len() <= 3
            && t.first().is_some_and(|f| matches!(f.as_str(), "no" | "none" | "false" | "off" | "disabled" | "0"))
    });
    let fsdp_on = match (&fsdp_words, input.fsdp_flag) {
        (Some(_), _) => !negated,
        (None, Some(b)) => b,
        (None, None) => false,
    };
    if fsdp_on {
        let w = fsdp_words.clone().unwrap_or_default();
        let zero2 = w.any(&["shard grad op", "zero2", "zero 2", "stage 2", "grad op"])
            || (w.has("reshard after forward") && (w.has("false") || w.has("no") || w.has("off")));
        let hybrid = w.any(&["hybrid", "hsdp", "replicate", "replicated", "replicas"]);
        let sharding = match megatron_fsdp_strategy(&w) {
            Some(s) => s,
            None if zero2 => Sharding::Zero2,
            None => Sharding::Zero3,
        };
        let degree = fsdp_degree(&w, input.dp);
        let group = match degree {
            Some(n) if hybrid => Some(n),
            // torchtitan and MaxText state the FSDP degree over data-parallel ranks; the shard
            // group spans the context-parallel ranks too.
            Some(n) => Some(n.saturating_mul(input.cp)),
            None if hybrid => {
                notes.reading("hybrid sharding without a group size: one group per 8-device node assumed".into());
                Some(8)
            }
            None => None,
        };
        let group = match group {
            Some(g) if g > 0 && replicas.is_multiple_of(g) => (g != replicas).then_some(g),
            Some(g) => {
                notes.reading(format!(
                    "shard group {g} read from `{}` does not divide dp·cp = {replicas}: sharded over all {replicas}",
                    w.text
                ));
                None
            }
            None => None,
        };
        return ShardingReading { sharding, shard_group: group, notes, stated: true };
    }
    if let Some(z) = input.zero_stage {
        match Sharding::of_zero_stage(z) {
            Some(sharding @ (Sharding::Zero1 | Sharding::Zero2)) => {
                let shard_group = zero_shard_group(input.optimizer, replicas, &mut notes);
                return ShardingReading { sharding, shard_group, notes, stated: true };
            }
            Some(sharding) => return ShardingReading { sharding, shard_group: None, notes, stated: true },
            None => notes.reading(format!("zero_stage {z} does not exist: ignored")),
        }
    }
    if input.distributed_optimizer == Some(true) {
        return ShardingReading { sharding: Sharding::Zero1, shard_group: None, notes, stated: true };
    }
    if let Some(o) = input.optimizer.map(Words::new) {
        let stage = if o.any(&["zero3", "zero 3", "stage 3"]) {
            Some(Sharding::Zero3)
        } else if o.any(&["zero2", "zero 2", "stage 2"]) {
            Some(Sharding::Zero2)
        } else if o.has("distributed fused adam") {
            // Apex's `DistributedFusedAdam` (NeMo 1's `distributed_fused_adam`): "implements the
            // ZeRO-2 algorithm, which distributes the optimizer state and gradients".
            notes.reading("distributed_fused_adam: Apex's ZeRO-2, gradients sharded".into());
            Some(Sharding::Zero2)
        } else if o.any(&["zero1", "zero 1", "stage 1", "distributed optimizer", "distributed optim", "dist optimizer"])
            || (o.has("sharded") || o.has("partitioned")) && o.has("states")
        {
            Some(Sharding::Zero1)
        } else {
            None
        };
        if let Some(s) = stage {
            return ShardingReading { sharding: s, shard_group: None, notes, stated: true };
        }
    }
    if input.distributed_optimizer == Some(false) && input.zero_stage.is_none() && input.fsdp_flag == Some(false) {
        notes.reading("no ZeRO stage, FSDP or distributed optimizer: plain data parallelism".into());
        return ShardingReading { sharding: Sharding::Ddp, shard_group: None, notes, stated: true };
    }
    notes.reading("ZeRO stage not stated: distributed optimizer (ZeRO-1)".into());
    ShardingReading { sharding: Sharding::Zero1, shard_group: None, notes, stated: false }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stated_zero_stage_with_a_shard_group() {
        let read = |optimizer: &str, dp: u64| {
            read_sharding(&ShardingInput {
                zero_stage: Some(1),
                optimizer: Some(optimizer),
                dp,
                cp: 1,
                ..Default::default()
            })
        };
        // InternLM's zero1 = 8 on 64 ranks: sharded within groups of 8, noted.
        let r = read("zero shard group 8", 64);
        assert_eq!((r.sharding, r.shard_group), (Sharding::Zero1, Some(8)));
        assert!(r.notes[0].contains("within groups of 8") && r.notes[0].contains("across 8 groups"), "{:?}", r.notes);
        // A group of every rank (or more) is plain ZeRO-1; one that does not divide dp is said.
        assert_eq!(read("zero shard group 64", 64).shard_group, None);
        assert_eq!(read("zero shard group -1", 64).shard_group, None);
        let odd = read("zero shard group 6", 64);
        assert_eq!(odd.shard_group, None);
        assert!(odd.notes[0].contains("does not divide"), "{:?}", odd.notes);
        // No group in the words: sharded over all, nothing said.
        let plain = read("AdamW", 64);
        assert_eq!((plain.shard_group, plain.notes.len(), plain.stated), (None, 0, true));
        // Nothing stated at all: the ZeRO-1 default, said and marked as not stated.
        let none = read_sharding(&ShardingInput { dp: 8, cp: 1, ..Default::default() });
        assert_eq!((none.sharding, none.stated, none.notes.len()), (Sharding::Zero1, false, 1));
        // ZeRO-0 and ZeRO-3 stated by stage read no group here.
        let z0 = read_sharding(&ShardingInput {
            zero_stage: Some(0),
            optimizer: Some("zero shard group 8"),
            dp: 64,
            cp: 1,
            ..Default::default()
        });
        assert_eq!((z0.sharding, z0.shard_group), (Sharding::Ddp, None));
    }

    fn sharding(fsdp: &str, dp: u64, cp: u64) -> (Sharding, Option<u64>) {
        let r = read_sharding(&ShardingInput { fsdp: Some(fsdp), dp, cp, ..ShardingInput::default() });
        (r.sharding, r.shard_group)
    }

    #[test]
    fn fsdp_words() {
        assert_eq!(sharding("FSDP 8", 32, 1), (Sharding::Zero3, Some(8)));
        // −1: every rank (torchtitan, MaxText), never a group of one.
        assert_eq!(sharding("FSDP over all ranks (data_parallel_shard_degree=-1)", 64, 1), (Sharding::Zero3, None));
        assert_eq!(sharding("fully_shard, dp_shard: -1", 16, 1), (Sharding::Zero3, None));
        assert_eq!(sharding("HSDP, shard degree -1, replicate 2", 16, 1), (Sharding::Zero3, Some(8)));
        assert_eq!(sharding("FSDP (ZeRO-1 style optimizer off), shard 4", 16, 1), (Sharding::Zero3, Some(4)));
        assert_eq!(
            sharding("ICI FSDP = 256 within slice; DCN data parallel = 8", 2048, 1),
            (Sharding::Zero3, Some(256))
        );
        assert_eq!(sharding("FSDP FULL_SHARD (ZeRO-3-like) across all GPUs", 64, 1), (Sharding::Zero3, None));
        assert_eq!(sharding("FSDP (1D)", 8, 1), (Sharding::Zero3, None));
        assert_eq!(sharding("FSDP2 over 8 ranks", 8, 1), (Sharding::Zero3, None));
        assert_eq!(sharding("FSDP 4", 4, 2), (Sharding::Zero3, None));
        assert_eq!(sharding("HSDP: shard 8, replicate 16", 128, 1), (Sharding::Zero3, Some(8)));
        assert_eq!(sharding("hybrid sharding, 4 replicas", 32, 1), (Sharding::Zero3, Some(8)));
        assert_eq!(sharding("SHARD_GRAD_OP", 16, 1), (Sharding::Zero2, None));
        assert_eq!(sharding("NO_SHARD", 16, 1), (Sharding::Ddp, None));
        // Megatron-FSDP's `--data-parallel-sharding-strategy`, as its functional tests write it.
        assert_eq!(sharding("Megatron-FSDP (optim_grads_params)", 8, 1), (Sharding::Zero3, None));
        assert_eq!(sharding("Megatron-FSDP (optim_grads)", 8, 1), (Sharding::Zero2, None));
        assert_eq!(sharding("Megatron-FSDP, data_parallel_sharding_strategy: optim", 8, 1), (Sharding::Zero1, None));
        assert_eq!(sharding("--use-megatron-fsdp --data-parallel-sharding-strategy no_shard", 8, 1).0, Sharding::Ddp);
        // A bare `optim` beside other FSDP words names no strategy.
        assert_eq!(sharding("FSDP with optim states on the host", 8, 1).0, Sharding::Zero3);
        assert_eq!(sharding("none", 16, 1).0, Sharding::Zero1);
        let apex = ShardingInput {
            optimizer: Some("distributed_fused_adam (NeMo 1)"),
            dp: 16,
            cp: 1,
            ..ShardingInput::default()
        };
        assert_eq!(read_sharding(&apex).sharding, Sharding::Zero2);
        let mcore =
            ShardingInput { optimizer: Some("mcore_distributed_optim"), dp: 16, cp: 1, ..ShardingInput::default() };
        assert_eq!(read_sharding(&mcore).sharding, Sharding::Zero1);
        let r = read_sharding(&ShardingInput { fsdp: Some("FSDP 6"), dp: 16, cp: 1, ..ShardingInput::default() });
        assert_eq!(r.shard_group, None);
        assert!(r.notes[0].contains("does not divide"));
        let r = read_sharding(&ShardingInput {
            optimizer: Some("Adam, fp32 master weights + states sharded by ZeRO-1 over DP"),
            dp: 8,
            cp: 1,
            ..ShardingInput::default()
        });
        assert_eq!(r.sharding, Sharding::Zero1);
    }
}
