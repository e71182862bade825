//! A read configuration as a scenario fmperf evaluates: the model as an extended-mode
//! [`Workload`](fmperf_core::extended::Workload), the system and device count, the global batch,
//! and the fixed configuration (tensor, pipeline, context and data parallel degrees, micro-batch,
//! virtual stages, recomputation, sharding, sequence parallelism, precision) as
//! [`ExtendedOptions`](fmperf_core::extended::ExtendedOptions), with where each value came from.
//!
//! The framework's defaults where the file is silent are applied, each with a note: the model's
//! (Megatron's `ffn = 4h`, SwiGLU: `⌊8h/3 / 64⌋·64`, vocabulary padding to `128·tp`) in `model`,
//! the layout's (a global batch of `mbs·dp`, torchtitan's `local_batch_size` of 8, degrees of 1)
//! in `layout`, the switches' in `options`; this module composes them.

mod layout;
mod model;
mod options;

pub use model::{ModelOnly, catalog_model};

use super::settings::Slot;
use super::{Format, Launch, experts};
use fmperf_core::Error;
use fmperf_core::extended::moe::ExpertLayout;
use fmperf_core::extended::{ExtendedOptions, Layout, Workload};
use fmperf_core::vocab::Note;
use layout::{batch, devices};
use options::{Degrees, file_options};

/// What the command line (or the page) sets beside the file; each wins over the file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Overrides {
    /// The system: a catalog id or spec (`nvidia_h100_sxm5_80gb,domain=8`).
    pub system: Option<String>,
    /// Devices of the run.
    pub gpus: Option<u64>,
    /// Global batch [samples].
    pub global_batch: Option<u64>,
    /// Training sequence length [tokens] (model-only files have none).
    pub seq_len: Option<u64>,
    /// Extended mode's switches set over the file's (`--ext`'s text, `key=value,…`;
    /// [`crate::switch_overrides::set_over`]).
    pub switches: Option<String>,
}

/// A configuration ready to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchScenario {
    /// The model's name as the file gives it.
    pub model_name: String,
    /// The model (sequence length included).
    pub workload: Workload,
    /// The system (catalog id or spec), when known.
    pub system: Option<String>,
    /// Devices `tp·cp·pp·dp`.
    pub devices: u64,
    /// Degrees, micro-batch and global batch (placed for a domain of one device; the estimate
    /// places it on the system's domain).
    pub layout: Layout,
    /// The extended-mode switches of this configuration.
    pub options: ExtendedOptions,
    /// Rules applied where the file is silent, in words.
    pub assumptions: Vec<Note>,
    /// Where each value of the configuration came from: `(field, place)`, the place being
    /// `file: key (line N)`, a command-line flag (`--gpus`) or `default` / `derived`.
    pub origins: Vec<(String, String)>,
}

/// Where a slot's value came from, for [`LaunchScenario::origins`].
fn place<T>(slot: &Slot<T>, flag_override: Option<&str>) -> String {
    if let Some(flag) = flag_override {
        return format!("{flag} (command line)");
    }
    match &slot.origin {
        Some(o) => {
            let file = o.file.as_deref().map(|f| format!("{f}: ")).unwrap_or_default();
            if o.line > 0 { format!("{file}{} (line {})", o.key, o.line) } else { format!("{file}{}", o.key) }
        }
        None if slot.value.is_some() => "read".into(),
        None => "default or derived".into(),
    }
}

/// The name of a field in the file's own language, for messages about a missing value.
fn key(format: Format, megatron: &str, yaml: &str, toml: &str, hf: &str) -> String {
    match format {
        Format::Megatron => format!("--{megatron}"),
        Format::NemoYaml => yaml.to_string(),
        Format::Torchtitan => toml.to_string(),
        Format::HfConfig => hf.to_string(),
        Format::MaxText => megatron.replace('-', "_"),
        Format::DeepSpeed => hf.to_string(),
        Format::TrainerYaml => megatron.replace('-', "_"),
    }
}

fn required(slot: &Slot<u64>, name: String) -> Result<u64, Error> {
    slot.copied().ok_or(Error::MissingField { field: name })
}

