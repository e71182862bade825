//! The way back: a layout fmperf chose (the top of a search, or one the user picked) written as a
//! launch file of a framework, so that it can be run.
//!
//! [`emit`] writes a [`LaunchScenario`] (model, system, devices) run with a [`Layout`] and its
//! [`ExtendedOptions`] in a [`Target`]:
//! * **in place**, when the input is a file of the target's family: the values of the keys that
//!   carry the layout (tensor / pipeline / context / expert / data degrees, micro-batch, global
//!   batch, virtual stages, recomputation, sharding, sequence parallelism) are replaced where they
//!   are written (the [`SettingOrigin`](super::settings::SettingOrigin) of each read value names the line), the
//!   missing ones are added next to them, and every other line is kept byte for byte (comments,
//!   data paths, hyper-parameters, settings fmperf does not model);
//! * **fresh** otherwise: a complete file (model shape, vocabulary, sequence length, batch,
//!   precision, layout) with a comment header saying that fmperf wrote it and from what.
//!
//! What a target cannot express is never dropped silently: the nearest choice the framework offers
//! is written and [`Emitted::notes`] says so. Pure text in, text out (no I/O).

mod dialects;
mod lines;
mod maxtext;
mod megatron;
mod megatron_flags;
mod torchtitan;
mod yaml;

use super::{Format, Launch, LaunchScenario};
use fmperf_core::Error;
use fmperf_core::extended::{ExtendedOptions, Layout, Recompute, Sharding};
use fmperf_core::vocab::{Note, NoteList};

/// The framework a launch is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// A Megatron-LM shell script (`torchrun … pretrain_gpt.py` with its flags).
    Megatron,
    /// A NeMo YAML: NeMo 1 `trainer:`/`model:` keys when the input is one, else Megatron-Bridge's
    /// `model:`/`train:`/`optimizer:` override keys.
    Nemo,
    /// A torchtitan job TOML (the current `[parallelism]`/`[training]` schema).
    Torchtitan,
    /// A MaxText command line of `key=value` overrides of `base.yml`.
    MaxText,
}

impl Target {
    /// Every target, in the order of the CLI's help.
    pub const ALL: [Target; 4] = [Target::Megatron, Target::Nemo, Target::Torchtitan, Target::MaxText];

    /// The CLI / page name: `megatron`, `nemo`, `torchtitan`, `maxtext`.
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Megatron => "megatron",
            Target::Nemo => "nemo",
            Target::Torchtitan => "torchtitan",
            Target::MaxText => "maxtext",
        }
    }

    /// Reads a CLI name (case-insensitive; `bridge`, `nemo-yaml` and `megatron-bridge` are NeMo).
    pub fn parse(name: &str) -> Result<Target, Error> {
        match name.trim().to_ascii_lowercase().as_str() {
            "megatron" | "megatron-lm" => Ok(Target::Megatron),
            "nemo" | "nemo-yaml" | "bridge" | "megatron-bridge" => Ok(Target::Nemo),
            "torchtitan" => Ok(Target::Torchtitan),
            "maxtext" => Ok(Target::MaxText),
            _ => Err(Error::invalid("--emit", name, "must be megatron, nemo, torchtitan or maxtext")),
        }
    }

    /// The target that rewrites a file of `format` in place (`None`: Hugging Face and DeepSpeed
    /// JSON files hold no launch).
    pub fn of_format(format: Format) -> Option<Target> {
        match format {
            Format::Megatron => Some(Target::Megatron),
            Format::NemoYaml => Some(Target::Nemo),
            Format::Torchtitan => Some(Target::Torchtitan),
            Format::MaxText => Some(Target::MaxText),
            Format::HfConfig | Format::DeepSpeed | Format::TrainerYaml => None,
        }
    }

    /// The file name a fresh file gets (`run-best.sh`, `best.yaml`, `best.toml`, `run-best-maxtext.sh`).
    pub fn file_name(self) -> &'static str {
        match self {
            Target::Megatron => "run-best.sh",
            Target::Nemo => "best.yaml",
            Target::Torchtitan => "best.toml",
            Target::MaxText => "run-best-maxtext.sh",
        }
    }
}

impl std::str::FromStr for Target {
    type Err = Error;

