//! # fmperf-launch
//!
//! "Your configuration as the input": readers for the files people launch training runs with,
//! turned into one typed [`Launch`] that fmperf can evaluate (see [`scenario`] and [`estimate`]).
//!
//! Formats ([`Format`], detected by [`detect`]):
//! * a **Megatron-LM / NeMo launch** command line or shell script ([`megatron`], with the shell
//!   words read by [`shell`]: line continuations, variables, arrays, `$((…))` arithmetic);
//! * a **NeMo / Megatron-Bridge YAML** ([`nemo`], read by the YAML subset of [`yaml`]);
//! * a **torchtitan TOML** ([`torchtitan`], read by the TOML subset of [`toml`]);
//! * a **Hugging Face `config.json`** ([`hf`]): the model shape only.
//!
//! Pure parsing: text in, [`Launch`] out, no I/O. Every flag or key is accounted for: it is read
//! into a [`Settings`] field, or listed in [`Launch::unused`] with why fmperf does not use it
//! ("does not affect performance" for logging, checkpoints, data paths, …); a value fmperf cannot
//! read is an [`Error`] naming the flag or key, its line and the rule.

pub mod best;
pub mod deepspeed;
pub mod emit;
pub mod estimate;
pub mod experts;
pub mod hf;
pub mod hub_models;
/// Megatron-LM's per-block 0/1 lists (in core: the validate readers read them too).
pub use fmperf_core::layer_list;
pub mod logs;
pub mod maxtext;
pub mod megatron;
pub mod merge;
pub mod model_document;
pub mod moe_host;
pub mod nemo;
pub mod omegaconf;
pub mod scenario;
pub mod settings;
pub mod shell;
pub mod stack_memory;
pub mod summary;
pub mod switch_overrides;
pub mod toml;
pub mod torchtitan;
pub mod trainer_yaml;
pub mod window;
pub mod yaml;

pub use estimate::{Estimate, MemoryVerdict, Rank, estimate, estimate_files, estimate_text, hardware, rank};
pub use scenario::{LaunchScenario, ModelOnly, Overrides, catalog_model};
pub use settings::{Moe, Settings, Slot};

use fmperf_core::Error;
use fmperf_core::vocab::Note;

/// The kind of file a configuration came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// A Megatron-LM (or NeMo's Megatron) launch: `pretrain_gpt.py` with its flags, in a command
    /// line or a shell script.
    Megatron,
    /// A NeMo (1.x `megatron_gpt_config.yaml` style) or Megatron-Bridge YAML configuration.
    NemoYaml,
    /// A torchtitan job TOML.
    Torchtitan,
    /// A Hugging Face `config.json` (the model only).
    HfConfig,
    /// A MaxText configuration: a YAML (`base.yml`, a model file `configs/models/*.yml`) and/or a
    /// command line of `key=value` overrides (`python3 -m MaxText.train base.yml key=value …`).
    MaxText,
    /// A DeepSpeed JSON (`ds_config.json`): batch, ZeRO stage, precision; read together with the
    /// launch that names it.
    DeepSpeed,
    /// A Hugging Face Trainer YAML (`TrainingArguments` keys: LLaMA-Factory, alignment-handbook /
    /// TRL recipes) or an Accelerate config YAML (`distributed_type`, `num_processes`).
    TrainerYaml,
}

impl Format {
    /// Every format, in detection order.
    pub const ALL: [Format; 7] = [
        Format::HfConfig,
        Format::DeepSpeed,
        Format::Torchtitan,
        Format::MaxText,
        Format::TrainerYaml,
        Format::NemoYaml,
        Format::Megatron,
    ];

