//! Small Mixture-of-Experts training steps, on runs fmperf was never fitted on
//! (`data/megatron-ft-moe-runs.json`): NVIDIA Megatron-LM's MoE functional tests — mostly
//! 12 layers of width 512 with 4 or 8 experts (top-2) at 1,024 tokens and 32 sequences per step,
//! plus 16-layer DeepSeek-style proxies (multi-latent attention, 32 experts top-4, a shared
//! expert, dense first blocks, MTP) — on one DGX A100 or DGX H100 node (8 GPUs) or GB200 trays,
//! each with its own layout (TP, PP, CP, EP, ETP, dispatcher, all-to-all overlap, distributed
//! optimizer, Megatron-FSDP, Muon), as the tests' golden values log their iteration times
//! (provenance in the file and in `data/README.md`). The counterpart of `megatron_ft_runs.rs`
//! (the same tests' dense GPT cases).
//!
//! Reading: all 74 rows are read. 12 were refused before this file existed because the reader
//! took `--moe-layer-freq` only as an integer; Megatron's 0/1 list (`([0]*3+[1]*12)`) is now read
//! ([`fmperf_core::layer_list::moe_pattern`]).
//!
//! What the rows show (time errors, negative = predicted faster than measured): fmperf predicts
//! every one of these steps too fast — median −43 % on DGX A100 hosts, −54 % on DGX H100, −54 %
//! on GB200 (means −42 %, −54 %, −46 %; −44 %, −62 % and −56 % before Muon was read and the
//! cases' `--attention-backend unfused` priced as unfused attention, session 20) — where the
//! dense cases of the same tests (same width, layers, batch and hosts) are −21 to −30 %. The measured MoE step of a layout takes 1.5–1.9×
//! the dense step of that layout (TP 2: 0.32 against 0.21 s on DGX A100, 0.30 against 0.16 s on
//! DGX H100) while fmperf adds little for the MoE layer at this size (a few milliseconds of GPU
//! work and the host time of the operations it counts). Diagnosis, largest errors first:
//! * **Muon** (`*_muon`: −92 % H100, −86 % GB200; `dist_muon` −77 % before it was read): the
//!   rows' `optimizer` and `--optimizer muon` are now read ([`fmperf_core::extended::muon`]:
//!   Newton–Schulz on every weight matrix each step, a Python loop of 25 host operations per
//!   matrix, on every rank or layer-wise over the data-parallel ranks with
//!   `--use-distributed-optimizer`): the 5 rows' median −77 % → −27 % (H100 median −62 % → −54 %,
//!   GB200 −56 % → −55 %; A100 hosts have no Muon row).
//! * **Fine-grained activation offloading** (H100 −82 % and −85 %): the listed modules'
//!   activations go to host memory and back every micro-batch; not modelled.
//! * **Host-bound, not the all-to-all.** The exchanged volume is 4 × 1,024 tokens × 512 × 2 bytes
//!   per micro-batch and layer (4 MB: microseconds over NVLink); the error is as large with EP 1
//!   (`tp1_pp1_te_4experts_groupedGEMM_op_fuser`, −74 %) as with EP 2 (median −48 %) or ≥ 4
//!   (−70 %), and with the exchange overlapped (`a2a_ovlp`, −67 %): the exchange is not what is
//!   missing.
//! * **The MoE layer's fixed host cost and its synchronisation.** Megatron-Core's MoE layer runs
//!   per micro-batch and layer a router (gating GEMM, score function, top-k, the auxiliary-loss
//!   terms and their logging), the token permutation and the dispatcher's metadata; and both
//!   dispatchers these rows use wait on the GPU: the default all-gather dispatcher (58 rows)
//!   copies the tokens-per-expert counts to the host (`megatron/core/transformer/moe/
//!   token_dispatcher.py` at d98e8a6, `MoEAllGatherTokenDispatcher`: `local_map.sum(dim=0)
//!   .long().cpu()`), the all-to-all one at its `cuda_sync_point`. Each copy drains the GPU's
//!   queue and stops the host running ahead, so at this size the layer's host time and GPU time
//!   add instead of overlapping. fmperf prices the MoE MLP as a handful of operations with the
//!   dense blocks' per-operation host time and no synchronisation: the bulk of the gap.
//! * **DeepSeek-style proxies** (MLA, 32 experts, MTP, 4,096 tokens): median −59 % (MLA rows),
//!   −44 % with MTP; their GPU work is larger but so is their operation count.
//!
//! * **The experts' backward issues are host time of the block** (session 25): the routed
//!   experts' `4·(E/e)` backward GEMM issues now add to the block's backward host time instead of
//!   bounding the experts' own GPU time (no dispatcher wait in the backward;
//!   `extended::moe::layer::MoeMlpCost::bwd_issue_s`), with the shipped refit of the issue time
//!   (55 → 65 µs): medians A100 −43 → −38 %, H100 −54 → −47 %, GB200 −54 → −46 %; throughput
//!   mean |error| 120 → 97 %, median +94 → +74 %.
//!
//! * **The MoE layer's host calls counted per PyTorch call** (session 26): the router (gating,
//!   scores and top-k, Sinkhorn's first iteration, the load-balancing loss with its logging and
//!   autoscaler), the dispatcher's metadata, collectives and device→host copies, the permutation
//!   (fused or not) and the experts' calls besides their GEMMs (`SequentialMLP`'s per-expert
//!   loop where a case does not pass `--moe-grouped-gemm`, Megatron's default), counted from
//!   Megatron-LM d98e8a6 and priced at the sourced 12.9 µs per call times the host's speed, added
//!   to the block's host time (`extended::moe::host_calls`); TE CUDA-graph scopes read
//!   (`validate::moe_host_words`). Medians A100 −38 → −25 %, H100 −47 → −43 %, GB200 −46 → −35 %;
//!   throughput mean |error| 97 → 70 %, median +74 → +51 %. Priced instead of the MoE operations'
//!   130 µs module steps (not added to them) the count made these rows faster (mean 114 %): 12.9 µs
//!   is a bare launch, a floor of what Megatron's modules cost per call. Rows now predicted
//!   slower than measured: the Sinkhorn SequentialMLP cases `tp2_pp2_ep2(_etp2)` (up to +7.5 %
//!   on GB200) and the GB200 Muon cases (+3.8 %, `dist_muon` +8.8 %).
//!
//! * **The dispatcher's sync as a wait** (session 27, `extended::moe::sync`): where the
//!   dispatcher syncs and no other micro-batch is interleaved, an MoE block's forward lasts at
//!   least the stretch from one sync to the next (the MLP after the sync, the next attention, the
//!   MLP up to the sync), each starting with an empty GPU queue. These rows do not move (output
//!   byte-identical): by the model's own figures they are host-bound in every phase of the
//!   stretch (a 12 × 512 block's forward: host ≈ 2.8 ms — post-sync ≈ 1.0, attention ≈ 0.8–1.2,
//!   up to the sync ≈ 0.9 — against 0.1–1.3 ms of GPU work), so the host never waits at the sync
//!   for more than its own issue. The sync is not where the gap is; modelled ≈ 6–7 ms per MoE
//!   layer and micro-batch against 10–17 ms measured is host time the calls cost beyond 12.9 µs.
//!
//! * **The layer's Python** (session 27, `extended::layer_python`, counts from Megatron-LM
//!   d98e8a6, prices from published CPU measurements, none chosen on these rows): the MoE block's
//!   module calls (the layer, attention, the MLP norm, `MoELayer`, router, experts module, an MLP
//!   per local expert under `SequentialMLP` or `TEGroupedMLP`'s two grouped linears, a shared
//!   expert) and its Transformer Engine linear modules (50.1 µs each on a DGX H100 host), each in
//!   its phase of the stretch between syncs; the 9 local-spec rows (`--transformer-impl local`)
//!   count Megatron-Core's own modules, no TE linear. Medians A100 −25 → −19 %, H100 −43 → −43 %,
//!   GB200 −35 → −32 %; throughput mean |error| 69.3 → 63.0 %, median +51 → +42 % (TE-spec rows
//!   78.2 → 71.0 %, local-spec 5.1 → 4.8 %). Rows now slower than measured: `dist_muon` on GB200
//!   +10.6 % (+8.8 % before), the Sinkhorn SequentialMLP `tp2_pp2_ep2_etp2` case on GB200 +8.1 %.
//!
//! * **The data-parallel overlap flags were read as the exchange's** (session 30): a case's
//!   `--overlap-grad-reduce` / `--overlap-param-gather` switched the expert all-to-all's overlap on
//!   in 12 rows whose cases do not pass `--overlap-moe-expert-parallel-comm` (a misread, now fixed
//!   in `validate::moe_words`; no rule drawn). Only the three all-to-all PP 2 rows on DGX H100 move
//!   (throughput error `memory_speed` +78.6 → +71.5 %, `mtp_resume_torch_dist_fp8` +129.4 →
//!   +123.2 %, `attn_cudagraph` +123.8 → +117.5 %); the all-gather rows have no exchange to
//!   overlap. Mean |error| 62.95 → 62.68 %, median +41.7 % unchanged.
//! * **Activation offloading, sized** (session 30; not priced, and the rows say so): per MoE
//!   block and micro-batch of `fine_grained_offloading` (TP 2 with sequence parallelism, 4,096
//!   tokens, 16 latent-attention heads per rank, unfused attention) the offloaded groups keep the
//!   attention probabilities (16 · 4,096² · 2 B = 537 MB), Q, K and V (4,096 · 16 · 512 · 2 B =
//!   67 MB), the output projection's input (17 MB), the two norms' inputs (4 MB each), the
//!   experts' first GEMM's input (8,192 routed copies · 1,024 · 2 B = 17 MB) and the activation's
//!   (34 MB): ≈ 0.68 GB. The first stage holds 9 blocks and runs 4 micro-batches a step: ≈ 24 GB
//!   to the host and back per step, ≥ 0.4 s each way over PCIe Gen5 x16 (64 GB/s per direction,
//!   less where GPUs share a switch's uplink) against ≈ 0.05 s over Grace's NVLink-C2C (450 GB/s
//!   per direction). Measured, the case takes 2.0× as long on DGX H100 as on GB200 (1.88 against
//!   0.94 s), every other case measured on both 0.5–1.5×. Pricing it needs the host link of each
//!   part (a catalog field), the offloaded groups' kept bytes by operation and a floor on each
//!   pass.
//!
//! * **The logged statistics, read and priced for MoE rows** (session 32,
//!   `extended::moe::host_step`): every case's `model_config.yaml` states `--log-num-zeros-in-grad`
//!   and `--log-params-norm` (all 74; the rows' notes said so, but `parallel.other` had left the
//!   flags out, and the MoE evaluation priced the statistics for dense models only). Now the
//!   rows carry both flags, the MoE reader reads them as the dense reader does, and an MoE rank's
//!   step adds `extended::step_host`'s work over its own tensors (its blocks', its local experts'
//!   FC1/FC2 weights and biases, the router's). Medians A100 −19.0 → −15.5 %, H100 −26.7 → −25.6 %,
//!   GB200 −32.1 → −30.7 %; throughput mean |error| 48.2 → 43.0 %, median +34.0 → +30.8 %. No
//!   constant chosen; the shipped MoE runs state no such flag (byte-identical). Checked and not
//!   the gap (the brief of issue 32 asked): the dispatcher's syncs, the router's kernels, the
//!   permutation and `SequentialMLP`'s per-expert loop are priced since sessions 26–27
//!   (`host_calls`, `sync`, `layer_python`); the worst rows' residue (H100 `tp2_pp1_8experts_etp1_ep4`
//!   measured 1.55× its DGX A100 twin, `ep8_dist_optimizer` 0.80×, dense twins 0.45–0.9×) does
//!   not follow the host's speed, which no count of calls priced per host can reproduce.
//!
//! * **Multi-latent attention's host work** (session 33, w171, `extended::moe::mla_host`): an
//!   MoE block with MLA now counts its attention's modules as Megatron-Core builds them (15 calls
//!   and 5 Transformer Engine linear modules against a plain attention's 9 and 2) and the PyTorch
//!   calls between its projections that its operations do not issue: with `--no-rope-fusion`
//!   (stated by all 9 MLA cases' `model_config.yaml`, now added to their `parallel.other`) the
//!   unfused RoPE on the queries' and the shared key's positional parts (13 launches forward, 14
//!   backward each) and the query's and key's assembly (3 / 3), 29 / 31 calls per layer and
//!   micro-batch at 12.9 µs times the host's speed; fused, Megatron's default, 2 / 2. Counted
//!   from NVIDIA/Megatron-LM d98e8a6, nothing chosen on these rows (the flag's reading is the
//!   only thing they prompted). Three rows move, all toward the measurement: the GB200 proxy
//!   +138.2 → +125.3 %, the H100 `ep_overlap` proxy +168.2 → +157.3 %, GB200
//!   `fine_grained_offloading` +50.3 → +39.5 %; the H100 MLA rows at 4,096 tokens are GPU-bound
//!   in their passes (unchanged). Throughput medians A100 +18.4 % and H100 +34.3 % unchanged, GB200
//!   +44.2 → +41.2 %; mean |error| 43.01 → 42.54 %, median +30.8 % unchanged. Not the gap: at
//!   ≈ 0.5 ms per layer and micro-batch it is a few per cent of a proxy's step (the GB200 proxy
//!   is still predicted 2.25× too fast). Checked and left: every one of the 74 cases states
//!   `--disable-bias-linear` (not in the rows' `parallel.other`), so their blocks hold no linear
//!   biases where `extended::moe::host_step` counts Megatron's default biases (QKV, projection,
//!   router, each expert's FC1 and FC2) among the logged statistics' tensors: reading it would
//!   remove host work and make these rows faster still, not slower.
//!
//! What is still missing is not counted here: the Python between the module calls beyond
//! `nn.Module.__call__` (context managers, hooks), Transformer Engine's Python in the backward,
//! Sinkhorn's further iterations (each with a device sync; no source states how many run) and
//! Megatron-Core's module hooks.
//!
//! Before this count, the MoE layer's host operations were priced at the module level (130 µs
//! each) on branch `w80-moe-host` (not merged), which moved these rows to medians +11 % (A100),
//! −35 % (H100), −11 % (GB200), but re-fits the shipped fixed layer time to 0, which worsens the
//! shipped MoE leave-one-source-out error (18.6 → 18.8 %) and DeepSeek-V3's 1,024-H800 run
//! (−9 % → −12 % against its 10 % band). The bounds guard the present state from both sides:
//! they fail if the rows stop being read, if the MoE layer's cost falls further, or if a change
//! moves these held-out rows by more than about ten points without the diagnosis above being
//! revised.

