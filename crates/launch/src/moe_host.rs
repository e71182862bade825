//! A file's Megatron-Core MoE settings that change the layer's host calls, read into
//! [`MoeHostFlags`] (priced by `fmperf_core::extended::moe::host_calls`): permute and router
//! fusion, grouped or sequential experts, the load-balancing loss and the CUDA-graph modules.
//! Megatron-LM's command line and NeMo / Megatron-Bridge YAML keys (the same names with
//! underscores) set them; Megatron-LM `megatron/training/arguments.py` and
//! `megatron/core/transformer/transformer_config.py` at d98e8a6 are the source of every rule:
//!
//! * `--moe-permute-fusion`, `--moe-router-fusion`: off by default (`transformer_config.py`
//!   l. 941, 944).
//! * `--moe-grouped-gemm` (default off, l. 850): the local experts as one grouped GEMM
//!   (`TEGroupedMLP`); without it `SequentialMLP` runs them one by one. The GEMMs' time is the
//!   same either way; the host issues one call per expert and pass instead of one. An absent flag
//!   is read as Megatron's default only where the file is Megatron-LM's own arguments as written
//!   (a `pretrain_gpt.py` command, a functional test's `MODEL_ARGS`); a NeMo / Megatron-Bridge
//!   YAML may inherit it from a recipe or base config it does not show, so there grouped GEMMs
//!   stay priced and a note says so.
//! * `--moe-router-load-balancing-type` (`arguments.py` l. 3532, `nargs='+'`, default
//!   `aux_loss`): one of `aux_loss`, `seq_aux_loss`, `global_aux_loss`, `sinkhorn`, `none`;
//!   `quantile_balancing` and several losses at once are not priced: an error naming the flag.
//! * CUDA graphs: `--cuda-graph-impl` `none` (default), `local`, `transformer_engine` or
//!   `full_iteration` (`transformer_config.py` l. 1075; `--enable-cuda-graph` is `local`,
//!   `--external-cuda-graph` `transformer_engine`, `arguments.py` l. 611–631), with
//!   `--cuda-graph-modules` (the older `--cuda-graph-scope`): `attn`, `moe_router`,
//!   `moe_preprocess` are priced as one launch each (Megatron's local implementation adds
//!   `moe_router` to `moe_preprocess`, l. 2806–2815; Transformer Engine's needs both given);
//!   `mlp` and `mamba` capture no part of an MoE block (a note); `moe`, `full_iteration`, and no
//!   module at all (`full`: the whole layer, `enums.py` `CudaGraphModule`) capture more than
//!   fmperf prices ([`UNPRICED_SCOPES`]): an error naming the flag, as the row reader
//!   (`fmperf_core::validate::moe_host_words`) refuses them. Modules without an implementation
//!   have no effect (a note).
//! * `--moe-shared-expert-overlap` (default off, `transformer_config.py` l. 717): the shared
//!   experts' GEMMs issued by the dispatcher after its sync ([`MoeOptions::shared_overlap`]);
//!   Megatron-Core refuses it with the all-gather dispatcher (l. 1820–1826) and with
//!   `--overlap-moe-expert-parallel-comm` (l. 3040–3041): errors naming the flag; without shared
//!   experts it has no effect (a note).

use super::Format;
use super::settings::{Moe, SettingOrigin, Slot};
use fmperf_core::Error;
use fmperf_core::extended::moe::host_flags::{Balancing, GraphScope, MoeHostFlags};
use fmperf_core::extended::moe::{A2aOverlap, Dispatcher, MoeOptions};
use fmperf_core::validate::moe_host_words::UNPRICED_SCOPES;
use fmperf_core::vocab::{Note, NoteList};

/// Whether the file's settings `m` overlap the shared experts with the dispatch
/// (`--moe-shared-expert-overlap`, module docs) under the MoE options `o` read so far (dispatcher,
/// EP all-to-all overlap), with a note saying what was read.
pub fn shared_overlap(m: &Moe, o: &MoeOptions, notes: &mut Vec<Note>) -> Result<bool, Error> {
    let slot = &m.shared_overlap;
    let Some(true) = slot.copied() else { return Ok(false) };
    let key = slot.key_or("moe_shared_expert_overlap");
    if o.dispatcher == Dispatcher::AllGather {
        return Err(slot.error(key, "true", "works with the alltoall or flex token dispatcher only (Megatron-Core)"));
    }
    if o.a2a_overlap == A2aOverlap::On {
        return Err(slot.error(
            key,
            "true",
            "cannot be combined with the EP all-to-all overlap (--overlap-moe-expert-parallel-comm; Megatron-Core)",
        ));
    }
    if m.shared_experts.copied().unwrap_or(0) == 0 && m.shared_ffn_hidden.copied().unwrap_or(0) == 0 {
        notes.reading(format!("{key}: no effect without shared experts"));
        return Ok(false);
    }
    notes.reading(format!(
        "{key}: the shared experts' GEMMs run on a side stream after the dispatcher's sync, beside the \
         dispatch and the combine (shared_overlap=on; the exchange is not priced as hidden behind them)"
    ));
    Ok(true)
}

