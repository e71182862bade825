//! The execution choices an extended-mode search makes next to the parallel layout: activation
//! recomputation, ZeRO stage / FSDP (and its shard group), interleaved pipeline stages, plus the
//! context-parallel degree and the micro-batch (which are dimensions of the layout). Each one is
//! either searched or fixed by the user ([`ExecutionChoices`]). The context-parallel flavour
//! (ring, Ulysses, hybrid) is searched only when asked for, by the switch `cp_comm=search`
//! ([`cp_flavours`]; every other value fixes it, the default ring too).
//!
//! The search stays exhaustive — every combination of a layout is priced unless a bound proves it
//! cannot enter the top list — and fast by pruning (see [`super::Search`]):
//! * memory: the leanest combination (full recomputation, ZeRO-3 over the whole replica group,
//!   no interleaving) is priced first; when even it does not fit, no combination of the layout
//!   does;
//! * time: the matrix work without recomputation (`t_comp` of a combination without
//!   recomputation) is a lower bound on every combination's iteration time (recomputation only adds
//!   work, sharding and interleaving do not change it); when `G / t_comp` cannot beat the current
//!   k-th best, the layout's other combinations are skipped.
//!
//! * MoE models: a candidate is bounded by the least time floor of its expert layouts without
//!   recomputation (read from the leanest evaluator's cached block costs); its leanest execution
//!   is judged by the layouts' memory alone when none needs less than the least memory seen (it
//!   then cannot change `min_mem_gb`, and whether it fits is all `feasible` needs; once a
//!   candidate of the search fits, `min_mem_gb` is no longer reported and the layouts' memories
//!   are read only until one fits), so a candidate that cannot enter the list is never assembled;
//!   each level is bounded by its floor with the pipeline bubble of its interleave degree.
//!
//! Every candidate still counts in `candidates` (considered, pruned or not). The bounds are
//! checked against the unpruned search in the tests (`tests/search_choices.rs`: rows, order,
//! numbers bit for bit, candidate and feasible counts, dense and MoE, small and large).

use crate::Error;
use crate::extended::ExtendedOptions;
use crate::extended::Stack;
use crate::extended::Workload;
use crate::extended::context_parallel::{CpComm, ulysses_applies};
use crate::extended::options::{Recompute, Sharding};

/// Largest interleave degree the search tries (Megatron's virtual stages; more only adds stage
/// messages).
pub const MAX_SEARCHED_INTERLEAVE: u64 = 8;

/// One choice of execution, as priced (a field of each ranked configuration of an extended search).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Execution {
    /// Activation recomputation.
    #[serde(serialize_with = "as_text", deserialize_with = "from_text")]
    pub recompute: Recompute,
    /// ZeRO stage / FSDP (`zero3`).
    #[serde(serialize_with = "as_text", deserialize_with = "from_text")]
    pub sharding: Sharding,
    /// ZeRO-3 shard group [devices] (`None`: the whole data × context parallel group).
    pub shard_group: Option<u64>,
    /// Virtual pipeline stages per device (1 = plain 1F1B).
    pub interleave: u64,
    /// The context-parallel flavour the search chose (`cp_comm=search`; JSON keys `cp_comm` and
    /// `cp_ulysses` next to the others); `None`: the switches' flavour (also every layout
    /// without context parallelism).
    #[serde(flatten)]
    pub cp: Option<CpFlavour>,
}

/// A context-parallel flavour with its Ulysses degree, as the search chooses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct CpFlavour {
    /// Ring, Ulysses or hybrid (never `search`).
    #[serde(serialize_with = "as_text", deserialize_with = "from_text")]
    pub cp_comm: CpComm,
    /// The Ulysses (all-to-all) degree [devices]: 1 for the ring, `cp` for Ulysses, the split of
    /// the hybrid (whose ring degree is `cp / cp_ulysses`).
    pub cp_ulysses: u64,
}

impl CpFlavour {
    /// The ring over all `cp` devices.
    pub const RING: CpFlavour = CpFlavour { cp_comm: CpComm::Ring, cp_ulysses: 1 };