    fn from_str(s: &str) -> Result<Target, Error> {
        Target::parse(s)
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A written launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Emitted {
    /// The file's text.
    pub text: String,
    /// A file name for it: the input's own name with `-best` before its extension when rewritten
    /// in place (`megatron-llama3-70b-best.sh`), else [`Target::file_name`].
    pub file_name: String,
    /// Whether the input was rewritten in place (else the file is fresh).
    pub in_place: bool,
    /// What could not be carried over exactly, and what was written instead, in words.
    pub notes: Vec<Note>,
}

/// The input file of [`emit`]: its text, its reading and its name (for the output's name and the
/// header; `None` when unknown).
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The file's text, as read.
    pub text: &'a str,
    /// Its reading ([`crate::parse`]), whose origins name the lines to rewrite.
    pub launch: &'a Launch,
    /// Its name or path as the user gave it.
    pub name: Option<&'a str>,
}

/// The values to write, from the layout and the switches, checked against the scenario. Counts are
/// dimensionless, batches in samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Plan {
    pub tp: u64,
    pub pp: u64,
    pub cp: u64,
    pub dp: u64,
    pub ep: u64,
    pub etp: u64,
    pub mbs: u64,
    pub global: u64,
    /// Virtual stages per pipeline rank (1: none).
    pub vpp: u64,
    pub recompute: Recompute,
    pub sharding: Sharding,
    /// ZeRO-3 shard group [devices] (`None`: the whole data × context group).
    pub shard_group: Option<u64>,
    pub sequence_parallel: bool,
    pub devices: u64,
    /// Transformer blocks.
    pub layers: u64,
    /// Whether the model has routed experts.
    pub moe: bool,
}

impl Plan {
    /// Gradient-accumulation steps: micro-batches per step per data-parallel rank.
    pub fn accumulation(&self) -> u64 {
        self.global / self.mbs.saturating_mul(self.dp).max(1)
    }

    /// Blocks of one model chunk (a pipeline stage, or one of its virtual stages when
    /// interleaved), rounded up: what Megatron's block recompute method counts in.
    pub fn blocks_per_model_chunk(&self) -> u64 {
        self.layers.div_ceil(self.pp.max(1).saturating_mul(self.vpp.max(1)))
    }

    /// Blocks of each model chunk that Megatron's block method recomputes for a `share` of the
    /// forward: the share of [`Self::blocks_per_model_chunk`], rounded, at least one.
    pub fn block_recompute_layers(&self, share: f64) -> u64 {
        let blocks = self.blocks_per_model_chunk();
        ((share * blocks as f64).round() as u64).clamp(1, blocks.max(1))
    }

    /// Blocks per virtual pipeline stage, when `vpp` divides the blocks per stage evenly.
    pub fn layers_per_virtual_stage(&self) -> Option<u64> {
        let stages = self.pp.saturating_mul(self.vpp);
        (self.vpp > 1 && stages > 0 && self.layers.is_multiple_of(stages)).then(|| self.layers / stages)
    }
}

/// Checks `layout` and `options` against `scenario` and gathers the values to write.
pub(crate) fn plan(scenario: &LaunchScenario, layout: &Layout, options: &ExtendedOptions) -> Result<Plan, Error> {
    let y = layout;
    let degrees = [y.tp, y.pp, y.cp, y.dp, y.mbs, y.global_batch];
    if degrees.contains(&0) {
        return Err(Error::invalid("layout", "0", "degrees and batches must be positive"));
    }
    let devices = [y.tp, y.pp, y.cp, y.dp].into_iter().try_fold(1u64, u64::checked_mul).unwrap_or(u64::MAX);
    if devices != scenario.devices {
        return Err(Error::invalid(
            "layout",
            devices,
            format!("tp·pp·cp·dp = {devices} devices; the scenario runs on {}", scenario.devices),
        ));
    }
    if !y.global_batch.is_multiple_of(y.mbs.saturating_mul(y.dp)) {
        return Err(Error::invalid(
            "layout.global_batch",
            y.global_batch,
            format!("must be a multiple of micro-batch × data-parallel = {} × {}", y.mbs, y.dp),
        ));
    }
    let moe = scenario.workload.moe.is_some();
    Ok(Plan {
        tp: y.tp,
        pp: y.pp,
        cp: y.cp,
        dp: y.dp,
        ep: if moe { y.ep.max(1) } else { 1 },
        etp: if moe { y.etp.max(1) } else { 1 },
        mbs: y.mbs,
        global: y.global_batch,
        vpp: if y.pp > 1 { options.interleave.max(1) } else { 1 },
        recompute: options.recompute,
        sharding: options.sharding,
        shard_group: options.shard_group,
        sequence_parallel: options.sequence_parallel && y.tp > 1,
        devices,
        layers: scenario.workload.layers,
        moe,
    })
}

