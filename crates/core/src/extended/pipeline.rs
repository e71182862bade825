//! Pipeline parallelism: how the blocks are split into stages (uneven when `pp` does not divide
//! the depth), the messages between stages, and the 1F1B schedule with optional interleaving.
//!
//! Schedule (Narayanan et al. 2021): every device repeats one forward and one backward per
//! micro-batch slot; a slot lasts as long as the slowest device's work for one micro-batch plus its
//! exposed stage messages. An iteration is `nmb` slots plus a bubble of `(pp − 1)/v` slots, `v` the
//! virtual stages per device (1 = plain 1F1B). Each slot sends one forward and one backward message
//! per virtual stage. Plain 1F1B waits for them (exposed in full, as in the reference); the
//! interleaved schedule's steady state overlaps each with the next chunk's compute (Megatron's
//! `overlap_p2p_comm`), exposing only the part longer than one chunk ([`exposed_messages_s`]).
//! The bubble is the warm-up and the cool-down, whose exchanges Megatron waits for before the next
//! chunk even when interleaved, so its slots carry every message in full ([`bubble_s`]; quirk Q7
//! kept, as it is physical).
//!
//! **Megatron-LM's exchanges, as the source has them** (NVIDIA/Megatron-LM at d98e8a6, the commit
//! of `tests/data/megatron-ft-runs.json`):
//! * `overlap_p2p_comm` is on unless a run states `--no-overlap-p2p-communication`
//!   (`megatron/training/arguments.py` l. 3118–3120, `store_false`), and forced off without
//!   virtual stages (l. 1009–1012); `batch_p2p_comm = not overlap_p2p_comm`
//!   (`megatron/training/argument_utils.py` l. 307). So plain 1F1B batches each exchange
//!   (`batch_isend_irecv`) and, with `batch_p2p_sync` on by default
//!   (`megatron/core/model_parallel_config.py` l. 395), calls `torch.cuda.synchronize()` after it
//!   (`megatron/core/pipeline_parallel/p2p_communication.py` l. 421–424): the host waits for the
//!   device at every exchange. The interleaved schedule issues separate `isend`/`irecv` calls
//!   (`_p2p_ops`, l. 60–133) and waits on their handles only (a stream wait, not the host): no
//!   device sync per exchange.
//! * Warm-up and cool-down exchanges of the interleaved schedule are waited before the next chunk
//!   (`send_forward_recv_forward` without `overlap_p2p_comm`, hence `wait_on_reqs=True`,
//!   `megatron/core/pipeline_parallel/schedules.py` l. 1655–1657, and in the cool-down l. 2053)
//!   unless `--overlap-p2p-communication-warmup-flush` prefetches them (not read: priced as
//!   waited); only the steady state's exchanges overlap (l. 1731–1952).
//! * Whatever the schedule, the last stage's loss function checks the loss for NaN and Inf on
//!   every micro-batch (`pretrain_gpt.py` `loss_func` l. 262–276, on by default: `arguments.py`
//!   l. 2872–2874), and `validate_result` tests the CUDA tensor in an `if`
//!   (`megatron/core/rerun_state_machine.py` l. 519–521, 596–598): two device syncs per
//!   micro-batch on the last stage. Not priced (host-bound pipelines: see
//!   `tests/data/README.md`, `megatron-ft-runs.json`).
//! * **Sized, not priced (session 32, issue 31):** the host work of one plain-1F1B exchange, e.g.
//!   `send_forward_recv_backward` (`p2p_communication.py` l. 535–566) into `_communicate`
//!   (l. 280–426) and `_batched_p2p_ops` (l. 22–57), is about 13 calls that launch no kernel (the
//!   `nvtx_decorator` wrapper, the level-2 timer's lookup, start and stop — dummies at the cases'
//!   `--timing-log-level: 0` —, `torch.empty` for the receive, two `P2POp`s, the request waits,
//!   `torch.cuda.synchronize`) and one NCCL launch (`batch_isend_irecv`): 13 × 0.91 µs + 12.9 µs
//!   ≈ 25 µs at [`super::pricing::BARE_CALL_HOST_S`] and [`super::pricing::TORCH_CALL_HOST_S`].
//!   A rank exchanges at most `4 · nmb` times a step (warm-up and cool-down: a receive and a send
//!   per micro-batch; steady state: two combined exchanges), so ≤ 16 × 25 µs ≈ 0.4 ms a step at
//!   4 micro-batches (0.6 ms on DGX A100's host factor 1.53), against gaps of 11–270 ms in the
//!   functional tests' PP rows; the interleaved schedule's unbatched `isend`/`irecv` (`_p2p_ops`)
//!   cost about as much per exchange, `v` times as often (≈ 1.2 ms a step at `v = 3`). The
//!   sync itself exposes only what the device still has queued; in these host-bound steps
//!   (device work well under 10 % of the step) that is the last kernel, microseconds, and in
//!   device-bound steps the host's ≈ 25 µs to the next launch against seconds. Both stay below
//!   1.5 % of any of these steps and are left out; what the rows show instead is in
//!   `tests/data/README.md` (`megatron-ft-runs.json`, session 32).