/// The host flags the file's settings `m` state (format `f`), with notes saying what was read.
pub fn host_flags(m: &Moe, f: Format, notes: &mut Vec<Note>) -> Result<MoeHostFlags, Error> {
    let permute_fusion = m.permute_fusion.copied().unwrap_or(false);
    let router_fusion = m.router_fusion.copied().unwrap_or(false);
    let megatron_args = m.megatron_args.copied() == Some(true);
    let sequential_experts = match m.grouped_gemm.copied() {
        Some(grouped) => !grouped,
        None => megatron_args,
    };
    let balancing = balancing(&m.balancing)?;
    let graphs = graphs(m, notes)?;
    let flags = MoeHostFlags { permute_fusion, router_fusion, sequential_experts, balancing, graphs };
    let mut said = Vec::new();
    for (slot, what) in [(&m.permute_fusion, "permute"), (&m.router_fusion, "router")] {
        if let Some(on) = slot.copied() {
            let key = slot.key_or("");
            said.push(format!("{key} {}: {what} fusion {}", on, if on { "on" } else { "off" }));
        }
    }
    let experts = if sequential_experts {
        "the local experts one by one (SequentialMLP: the same GEMM time, one host call per expert; \
         sequential_experts=on)"
    } else {
        "the local experts as one grouped GEMM (TEGroupedMLP: the same GEMM time, one host call; \
         sequential_experts=off)"
    };
    match (m.grouped_gemm.origin.as_ref(), m.grouped_gemm.copied()) {
        (Some(o), Some(g)) => said.push(format!("{} {g}: {experts}", o.key)),
        _ if megatron_args => said.push(format!("no --moe-grouped-gemm, Megatron's default: {experts}")),
        _ if f == Format::NemoYaml => notes.assumption(
            "moe_grouped_gemm not given: the local experts priced as one grouped GEMM (TEGroupedMLP); \
             Megatron-Core's own default is SequentialMLP, one expert after another, which a recipe or base \
             config this file does not show may leave: set moe_grouped_gemm: false for it"
                .into(),
        ),
        _ => {}
    }
    if let Some(o) = &m.balancing.origin {
        said.push(format!("{} {}", o.key, balancing.as_str()));
    }
    if graphs != GraphScope::default() {
        let key = m.graph_modules.key_or("cuda_graph_modules");
        said.push(format!("{key}: CUDA graphs over {} (cuda_graphs={})", graphs.names(), graphs.names()));
    } else if let (Some(o), Some(v)) = (&m.graph_impl.origin, m.graph_impl.get()) {
        said.push(format!("{} {v}: no CUDA graphs", o.key));
    }
    if !said.is_empty() {
        notes.reading(format!("MoE host calls: {}", said.join("; ")));
    }
    Ok(flags)
}

/// The load-balancing loss a file names (`aux_loss` where it names none).
fn balancing(slot: &Slot<String>) -> Result<Balancing, Error> {
    let Some(v) = slot.get() else { return Ok(Balancing::default()) };
    let names = names(v);
    let rule = "must be aux_loss, seq_aux_loss, global_aux_loss, sinkhorn or none (the losses fmperf prices; \
                quantile_balancing is not)";
    match names.as_slice() {
        [] => Err(slot.error("moe_router_load_balancing_type", v, rule)),
        [one] => Balancing::from_name(one).ok_or_else(|| slot.error("moe_router_load_balancing_type", v, rule)),
        [first, rest @ ..] if rest.iter().all(|n| n == first) => {
            Balancing::from_name(first).ok_or_else(|| slot.error("moe_router_load_balancing_type", v, rule))
        }
        _ => Err(slot.error(
            "moe_router_load_balancing_type",
            v,
            "names several load-balancing losses: fmperf prices one; give one of them",
        )),
    }
}