impl LaunchScenario {
    /// The scenario of `launch` with `o` applied. Errors name the flag or key (or the override)
    /// and the rule: a missing model dimension, devices that the degrees do not divide, a batch
    /// that `dp·mbs` does not divide, expert-parallel degrees that do not fold (`ep` not dividing the
    /// experts, `ep·etp` not dividing `tp·cp·dp`), a model-only file without a layout.
    pub fn from_launch(launch: &Launch, o: &Overrides) -> Result<LaunchScenario, Error> {
        let s = &launch.settings;
        let f = launch.format;
        if f == Format::DeepSpeed {
            return Err(Error::invalid(
                "layout",
                "DeepSpeed JSON",
                "a DeepSpeed JSON holds the batch, ZeRO stage and precision, not the model: read it together with \
                 its launch script (`--from run.sh --from ds_config.json`)",
            ));
        }
        if f == Format::HfConfig {
            return Err(Error::invalid(
                "layout",
                "config.json",
                "a Hugging Face config.json holds the model only, not a parallel layout to estimate; \
                 search for one with `fmperf search --from config.json --system ID --gpus N --global-batch G --seq-len S`",
            ));
        }
        let tp = s.tp.copied().unwrap_or(1);
        let model = ModelOnly::from_launch(launch, o, tp)?;
        let (workload, mut notes) = (model.workload, model.notes);
        let pp = s.pp.copied().unwrap_or(1);
        let cp = s.cp.copied().unwrap_or(1);
        let (devices, devices_origin) = devices(s, o, f, tp * pp * cp)?;
        let replicate = if f == Format::Torchtitan { s.dp_replicate.copied().unwrap_or(1) } else { 1 };
        let model_parallel = tp * pp * cp * replicate;
        if !devices.is_multiple_of(model_parallel) {
            return Err(devices_origin.error(
                devices,
                format!(
                    "must be a multiple of tp·pp·cp{} = {model_parallel}",
                    if replicate > 1 { "·replicas" } else { "" }
                ),
            ));
        }
        let shard = devices / model_parallel;
        if let Some(d) = s.dp.copied()
            && d != shard
        {
            return Err(s.dp.error(
                "dp",
                d,
                format!("the degrees need {} devices, the run has {devices}", d * model_parallel),
            ));
        }
        let dp = shard * replicate;
        let (mbs, global_batch) = batch(s, o, f, dp, pp, &mut notes)?;
        let mut opts = file_options(s, f, o, &workload, Degrees { tp, pp, cp, dp, shard, replicate, mbs }, &mut notes)?;
        let mut layout = Layout::placed(tp, cp, pp, dp, mbs, global_batch, 1);
        if let Some(m) = &workload.moe {
            opts.moe = experts::options(&s.moe, f, tp, &mut notes)?;
            let (ep, etp) = (opts.moe.ep.unwrap_or(1), opts.moe.etp.unwrap_or(1));
            layout = layout.with_experts(ep, etp);
            ExpertLayout::fold(&layout, m, ep, etp).map_err(|e| {
                let about_etp = e.is_at(ExpertLayout::ETP_FIELD);
                let slot = if about_etp { &s.moe.etp } else { &s.moe.ep };
                let (fallback, v) =
                    if about_etp { ("expert_tensor_parallel_size", etp) } else { ("expert_model_parallel_size", ep) };
                match &e {
                    Error::InvalidField { rule, .. } => slot.error(fallback, v, rule.clone()),
                    _ => e,
                }
            })?;
        }
        let origins = vec![
            (
                "devices".to_string(),
                format!("{} ({})", devices_origin.key, if o.gpus.is_some() { "command line" } else { "file" }),
            ),
            ("system".into(), place(&s.system, o.system.as_ref().map(|_| "--system"))),
            ("tp".into(), place(&s.tp, None)),
            ("pp".into(), place(&s.pp, None)),
            ("cp".into(), place(&s.cp, None)),
            ("dp".into(), place(&s.dp, None)),
            ("ep".into(), place(&s.moe.ep, None)),
            (
                "vpp".into(),
                if s.vpp.value.is_some() { place(&s.vpp, None) } else { place(&s.layers_per_virtual_stage, None) },
            ),
            ("mbs".into(), place(&s.mbs, None)),
            ("global_batch".into(), place(&s.global_batch, o.global_batch.map(|_| "--global-batch"))),
            ("seq_len".into(), place(&s.seq_len, o.seq_len.map(|_| "--seq-len"))),
            ("layers".into(), place(&s.layers, None)),
            ("hidden".into(), place(&s.hidden, None)),
            ("vocab".into(), place(&s.vocab, None)),
        ];
        // The user's switches over the file's, last: they win over whatever the file implied.
        let opts = crate::switch_overrides::set_over(opts, o.switches.as_deref(), &mut notes)?;
        Ok(LaunchScenario {
            model_name: model.name,
            workload,
            system: o.system.clone().or_else(|| s.system.get().cloned()),
            devices,
            layout,
            options: opts,
            assumptions: notes,
            origins,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;
    use fmperf_core::extended::{Recompute, Sharding};

    #[test]
    fn megatron_script_becomes_a_scenario() {
        let l = parse(
            "torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \
             --num-attention-heads 32 --group-query-attention --num-query-groups 8 --swiglu --seq-length 8192 \
             --micro-batch-size 1 --global-batch-size 256 --bf16 --tensor-model-parallel-size 4 \
             --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 4 --vocab-size 128256 \
             --use-distributed-optimizer --sequence-parallel --recompute-activations",
            None,
        )
        .unwrap();
        let sc = LaunchScenario::from_launch(&l, &Overrides::default()).unwrap();
        let y = sc.layout;
        assert_eq!((sc.devices, y.tp, y.pp, y.dp, y.mbs, y.global_batch), (32, 4, 2, 4, 1, 256));
        assert_eq!(sc.workload.ffn_hidden, 10880); // ⌊8·4096/3 / 64⌋·64
        assert_eq!(sc.workload.vocab, Some(128_512)); // padded to 512
        assert_eq!(sc.options.interleave, 4);
        assert_eq!(sc.options.sharding, Sharding::Zero1);
        assert_eq!(sc.options.recompute, Recompute::Selective);
        let e = LaunchScenario::from_launch(&l, &Overrides { gpus: Some(12), ..Overrides::default() }).unwrap_err();
        assert_eq!(e.field(), Some("--gpus"));
        let e = LaunchScenario::from_launch(&l, &Overrides { global_batch: Some(255), ..Overrides::default() })
            .unwrap_err();
        assert_eq!(e.field(), Some("--global-batch"));
    }

    #[test]
    fn torchtitan_hsdp_and_missing_devices() {
        let t = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 2\nseq_len = 8192\n\
                 [parallelism]\ndata_parallel_replicate_degree = 2\ndata_parallel_shard_degree = -1\n";
        let l = parse(t, None).unwrap();
        let e = LaunchScenario::from_launch(&l, &Overrides::default()).unwrap_err();
        assert_eq!(e.field(), Some("--gpus"));
        let sc = LaunchScenario::from_launch(&l, &Overrides { gpus: Some(16), ..Overrides::default() }).unwrap();
        assert_eq!((sc.layout.dp, sc.layout.mbs, sc.layout.global_batch), (16, 2, 32));
        assert_eq!(sc.options.sharding, Sharding::Zero3);
        assert_eq!(sc.options.shard_group, Some(8));
    }

    #[test]
    fn model_only_and_moe_files_say_why() {
        let hf = parse(
            "{\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"vocab_size\": 100}",
            None,
        )
        .unwrap();
        let e = LaunchScenario::from_launch(&hf, &Overrides::default()).unwrap_err();
        assert!(e.to_string().contains("--seq-len"), "{e}");
        let e =
            LaunchScenario::from_launch(&hf, &Overrides { seq_len: Some(128), ..Overrides::default() }).unwrap_err();
        assert!(e.to_string().contains("fmperf search --from"), "{e}");
        // An MoE launch evaluates (it was rejected before MoE was modelled): its experts, their
        // degrees (etp defaulting to tp as in Megatron) and a catalog twin.
        let base = "python pretrain_gpt.py --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 \
                    --num-attention-heads 32 --group-query-attention --num-query-groups 8 --swiglu --seq-length 4096 \
                    --micro-batch-size 1 --global-batch-size 64 --bf16 --vocab-size 32000 --num-experts 8 \
                    --moe-router-topk 2 --tensor-model-parallel-size 2";
        let moe = parse(&format!("{base} --expert-model-parallel-size 4"), None).unwrap();
        let sc = LaunchScenario::from_launch(&moe, &Overrides { gpus: Some(16), ..Overrides::default() }).unwrap();
        let m = sc.workload.moe.unwrap();
        assert_eq!((m.experts, m.top_k, m.expert_ffn, m.first_dense, m.moe_every), (8, 2, 14336, 0, 1));
        assert_eq!((sc.layout.ep, sc.layout.etp), (4, 2));
        assert_eq!(catalog_model(&sc.workload), Some("mixtral-8x7b"));
        // ep·etp = 3·2 does not divide tp·dp = 16; ep = 3 does not divide 8 experts.
        let bad = parse(&format!("{base} --expert-model-parallel-size 3"), None).unwrap();
        let e = LaunchScenario::from_launch(&bad, &Overrides { gpus: Some(16), ..Overrides::default() }).unwrap_err();
        assert_eq!(e.field(), Some("--expert-model-parallel-size"));
        assert!(e.to_string().contains("must divide the routed experts 8"), "{e}");
        let bad =
            parse(&format!("{base} --expert-model-parallel-size 8 --expert-tensor-parallel-size 4"), None).unwrap();
        let e = LaunchScenario::from_launch(&bad, &Overrides { gpus: Some(16), ..Overrides::default() }).unwrap_err();
        assert_eq!(e.field(), Some("--expert-model-parallel-size"));
        assert!(e.to_string().contains("ep·etp = 32 must divide"), "{e}");
    }
}