    /// In words for tables: `ring`, `ulysses 8`, `hybrid 4×2` (Ulysses degree × ring degree)
    /// for a group of `cp` devices.
    pub fn text(&self, cp: u64) -> String {
        match self.cp_comm {
            CpComm::Ulysses => format!("ulysses {}", self.cp_ulysses),
            CpComm::Hybrid => format!("hybrid {}×{}", self.cp_ulysses, cp / self.cp_ulysses.max(1)),
            other => other.to_string(),
        }
    }
}

/// The flavours the search tries for a layout with `tp`-way tensor and `cp`-way context
/// parallelism of `w` under `o`, `cp_fast` of whose CP ranks share a fast domain, in order:
/// `[None]` (the switches' flavour) unless `o.cp_comm` is `search` and `cp > 1`; then the ring,
/// Ulysses over all `cp` devices and each hybrid split `u × cp/u` whose Ulysses groups lie inside
/// one fast domain (`1 < u < cp`, `u` dividing `cp_fast`, ascending: USP's practice, Ulysses inside
/// a node and the ring across, Fang & Zhao arXiv:2405.07719; a split whose all-to-alls cross
/// domains is not tried, which keeps the search within twice its time), each where the Ulysses
/// degree divides `cp` and the query and K/V heads per tensor-parallel rank
/// ([`crate::extended::context_parallel::ulysses_applies`]); a flavour that cannot apply is left
/// out, not an error (the ring always applies).
pub fn cp_flavours(w: &Workload, o: &ExtendedOptions, tp: u64, cp: u64, cp_fast: u64) -> Vec<Option<CpFlavour>> {
    if o.cp_comm != CpComm::Search || cp <= 1 {
        return vec![None];
    }
    let mut out = vec![Some(CpFlavour::RING)];
    if ulysses_applies(w, tp, cp, cp, o).is_ok() {
        out.push(Some(CpFlavour { cp_comm: CpComm::Ulysses, cp_ulysses: cp }));
    }
    for u in (2..cp.min(cp_fast + 1)).filter(|u| cp.is_multiple_of(*u) && cp_fast.is_multiple_of(*u)) {
        if ulysses_applies(w, tp, cp, u, o).is_ok() {
            out.push(Some(CpFlavour { cp_comm: CpComm::Hybrid, cp_ulysses: u }));
        }
    }
    out
}

fn as_text<T: std::fmt::Display, S: serde::Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// Reads what [`as_text`] wrote.
fn from_text<'de, T, D>(d: D) -> Result<T, D::Error>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
    D: serde::Deserializer<'de>,
{
    let text = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
    text.parse().map_err(serde::de::Error::custom)
}

impl Execution {
    /// The execution of a set of switches.
    pub fn of(o: &ExtendedOptions) -> Execution {
        Execution {
            recompute: o.recompute,
            sharding: o.sharding,
            shard_group: o.shard_group,
            interleave: o.interleave,
            cp: None,
        }
    }

    /// The switches with this execution (and its context-parallel flavour, when chosen).
    pub fn apply(&self, o: &ExtendedOptions) -> ExtendedOptions {
        let (cp_comm, cp_ulysses) = self.cp.map_or((o.cp_comm, o.cp_ulysses), |f| (f.cp_comm, f.cp_ulysses));
        ExtendedOptions {
            recompute: self.recompute,
            sharding: self.sharding,
            shard_group: self.shard_group,
            interleave: self.interleave,
            cp_comm,
            cp_ulysses,
            ..*o
        }
    }

    /// This execution with the context-parallel flavour `cp`.
    pub fn with_cp(self, cp: Option<CpFlavour>) -> Execution {
        Execution { cp, ..self }
    }

    /// `recompute=…,sharding=…[,shard_group=…],interleave=…[,cp_comm=…,cp_ulysses=…]`, the
    /// switches' text form.
    pub fn to_text(&self) -> String {
        let mut s = format!("recompute={},sharding={}", self.recompute, self.sharding);
        if let Some(g) = self.shard_group {
            s.push_str(&format!(",shard_group={g}"));
        }
        s.push_str(&format!(",interleave={}", self.interleave));
        if let Some(f) = self.cp {
            s.push_str(&format!(",cp_comm={},cp_ulysses={}", f.cp_comm, f.cp_ulysses));
        }
        s
    }
}