    /// The name used by the CLI and the page (`megatron`, `nemo-yaml`, `torchtitan`, `hf-config`).
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Megatron => "megatron",
            Format::NemoYaml => "nemo-yaml",
            Format::Torchtitan => "torchtitan",
            Format::HfConfig => "hf-config",
            Format::MaxText => "maxtext",
            Format::DeepSpeed => "deepspeed-json",
            Format::TrainerYaml => "hf-trainer-yaml",
        }
    }

    /// A title for display.
    pub fn title(self) -> &'static str {
        match self {
            Format::Megatron => "Megatron-LM launch",
            Format::NemoYaml => "NeMo / Megatron-Bridge YAML",
            Format::Torchtitan => "torchtitan TOML",
            Format::HfConfig => "Hugging Face config.json",
            Format::MaxText => "MaxText config",
            Format::DeepSpeed => "DeepSpeed JSON",
            Format::TrainerYaml => "Hugging Face Trainer / Accelerate YAML",
        }
    }
}

/// A flag or key fmperf reads but does not use, with its value and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unused {
    /// The flag or key as written (`--save-interval`, `training.steps`).
    pub key: String,
    /// Its value as written (empty for a switch without a value).
    pub value: String,
    /// Why fmperf does not use it: "does not affect performance (…)" or what is not modelled.
    pub why: String,
}

/// A configuration file, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// The format it was read as.
    pub format: Format,
    /// What the file says that fmperf uses.
    pub settings: Settings,
    /// Every flag or key fmperf does not use, in file order.
    pub unused: Vec<Unused>,
    /// How a value was read where the reading needed a rule (defaults of the framework, a
    /// flavour's shape, a value given twice), in words.
    pub notes: Vec<Note>,
}

impl Launch {
    /// An empty reading of `format`.
    pub fn new(format: Format) -> Launch {
        Launch { format, settings: Settings::default(), unused: Vec::new(), notes: Vec::new() }
    }

    /// Lists `key = value` as unused for `why`.
    pub fn unused(&mut self, key: impl Into<String>, value: impl Into<String>, why: impl Into<String>) {
        self.unused.push(Unused { key: key.into(), value: value.into(), why: why.into() });
    }
}

/// Why-texts shared by the readers.
pub mod why {
    /// Logging, metrics, profiling.
    pub const LOGGING: &str = "does not affect performance (logging)";
    /// Checkpoint saving and loading.
    pub const CHECKPOINT: &str = "does not affect performance (checkpointing; its time between steps is not modelled)";
    /// Data paths and loaders.
    pub const DATA: &str = "does not affect performance (data and tokenizer files)";
    /// Learning-rate schedule, optimizer hyper-parameters, initialisation, regularisation.
    pub const HYPERPARAMETER: &str = "does not affect performance (training hyper-parameter)";
    /// How long to train.
    pub const LENGTH: &str = "does not affect time per step (run length)";
    /// Evaluation during training.
    pub const EVALUATION: &str = "does not affect time per training step (evaluation)";
    /// Process setup, timeouts, paths of the job.
    pub const JOB: &str = "does not affect performance (job setup)";
    /// A kernel or runtime choice fmperf does not model separately.
    pub const KERNEL: &str = "affects performance, not modelled: fmperf prices fused kernels at its fitted efficiency";
    /// A setting fmperf's model already assumes.
    pub const ASSUMED: &str = "already what fmperf assumes";
    /// A flag this reader does not know.
    pub const UNKNOWN: &str = "not known to fmperf's reader; not used";
}

