//! Training precisions: which peak rate of a catalog entry applies and how many bytes an element takes.

use std::fmt;
use std::str::FromStr;

use crate::Error;
use crate::hint;

/// The number format of matrix multiplications (and of stored tensors) during training.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    /// IEEE single precision on matrix units where they exist (else on vector units).
    Fp32,
    /// TensorFloat-32 matrix math; tensors stored as FP32.
    Tf32,
    /// IEEE half precision.
    Fp16,
    /// bfloat16.
    Bf16,
    /// 8-bit floating point matrix math.
    Fp8,
}

impl Precision {
    /// All precisions.
    pub const ALL: [Precision; 5] =
        [Precision::Fp32, Precision::Tf32, Precision::Fp16, Precision::Bf16, Precision::Fp8];

    /// The JSON / CLI name.
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Tf32 => "tf32",
            Precision::Fp16 => "fp16",
            Precision::Bf16 => "bf16",
            Precision::Fp8 => "fp8",
        }
    }

    /// Bytes per tensor element in GB (the reference's `element_size`): 4e-9 for FP32/TF32 (TF32
    /// tensors are stored as FP32), 2e-9 for FP16/BF16, 1e-9 for FP8.
    ///
    /// For FP8 this is an approximation: real FP8 recipes keep master weights, optimizer states and
    /// many activations in higher precision; the reference's memory model then under-counts.
    pub fn element_size_gb(self) -> f64 {
        match self {
            Precision::Fp32 | Precision::Tf32 => 4e-9,
            Precision::Fp16 | Precision::Bf16 => 2e-9,
            Precision::Fp8 => 1e-9,
        }
    }

    /// Whether the reference's own system files (16-bit) describe this precision.
    pub fn is_16bit(self) -> bool {
        matches!(self, Precision::Fp16 | Precision::Bf16)
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Precision {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let t = s.trim().to_ascii_lowercase();
        Precision::ALL.into_iter().find(|p| p.as_str() == t).ok_or_else(|| {
            let names: Vec<&str> = Precision::ALL.iter().map(|p| p.as_str()).collect();
            let e = Error::invalid("precision", s, format!("must be one of {}", names.join(", ")));
            match hint::nearest(&t, names.iter().copied()) {
                Some(n) => e.with_hint(format!("did you mean `{n}`?")),
                None => e,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in Precision::ALL {
            assert_eq!(p.as_str().parse::<Precision>().unwrap(), p);
        }
        assert_eq!("BF16".parse::<Precision>().unwrap(), Precision::Bf16);
        let e = "bf61".parse::<Precision>().unwrap_err().to_string();
        assert!(e.contains("did you mean `bf16`"), "{e}");
    }
}