pub use super::choices::StageSplitRule;
use super::layout::Layout;
use super::pricing::Pricing;
use super::workload::Workload;

/// Blocks per device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct StageSplit {
    /// On the first device (which also embeds).
    pub first: u64,
    /// On the last device (which also runs the head and the loss).
    pub last: u64,
    /// On the device with the most blocks (the second one when the ends count as blocks).
    pub most: u64,
}

/// Splits `layers` blocks over `pp` devices in order by `rule`: the units (the blocks, plus the
/// embedding and the head where the rule counts them) are dealt evenly, the first `units mod pp`
/// devices taking one more (Megatron's and torchtitan's split when the depth is not a multiple);
/// an end counted as a unit takes the place of a block on its device. One device counts no ends.
pub fn split(layers: u64, pp: u64, rule: StageSplitRule) -> StageSplit {
    let pp = pp.max(1);
    let (e, h) = if pp > 1 { rule.ends_counted() } else { (0, 0) };
    let units = layers + e + h;
    let (base, rem) = (units / pp, units % pp);
    let count = |i: u64| base + u64::from(i < rem);
    let first = count(0).saturating_sub(e);
    let last = count(pp - 1).saturating_sub(h);
    let second = if pp > 2 { count(1) } else { 0 };
    StageSplit { first, last, most: first.max(last).max(second) }
}

/// The blocks of stage `i` (0-based) of `pp` under `rule`: (index of its first block, blocks), as
/// [`split`] deals them (stage 0's count is `split`'s `first`, stage `pp − 1`'s its `last`).
pub fn stage_blocks(layers: u64, pp: u64, rule: StageSplitRule, i: u64) -> (u64, u64) {
    let pp = pp.max(1);
    if pp == 1 {
        return (0, layers);
    }
    let (e, h) = rule.ends_counted();
    let units = layers + e + h;
    let (base, rem) = (units / pp, units % pp);
    let count = base + u64::from(i < rem);
    let start = i * base + i.min(rem);
    let first = start.saturating_sub(e);
    let mut n = if i == 0 { count.saturating_sub(e) } else { count };
    if i == pp - 1 {
        n = n.saturating_sub(h);
    }
    (first.min(layers), n.min(layers - first.min(layers)))
}

