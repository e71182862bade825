//! Why a measured row is skipped or refused: the reasons validation gives, typed
//! ([`RowReason`]), each shown in the words a report writes ([`std::fmt::Display`]) and, where the
//! reason is about one field of the row, naming it ([`RowReason::field`]). Also why a file of
//! mixture-of-experts rows cannot be read at all ([`UnreadFile`]).

use super::convention::UncountedFlops;
use super::hardware_words::UnreadHardware;
use super::plausible::Implausible;
use crate::Error;
use crate::catalog::Precision;
use crate::vocab::MetricKind;
use std::fmt;

/// Why a measured row (dense or mixture-of-experts) is not evaluated, or not by one mode.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RowReason {
    /// Shape numbers the row leaves null (`model.layers`, …), by their names in `model`.
    ShapeNotStated {
        /// The null fields, in the order checked.
        missing: Vec<&'static str>,
    },
    /// Neither `hardware_id` nor `hardware` is stated.
    HardwareNotStated,
    /// The hardware words name no part of the catalog.
    UnreadHardware(UnreadHardware),
    /// The row states expert parallelism, which the dense reader does not model.
    ExpertParallel,
    /// A product of parallel degrees or batch sizes overflows what is evaluated.
    TooLarge,
    /// Neither `parallel.dp` nor `num_devices` is stated.
    DataParallelAbsent,
    /// No global batch and `pp > 1`: the pipeline bubble depends on it.
    GlobalBatchAbsent,
    /// The layout breaks a rule of extended mode's configuration.
    Configuration(Error),
    /// No time figure can be read (the reason inside), and no memory figure or outcome is stated.
    NoFigure(Box<RowReason>),
    /// The measured figure is above what the part can do.
    Implausible(Implausible),
    /// The part cannot be mapped for extended mode (`hardware: …`), or a MoE row's part is not a
    /// catalog id.
    Hardware(Error),
    /// Reference mode cannot map the part.
    ReferenceCannotMap(Error),
    /// Reference mode cannot evaluate the configuration.
    ReferenceCannotEvaluate(Error),
    /// Extended mode cannot evaluate the configuration.
    ExtendedCannotEvaluate(Error),
    /// The row has no time figure to compare with.
    NoTimeFigure,
    /// An MFU or HFU figure of a part whose dense peak is neither stated nor in the catalog.
    NoPeak {
        /// The figure's kind (MFU or HFU).
        kind: MetricKind,
        /// The row's precision.
        precision: Precision,
        /// The catalog id of the part.
        system: String,
    },
    /// The row's FLOP convention needs a number the row leaves null.
    UncountedFlops(UncountedFlops),
    /// None of the measured figures is stated.
    NoMeasuredFigure,
    /// `measured.metric.kind` names no figure fmperf knows.
    UnknownMetricKind {
        /// The kind as written.
        kind: String,
    },
    /// `measured.metric` has no value and its kind's field is null.
    NoMetricValue {
        /// The figure's kind.
        kind: MetricKind,
    },
    /// A field the row needs is absent (MoE rows: `model.layers`, `hardware_id`, …; dotted).
    NotStated {
        /// The field's dotted path.
        field: String,
    },
    /// A number written as text (MoE rows).
    NotANumber {
        /// The field's dotted path, as the file spells its key.
        field: String,
        /// The value as the file writes it (JSON).
        value: String,
    },
    /// A MoE layer step that is neither a whole number of layers nor a 0/1 list of a pattern
    /// fmperf models (`k` dense blocks, then every `n`-th MoE).
    LayerStepNotWhole {
        /// The field's dotted path, as the file spells its key.
        field: String,
        /// The rule the value breaks, in words.
        rule: String,
    },
    /// `shared_experts` without `shared_ffn_hidden`.
    SharedExpertsWithoutWidth,
    /// The MoE model breaks a rule of the workload.
    Model(Error),
    /// The row's precision is FP8 and its part lists no FP8 rate.
    NoFp8Rate {
        /// The catalog id of the part.
        system: String,
    },
    /// The parallel degrees overflow (MoE rows).
    DegreesTooLarge,
    /// `parallel.dp` not stated and `num_devices` not a multiple of `tp·pp·cp`.
    DevicesNotDivisible {
        /// `num_devices` as stated.
        devices: u64,
    },
    /// Neither `parallel.dp` nor `num_devices` is stated (MoE rows).
    DpAndDevicesNotStated,
    /// `num_devices` differs from the product of the degrees (MoE rows).
    DevicesDiffer {
        /// `num_devices` as stated.
        devices: u64,
        /// `tp·pp·cp·dp`.
        degrees: u64,
    },
    /// No measured throughput (MoE rows).
    NoThroughput,
    /// The part or the configuration could not be priced (MoE rows), as the model says.
    Priced(Error),
}

