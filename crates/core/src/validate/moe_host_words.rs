//! How a row's words configure a Megatron-Core MoE layer's host calls
//! ([`crate::extended::moe::host_flags::MoeHostFlags`]): permute and router fusion, grouped or
//! sequential experts, the load-balancing loss, and Transformer Engine's CUDA-graph scopes, read
//! as written.
//!
//! * **Fusions**: `moe_permute_fusion` / "permute fusion" / `--moe-permute-fusion True`, and the
//!   same for the router (`moe_router_fusion`); Megatron's defaults are off
//!   (`megatron/core/transformer/transformer_config.py` at d98e8a6).
//! * **Experts**: "SequentialMLP", "sequential experts" or `--moe-grouped-gemm False` run the
//!   local experts one by one. A row whose arguments are a launch's `MODEL_ARGS` as written
//!   (the functional tests' `model_config.yaml`, named in the source's `where`) and do not pass
//!   `--moe-grouped-gemm` runs Megatron's default, `SequentialMLP` (`moe_grouped_gemm=False`;
//!   checked against `tests/functional_tests/test_cases/moe/*/model_config.yaml` at d98e8a6: the
//!   cases without the flag state none of it).
//! * **Balancing**: `sinkhorn`, `seq_aux_loss` / "seq aux loss", `global_aux_loss`,
//!   "aux-loss-free" (no loss: the bias only), else Megatron's `aux_loss`.
//! * **CUDA graphs**: the modules listed after "cuda graphs", `cuda_graph_scope`,
//!   `--cuda-graph-scope` or `--cuda-graph-modules`, up to the next `;`, `--` or `]`: `attn`,
//!   `moe_router`, `moe_preprocess` (other modules — `mlp`, the dense blocks' — are not in an MoE
//!   block). "no cuda graphs" or an empty list: none.
//! * **RoPE fusion**: `--no-rope-fusion` / `apply_rope_fusion: false` / "no rope fusion" turn
//!   Megatron's fused RoPE off (on by default for RoPE models, `megatron/training/arguments.py`
//!   at d98e8a6); priced for multi-latent attention's calls ([`crate::extended::moe::mla_host`]).
//! * **Activation offloading** (`--fine-grained-activation-offloading`) is read apart:
//!   [`super::offload_words`].

use super::words::Words;
use crate::extended::moe::host_flags::{Balancing, GraphScope, MoeHostFlags};

/// The fields whose words [`read_moe_host`] reads, as its errors name them.
const HOST_WORDS_FIELD: &str = "framework / notes / parallel.other (MoE host calls)";