/// Guesses the format of `text` (`name`, a file name, may help: `.toml`, `.yaml`/`.yml`,
/// `config.json`): JSON objects are Hugging Face configs; TOML tables (`[training]`) are
/// torchtitan; text naming `pretrain_*.py` or Megatron flags is a launch; `key:` lines are YAML.
pub fn detect(text: &str, name: Option<&str>) -> Result<Format, Error> {
    let lower = name.unwrap_or("").to_ascii_lowercase();
    if lower.ends_with(".json") || text.trim_start().starts_with('{') {
        return Ok(if deepspeed::looks_like(text) { Format::DeepSpeed } else { Format::HfConfig });
    }
    if maxtext::looks_like(text) {
        return Ok(Format::MaxText);
    }
    if lower.ends_with(".toml") {
        return Ok(Format::Torchtitan);
    }
    let yaml_name = lower.ends_with(".yaml") || lower.ends_with(".yml") || !lower.contains('.');
    if yaml_name && trainer_yaml::looks_like(text) {
        return Ok(Format::TrainerYaml);
    }
    if lower.ends_with(".yaml") || lower.ends_with(".yml") {
        return Ok(Format::NemoYaml);
    }
    let body: Vec<&str> =
        text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("//")).collect();
    let Some(first) = body.first() else {
        return Err(Error::Parse { message: "the file is empty (no flags or keys)".into() });
    };
    if first.starts_with('{') {
        return Ok(Format::HfConfig);
    }
    if first.starts_with('[') && first.ends_with(']') {
        return Ok(Format::Torchtitan);
    }
    if text.contains("pretrain_") || text.contains("--tensor-model-parallel-size") || text.contains("--num-layers") {
        return Ok(Format::Megatron);
    }
    if body.iter().any(|l| l.starts_with("--") || l.contains(" --")) {
        return Ok(Format::Megatron);
    }
    if body.iter().any(|l| yaml::looks_like_mapping_line(l)) {
        return Ok(Format::NemoYaml);
    }
    Err(Error::Parse {
        message: "not a format fmperf reads: expected a Megatron-LM launch (pretrain_gpt.py flags), a NeMo / \
                  Megatron-Bridge YAML, a torchtitan TOML or a Hugging Face config.json"
            .into(),
    })
}

/// Reads `text` in `format` (see [`detect`]).
pub fn parse_as(format: Format, text: &str) -> Result<Launch, Error> {
    parse_as_with(format, text, &[])
}

/// Reads `text` in `format` with the positional parameters a user passes to a script (`$1`, `$2`,
/// …: `fmperf estimate --from run.sh -- dlc A3B 1 8`). Only shell scripts and MaxText command
/// lines take them; for other formats non-empty `args` are an error, never ignored.
pub fn parse_as_with(format: Format, text: &str, args: &[String]) -> Result<Launch, Error> {
    if !args.is_empty() && !matches!(format, Format::Megatron | Format::MaxText) {
        return Err(Error::invalid(
            "--",
            args.join(" "),
            format!("a {} takes no positional arguments; they are for shell scripts", format.title()),
        ));
    }
    Ok(settle_experts(read_one(format, text, args)?))
}

/// One file read by its format's reader, with its `# fmperf:` directives; its expert settings are
/// left as read (see [`settle_experts`]: several files are settled once merged).
fn read_one(format: Format, text: &str, args: &[String]) -> Result<Launch, Error> {
    let mut launch = match format {
        Format::Megatron => megatron::parse_args(text, args)?,
        Format::NemoYaml => nemo::parse(text)?,
        Format::Torchtitan => torchtitan::parse(text)?,
        Format::HfConfig => hf::parse(text)?,
        Format::MaxText => maxtext::parse(text, args)?,
        Format::DeepSpeed => deepspeed::parse(text)?,
        Format::TrainerYaml => trainer_yaml::parse(text)?,
    };
    directives(text, &mut launch)?;
    Ok(launch)
}

/// Expert settings of a dense model listed as without effect (not silently kept); an MoE model's
/// accounted for.
fn settle_experts(mut launch: Launch) -> Launch {
    if !launch.settings.moe.is_moe() {
        // Expert settings of a dense model change nothing: listed, not silently kept. CUDA graphs
        // do change a dense run, but fmperf prices them only in an MoE layer's host calls.
        let m = &launch.settings.moe;
        let graphs = [m.graph_impl.origin.clone(), m.graph_modules.origin.clone()];
        for (o, v) in m.given() {
            let why = if graphs.contains(&Some(o.clone())) {
                "affects performance, not modelled for a dense model: fmperf prices CUDA graphs in an MoE layer's \
                 host calls only"
            } else {
                "no effect: the model has no routed experts (dense)"
            };
            launch.unused(o.key, v, why);
        }
        launch.settings.moe = Moe::default();
    } else {
        experts::account(&mut launch);
    }
    launch
}

