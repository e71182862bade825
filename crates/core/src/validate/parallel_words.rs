//! Parallel-layout words read by meaning (see [`super::words`]): slices (TPU ICI domains joined by
//! the data-centre network), pipeline interleaving (virtual stages), the overlap of the
//! data-parallel gradient reduction with the backward pass and how the blocks were dealt to the
//! pipeline stages; every reading that is not plain comes with a note for the row. Sharding words
//! are [`super::sharding_words`]'s, precision words [`super::precision_words`]'s and the stack's
//! [`super::stack_words`]'s.

use super::sharding_words::degree_after;
use super::words::Words;
use crate::extended::StageSplitRule;
use crate::vocab::Note;

/// Slices (TPU ICI domains joined by the data-centre network) the words give: the degree after
/// `dcn` (MaxText's `dcn_data_parallelism`, "DCN data parallel = 2"), or a count before
/// `slices`/`pods` ("2 slices", "4 pods"). `None`: the words state no slice count.
pub fn read_slices(text: &str) -> Option<u64> {
    let w = Words::new(text);
    if let Some(at) = w.find("dcn")
        && let Some(n) = degree_after(&w, at + 1, 4)
    {
        return Some(n);
    }
    ["slices", "pods"]
        .iter()
        .find_map(|key| w.number_before(key, 1))
        .filter(|n| *n >= 1.0 && n.fract() == 0.0)
        .map(|n| n as u64)
}

/// Virtual pipeline stages the words give: a count after `vpp`/`virtual`/`chunks`/`interleave`,
/// or 2 when they say "interleaved" without one. `None`: the words do not mention interleaving.
pub fn read_interleave(text: &str) -> Option<(u64, Option<Note>)> {
    let w = Words::new(text);
    let mentions = w.has_prefix("interleav") || w.any(&["vpp", "virtual pipeline", "virtual stages", "virtual stage"]);
    if !mentions {
        return None;
    }
    for key in ["vpp", "virtual", "chunks", "interleaved", "interleave", "interleaving"] {
        if let Some(at) = w.find(key)
            && let Some(n) = degree_after(&w, at + 1, 4).filter(|n| *n >= 1 && *n <= 64)
        {
            return Some((n, None));
        }
    }
    if let Some(n) = w.number_before("virtual", 2).map(|n| n as u64).filter(|n| *n >= 1 && *n <= 64) {
        return Some((n, None));
    }
    Some((2, Some(Note::assumption(format!("`{text}`: interleaving stated without a count: 2 virtual stages")))))
}

/// Whether the run overlaps its data-parallel gradient reduction with the backward pass
/// ([`crate::extended::ExtendedOptions::dp_overlap`]), read from its parallel words (`overlap`)
/// and the words naming its stack (`stack`: framework, source, tags), with a note when it is a
/// stack's default:
/// * the words state it (`overlap-grad-reduce`, `overlap_grad_reduce`, `overlap comm`, "grad
///   reduce overlapped") → on, or off when negated;
/// * Megatron-LM (the words name Megatron but neither NeMo nor Megatron-Bridge, whose recipes
///   turn it on) → off: `--overlap-grad-reduce` is opt-in in Megatron-LM and Megatron-Core's
///   `DistributedDataParallelConfig` (`overlap_grad_reduce = False`), and Megatron-LM before
///   2023 all-reduced its gradient buffer after the backward pass (`allreduce_gradients`);
/// * DeepSpeed ZeRO-1/2 (`zero1_2`: the row's sharding) → off: `overlap_comm` defaults to false
///   below ZeRO-3 (DeepSpeed's configuration docs);
/// * anything else (NeMo, PyTorch DDP/FSDP, XLA, InternLM's `overlap_sync_grad`) → on.
pub fn read_dp_overlap(overlap: &Words, stack: &Words, zero1_2: bool) -> (bool, Option<Note>) {
    for phrase in ["overlap grad reduce", "overlap comm", "grad reduce overlapped", "overlap grad"] {
        if overlap.has(phrase) {
            return (overlap.affirms(phrase), None);
        }
    }
    if stack.has_prefix("megatron") && !stack.has("nemo") && !stack.has("bridge") {
        let note = "Megatron-LM: data-parallel gradient reduction not overlapped with the backward \
                    (--overlap-grad-reduce is opt-in; dp_overlap=off)";
        return (false, Some(Note::assumption(note)));
    }
    if zero1_2 && stack.has("deepspeed") {
        let note = "DeepSpeed ZeRO-1/2: overlap_comm off by default (dp_overlap=off)";
        return (false, Some(Note::assumption(note)));
    }
    (true, None)
}