/// Which execution choices the search makes (`None`) and which the user fixed (`Some`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExecutionChoices {
    /// Recomputation policy.
    pub recompute: Option<Recompute>,
    /// ZeRO stage / FSDP.
    pub sharding: Option<Sharding>,
    /// ZeRO-3 shard group: `Some(None)` fixes full sharding, `Some(Some(z))` a group of `z`
    /// devices; `None` searches full sharding and sharding inside the fast domain (HSDP).
    pub shard_group: Option<Option<u64>>,
    /// Interleave degree (searched: the divisors of the blocks per stage up to
    /// [`MAX_SEARCHED_INTERLEAVE`]).
    pub interleave: Option<u64>,
    /// Context-parallel degree (`tp2` of `2d-seqp`; 1 keeps only `1d`).
    pub cp: Option<u64>,
    /// Micro-batch size [samples].
    pub mbs: Option<u64>,
}

impl ExecutionChoices {
    /// Everything searched.
    pub const SEARCH_ALL: ExecutionChoices =
        ExecutionChoices { recompute: None, sharding: None, shard_group: None, interleave: None, cp: None, mbs: None };

    /// Everything fixed to the switches' values (the search of the layout alone).
    pub fn fixed(o: &ExtendedOptions) -> ExecutionChoices {
        ExecutionChoices {
            recompute: Some(o.recompute),
            sharding: Some(o.sharding),
            shard_group: Some(o.shard_group),
            interleave: Some(o.interleave),
            cp: None,
            mbs: None,
        }
    }

    /// What an extended-mode scenario searches by default: every choice, except the switches the
    /// user changed from their defaults ([`ExtendedOptions::realistic`]), which stay fixed.
    pub fn from_switches(o: &ExtendedOptions) -> ExecutionChoices {
        let d = ExtendedOptions::realistic();
        ExecutionChoices {
            recompute: (o.recompute != d.recompute).then_some(o.recompute),
            sharding: (o.sharding != d.sharding).then_some(o.sharding),
            shard_group: (o.shard_group != d.shard_group).then_some(o.shard_group),
            interleave: (o.interleave != d.interleave).then_some(o.interleave),
            cp: None,
            mbs: None,
        }
    }

    /// The choices a switch text (`key=value,…`, e.g. the CLI's `--ext`) that gave `o` fixes:
    /// [`ExecutionChoices::from_switches`], and every execution switch the text names at the value
    /// it gives, the default value too (typing `sharding=zero1` fixes ZeRO-1 instead of letting the
    /// search pick another stage; a switch the text does not name is searched).
    pub fn from_switch_text(o: &ExtendedOptions, text: &str) -> ExecutionChoices {
        let named = |key: &str| crate::extended::switch_text::text_value(text, key).is_some();
        let mut c = Self::from_switches(o);
        if named("recompute") {
            c.recompute = Some(o.recompute);
        }
        if named("sharding") {
            c.sharding = Some(o.sharding);
        }
        if named("shard_group") {
            c.shard_group = Some(o.shard_group);
        }
        if named("interleave") {
            c.interleave = Some(o.interleave);
        }
        c
    }

    /// These choices with the ones `other` fixes fixed too (`other` wins).
    pub fn fixing(self, other: ExecutionChoices) -> ExecutionChoices {
        ExecutionChoices {
            recompute: other.recompute.or(self.recompute),
            sharding: other.sharding.or(self.sharding),
            shard_group: other.shard_group.or(self.shard_group),
            interleave: other.interleave.or(self.interleave),
            cp: other.cp.or(self.cp),
            mbs: other.mbs.or(self.mbs),
        }
    }

    /// The text form (only the fixed choices; empty when everything is searched).
    pub fn to_text(&self) -> String {
        let mut parts = Vec::new();
        if let Some(r) = self.recompute {
            parts.push(format!("recompute={r}"));
        }
        if let Some(s) = self.sharding {
            parts.push(format!("sharding={s}"));
        }
        if let Some(g) = self.shard_group {
            parts.push(format!("shard_group={}", g.map_or("all".to_string(), |g| g.to_string())));
        }
        for (k, v) in [("interleave", self.interleave), ("cp", self.cp), ("mbs", self.mbs)] {
            if let Some(v) = v {
                parts.push(format!("{k}={v}"));
            }
        }
        parts.join(",")
    }