/// The layout and switches of a search's ranked configuration (`global_batch` [samples] is the
/// search's; `options` are the switches the search ran with): what [`emit`] takes.
pub fn choice(
    ranked: &fmperf_core::search::Ranked,
    global_batch: u64,
    options: &ExtendedOptions,
) -> Result<(Layout, ExtendedOptions), Error> {
    let mut layout = Layout::from_candidate(&ranked.candidate, global_batch)?;
    if let Some(x) = ranked.experts {
        layout = layout.with_experts(x.ep, x.etp);
    }
    let options = match ranked.execution {
        Some(e) => e.apply(options),
        None => *options,
    };
    Ok((layout, options))
}

/// Writes `scenario` run with `layout` and `options` as a launch of `target`. With an `input` of the
/// target's family the input is rewritten in place (see the module's doc); otherwise a fresh file is
/// written (and, when an input of another family is given, a note says its other settings are not
/// carried over). Errors: a layout whose devices are not the scenario's, a batch that does not
/// divide, a line of the input that cannot be rewritten without breaking its grammar.
pub fn emit(
    target: Target,
    input: Option<Input<'_>>,
    scenario: &LaunchScenario,
    layout: &Layout,
    options: &ExtendedOptions,
) -> Result<Emitted, Error> {
    let p = plan(scenario, layout, options)?;
    let mut notes = Vec::new();
    let same = input.filter(|i| Target::of_format(i.launch.format) == Some(target));
    if let Some(i) = same {
        let text = match target {
            Target::Megatron => megatron::rewrite(i.text, i.launch, &p, &mut notes)?,
            Target::Nemo => yaml::rewrite(i.text, i.launch, &p, &mut notes)?,
            Target::Torchtitan => torchtitan::rewrite(i.text, i.launch, &p, &mut notes)?,
            Target::MaxText => maxtext::rewrite(i.text, &p, scenario, options, &mut notes)?,
        };
        return Ok(Emitted { text, file_name: best_name(i.name, target), in_place: true, notes });
    }
    if let Some(i) = input {
        notes.not_written(format!(
            "the input is a {}, not a {} file: a fresh file is written with the model and layout; the input's \
             other settings (data, tokenizer files, hyper-parameters, logging) are not carried over",
            i.launch.format.title(),
            target.as_str()
        ));
    }
    let source = input.map_or_else(|| "fmperf's scenario".to_string(), |i| from_what(i));
    let header = Header { source: &source, scenario, plan: &p };
    let text = match target {
        Target::Megatron => megatron_flags::fresh(&header, options, &mut notes),
        Target::Nemo => yaml::fresh(&header, options, &mut notes),
        Target::Torchtitan => torchtitan::fresh(&header, options, &mut notes),
        Target::MaxText => maxtext::fresh(&header, options, &mut notes),
    };
    Ok(Emitted { text, file_name: target.file_name().to_string(), in_place: false, notes })
}