/// Average time of one stage-to-stage message [s]: the activations of one micro-batch, split
/// over tensor parallelism (sequence parallel, or Megatron's scatter/gather), over the `pp − 1`
/// links, `pp − pp/nv_pp` of which stay inside a fast domain (quirk Q3 corrected: the others pay the
/// slow tier).
pub fn message_s(w: &Workload, layout: &Layout, p: &Pricing) -> f64 {
    if layout.pp <= 1 {
        return 0.0;
    }
    let volume = layout.local_tokens(w) * w.hidden as f64 * p.hw.element_bytes / layout.tp as f64 * 1e-9;
    let links = (layout.pp - 1) as f64;
    let slow = (layout.pp / layout.placement.pp.max(1)) as f64 - 1.0;
    let fast = links - slow;
    (fast * p.p2p(volume, true) + slow * p.p2p(volume, false)) / links
}

/// Exposed message time of one slot [s]: `2·v` messages of `message_s` each, overlapped with one
/// chunk (`slot_work_s / 2v`) each when interleaved (`v > 1`).
pub fn exposed_messages_s(message_s: f64, interleave: u64, slot_work_s: f64) -> f64 {
    let n = 2.0 * interleave.max(1) as f64;
    if interleave > 1 { n * (message_s - slot_work_s / n).max(0.0) } else { n * message_s }
}

/// Pipeline bubble in slots: `(pp − 1)/v`.
pub fn bubble_slots(pp: u64, interleave: u64) -> f64 {
    pp.saturating_sub(1) as f64 / interleave.max(1) as f64
}