impl RowReason {
    /// The dotted path of the row's field the reason is about, when it is about one field.
    pub fn field(&self) -> Option<String> {
        match self {
            RowReason::NotStated { field } | RowReason::NotANumber { field, .. } => Some(field.clone()),
            RowReason::LayerStepNotWhole { field, .. } => Some(field.clone()),
            RowReason::ShapeNotStated { missing } if missing.len() == 1 => Some(format!("model.{}", missing[0])),
            RowReason::SharedExpertsWithoutWidth => Some("model.shared_ffn_hidden".into()),
            RowReason::UnknownMetricKind { .. } => Some("measured.metric.kind".into()),
            RowReason::NoMetricValue { .. } => Some("measured.metric.value".into()),
            RowReason::GlobalBatchAbsent => Some("batch.global_batch_seqs".into()),
            RowReason::NoFp8Rate { .. } => Some("precision".into()),
            RowReason::NoFigure(inner) => inner.field(),
            RowReason::Configuration(e)
            | RowReason::Model(e)
            | RowReason::Hardware(e)
            | RowReason::ReferenceCannotMap(e)
            | RowReason::ReferenceCannotEvaluate(e)
            | RowReason::ExtendedCannotEvaluate(e)
            | RowReason::Priced(e) => e.field().map(str::to_string),
            _ => None,
        }
    }
}