use fmperf_core::validate::moe_runs::validate_moe_runs;
use serde_json::Value;

const FT: &str = include_str!("data/megatron-ft-moe-runs.json");

/// The median of a non-empty list (core's, which the validation report uses too).
fn median(mut v: Vec<f64>) -> f64 {
    fmperf_core::extended::efficiency::median(&mut v).expect("a non-empty list")
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The features a row states, by name, for the error by feature.
fn features(row: &Value) -> Vec<&'static str> {
    let p = &row["parallel"];
    let m = &row["model"];
    let int = |v: &Value| v.as_u64().unwrap_or(1);
    let text = |v: &Value| v.as_str().unwrap_or("").to_ascii_lowercase();
    let mut f = Vec::new();
    let mut add = |on: bool, name| {
        if on {
            f.push(name)
        }
    };
    add(int(&p["ep"]) == 1, "ep 1");
    add(int(&p["ep"]) == 2, "ep 2");
    add(int(&p["ep"]) >= 4, "ep >= 4");
    add(int(&p["pp"]) > 1, "pp > 1");
    add(int(&p["cp"]) > 1, "cp > 1");
    add(int(&p["tp"]) > 1, "tp > 1");
    add(text(&p["dispatcher"]).contains("overlap"), "a2a overlap");
    add(text(&p["dispatcher"]).starts_with("allgather"), "allgather dispatcher");
    add(m["mla"].is_object(), "MLA proxy");
    add(m["moe_layer_freq"].is_string(), "moe-layer-freq list");
    add(int(&m["mtp_layers"]) > 0 && !m["mtp_layers"].is_null(), "MTP");
    add(text(&row["optimizer"]) == "muon", "muon");
    add(text(&p["fsdp"]).contains("fsdp"), "Megatron-FSDP");
    add(text(&row["precision"]).contains("fp8"), "fp8");
    add(text(&p["other"]).contains("cuda-graph"), "CUDA graphs");
    add(text(&p["other"]).contains("offloading"), "activation offloading");
    f
}

