//! Megatron-LM launches: the flags of `pretrain_gpt.py` (and NeMo's Megatron scripts) in a command
//! line or a shell script, `--flag value` and `--flag=value`, with the launcher's device count
//! (`torchrun --nproc_per_node N --nnodes M`, `#SBATCH --nodes`/`--gpus-per-node`).
//!
//! The flags fmperf reads are matched by name in [`apply`] (`flags`), which the NeMo /
//! Megatron-Bridge YAML reader shares (its keys are the same names with underscores); what several
//! flags decide together is read at the end by [`finish`] (`combined`). Megatron's defaults where a flag
//! is absent (from `megatron/training/arguments.py`): FP32 training without `--bf16`/`--fp16`, no
//! recomputation, no sequence parallelism, a replicated optimizer without
//! `--use-distributed-optimizer`, tied embedding and output weights without
//! `--untie-embeddings-and-output-weights`, `--num-query-groups` used only with
//! `--group-query-attention`, a vocabulary padded to a multiple of `128·tp`, a micro-batch and a
//! global batch that the file must state.

pub(crate) use self::combined::finish;
pub(crate) use self::flags::{apply, is_parallel_degree};
pub(crate) use self::unused::irrelevant;
use super::settings::SettingOrigin;
use super::shell::{self, Word};
use super::{Format, Launch, why};
use flags::{MULTI_VALUE, SWITCHES};
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::Sharding;
use fmperf_core::vocab::NoteList;

mod launcher;
#[path = "../tokenizer.rs"]
pub mod tokenizer;
mod trainer;
use launcher::{explain_unknown, launcher, unknown_value};
mod unused;

/// Puts a value into a slot, noting when it replaces a different earlier one.
macro_rules! put {
    ($l:expr, $slot:ident $(. $more:ident)*, $v:expr, $o:expr) => {{
        let r = $l.settings.$slot$(.$more)*.put($v, $o);
        $crate::megatron::note_replaced($l, r, $o);
    }};
}

// After the macro, which they use.
mod combined;
mod flags;

/// Values that are read together at the end (a flag's meaning depends on another).
#[derive(Debug, Clone, Default)]
pub(crate) struct Pending {
    /// `--group-query-attention` seen.
    gqa: Option<bool>,
    /// `--num-query-groups` value and origin.
    query_groups: Option<(u64, SettingOrigin, String)>,
    /// `--recompute-granularity`.
    granularity: Option<(String, SettingOrigin)>,
    /// `--recompute-method`.
    method: Option<(String, SettingOrigin)>,
    /// `--recompute-num-layers`.
    recompute_layers: Option<(u64, SettingOrigin)>,
    /// `--tokenizer-type`.
    tokenizer_type: Option<(String, SettingOrigin)>,
    /// `--tokenizer-model` (a name or a path).
    tokenizer_model: Option<(String, SettingOrigin)>,
    /// 16-bit format (`--bf16`, `--fp16`, NeMo's `precision`).
    half: Option<(Precision, SettingOrigin)>,
    /// FP8 linear layers (`--fp8-format`).
    fp8: Option<(String, SettingOrigin)>,
    /// Megatron-DeepSpeed's `--deepspeed` (DeepSpeed runs the optimizer).
    deepspeed: Option<SettingOrigin>,
    /// A Hugging Face Trainer launch (`--per_device_train_batch_size`, `--model_name_or_path`).
    trainer: bool,
    /// The Trainer's `--deepspeed ds_config.json` is given (its precision is the JSON's).
    ds_json: bool,
    /// The flags of a file that another script sources (no command): no defaults of a run.
    partial: bool,
    /// A flag of this reader was read (else the command is not a Megatron or Trainer run and
    /// none of their defaults apply).
    read_any: bool,
    /// Sequence-to-sequence lengths of a Trainer script (`--max_source_length`,
    /// `--max_target_length`): prompt and answer, concatenated for a decoder-only model.
    source_len: Option<(u64, SettingOrigin)>,
    target_len: Option<(u64, SettingOrigin)>,
    /// `--vocab-file` (its name may say the vocabulary: `gpt2-vocab.json`).
    vocab_file: Option<(String, SettingOrigin)>,
    /// Megatron-DeepSpeed's `--zero-stage`, as the sharding it names.
    zero_stage: Option<(Sharding, SettingOrigin)>,
}

/// Reads a Megatron-LM launch: a script or a command line (or a pasted list of flags).
pub fn parse(text: &str) -> Result<Launch, Error> {
    parse_args(text, &[])
}

