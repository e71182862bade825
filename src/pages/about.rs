//! About fmperf: what it computes, from which sources, in which units, and what it leaves out.

use leptos::prelude::*;

use super::models_table::ReferenceModelsTable;

/// The about view.
#[component]
pub fn AboutPage() -> impl IntoView {
    view! {
        <section class="card about">
            <h1>"About fmperf"</h1>
            <p>
                "fmperf answers, in a fraction of a second, the questions asked before buying or booking a supercomputer "
                "for a foundation model: how long training takes on a system, with which parallel configuration, how much "
                "memory each accelerator needs, where the time goes, and which system feature would help most. "
                "Everything is computed in your browser (Rust compiled to WebAssembly): no server, no account, no network after load."
            </p>
            <h2>"The model"</h2>
            <p>
                "Reference mode is the analytical model of Subramanian et al., "
                <em>"Comprehensive Performance Modeling and System Design Insights for Foundation Models"</em>
                " (PMBS 2024; companion code transformer-perf-estimates @ 54278b0), reproduced to the last bit on every "
                "golden output of the reference implementation: per-layer counts, totals, candidate sets and top-k."
            </p>
            <ul>
                <li>
                    "For each layer of a transformer block (linear layers, bias, GELU, dropout, layer norm, flash attention) it counts "
                    "FLOPs, HBM traffic, activation and weight memory and the collectives of the tensor-parallel scheme: "
                    <strong>"1d"</strong>" (Megatron tensor + sequence parallel), "<strong>"2d"</strong>" (SUMMA) or "
                    <strong>"2d-seqp"</strong>" (tensor × context parallel), with pipeline and data parallelism on top."
                </li>
                <li>
                    "A layer's time is a roofline: max(FLOPs ÷ (0.8 × peak) + 20 µs, traffic ÷ HBM bandwidth), plus its "
                    "communication in a two-tier ring model (a fast scale-up domain such as NVLink, a slower scale-out network), "
                    "with the placement of each parallel dimension onto the fast domain searched too."
                </li>
                <li>
                    "An iteration adds the micro-batches of all local blocks, pipeline messages, the pipeline bubble and the exposed "
                    "data-parallel gathers and reductions. Memory = weights + gradients + optimizer states (6 × weight bytes, sharded "
                    "over data parallel) + activations of the micro-batches in flight."
                </li>
                <li>
                    "The search tries every configuration (data, tensor, pipeline and context degrees, micro-batch size, SUMMA panels, "
                    "fast-domain placement), keeps those that fit in HBM, and ranks them by throughput."
                </li>
            </ul>
            <p>
                "Extended mode (opt-in, labelled) adds what real training runs do and the reference leaves out: precisions with their "
                "own peak rates, measured matrix-multiply ceilings per accelerator, activation recomputation, ZeRO/FSDP, interleaved "
                "pipelines, causal attention, grouped-query attention, gated MLPs, embeddings and the output head. The "
                <a href="?view=validation">"validation view"</a>
                " shows how far each mode's predictions are from measured runs."
            </p>
            <h2>"Units"</h2>
            <p>
                "FLOPs in TFLOP (10¹²), rates in TFLOP/s, memory and message sizes in GB (10⁹ bytes), bandwidths in GB/s per device "
                "(one direction), times in seconds, throughput in samples (sequences or images) per second, training time in days of "
                "wall-clock time for the chosen token or sample budget."
            </p>
            <h2>"The reference models"</h2>
            <ReferenceModelsTable />
            <h2>"Sources"</h2>
            <ul>
                <li>
                    "S. Subramanian et al., Comprehensive Performance Modeling and System Design Insights for Foundation Models, "
                    "PMBS workshop at SC24 (arXiv:2410.00273)."
                </li>
                <li>
                    "M. Emani et al., A Comprehensive Performance Study of Large Language Models on Novel AI Accelerators, "
                    "Argonne, 2023 (arXiv:2310.04607)."
                </li>
                <li>
                    "Hardware figures: vendor datasheets and documentation, each cited on its entry in the "
                    <a href="?view=catalog">"catalog"</a>". Measured runs: the papers and benchmark pages cited on each row of the validation view."
                </li>
            </ul>
            <h2>"What it does not capture"</h2>
            <p>
                "The model is analytical: no kernel-level effects beyond the roofline, no network congestion or topology beyond two tiers, "
                "no stragglers. Mixture-of-experts models are priced in extended mode only (expert and expert-tensor parallelism folded over the "
                "dense layers' devices, token dispatch and combine as all-to-all on the two network tiers, load imbalance as a factor). Wafer-scale, dataflow and IPU systems and TPU tori are approximated; their catalog "
                "entries say what the model does and does not represent for them. Every number is a model estimate, not a measurement."
            </p>
            <h2>"Use it elsewhere"</h2>
            <p>
                "Embed a live view in documentation (iframe or the "<code>"<fmperf-explorer>"</code>" custom element: see "
                <a href="embed.html">"embed.html"</a>"), download "<a href="fmperf.html" download="fmperf.html">"fmperf.html"</a>
                " to use it offline, or run the same computations headless with the "<code>"fmperf"</code>" command-line tool."
            </p>
        </section>
    }
}