    /// The execution with the fixed choices, the switches' values for the searched ones (what
    /// every candidate is priced with when nothing is searched).
    pub fn fixed_execution(&self, o: &ExtendedOptions) -> Execution {
        Execution {
            recompute: self.recompute.unwrap_or(o.recompute),
            sharding: self.sharding.unwrap_or(o.sharding),
            shard_group: self.shard_group.unwrap_or(o.shard_group),
            interleave: self.interleave.unwrap_or(o.interleave),
            cp: None,
        }
    }

    /// Whether the search chooses any of the execution switches.
    pub fn searches_execution(&self) -> bool {
        self.recompute.is_none() || self.sharding.is_none() || self.shard_group.is_none() || self.interleave.is_none()
    }

    /// Whether a search with these choices under the switches `o` chooses any execution: one of
    /// these choices, or the context-parallel flavour (`cp_comm=search`, [`cp_flavours`]).
    pub fn searches_with(&self, o: &ExtendedOptions) -> bool {
        self.searches_execution() || o.cp_comm == CpComm::Search
    }

    /// Checks fixed values: interleave from 1 to 1024, shard group, cp and mbs positive.
    pub fn validate(&self) -> Result<(), Error> {
        if let Some(v) = self.interleave
            && !(1..=1024).contains(&v)
        {
            return Err(Error::invalid("execution.interleave", v, "must be from 1 to 1024"));
        }
        for (name, v) in [
            ("execution.shard_group", self.shard_group.flatten()),
            ("execution.cp", self.cp),
            ("execution.mbs", self.mbs),
        ] {
            if v == Some(0) {
                return Err(Error::invalid(name, 0, "must be a positive integer"));
            }
        }
        Ok(())
    }