/// Reads a Megatron-LM launch script run with the positional parameters `args` (`$1`, `$2`, …).
pub fn parse_args(text: &str, args: &[String]) -> Result<Launch, Error> {
    let cmd = shell::read(text, args, &carries_training_flags)?;
    if cmd.args.is_empty() {
        return Err(Error::Parse {
            message: "no training command found: expected `pretrain_gpt.py` (or another .py script) followed by \
                      Megatron flags such as --num-layers"
                .into(),
        });
    }
    let mut l = Launch::new(Format::Megatron);
    l.notes.extend(cmd.notes.iter().cloned());
    let mut p = Pending { partial: cmd.from_variables, ..Pending::default() };
    launcher(&mut l, &cmd.launcher, &cmd.sbatch)?;
    let args = &cmd.args;
    p.trainer = args.iter().any(|w| {
        w.text
            .strip_prefix("--")
            .is_some_and(|f| trainer::is_trainer_flag(&f.split('=').next().unwrap_or("").replace('_', "-")))
    });
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        i += 1;
        let Some(flag) = w.text.strip_prefix("--") else {
            if let Some((k, v)) = w.text.split_once('=')
                && k.contains('.')
            {
                // A Hydra override of a NeMo script (`model.tensor_model_parallel_size=8`).
                let o = SettingOrigin::new(k, w.line);
                super::nemo::apply_key(&mut l, &mut p, k, v, &o)?;
                continue;
            }
            if w.text.starts_with('-') {
                l.unused(&w.text, "", why::UNKNOWN);
            } else {
                l.unused(&w.text, "", "a word without a flag; not used");
            }
            continue;
        };
        // Flags are matched with dashes (`--tensor_model_parallel_size` is
        // `--tensor-model-parallel-size`, as argparse and HfArgumentParser accept both) and keep
        // the spelling written in messages.
        let (written, value) = match flag.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => {
                let dashed = flag.replace('_', "-");
                let next = args.get(i).filter(|n| !n.text.starts_with("--"));
                let boolean_next = next.is_some_and(|n| matches!(n.text.as_str(), "True" | "False" | "true" | "false"));
                let path_next = next.is_some_and(|n| {
                    dashed == "deepspeed" && (n.text.ends_with(".json") || n.text.contains('/') || n.text.contains('$'))
                });
                match next {
                    Some(next) if !SWITCHES.contains(&dashed.as_str()) || boolean_next || path_next => {
                        i += 1;
                        let mut v = next.text.clone();
                        // Flags of several values (`--rampup-batch-size 192 16 9_765_625`, data
                        // paths with weights) take every word up to the next flag.
                        while MULTI_VALUE.contains(&dashed.as_str())
                            && args.get(i).is_some_and(|n| !n.text.starts_with('-'))
                        {
                            v = format!("{v} {}", args[i].text);
                            i += 1;
                        }
                        (flag.to_string(), Some(v))
                    }
                    _ => (flag.to_string(), None),
                }
            }
        };
        let name = written.replace('_', "-");
        let o = SettingOrigin::new(format!("--{written}"), w.line);
        if let Some(v) = value.as_deref() {
            unknown_value(v, &o)?;
        }
        let read = if p.trainer && trainer::apply(&mut l, &mut p, &name, value.as_deref(), &o)? {
            true
        } else {
            apply(&mut l, &mut p, &name, value.as_deref(), &o).map_err(|e| explain_unknown(e, value.as_deref(), &o))?
        };
        p.read_any |= read;
        if !read {
            let why = irrelevant(&name).or_else(|| trainer::irrelevant(&name));
            // A parallel degree fmperf does not know would split the devices differently from the
            // run: refused by name, never listed as unused (the data-parallel degree would be wrong).
            if why.is_none() && is_parallel_degree(&name) && value.as_deref().is_some_and(|v| v.trim() != "1") {
                return Err(o.error(
                    value.unwrap_or_default(),
                    "a parallel degree fmperf's reader does not know: the devices would be split differently \
                     from the run's, so the file is not estimated",
                ));
            }
            l.unused(format!("--{written}"), value.unwrap_or_default(), why.unwrap_or(why::UNKNOWN));
        }
    }
    if p.trainer {
        if let (Some((a, ao)), Some((b, _)), None) = (&p.source_len, &p.target_len, l.settings.seq_len.get()) {
            l.settings.seq_len.put(a + b, ao);
            l.notes.reading_of("--max_source_length", format!(
                "sequence length {} = --max_source_length {a} + --max_target_length {b} (prompt and answer in one sequence)",
                a + b
            ));
        }
        for (slot, key) in [(&mut l.settings.tp, "tp"), (&mut l.settings.pp, "pp")] {
            if slot.get().is_none() {
                slot.put(1, &SettingOrigin::new(format!("(Hugging Face Trainer: {key})"), 0));
            }
        }
        l.notes.reading(
            "a Hugging Face Trainer launch: data parallel over every device (tensor and pipeline parallel 1), \
             the model's shape from its config.json (a second --from)"
                .into(),
        );
    }
    finish(&mut l, p)?;
    Ok(l)
}

