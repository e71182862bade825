//! The memory columns of an extended estimate on the device with the most ([`DeviceMemory`]:
//! weights, gradients, optimizer states, activations and the framework margin [GB]) and the one
//! list of them every caller prints ([`DeviceMemory::parts`], typed by [`DeviceMemoryPart`]): the
//! CLI's `estimate` table, the launch estimate's JSON `parts_gb`, the page's launch import and
//! its extended drill-down, so a column added here is one edit.

use super::memory::MemoryEstimate;
use crate::vocab::MemoryPart;

/// A column of [`DeviceMemory`]: one of the vocabulary's [`MemoryPart`]s, or the framework margin
/// extended mode adds on top of the allocated peak (the reference's `acts_mem` counts it with the
/// activations, [`MemoryPart::Activations`]; here the activations column holds the activations
/// alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceMemoryPart {
    /// Weights, gradients, optimizer states or activations.
    Part(MemoryPart),
    /// Fragmentation, CUDA context and collective buffers (device − allocated).
    Overhead,
}

impl DeviceMemoryPart {
    /// The columns, in the order they are shown.
    pub const ALL: [DeviceMemoryPart; 5] = [
        DeviceMemoryPart::Part(MemoryPart::Weights),
        DeviceMemoryPart::Part(MemoryPart::Gradients),
        DeviceMemoryPart::Part(MemoryPart::OptimizerStates),
        DeviceMemoryPart::Part(MemoryPart::Activations),
        DeviceMemoryPart::Overhead,
    ];

    /// Short name (`weights`, `gradients`, `optimizer`, `activations`, `overhead`): the key of
    /// the launch estimate's JSON `parts_gb` and the name in the CLI's and the launch import's
    /// tables.
    pub fn key(self) -> &'static str {
        match self {
            DeviceMemoryPart::Part(MemoryPart::Weights) => "weights",
            DeviceMemoryPart::Part(MemoryPart::Gradients) => "gradients",
            DeviceMemoryPart::Part(MemoryPart::OptimizerStates) => "optimizer",
            DeviceMemoryPart::Part(MemoryPart::Activations) => "activations",
            DeviceMemoryPart::Overhead => "overhead",
        }
    }

    /// Label in words ([`MemoryPart::label`], `framework margin` for the overhead), as the
    /// drill-down shows it.
    pub fn label(self) -> &'static str {
        match self {
            DeviceMemoryPart::Part(p) => p.label(),
            DeviceMemoryPart::Overhead => "framework margin",
        }
    }
}

/// The four groups of the reference's memory columns (weights, gradients, optimizer states,
/// activations with everything else) of an estimate [GB].
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct DeviceMemory {
    /// Weights (sharded under ZeRO-3, plus the gathered blocks in flight and FP8 copies).
    pub weights_gb: f64,
    /// Gradients.
    pub gradients_gb: f64,
    /// Optimizer states.
    pub optimizer_gb: f64,
    /// Activations in flight, logits and loss.
    pub activations_gb: f64,
    /// Fragmentation, CUDA context and NCCL buffers (device − allocated).
    pub overhead_gb: f64,
}

impl DeviceMemory {
    /// Everything [GB] (the device-level figure): the columns added in order (bit-identical to
    /// `weights + gradients + optimizer + activations + overhead`; the sum starts from −0.0).
    pub fn total(&self) -> f64 {
        self.parts().iter().map(|(_, gb)| gb).sum()
    }

    /// One column [GB].
    pub fn get(&self, part: DeviceMemoryPart) -> f64 {
        match part {
            DeviceMemoryPart::Part(MemoryPart::Weights) => self.weights_gb,
            DeviceMemoryPart::Part(MemoryPart::Gradients) => self.gradients_gb,
            DeviceMemoryPart::Part(MemoryPart::OptimizerStates) => self.optimizer_gb,
            DeviceMemoryPart::Part(MemoryPart::Activations) => self.activations_gb,
            DeviceMemoryPart::Overhead => self.overhead_gb,
        }
    }

    /// Every column with its value [GB], in [`DeviceMemoryPart::ALL`] order: the list every
    /// caller that shows the columns iterates.
    pub fn parts(&self) -> [(DeviceMemoryPart, f64); 5] {
        DeviceMemoryPart::ALL.map(|p| (p, self.get(p)))
    }