/// The names of a list as written: `attn moe_router`, `[attn, moe_router]`, `"attn"`.
fn names(v: &str) -> Vec<String> {
    v.split(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']' | '\'' | '"' | '(' | ')'))
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// The CUDA-graph modules the file's implementation captures (module docs).
fn graphs(m: &Moe, notes: &mut Vec<Note>) -> Result<GraphScope, Error> {
    let graph_impl = m.graph_impl.get().map(|v| names(v).join(" "));
    let modules = m.graph_modules.get().map(|v| names(v)).unwrap_or_default();
    let impl_origin = m.graph_impl.origin.clone().unwrap_or_else(|| SettingOrigin::new("cuda_graph_impl", 0));
    let refuse = |o: &SettingOrigin, value: &str, what: &str| {
        o.error(
            value,
            format!(
                "{what}: a CUDA-graph scope fmperf does not price (it prices attn, moe_router and moe_preprocess as \
                 one launch each); list those in --cuda-graph-modules"
            ),
        )
    };
    match graph_impl.as_deref() {
        None | Some("none") => {
            if let (Some(o), Some(v)) = (&m.graph_modules.origin, m.graph_modules.get()) {
                notes.reading_of(
                    &o.key,
                    format!("{} = {v}: no effect without a CUDA-graph implementation (cuda_graph_impl none)", o.key),
                );
            }
            return Ok(GraphScope::default());
        }
        Some("full_iteration") => {
            return Err(refuse(&impl_origin, "full_iteration", "the whole iteration as one graph"));
        }
        Some("local" | "transformer_engine") => {}
        Some(other) => {
            return Err(impl_origin.error(other, "must be none, local, transformer_engine or full_iteration"));
        }
    }
    let modules_origin = m.graph_modules.origin.clone().unwrap_or_else(|| impl_origin.clone());
    if modules.is_empty() || modules == ["full"] {
        return Err(refuse(&modules_origin, modules.first().map_or("(none)", |s| s.as_str()), "every whole layer"));
    }
    let mut g = GraphScope::default();
    for name in &modules {
        if let Some(one) = GraphScope::parse(name) {
            g.attn |= one.attn;
            g.moe_router |= one.moe_router;
            g.moe_preprocess |= one.moe_preprocess;
        } else if UNPRICED_SCOPES.contains(&name.as_str()) {
            return Err(refuse(&modules_origin, name, "the whole MoE layer or iteration as one graph"));
        } else if matches!(name.as_str(), "mlp" | "mamba") {
            notes.reading_of(
                &modules_origin.key,
                format!("{} {name}: captures no part of an MoE block (not priced)", modules_origin.key),
            );
        } else {
            return Err(modules_origin.error(name, "must be attn, mlp, moe, moe_router, moe_preprocess or mamba"));
        }
    }
    if g.moe_preprocess && !g.moe_router {
        if graph_impl.as_deref() == Some("local") {
            g.moe_router = true;
        } else {
            return Err(modules_origin.error(
                "moe_preprocess",
                "needs moe_router as well (Megatron-Core asserts it with --cuda-graph-impl transformer_engine)",
            ));
        }
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moe(pairs: &[(&str, &str)]) -> Moe {
        let mut m = Moe::default();
        for (k, v) in pairs {
            let o = SettingOrigin::new(format!("--{k}"), 1);
            match *k {
                "cuda-graph-impl" => _ = m.graph_impl.put(v.to_string(), &o),
                "cuda-graph-modules" => _ = m.graph_modules.put(v.to_string(), &o),
                "moe-router-load-balancing-type" => _ = m.balancing.put(v.to_string(), &o),
                _ => unreachable!("{k}"),
            }
        }
        m
    }

    #[test]
    fn graph_modules_as_megatron_reads_them() {
        let read = |pairs: &[(&str, &str)]| graphs(&moe(pairs), &mut Vec::new());
        let all = GraphScope { attn: true, moe_router: true, moe_preprocess: true };
        let te = ("cuda-graph-impl", "transformer_engine");
        assert_eq!(read(&[te, ("cuda-graph-modules", "attn moe_router moe_preprocess")]).unwrap(), all);
        assert_eq!(read(&[te, ("cuda-graph-modules", "[attn, mlp, moe_router, moe_preprocess]")]).unwrap(), all);
        // The local implementation captures the router with the preprocess; TE asserts both.
        let local = ("cuda-graph-impl", "local");
        let router = GraphScope { moe_router: true, moe_preprocess: true, attn: false };
        assert_eq!(read(&[local, ("cuda-graph-modules", "moe_preprocess")]).unwrap(), router);
        assert!(read(&[te, ("cuda-graph-modules", "moe_preprocess")]).unwrap_err().to_string().contains("moe_router"));
        // Without an implementation the modules do nothing.
        assert_eq!(read(&[("cuda-graph-modules", "attn")]).unwrap(), GraphScope::default());
        // Whole layers, whole MoE layers and the whole iteration are refused by flag.
        for pairs in [
            &[te][..],
            &[te, ("cuda-graph-modules", "full")][..],
            &[te, ("cuda-graph-modules", "attn moe")][..],
            &[("cuda-graph-impl", "full_iteration")][..],
        ] {
            let e = read(pairs).unwrap_err();
            assert!(e.field().is_some_and(|f| f.starts_with("--cuda-graph")), "{pairs:?}: {e}");
            assert!(e.to_string().contains("does not price"), "{e}");
        }
        assert!(read(&[te, ("cuda-graph-modules", "attention")]).is_err());
        assert!(read(&[("cuda-graph-impl", "cudagraphs")]).is_err());
    }

    #[test]
    fn balancing_losses_one_at_a_time() {
        let read = |v: &str| balancing(&moe(&[("moe-router-load-balancing-type", v)]).balancing);
        assert_eq!(read("seq_aux_loss").unwrap(), Balancing::SeqAuxLoss);
        assert_eq!(read("[\"none\"]").unwrap(), Balancing::None);
        assert_eq!(read("sinkhorn sinkhorn").unwrap(), Balancing::Sinkhorn);
        let e = read("seq_aux_loss global_aux_loss").unwrap_err();
        assert_eq!(e.field(), Some("--moe-router-load-balancing-type"));
        assert!(e.to_string().contains("several"), "{e}");
        assert!(read("quantile_balancing").unwrap_err().to_string().contains("quantile_balancing is not"));
        assert_eq!(balancing(&Slot::default()).unwrap(), Balancing::AuxLoss);
    }
}