    /// Parses the CLI / URL text form: `key=value` pairs separated by commas, keys `recompute`,
    /// `sharding` (`zero0`–`zero3`, `fsdp`, `ddp`), `shard_group` (`all` or a count), `interleave`,
    /// `cp`, `mbs`; each value may be `search` (the default). Errors name the key.
    pub fn from_text(text: &str) -> Result<ExecutionChoices, Error> {
        let mut c = ExecutionChoices::SEARCH_ALL;
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| {
                Error::invalid(
                    "execution",
                    part,
                    "must be key=value (recompute, sharding, shard_group, interleave, cp, mbs)",
                )
            })?;
            let (k, v) = (k.trim(), v.trim());
            let field = format!("execution.{k}");
            let search = v.eq_ignore_ascii_case("search") || v.eq_ignore_ascii_case("auto");
            let count = |v: &str| -> Result<u64, Error> {
                v.parse::<u64>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| Error::invalid(&field, v, "must be a positive integer or `search`"))
            };
            match k {
                "recompute" => {
                    c.recompute = if search {
                        None
                    } else {
                        Some(
                            v.parse()
                                .map_err(|_| Error::invalid(&field, v, "must be none, selective, full or search"))?,
                        )
                    }
                }
                "sharding" => {
                    c.sharding = if search {
                        None
                    } else {
                        Some(v.parse().map_err(|_| {
                            Error::invalid(&field, v, "must be zero0 (ddp), zero1, zero2, zero3 (fsdp) or search")
                        })?)
                    }
                }
                "shard_group" => {
                    c.shard_group = if search {
                        None
                    } else if v.eq_ignore_ascii_case("all") {
                        Some(None)
                    } else {
                        Some(Some(count(v)?))
                    }
                }
                "interleave" => c.interleave = if search { None } else { Some(count(v)?) },
                "cp" => c.cp = if search { None } else { Some(count(v)?) },
                "mbs" => c.mbs = if search { None } else { Some(count(v)?) },
                _ => {
                    return Err(Error::invalid("execution", k, "unknown choice")
                        .with_hint("recompute, sharding, shard_group, interleave, cp or mbs"));
                }
            }
        }
        c.validate()?;
        Ok(c)
    }

    /// The combinations to price for a layout with `pp` stages of a model of `depth` blocks, a
    /// replica group of `replicas` devices of which `replicas_fast` share a fast domain, on the
    /// training stack `stack` (a searched sharding is one the stack offers,
    /// [`Stack::shardings`]), in a fixed order (recompute none → full, ZeRO 0 → 3, full shard
    /// before the domain group, interleave ascending). `base` supplies nothing searched here.
    pub fn combinations(&self, stack: Stack, pp: u64, depth: u64, replicas: u64, replicas_fast: u64) -> Vec<Execution> {
        let recomputes: Vec<Recompute> = self.recompute.map_or(Recompute::ALL.to_vec(), |r| vec![r]);
        let shardings: Vec<Sharding> = self.sharding.map_or(stack.shardings().to_vec(), |s| vec![s]);
        let interleaves: Vec<u64> = match self.interleave {
            Some(v) => vec![v],
            None if pp > 1 => {
                let per_stage = depth / pp;
                (1..=MAX_SEARCHED_INTERLEAVE.min(per_stage.max(1))).filter(|v| per_stage.is_multiple_of(*v)).collect()
            }
            None => vec![1],
        };
        let mut out = Vec::new();
        for &recompute in &recomputes {
            for &sharding in &shardings {
                let groups: Vec<Option<u64>> = match self.shard_group {
                    Some(g) => vec![g],
                    None if sharding == Sharding::Zero3 && replicas_fast > 1 && replicas_fast < replicas => {
                        vec![None, Some(replicas_fast)]
                    }
                    None => vec![None],
                };
                for &shard_group in &groups {
                    for &interleave in &interleaves {
                        out.push(Execution { recompute, sharding, shard_group, interleave, cp: None });
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_parses_and_names_keys() {
        let c = ExecutionChoices::from_text("recompute=full, sharding=fsdp, interleave=search, cp=2").unwrap();
        assert_eq!(c.recompute, Some(Recompute::Full));
        assert_eq!(c.sharding, Some(Sharding::Zero3));
        assert_eq!(c.interleave, None);
        assert_eq!(c.cp, Some(2));
        assert_eq!(ExecutionChoices::from_text("").unwrap(), ExecutionChoices::SEARCH_ALL);
        assert_eq!(ExecutionChoices::from_text("mbs=0").unwrap_err().field(), Some("execution.mbs"));
        assert_eq!(ExecutionChoices::from_text("recompute=most").unwrap_err().field(), Some("execution.recompute"));
        assert!(ExecutionChoices::from_text("speed=max").is_err());
        for text in ["", "recompute=full,sharding=zero3,shard_group=all,interleave=2,cp=4,mbs=1", "shard_group=8"] {
            assert_eq!(ExecutionChoices::from_text(text).unwrap().to_text(), text);
        }
        let changed = ExtendedOptions { recompute: Recompute::Full, ..ExtendedOptions::realistic() };
        let c = ExecutionChoices::from_switches(&changed);
        assert_eq!((c.recompute, c.sharding), (Some(Recompute::Full), None));
    }

    #[test]
    fn combinations_cover_the_choices_in_order() {
        let all = ExecutionChoices::SEARCH_ALL.combinations(Stack::DeepSpeed, 4, 80, 64, 8);
        // 3 recompute × (zero0, zero1, zero2, zero3 full, zero3 in-domain) × interleave {1, 2, 4, 5}.
        assert_eq!(all.len(), 3 * 5 * 4);
        assert_eq!(
            all[0],
            Execution {
                recompute: Recompute::None,
                sharding: Sharding::Ddp,
                shard_group: None,
                interleave: 1,
                cp: None
            }
        );
        let fixed = ExecutionChoices::fixed(&ExtendedOptions::realistic()).combinations(Stack::Megatron, 4, 80, 64, 8);
        assert_eq!(fixed, vec![Execution::of(&ExtendedOptions::realistic())]);
        assert_eq!(ExecutionChoices::SEARCH_ALL.combinations(Stack::DeepSpeed, 1, 80, 1, 1).len(), 3 * 4);
        // Megatron offers no ZeRO-2 (its distributed optimizer keeps the gradient buffer whole).
        let megatron = ExecutionChoices::SEARCH_ALL.combinations(Stack::Megatron, 4, 80, 64, 8);
        assert_eq!(megatron.len(), 3 * 4 * 4);
        assert!(megatron.iter().all(|e| e.sharding != Sharding::Zero2));
        // A sharding the user fixed is priced whatever the stack.
        let z2 = ExecutionChoices { sharding: Some(Sharding::Zero2), ..ExecutionChoices::SEARCH_ALL };
        assert!(z2.combinations(Stack::Megatron, 1, 80, 1, 1).iter().all(|e| e.sharding == Sharding::Zero2));
    }
}
