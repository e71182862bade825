//! The three tensor-parallel strategies of the published model (each combined with pipeline and
//! data parallelism).

use std::fmt;
use std::str::FromStr;

use crate::Error;

/// How a transformer block is split over the tensor-parallel group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum Strategy {
    /// `1d`: Megatron-style 1D tensor parallelism with sequence parallelism (degree `tp`).
    #[serde(rename = "1d")]
    OneD,
    /// `2d`: SUMMA 2D tensor parallelism on a `tp1 × tp2` grid (features × tokens), `nb` panels.
    #[serde(rename = "2d")]
    Summa2D,
    /// `2d-seqp`: 1D tensor parallelism (`tp1`) × context (sequence) parallelism (`tp2`).
    #[serde(rename = "2d-seqp")]
    ContextParallel2D,
}

impl Strategy {
    /// All strategies, in the order the reference names them.
    pub const ALL: [Strategy; 3] = [Strategy::OneD, Strategy::Summa2D, Strategy::ContextParallel2D];

    /// The reference's name: `1d`, `2d` or `2d-seqp`.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::OneD => "1d",
            Strategy::Summa2D => "2d",
            Strategy::ContextParallel2D => "2d-seqp",
        }
    }

    /// A short human description for tables and legends.
    pub fn description(self) -> &'static str {
        match self {
            Strategy::OneD => "1D tensor parallel + sequence parallel (Megatron)",
            Strategy::Summa2D => "2D SUMMA tensor parallel",
            Strategy::ContextParallel2D => "1D tensor parallel × context parallel",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Strategy {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        match s.trim() {
            "1d" | "1D" => Ok(Strategy::OneD),
            "2d" | "2D" | "summa" => Ok(Strategy::Summa2D),
            "2d-seqp" | "2D-seqp" | "seqp" | "cp" => Ok(Strategy::ContextParallel2D),
            other => Err(Error::UnknownName {
                kind: "strategy".into(),
                name: other.into(),
                known: Strategy::ALL.iter().map(|s| s.as_str().to_string()).collect(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in Strategy::ALL {
            assert_eq!(s.as_str().parse::<Strategy>().unwrap(), s);
        }
        assert!("3d".parse::<Strategy>().is_err());
    }
}