/// [`emit`] for a run read from `files` (the texts [`crate::parse_files`] read into `launch`):
/// one file is rewritten in place when it is of `target`'s family; files read together get a
/// fresh file (their values come from several texts), and a note says so.
pub fn emit_for_files(
    target: Target,
    files: &[crate::Source<'_>],
    launch: &Launch,
    scenario: &LaunchScenario,
    layout: &Layout,
    options: &ExtendedOptions,
) -> Result<Emitted, Error> {
    let input = match files {
        [one] => Some(Input { text: one.text, launch, name: one.name }),
        _ => None,
    };
    let mut e = emit(target, input, scenario, layout, options)?;
    if files.len() > 1 {
        e.notes.not_written(format!(
            "{} files were read together: a fresh {target} file is written, not one of them rewritten",
            files.len()
        ));
    }
    Ok(e)
}

/// Only the keys that carry the layout, in `target`'s syntax, for copying into an existing file:
/// Megatron flags one per line (`--tensor-model-parallel-size 8 \`), NeMo / Bridge YAML keys,
/// torchtitan's `[parallelism]`, `[training]` and `[activation_checkpoint]` tables, MaxText
/// `key=value` overrides. Notes as in [`emit`].
pub fn layout_only(
    target: Target,
    scenario: &LaunchScenario,
    layout: &Layout,
    options: &ExtendedOptions,
) -> Result<Emitted, Error> {
    let p = plan(scenario, layout, options)?;
    let mut notes = Vec::new();
    let text = match target {
        Target::Megatron => megatron_flags::layout_flags(&p, options, &mut notes).join(" \\\n") + "\n",
        Target::Nemo => yaml::layout_keys(&p, &mut notes),
        Target::Torchtitan => torchtitan::layout_tables(&p, scenario, &mut notes),
        Target::MaxText => maxtext::layout_keys(&p, scenario, &mut notes).join(" \\\n") + "\n",
    };
    let file_name = match target {
        Target::Megatron | Target::MaxText => "layout-flags.txt",
        Target::Nemo => "layout.yaml",
        Target::Torchtitan => "layout.toml",
    };
    Ok(Emitted { text, file_name: file_name.into(), in_place: false, notes })
}

/// Every Megatron-LM flag of `scenario` run with `layout` and `options` — model shape, vocabulary
/// (`--tokenizer-type NullTokenizer --vocab-size V`), sequence length, experts, precision and
/// layout — one per line joined by ` \` continuations, for pasting into a script (the page's "copy
/// as Megatron flags"). Notes as in [`emit`].
pub fn megatron_flags(scenario: &LaunchScenario, layout: &Layout, options: &ExtendedOptions) -> Result<Emitted, Error> {
    let p = plan(scenario, layout, options)?;
    let mut notes = Vec::new();
    let source = "fmperf's scenario".to_string();
    let header = Header { source: &source, scenario, plan: &p };
    let text = megatron_flags::all_flags(&header, options, &mut notes).join(" \\\n") + "\n";
    Ok(Emitted { text, file_name: "megatron-flags.txt".into(), in_place: false, notes })
}

/// What a fresh file's header says.
pub(crate) struct Header<'a> {
    /// Where the scenario came from (`megatron-llama3-70b.sh (Megatron-LM launch)`).
    pub source: &'a str,
    pub scenario: &'a LaunchScenario,
    pub plan: &'a Plan,
}

impl Header<'_> {
    /// Comment lines (each starting with `# `): written by fmperf, from what, the layout, and the
    /// `# fmperf:` directive with the system and devices, so that fmperf reads the file back.
    pub fn lines(&self) -> Vec<String> {
        let p = self.plan;
        let s = self.scenario;
        let mut out = vec![
            format!("# Written by fmperf from {}.", self.source),
            format!(
                "# Model: {} ({} blocks, width {}, sequence {}).",
                s.model_name, p.layers, s.workload.hidden, s.workload.seq_len
            ),
            format!(
                "# Layout: tp {} · pp {} · cp {} · dp {} · mbs {} · global batch {} · vpp {} · recompute {} · sharding {}{}.",
                p.tp,
                p.pp,
                p.cp,
                p.dp,
                p.mbs,
                p.global,
                p.vpp,
                p.recompute.as_str(),
                p.sharding.as_str(),
                if p.moe { format!(" · ep {} · etp {}", p.ep, p.etp) } else { String::new() }
            ),
        ];
        let mut directive = format!("# fmperf: gpus={}", p.devices);
        if let Some(sys) = &s.system
            && !sys.contains(char::is_whitespace)
        {
            directive = format!("# fmperf: system={sys} gpus={}", p.devices);
        }
        out.push(directive);
        out
    }
}

/// `name (title)` of an input, for headers.
fn from_what(i: Input<'_>) -> String {
    match i.name {
        Some(n) => format!("{n} ({})", i.launch.format.title()),
        None => format!("a {}", i.launch.format.title()),
    }
}

/// The input's name with `-best` before its extension, or the target's fresh name.
fn best_name(name: Option<&str>, target: Target) -> String {
    let Some(n) = name else {
        return target.file_name().to_string();
    };
    let base = n.rsplit(['/', '\\']).next().unwrap_or(n);
    match base.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => format!("{stem}-best.{ext}"),
        _ => format!("{base}-best"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_and_names() {
        for t in Target::ALL {
            assert_eq!(Target::parse(t.as_str()).unwrap(), t);
        }
        assert_eq!(Target::parse("Bridge").unwrap(), Target::Nemo);
        assert_eq!(Target::parse("deepspeed").unwrap_err().field(), Some("--emit"));
        assert_eq!(best_name(Some("examples/launch/run.sh"), Target::Megatron), "run-best.sh");
        assert_eq!(best_name(Some("job"), Target::Torchtitan), "job-best");
        assert_eq!(best_name(None, Target::Torchtitan), "best.toml");
    }
}