/// The Hugging Face Trainer's per-key rules for the Trainer YAML reader ([`crate::trainer_yaml`]):
/// the same [`trainer::apply`] and [`finish`] as the Trainer's flags, keys given with dashes.
#[derive(Debug, Default)]
pub(crate) struct TrainerKeys(Pending);

impl TrainerKeys {
    /// A reading of Trainer arguments.
    pub(crate) fn new() -> TrainerKeys {
        TrainerKeys(Pending { trainer: true, read_any: true, ..Pending::default() })
    }
    /// Reads one argument (`name` with dashes); `Ok(false)`: not one the Trainer rules read.
    pub(crate) fn apply(&mut self, l: &mut Launch, name: &str, value: &str, o: &SettingOrigin) -> Result<bool, Error> {
        trainer::apply(l, &mut self.0, name, Some(value), o)
    }
    /// Why an argument not read does not matter, if the Trainer rules know it.
    pub(crate) fn irrelevant(name: &str) -> Option<&'static str> {
        trainer::irrelevant(name).or_else(|| irrelevant(name))
    }
    /// Whether gradient checkpointing or a 16-bit format was given.
    pub(crate) fn given(&self) -> (bool, bool) {
        (self.0.granularity.is_some(), self.0.half.is_some())
    }
    /// Reads what depends on several arguments (recomputation, precision).
    pub(crate) fn finish(self, l: &mut Launch) -> Result<(), Error> {
        finish(l, self.0)
    }
}

pub(super) fn note_replaced(l: &mut Launch, replaced: Option<SettingOrigin>, now: &SettingOrigin) {
    if let Some(old) = replaced {
        l.notes.reading_of(
            &now.key,
            format!(
                "{} (line {}) replaces the value of {} (line {}): the later one is used",
                now.key, now.line, old.key, old.line
            ),
        );
    }
}

/// Whether a command's words carry a flag this reader uses: the training command among the
/// Python commands of a script (a data preparation or a conversion before it carries none).
fn carries_training_flags(args: &[Word]) -> bool {
    args.iter().any(|w| {
        let Some(flag) = w.text.strip_prefix("--") else { return false };
        let name = flag.split('=').next().unwrap_or("").replace('_', "-");
        let mut scratch = Launch::new(Format::Megatron);
        let mut p = Pending::default();
        matches!(apply(&mut scratch, &mut p, &name, Some("1"), &SettingOrigin::new("", 0)), Ok(true) | Err(_))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fmperf_core::extended::Recompute;

    #[test]
    fn reads_flags_both_forms_and_lists_the_rest() {
        let l = parse(
            "torchrun --nproc_per_node 8 --nnodes 2 --master_addr host pretrain_gpt.py \
             --num-layers=4 --hidden-size 256 --num-attention-heads 8 --group-query-attention \
             --num-query-groups 2 --swiglu --seq-length 1024 --micro-batch-size 1 --global-batch-size 32 \
             --bf16 --tensor-model-parallel-size 2 --save-interval 100 --lr 3e-4 --vocab-size 32000 --frobnicate 3",
        )
        .unwrap();
        let s = &l.settings;
        assert_eq!((s.layers.copied(), s.hidden.copied(), s.kv_heads.copied()), (Some(4), Some(256), Some(2)));
        assert_eq!((s.devices_per_node.copied(), s.nodes.copied()), (Some(8), Some(2)));
        assert_eq!(s.precision.copied(), Some(Precision::Bf16));
        assert_eq!(s.recompute.copied(), Some(Recompute::None));
        let keys: Vec<&str> = l.unused.iter().map(|u| u.key.as_str()).collect();
        assert_eq!(keys, ["--master_addr", "--save-interval", "--lr", "--frobnicate"]);
        assert_eq!(l.unused[1].why, why::CHECKPOINT);
        assert_eq!(l.unused[3].why, why::UNKNOWN);
    }
}