/// Detects the format of `text` and reads it.
pub fn parse(text: &str, name: Option<&str>) -> Result<Launch, Error> {
    parse_as(detect(text, name)?, text)
}

/// `e` with the file it is about named first (several files read together).
pub fn in_file(e: Error, file: &str) -> Error {
    match e {
        Error::Parse { message } => Error::Parse { message: format!("{file}: {message}") },
        Error::InvalidField { field, value, rule, hint } if !rule.starts_with(file) => {
            Error::InvalidField { field, value, rule: format!("{file}: {rule}"), hint }
        }
        Error::MissingField { field } => Error::MissingField { field: format!("{field} (in {file})") },
        other => other,
    }
}

/// One file given to [`parse_files`]: its name (for detection and messages) and its text.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// The file's name or path as the user gave it.
    pub name: Option<&'a str>,
    /// Its text.
    pub text: &'a str,
}

/// Reads several files as one run (a launch script and its DeepSpeed JSON, a torchtitan TOML and
/// the model's `config.json`, a MaxText command line and its model file), with the positional
/// parameters `args` for the script among them. Each file is read on its own, then merged by
/// [`merge::merge`]: a setting one file leaves out is taken from another; two files that give a
/// setting different values are an error naming both. The result has the format of the first file
/// that states a layout (else the first file's); its unused keys and notes are every file's, each
/// prefixed by the file's name when there are several.
pub fn parse_files(sources: &[Source<'_>], args: &[String]) -> Result<Launch, Error> {
    let Some(first) = sources.first() else {
        return Err(Error::MissingField { field: "--from".into() });
    };
    if sources.len() == 1 {
        return parse_as_with(detect(first.text, first.name)?, first.text, args);
    }
    let mut read: Vec<(String, Launch)> = Vec::with_capacity(sources.len());
    let mut args_taken = false;
    // MaxText's files are one configuration with MaxText's own precedence (config YAML, model
    // file, command line): read together, not merged as separate readings.
    let maxtext: Vec<(Option<&str>, &str)> = sources
        .iter()
        .filter(|s| matches!(detect(s.text, s.name), Ok(Format::MaxText)))
        .map(|s| (s.name, s.text))
        .collect();
    for (i, src) in sources.iter().enumerate() {
        let name = src.name.map_or_else(|| format!("file {}", i + 1), str::to_string);
        let format = detect(src.text, src.name).map_err(|e| in_file(e, &name))?;
        let takes_args = matches!(format, Format::Megatron | Format::MaxText) && !args_taken;
        args_taken |= takes_args;
        let mine: &[String] = if takes_args { args } else { &[] };
        if format == Format::MaxText && maxtext.len() > 1 {
            if maxtext.first().is_some_and(|(n, t)| *n == src.name && std::ptr::eq(*t, src.text)) {
                let texts: Vec<&str> = maxtext.iter().map(|(_, t)| *t).collect();
                let mut l = maxtext::parse_sources(&maxtext, mine)?;
                for text in &texts {
                    directives(text, &mut l)?;
                }
                read.push((format!("MaxText ({} files)", maxtext.len()), l));
            }
            continue;
        }
        let mut l = read_one(format, src.text, mine).map_err(|e| in_file(e, &name))?;
        merge::tag_file(&mut l.settings, &name);
        read.push((name, l));
    }
    if !args.is_empty() && !args_taken {
        return Err(Error::invalid(
            "--",
            args.join(" "),
            "none of the files is a shell script or a MaxText command line",
        ));
    }
    let primary = read
        .iter()
        .position(|(_, l)| merge::has_layout(&l.settings) && !matches!(l.format, Format::DeepSpeed | Format::HfConfig))
        .or_else(|| read.iter().position(|(_, l)| merge::has_layout(&l.settings)))
        .unwrap_or(0);
    let (pname, mut out) = read[primary].clone();
    let prefix = |name: &str, t: &str| format!("{name}: {t}");
    out.unused.iter_mut().for_each(|u| u.key = prefix(&pname, &u.key));
    out.notes.iter_mut().for_each(|n| n.text = prefix(&pname, n));
    for (i, (name, l)) in read.iter().enumerate() {
        if i == primary {
            continue;
        }
        merge::merge(&mut out.settings, &l.settings)?;
        out.unused.extend(l.unused.iter().map(|u| Unused { key: prefix(name, &u.key), ..u.clone() }));
        out.notes.extend(l.notes.iter().map(|n| Note { text: prefix(name, n), ..n.clone() }));
    }
    // Expert settings settled over the merged model (a launch's expert degrees with the experts of
    // a sourced file or a config.json).
    Ok(settle_experts(out))
}

/// Reads fmperf's own comment directives, which any format may carry on a comment line:
/// `# fmperf: system=<catalog id or spec> gpus=<N>` (the system and device count the file is meant
/// for, when the file itself cannot say).
fn directives(text: &str, launch: &mut Launch) -> Result<(), Error> {
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let Some(rest) = t.strip_prefix('#').map(str::trim_start).and_then(|r| r.strip_prefix("fmperf:")) else {
            continue;
        };
        let origin = settings::SettingOrigin::new("# fmperf:", i + 1);
        for word in rest.split_whitespace() {
            let Some((k, v)) = word.split_once('=') else {
                return Err(Error::invalid("# fmperf:", word, format!("line {}: directives are key=value", i + 1)));
            };
            match k {
                "system" => _ = launch.settings.system.put(v.to_string(), &origin.with_key("# fmperf: system")),
                "gpus" => {
                    let o = origin.with_key("# fmperf: gpus");
                    let n = settings::positive(v, &o)?;
                    _ = launch.settings.devices.put(n, &o)
                }
                other => {
                    return Err(Error::invalid(
                        format!("# fmperf: {other}"),
                        v,
                        format!("line {}: the directives are system= and gpus=", i + 1),
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_each_format() {
        assert_eq!(detect("{\"hidden_size\": 8}", None).unwrap(), Format::HfConfig);
        assert_eq!(detect("# job\n[training]\nseq_len = 8\n", None).unwrap(), Format::Torchtitan);
        assert_eq!(detect("torchrun pretrain_gpt.py --num-layers 2", None).unwrap(), Format::Megatron);
        assert_eq!(detect("model:\n  num_layers: 2\n", None).unwrap(), Format::NemoYaml);
        assert_eq!(detect("anything", Some("job.toml")).unwrap(), Format::Torchtitan);
        assert!(detect("   \n# only a comment\n", None).is_err());
        assert!(detect("hello world", None).is_err());
    }

    #[test]
    fn directives_name_system_and_devices() {
        let l = parse("# fmperf: system=nvidia_h100_sxm5_80gb gpus=16\n{\"hidden_size\": 8}", Some("c.json"));
        // The HF reader rejects the comment line: JSON has no comments.
        assert!(l.is_err());
        let l = parse("# fmperf: system=h100 gpus=16\n[model]\nflavor = \"8B\"\n", None).unwrap();
        assert_eq!(l.settings.system.get().map(String::as_str), Some("h100"));
        assert_eq!(l.settings.devices.get(), Some(&16));
        let e = parse("# fmperf: gpus=zero\n[model]\nflavor = \"8B\"\n", None).unwrap_err();
        assert_eq!(e.field(), Some("# fmperf: gpus"));
        // Expert settings of a dense model are listed as without effect.
        let l = parse("python pretrain_gpt.py --num-layers 2 --expert-model-parallel-size 4 --num-experts 1", None)
            .unwrap();
        let keys: Vec<&str> = l.unused.iter().map(|u| u.key.as_str()).collect();
        assert_eq!(keys, ["--num-experts", "--expert-model-parallel-size"]);
        assert_eq!(e.field(), Some("# fmperf: gpus"));
    }
}