/// The flags the words `text` (lower case) state; `launch_args` whether the row's arguments are
/// a launch's as written (an absent `--moe-grouped-gemm` is then Megatron's default). With a
/// reading in words for the row's notes. A flag stated both on and off (`--moe-permute-fusion
/// true … false`), grouped GEMMs stated beside SequentialMLP, or a graph scope fmperf does not
/// price is an error naming the words.
pub fn read_moe_host(
    text: &str,
    router: &str,
    launch_args: bool,
) -> Result<(MoeHostFlags, Option<String>), crate::Error> {
    let w = Words::new(text);
    let flag = |tokens: &str, argument: &str| super::step_words::stated_flag(&w, tokens, HOST_WORDS_FIELD, argument);
    let permute_fusion = flag("permute fusion", "--moe-permute-fusion")?.unwrap_or(false);
    let router_fusion = flag("router fusion", "--moe-router-fusion")?.unwrap_or(false);
    let grouped = flag("moe grouped gemm", "--moe-grouped-gemm")?;
    let named_sequential = w.any(&["sequentialmlp", "sequential experts"]);
    if named_sequential && grouped == Some(true) {
        return Err(crate::Error::invalid(
            HOST_WORDS_FIELD,
            "--moe-grouped-gemm",
            "grouped expert GEMMs stated beside SequentialMLP (one expert after another): say which the run used",
        ));
    }
    let stated_sequential = named_sequential || grouped == Some(false);
    let default_sequential = launch_args && grouped.is_none();
    let sequential_experts = stated_sequential || default_sequential;
    let r = Words::new(router);
    let balancing = if r.has("sinkhorn") {
        Balancing::Sinkhorn
    } else if r.any(&["seq_aux_loss", "seq aux loss"]) {
        Balancing::SeqAuxLoss
    } else if r.any(&["global_aux_loss", "global aux loss"]) {
        Balancing::GlobalAuxLoss
    } else if w.any(&["aux-loss-free", "aux loss free"]) || r.any(&["aux-loss-free", "aux loss free"]) {
        Balancing::None
    } else {
        Balancing::AuxLoss
    };
    let graphs = graph_scope(text)?;
    let flags = MoeHostFlags { permute_fusion, router_fusion, sequential_experts, balancing, graphs };
    let mut said = Vec::new();
    if permute_fusion {
        said.push("permute fusion".to_string());
    }
    if router_fusion {
        said.push("router fusion".to_string());
    }
    if default_sequential && !stated_sequential {
        said.push("SequentialMLP (no --moe-grouped-gemm: Megatron's default)".to_string());
    } else if sequential_experts {
        said.push("SequentialMLP".to_string());
    }
    if graphs != GraphScope::default() {
        said.push(format!("CUDA graphs over {}", graphs.names()));
    }
    let note =
        (!said.is_empty()).then(|| format!("MoE host calls: {}, {} balancing", said.join(", "), balancing.as_str()));
    Ok((flags, note))
}

/// Megatron's CUDA-graph scopes (`--cuda-graph-scope`) that capture more than fmperf prices as
/// one launch: the whole iteration, or a whole MoE layer (drop-and-pad routing only).
pub const UNPRICED_SCOPES: [&str; 2] = ["full_iteration", "moe"];