    /// The columns of an estimate.
    ///
    /// One pass over the parts (this runs for every configuration a search prices; ten scans of
    /// [`MemoryEstimate::part`] were a sixth of the page's first search in a profile). Each name
    /// is summed as `part` sums it — its parts in order, from −0.0 as `Iterator::sum` starts —
    /// and the names are added in the same order as before, so the figures are bit-identical.
    pub fn of(e: &MemoryEstimate) -> DeviceMemory {
        // weights, gathered_layers, fp8_weight_copies, expert_weights, gradients,
        // expert_gradients, optimizer_states, expert_optimizer_states, activations, logits_and_loss
        let mut s = [-0.0_f64; 10];
        for p in &e.parts {
            let i = match p.name {
                "weights" => 0,
                "gathered_layers" => 1,
                "fp8_weight_copies" => 2,
                "expert_weights" => 3,
                "gradients" => 4,
                "expert_gradients" => 5,
                "optimizer_states" => 6,
                "expert_optimizer_states" => 7,
                "activations" => 8,
                "logits_and_loss" => 9,
                _ => continue,
            };
            s[i] += p.gb;
        }
        DeviceMemory {
            weights_gb: s[0] + s[1] + s[2] + s[3],
            gradients_gb: s[4] + s[5],
            optimizer_gb: s[6] + s[7],
            activations_gb: s[8] + s[9],
            overhead_gb: e.device_gb - e.allocated_gb,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::catalog::Precision;
    use crate::extended::evaluate::memory_estimate;
    use crate::extended::hardware::Hardware;
    use crate::extended::layout::Layout;
    use crate::extended::memory::tests::{estimate, hw};
    use crate::extended::options::{ExtendedOptions, HardwareChoices, OptimizerStates, Sharding};
    use crate::extended::workload::Workload;

    /// The list holds every field once, in the shown order, with the keys and labels callers
    /// print, and its sum is the total.
    #[test]
    fn parts_list_every_column_once() {
        let m = DeviceMemory {
            weights_gb: 1.0,
            gradients_gb: 2.0,
            optimizer_gb: 4.0,
            activations_gb: 8.0,
            overhead_gb: 16.0,
        };
        let parts = m.parts();
        assert_eq!(parts.map(|(_, gb)| gb), [1.0, 2.0, 4.0, 8.0, 16.0]);
        assert_eq!(parts.map(|(p, _)| p.key()), ["weights", "gradients", "optimizer", "activations", "overhead"]);
        assert_eq!(
            parts.map(|(p, _)| p.label()),
            ["weights", "gradients", "optimizer states", "activations", "framework margin"]
        );
        assert_eq!(m.total(), 31.0);
    }

    /// `DeviceMemory::of` sums in one pass what summing `part(name)` per name gives, bit for bit:
    /// dense estimates under ZeRO-1, ZeRO-3 (gathered layers), pure BF16 and FP8 weight copies,
    /// and a DeepSeek-V3 stage (expert parts), with and without overheads.
    #[test]
    fn device_columns_equal_the_sums_of_named_parts() {
        let by_parts = |e: &MemoryEstimate| {
            [
                e.part("weights") + e.part("gathered_layers") + e.part("fp8_weight_copies") + e.part("expert_weights"),
                e.part("gradients") + e.part("expert_gradients"),
                e.part("optimizer_states") + e.part("expert_optimizer_states"),
                e.part("activations") + e.part("logits_and_loss"),
                e.device_gb - e.allocated_gb,
            ]
        };
        let columns = |m: DeviceMemory| [m.weights_gb, m.gradients_gb, m.optimizer_gb, m.activations_gb, m.overhead_gb];
        let layout = Layout::placed(2, 1, 2, 4, 1, 64, 8);
        let mut estimates = Vec::new();
        for overheads in [true, false] {
            for (sharding, optimizer_states, precision) in [
                (Sharding::Zero1, OptimizerStates::Fp32Master, Precision::Bf16),
                (Sharding::Zero3, OptimizerStates::Fp32Master, Precision::Bf16),
                (Sharding::Ddp, OptimizerStates::PureBf16, Precision::Bf16),
            ] {
                let hardware =
                    HardwareChoices { memory_overheads: overheads, precision, ..HardwareChoices::realistic() };
                let opts = ExtendedOptions { sharding, optimizer_states, hardware, ..ExtendedOptions::realistic() };
                estimates.push(estimate(opts, layout));
            }
            // FP8 linear layers (a system file with 1-byte elements): FP8 weight copies.
            let mut params = SystemParams::h200().with_domain_size(8);
            params.element_size = 1e-9;
            let fp8 = HardwareChoices {
                memory_overheads: overheads,
                precision: Precision::Fp8,
                ..HardwareChoices::realistic()
            };
            let opts = ExtendedOptions { hardware: fp8, ..ExtendedOptions::realistic() };
            let w = Workload { vocab: None, ..Workload::LLAMA3_8B };
            estimates.push(memory_estimate(&w, &Hardware::from_params(&params, true), &layout, &opts).unwrap());
            let w = Workload::from_catalog(crate::catalog::find_model("deepseek-v3").unwrap()).unwrap();
            let hardware = HardwareChoices { memory_overheads: overheads, ..HardwareChoices::realistic() };
            let opts = ExtendedOptions { hardware, ..ExtendedOptions::realistic() };
            let moe = Layout::placed(2, 1, 8, 64, 1, 8192, 8).with_experts(64, 1);
            estimates.push(crate::extended::evaluate::evaluate(&w, &hw(), &moe, &opts).unwrap().memory_estimate);
        }
        assert!(estimates.iter().any(|e| e.part("expert_weights") > 0.0 && e.part("gathered_layers") == 0.0));
        assert!(estimates.iter().any(|e| e.part("gathered_layers") > 0.0));
        assert!(estimates.iter().any(|e| e.part("fp8_weight_copies") > 0.0));
        for e in &estimates {
            let (got, want) = (columns(DeviceMemory::of(e)), by_parts(e));
            assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{got:?} vs {want:?} ({})", e.stage);
            let [w, g, o, a, x] = got;
            assert_eq!(DeviceMemory::of(e).total().to_bits(), (w + g + o + a + x).to_bits());
        }
    }
}