/// How the words say the blocks were dealt to the pipeline stages, with a note: Megatron-DeepSpeed's
/// `--pp-partition-method` naming the embedding (`type:transformer|embedding`: the embedding
/// layers at both ends count as blocks), Megatron-LM's `--account-for-embedding-in-pipeline-split`
/// and `--account-for-loss-in-pipeline-split` (also Megatron-Bridge's and NeMo's keys of those
/// names), not negated. `None`: the words say neither (the blocks alone are split).
pub fn read_stage_split(w: &Words) -> Option<(StageSplitRule, Note)> {
    let partition_names_embedding = w
        .find("partition method")
        .is_some_and(|at| w.tokens.iter().skip(at + 2).take(6).any(|t| t.starts_with("embed")));
    let rule = if partition_names_embedding {
        StageSplitRule::EndsAsBlocks
    } else {
        StageSplitRule::counting(
            w.affirms("account for embedding in pipeline split"),
            w.affirms("account for loss in pipeline split"),
        )
    };
    (rule != StageSplitRule::Blocks).then(|| (rule, Note::assumption(rule.note())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_parallel_overlap_by_words_and_stack() {
        let w = Words::new;
        let none = w("");
        // Stated: on, or off when negated.
        assert_eq!(read_dp_overlap(&w("--overlap-grad-reduce"), &w("Megatron-LM"), true), (true, None));
        assert_eq!(read_dp_overlap(&w("no overlap grad reduce"), &none, true).0, false);
        assert_eq!(read_dp_overlap(&w("overlap_comm: false"), &w("DeepSpeed"), true).0, false);
        // Stack defaults: Megatron-LM off (not NeMo, not Megatron-Bridge), DeepSpeed ZeRO-1/2 off.
        let (on, note) = read_dp_overlap(&none, &w("Narayanan et al. 2021, ... Using Megatron-LM"), true);
        assert!(!on && note.is_some_and(|n| n.contains("opt-in")));
        assert!(read_dp_overlap(&none, &w("NVIDIA NeMo performance summary (Megatron-Core)"), true).0);
        assert!(read_dp_overlap(&none, &w("Megatron-Bridge recipes"), true).0);
        assert!(!read_dp_overlap(&none, &w("DeepSpeed"), true).0);
        assert!(read_dp_overlap(&none, &w("DeepSpeed"), false).0);
        assert!(read_dp_overlap(&none, &w("torchtitan"), true).0);
    }

    #[test]
    fn pipeline_split_words() {
        let rule = |t: &str| read_stage_split(&Words::new(t)).map(|(r, _)| r);
        assert_eq!(
            rule("from 02-28: bf16 optimizer and --pp-partition-method 'type:transformer|embedding'"),
            Some(StageSplitRule::EndsAsBlocks)
        );
        assert_eq!(rule("regex partition_method='type:transformer|embed'"), Some(StageSplitRule::EndsAsBlocks));
        assert_eq!(rule("partition method: parameters"), None);
        assert_eq!(rule("--account-for-embedding-in-pipeline-split"), Some(StageSplitRule::EmbeddingAsBlock));
        assert_eq!(
            rule("account_for_embedding_in_pipeline_split: true, account_for_loss_in_pipeline_split: true"),
            Some(StageSplitRule::EndsAsBlocks)
        );
        assert_eq!(rule("account_for_loss_in_pipeline_split=False"), None);
        assert_eq!(rule("pipeline parallel 8, interleaved"), None);
    }

    #[test]
    fn interleave_words() {
        assert_eq!(read_interleave("AsyncTP; interleaved 1F1B").map(|x| x.0), Some(2));
        assert_eq!(read_interleave("interleaved schedule, 4 virtual stages").map(|x| x.0), Some(4));
        assert_eq!(read_interleave("vpp=5").map(|x| x.0), Some(5));
        assert_eq!(read_interleave("1F1B"), None);
    }

    #[test]
    fn slice_words() {
        assert_eq!(read_slices("ICI FSDP = 192; DCN data parallel = 2"), Some(2));
        assert_eq!(read_slices("ICI FSDP = 256 within slice; DCN data parallel = 32"), Some(32));
        assert_eq!(read_slices("dcn_data_parallelism=4, ici_fsdp_parallelism=-1"), Some(4));
        assert_eq!(read_slices("FSDP across 2 slices"), Some(2));
        assert_eq!(read_slices("FSDP 8"), None);
        assert_eq!(read_slices("ICI FSDP = 64 within slice"), None);
    }
}