/// The CUDA-graph scopes `text` states (module docs); a Megatron scope fmperf does not price
/// ([`UNPRICED_SCOPES`]) is an error naming it rather than a graph silently left out.
pub fn graph_scope(text: &str) -> Result<GraphScope, crate::Error> {
    let mut g = GraphScope::default();
    for key in ["cuda graphs", "cuda graph", "cuda_graph_scope", "cuda-graph-scope", "cuda-graph-modules"] {
        let mut from = 0;
        while let Some(i) = text[from..].find(key) {
            let start = from + i;
            from = start + key.len();
            if text[..start].ends_with("no ") {
                continue;
            }
            // A flag's or key's list (`--cuda-graph-scope`, `cuda_graph_scope`), not prose ("cuda
            // graphs on the moe router"): there a bare `moe` is Megatron's scope name.
            let listed = !key.contains(' ');
            let rest = &text[from..];
            let end = ["; ", "--", "]", "."].iter().filter_map(|s| rest.find(s)).min().unwrap_or(rest.len());
            let list = &rest[..end];
            for word in list.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                match word {
                    "attn" => g.attn = true,
                    "moe_router" => g.moe_router = true,
                    "moe_preprocess" => g.moe_preprocess = true,
                    w if UNPRICED_SCOPES.contains(&w) && (listed || w == "full_iteration") => {
                        return Err(crate::Error::invalid(
                            HOST_WORDS_FIELD,
                            format!("{key} {w}"),
                            "a CUDA-graph scope fmperf does not price (it prices attn, moe_router and moe_preprocess \
                             as one launch each)",
                        ));
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph_scope_ok(text: &str) -> GraphScope {
        graph_scope(text).expect("a priced scope")
    }

    #[test]
    fn graph_scopes_as_written() {
        let all = GraphScope { attn: true, moe_router: true, moe_preprocess: true };
        assert_eq!(graph_scope_ok("te cuda graphs attn/moe_router/moe_preprocess; pp layout"), all);
        assert_eq!(graph_scope_ok("te cuda graphs on attn, moe_router, moe_preprocess; pp layout from recipe"), all);
        assert_eq!(
            graph_scope_ok("--cuda-graph-impl transformer_engine --cuda-graph-scope attn moe_router moe_preprocess"),
            all
        );
        assert_eq!(
            graph_scope_ok(
                "--cuda-graph-impl transformer_engine --cuda-graph-modules [attn mlp moe_router moe_preprocess] --fp8-format hybrid"
            ),
            all
        );
        let router_only = GraphScope { moe_router: true, moe_preprocess: true, attn: false };
        assert_eq!(graph_scope_ok("hybridep, te cuda graphs moe_router/moe_preprocess, gbs 2048"), router_only);
        // Refused or empty: none; a module named after the list's end is not in it.
        assert_eq!(graph_scope_ok("no cuda graphs (cuda_graph_scope=[]); attn kernel cudnn"), GraphScope::default());
        assert_eq!(graph_scope_ok("--cuda-graph-modules [mlp] --attention-backend flash"), GraphScope::default());
    }

    #[test]
    fn fusions_experts_and_balancing_as_written() {
        let (f, note) = read_moe_host(
            "--moe-grouped-gemm true --moe-permute-fusion true --sequence-parallel true",
            "sigmoid scores, group-limited top-k (4 groups, top-2 groups), top-4, seq_aux_loss",
            true,
        )
        .unwrap();
        assert!(f.permute_fusion && !f.router_fusion && !f.sequential_experts);
        assert_eq!(f.balancing, Balancing::SeqAuxLoss);
        assert_eq!(note.as_deref(), Some("MoE host calls: permute fusion, seq_aux_loss balancing"));
        // A functional test's arguments without --moe-grouped-gemm: Megatron's SequentialMLP.
        let (s, note) = read_moe_host("--sequence-parallel true", "softmax scores, top-1, sinkhorn", true).unwrap();
        assert!(s.sequential_experts && s.balancing == Balancing::Sinkhorn);
        assert!(note.unwrap().contains("Megatron's default"));
        // Words that are not a launch's arguments: nothing read into an absent flag.
        let (d, note) = read_moe_host("moe_router_fusion, bias_activation_fusion", "softmax", false).unwrap();
        assert!(d.router_fusion && !d.sequential_experts && d.balancing == Balancing::AuxLoss);
        assert!(note.is_some());
        assert_eq!(read_moe_host("x", "sigmoid, aux-loss-free bias", false).unwrap().0.balancing, Balancing::None);
    }

    #[test]
    fn flags_set_off_contradicted_or_unpriced_are_read_as_written() {
        let read = |t: &str| read_moe_host(t, "softmax", true);
        // Set off: not read as on (the words `permute fusion` are there, followed by false).
        let (f, _) = read("--moe-grouped-gemm true --moe-permute-fusion false --moe-router-fusion 0").unwrap();
        assert!(!f.permute_fusion && !f.router_fusion && !f.sequential_experts);
        assert!(!read("--moe-grouped-gemm; no permute fusion").unwrap().0.permute_fusion);
        assert!(read("--moe-grouped-gemm false").unwrap().0.sequential_experts);
        // Contradictions name the flag and the words' fields.
        for t in ["--moe-permute-fusion true --moe-permute-fusion false", "SequentialMLP; --moe-grouped-gemm true"] {
            let e = read(t).unwrap_err().to_string();
            assert!(e.contains("MoE host calls") && e.contains("--moe-"), "{t}: {e}");
        }
        // A scope fmperf does not price is refused, not dropped.
        let e = graph_scope("--cuda-graph-impl transformer_engine --cuda-graph-scope full_iteration").unwrap_err();
        assert!(e.to_string().contains("full_iteration"), "{e}");
        assert!(graph_scope("--cuda-graph-scope moe --moe-pad-expert-input-to-capacity").is_err());
        // Prose naming the MoE layer is not a scope list; text before a key may hold any character.
        assert_eq!(graph_scope_ok("cuda graphs on the moe router; ×2"), GraphScope::default());
        assert_eq!(graph_scope_ok("8×h100 — cuda graphs attn"), GraphScope { attn: true, ..GraphScope::default() });
    }
}