impl fmt::Display for RowReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RowReason::ShapeNotStated { missing } => {
                write!(f, "model shape not stated: {} unknown", missing.join(", "))
            }
            RowReason::HardwareNotStated => f.write_str("hardware not stated: hardware_id and hardware are null"),
            RowReason::UnreadHardware(e) => write!(f, "{e}"),
            RowReason::ExpertParallel => {
                f.write_str("expert parallelism (mixture of experts) is not modelled by this reader")
            }
            RowReason::TooLarge => f.write_str("parallel degrees or batch sizes too large to evaluate"),
            RowReason::DataParallelAbsent => {
                f.write_str("data-parallel size absent: parallel.dp and num_devices are null")
            }
            RowReason::GlobalBatchAbsent => f.write_str(
                "global batch absent (batch.global_batch_seqs and global_batch_tokens are null) and pp > 1: the \
                 pipeline bubble depends on it",
            ),
            RowReason::Configuration(e) => write!(f, "configuration: {e}"),
            RowReason::NoFigure(e) => write!(f, "{e}, and no memory figure or outcome is stated"),
            RowReason::Implausible(e) => write!(f, "{e}"),
            RowReason::Hardware(e) => write!(f, "hardware: {e}"),
            RowReason::ReferenceCannotMap(e) => write!(f, "reference mode cannot map the hardware: {e}"),
            RowReason::ReferenceCannotEvaluate(e) => write!(f, "reference mode cannot evaluate it: {e}"),
            RowReason::ExtendedCannotEvaluate(e) => write!(f, "extended mode cannot evaluate it: {e}"),
            RowReason::NoTimeFigure => f.write_str("the row has no time figure"),
            RowReason::NoPeak { kind, precision, system } => write!(
                f,
                "{} needs the dense peak at {precision} of {system}, which is neither stated nor in the catalog",
                kind.key()
            ),
            RowReason::UncountedFlops(e) => write!(f, "{e}"),
            RowReason::NoMeasuredFigure => f.write_str(
                "no measured figure: measured.step_time_s, tokens_per_s_per_device, tokens_per_s_total, \
                 samples_per_s, tflops_per_device, mfu and hfu are all null",
            ),
            RowReason::UnknownMetricKind { kind } => write!(
                f,
                "measured.metric.kind `{kind}` is not one of {}",
                MetricKind::ALL.iter().map(|k| k.key()).collect::<Vec<_>>().join(", ")
            ),
            RowReason::NoMetricValue { kind } => {
                write!(f, "measured.metric has no value and measured.{} is null: no measured figure", kind.key())
            }
            RowReason::NotStated { field } => write!(f, "{field} not stated"),
            RowReason::NotANumber { field, value } => {
                write!(f, "{field}: must be a JSON number, not {value} (a number written as text is not read)")
            }
            RowReason::LayerStepNotWhole { field, rule } => write!(f, "{field}: {rule}"),
            RowReason::SharedExpertsWithoutWidth => f.write_str("shared_experts given without shared_ffn_hidden"),
            RowReason::Model(e) => write!(f, "model: {e}"),
            RowReason::NoFp8Rate { system } => write!(f, "{system} lists no FP8 rate"),
            RowReason::DegreesTooLarge => f.write_str("degrees too large"),
            RowReason::DevicesNotDivisible { devices } => {
                write!(f, "parallel.dp not stated and num_devices {devices} is not a multiple of tp·pp·cp")
            }
            RowReason::DpAndDevicesNotStated => f.write_str("parallel.dp and num_devices not stated"),
            RowReason::DevicesDiffer { devices, degrees } => {
                write!(f, "num_devices {devices} differs from tp·pp·cp·dp = {degrees}")
            }
            RowReason::NoThroughput => f.write_str("no measured throughput"),
            RowReason::Priced(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RowReason {}

impl From<UnreadHardware> for RowReason {
    fn from(e: UnreadHardware) -> RowReason {
        RowReason::UnreadHardware(e)
    }
}

impl From<Implausible> for RowReason {
    fn from(e: Implausible) -> RowReason {
        RowReason::Implausible(e)
    }
}

impl From<UncountedFlops> for RowReason {
    fn from(e: UncountedFlops) -> RowReason {
        RowReason::UncountedFlops(e)
    }
}

/// Why a file of measured MoE rows cannot be read at all.
#[derive(Debug, Clone, PartialEq)]
pub enum UnreadFile {
    /// The text is not JSON (the parser's message).
    NotJson(String),
    /// The document has no `rows` list.
    NoRows,
}

impl fmt::Display for UnreadFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnreadFile::NotJson(e) => write!(f, "not valid JSON: {e}"),
            UnreadFile::NoRows => f.write_str("no `rows` list"),
        }
    }
}

impl std::error::Error for UnreadFile {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_read_as_before_and_name_their_field() {
        let shape = RowReason::ShapeNotStated { missing: vec!["layers", "heads"] };
        assert_eq!(shape.to_string(), "model shape not stated: layers, heads unknown");
        assert_eq!(
            (shape.field(), RowReason::ShapeNotStated { missing: vec!["heads"] }.field()),
            (None, Some("model.heads".into()))
        );
        let no = RowReason::NoFigure(Box::new(RowReason::NoMetricValue { kind: MetricKind::Mfu }));
        assert_eq!(
            no.to_string(),
            "measured.metric has no value and measured.mfu is null: no measured figure, and no memory figure or \
             outcome is stated"
        );
        assert_eq!(no.field().as_deref(), Some("measured.metric.value"));
        let layout = RowReason::Configuration(Error::invalid("layout.tp", 3, "must divide heads"));
        assert_eq!(layout.to_string(), "configuration: layout.tp = 3: must divide heads");
        assert_eq!(layout.field().as_deref(), Some("layout.tp"));
        assert_eq!(RowReason::NotStated { field: "hardware_id".into() }.to_string(), "hardware_id not stated");
        assert_eq!(UnreadFile::NoRows.to_string(), "no `rows` list");
    }
}