#[test]
fn small_moe_steps_held_out() {
    let doc: Value = serde_json::from_str(FT).expect("the file reads");
    let rows = doc["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 74);
    let results = validate_moe_runs(FT).expect("validates");
    let mut by_host = [Vec::new(), Vec::new(), Vec::new()];
    let mut by_feature: Vec<(&str, Vec<f64>)> = Vec::new();
    let mut all = Vec::new();
    for (row, r) in rows.iter().zip(&results) {
        assert_eq!(row["id"].as_str(), Some(r.id.as_str()));
        // Every row is read and evaluated.
        let e = r.error.unwrap_or_else(|| panic!("{}: not evaluated ({:?})", r.id, r.notes));
        // The rows compare tokens/s; as a time error (negative = predicted faster).
        let t = 1.0 / (1.0 + e) - 1.0;
        let host = ["dgx_a100", "dgx_h100", "dgx_gb200"].iter().position(|h| r.id.ends_with(h));
        by_host[host.unwrap_or_else(|| panic!("{}: no host", r.id))].push(t);
        for f in features(row) {
            match by_feature.iter_mut().find(|(n, _)| *n == f) {
                Some((_, v)) => v.push(t),
                None => by_feature.push((f, vec![t])),
            }
        }
        all.push((t, r.id.as_str()));
    }
    for (name, v) in ["DGX A100", "DGX H100", "GB200"].iter().zip(&by_host) {
        eprintln!(
            "{name:>9} hosts: {:2} rows, median time error {:+.1} %, mean {:+.1} %",
            v.len(),
            100.0 * median(v.clone()),
            100.0 * mean(v)
        );
    }
    for (name, v) in &by_feature {
        eprintln!(
            "{name:>22}: {:2} rows, median {:+.1} %, mean {:+.1} %",
            v.len(),
            100.0 * median(v.clone()),
            100.0 * mean(v)
        );
    }
    let [a100, h100, gb200] = by_host.map(median);
    // The present state (module docs): 2–4× too fast on every host. The bounds fail if the MoE
    // layer's cost falls (more negative) or a change moves these rows past the band without a
    // diagnosis here.
    assert!(a100 > -0.35 && a100 < -0.15, "A100 median {a100}");
    // Session 31 (w154): fine-grained activation offloading and MLA's unfused core priced raised
    // the H100 median from about −0.36 to −0.27 (9 MLA rows under `--attention-backend unfused`).
    assert!(h100 > -0.37 && h100 < -0.17, "H100 median {h100}");
    assert!(gb200 > -0.45 && gb200 < -0.25, "GB200 median {gb200}");
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (t, id) in all.iter().take(6) {
        eprintln!("largest: {:+.1} % {id}", 100.0 * t);
    }
    // No row predicted slower than measured by more than 12 % (host-bound steps: fmperf misses
    // time, never adds much; the most, `dist_muon` on GB200, +10.6 % with the layer's Python,
    // and the Sinkhorn SequentialMLP case on GB200, +8.1 %). Since session 31 the MLA proxy with
    // selective recompute modules on H100 is +13.0 %: MLA's unfused core (scores and P·V at
    // 192- and 128-wide heads, its P kept) priced slower than the run; not diagnosed further.
    // Session 32: with the logged statistics priced it is +14.6 %, and `dist_muon` on GB200
    // +13.3 % (Muon's step and the statistics' sync both per step).
    assert!(all.iter().all(|(t, _)| *t < 0.16), "{all:?}");
}
