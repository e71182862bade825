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

use super::words::Words;
use crate::extended::moe::host_flags::{Balancing, GraphScope, MoeHostFlags};

/// The flags the words `text` (lower case) state; `launch_args` whether the row's arguments are
/// a launch's as written (an absent `--moe-grouped-gemm` is then Megatron's default). With a
/// reading in words for the row's notes.
pub fn read_moe_host(text: &str, router: &str, launch_args: bool) -> (MoeHostFlags, Option<String>) {
    let w = Words::new(text);
    let permute_fusion = w.any(&["moe_permute_fusion", "permute fusion", "moe-permute-fusion true"]);
    let router_fusion = w.any(&["moe_router_fusion", "router fusion", "moe-router-fusion true"]);
    let stated_sequential = w.any(&["sequentialmlp", "sequential experts", "moe-grouped-gemm false"]);
    let default_sequential = launch_args && !text.contains("--moe-grouped-gemm");
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
    let graphs = graph_scope(text);
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
    (flags, note)
}

/// The CUDA-graph scopes `text` states (module docs).
pub fn graph_scope(text: &str) -> GraphScope {
    let mut g = GraphScope::default();
    for key in ["cuda graphs", "cuda graph", "cuda_graph_scope", "cuda-graph-scope", "cuda-graph-modules"] {
        let mut from = 0;
        while let Some(i) = text[from..].find(key) {
            let start = from + i;
            from = start + key.len();
            let before = &text[start.saturating_sub(3)..start];
            if before.ends_with("no ") {
                continue;
            }
            let rest = &text[from..];
            let end = ["; ", "--", "]", "."].iter().filter_map(|s| rest.find(s)).min().unwrap_or(rest.len());
            let list = &rest[..end];
            for word in list.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                match word {
                    "attn" => g.attn = true,
                    "moe_router" => g.moe_router = true,
                    "moe_preprocess" => g.moe_preprocess = true,
                    _ => {}
                }
            }
        }
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_scopes_as_written() {
        let all = GraphScope { attn: true, moe_router: true, moe_preprocess: true };
        assert_eq!(graph_scope("te cuda graphs attn/moe_router/moe_preprocess; pp layout"), all);
        assert_eq!(graph_scope("te cuda graphs on attn, moe_router, moe_preprocess; pp layout from recipe"), all);
        assert_eq!(
            graph_scope("--cuda-graph-impl transformer_engine --cuda-graph-scope attn moe_router moe_preprocess"),
            all
        );
        assert_eq!(
            graph_scope(
                "--cuda-graph-impl transformer_engine --cuda-graph-modules [attn mlp moe_router moe_preprocess] --fp8-format hybrid"
            ),
            all
        );
        let router_only = GraphScope { moe_router: true, moe_preprocess: true, attn: false };
        assert_eq!(graph_scope("hybridep, te cuda graphs moe_router/moe_preprocess, gbs 2048"), router_only);
        // Refused or empty: none; a module named after the list's end is not in it.
        assert_eq!(graph_scope("no cuda graphs (cuda_graph_scope=[]); attn kernel cudnn"), GraphScope::default());
        assert_eq!(graph_scope("--cuda-graph-modules [mlp] --attention-backend flash"), GraphScope::default());
    }

    #[test]
    fn fusions_experts_and_balancing_as_written() {
        let (f, note) = read_moe_host(
            "--moe-grouped-gemm true --moe-permute-fusion true --sequence-parallel true",
            "sigmoid scores, group-limited top-k (4 groups, top-2 groups), top-4, seq_aux_loss",
            true,
        );
        assert!(f.permute_fusion && !f.router_fusion && !f.sequential_experts);
        assert_eq!(f.balancing, Balancing::SeqAuxLoss);
        assert_eq!(note.as_deref(), Some("MoE host calls: permute fusion, seq_aux_loss balancing"));
        // A functional test's arguments without --moe-grouped-gemm: Megatron's SequentialMLP.
        let (s, note) = read_moe_host("--sequence-parallel true", "softmax scores, top-1, sinkhorn", true);
        assert!(s.sequential_experts && s.balancing == Balancing::Sinkhorn);
        assert!(note.unwrap().contains("Megatron's default"));
        // Words that are not a launch's arguments: nothing read into an absent flag.
        let (d, note) = read_moe_host("moe_router_fusion, bias_activation_fusion", "softmax", false);
        assert!(d.router_fusion && !d.sequential_experts && d.balancing == Balancing::AuxLoss);
        assert!(note.is_some());
        assert_eq!(read_moe_host("x", "sigmoid, aux-loss-free bias", false).0.balancing, Balancing::None);
    }
}