/// Pipeline bubble [s]: [`bubble_slots`] slots of the busiest device's work for one micro-batch
/// (`slot_work_s`) with all `2·v` messages of `message_s` exposed: the bubble is the warm-up and
/// the cool-down, whose exchanges Megatron waits for before the next chunk (module docs), so no
/// message there overlaps a chunk, interleaved or not. With `v = 1` this is the plain schedule's
/// `(pp − 1) · (work + 2 · message)`, the same as its slot times its bubble slots.
pub fn bubble_s(pp: u64, interleave: u64, slot_work_s: f64, message_s: f64) -> f64 {
    let n = 2.0 * interleave.max(1) as f64;
    bubble_slots(pp, interleave) * (slot_work_s + n * message_s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::hardware::Hardware;
    use crate::extended::options::ExtendedOptions;

    #[test]
    fn uneven_split_and_bubble() {
        let even = StageSplitRule::Blocks;
        assert_eq!(split(126, 8, even), StageSplit { first: 16, last: 15, most: 16 });
        assert_eq!(split(96, 8, even), StageSplit { first: 12, last: 12, most: 12 });
        assert_eq!(split(32, 1, even), StageSplit { first: 32, last: 32, most: 32 });
        assert_eq!(bubble_slots(8, 1), 7.0);
        assert_eq!(bubble_slots(8, 2), 3.5);
        assert_eq!(bubble_slots(1, 4), 0.0);
        assert_eq!(exposed_messages_s(1.0, 1, 100.0), 2.0);
        assert_eq!(exposed_messages_s(1.0, 2, 100.0), 0.0);
        assert_eq!(exposed_messages_s(1.0, 2, 2.0), 4.0 * 0.5);
        // Plain 1F1B: 7 slots of 10 + 2 · 1 = 84, the slot (work and both messages) times 7.
        assert_eq!(bubble_s(8, 1, 10.0, 1.0), 7.0 * (10.0 + exposed_messages_s(1.0, 1, 10.0)));
        assert_eq!(bubble_s(8, 1, 10.0, 1.0), 84.0);
        // Interleaved, v = 2: 3.5 slots of 10 + 4 · 1 = 49, though the steady state's slot hides
        // the messages (10 + 0): the warm-up and cool-down wait for them.
        assert_eq!(exposed_messages_s(1.0, 2, 10.0), 0.0);
        assert_eq!(bubble_s(8, 2, 10.0, 1.0), 49.0);
        assert_eq!(bubble_s(1, 4, 10.0, 1.0), 0.0);
    }

    #[test]
    fn ends_counted_as_blocks() {
        use StageSplitRule::*;
        // BLOOM-176B: 70 blocks and the two embeddings over 12 stages, 6 units each.
        assert_eq!(split(70, 12, EndsAsBlocks), StageSplit { first: 5, last: 5, most: 6 });
        // 82 + 2 = 84 units: 7 each.
        assert_eq!(split(82, 12, EndsAsBlocks), StageSplit { first: 6, last: 6, most: 7 });
        // Uneven: 61 + 2 = 63 units over 16: the first 15 stages take 4, the last 3.
        assert_eq!(split(61, 16, EndsAsBlocks), StageSplit { first: 3, last: 2, most: 4 });
        assert_eq!(split(32, 4, EmbeddingAsBlock), StageSplit { first: 8, last: 8, most: 8 });
        assert_eq!(split(31, 4, HeadAsBlock), StageSplit { first: 8, last: 7, most: 8 });
        // Two stages: no middle device; a single device counts no ends.
        assert_eq!(split(10, 2, EndsAsBlocks), StageSplit { first: 5, last: 5, most: 5 });
        assert_eq!(split(10, 1, EndsAsBlocks), StageSplit { first: 10, last: 10, most: 10 });
        // An end may fill a stage alone.
        assert_eq!(split(2, 4, EndsAsBlocks), StageSplit { first: 0, last: 0, most: 1 });
        assert_eq!("ends".parse::<StageSplitRule>().unwrap(), EndsAsBlocks);
        // Stage by stage: the counts add up to the depth, in order, ends as `split` deals them.
        for (layers, pp, rule) in
            [(61, 16, Blocks), (70, 12, EndsAsBlocks), (61, 16, EndsAsBlocks), (31, 4, HeadAsBlock)]
        {
            let stages: Vec<(u64, u64)> = (0..pp).map(|i| stage_blocks(layers, pp, rule, i)).collect();
            let s = split(layers, pp, rule);
            assert_eq!((stages[0].1, stages[pp as usize - 1].1), (s.first, s.last));
            let mut next = 0;
            for (first, n) in &stages {
                assert_eq!(*first, next, "{layers} over {pp} ({rule:?}): {stages:?}");
                next += n;
            }
            assert_eq!(next, layers);
        }
        // DeepSeek-V3's 61 blocks over 16 stages: 13 stages of 4, then 3 of 3.
        assert_eq!(stage_blocks(61, 16, Blocks, 12), (48, 4));
        assert_eq!(stage_blocks(61, 16, Blocks, 13), (52, 3));
        assert_eq!(stage_blocks(32, 1, Blocks, 0), (0, 32));
        assert_eq!(StageSplitRule::counting(true, false), EmbeddingAsBlock);
        assert!("sideways".parse::<StageSplitRule>().unwrap_err().to_string().contains("stage_split"));
    }

    #[test]
    fn slow_links_are_priced() {
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        let opts = ExtendedOptions::realistic();
        let p = Pricing { hw: &hw, opts: &opts };
        let w = Workload::from_shape(&crate::ModelShape::GPT3);
        let all_fast = Layout::placed(1, 1, 8, 1, 1, 8, 8);
        let all_slow = Layout::placed(8, 1, 8, 1, 1, 8, 8);
        let mixed = Layout { placement: crate::extended::layout::Placement { tp: 4, cp: 1, dp: 1, pp: 2 }, ..all_slow };
        let (f, s, m) = (message_s(&w, &all_fast, &p), message_s(&w, &all_slow, &p), message_s(&w, &mixed, &p));
        assert!(f * 8.0 < s * 8.0 && m > 0.0);
        // Mixed: 4 of 7 links fast, 3 slow (the reference would price the slow ones at 0).
        let v = w.seq_len as f64 * w.hidden as f64 * 2.0 / 8.0 * 1e-9;
        let expect = (4.0 * p.p2p(v, true) + 3.0 * p.p2p(v, false)) / 7.0;
        assert!((m - expect).abs() < 1e-15);
    }
}
