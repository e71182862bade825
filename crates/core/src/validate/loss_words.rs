//! How a run's output head and cross-entropy are chunked, read from its words: how many chunks
//! the loss of one micro-batch is computed in ([`ExtendedOptions::loss_chunks`]) and whether the
//! output head runs inside them ([`ExtendedOptions::loss_head_chunked`]).
//!
//! Three ways of chunking the loss are in use, and they hold very different logits:
//! * torchtune's `CEWithChunkedOutputLoss`: the head's 16-bit logits are made whole (a list of
//!   chunks, all kept for the backward) and only the FP32 upcast and cross-entropy go chunk by
//!   chunk — 8 chunks (`num_output_chunks = 8`);
//! * torchtitan's `ChunkedLossWrapper` (pytorch/torchtitan `torchtitan/components/loss.py`, 2026):
//!   the head and the loss run one chunk at a time, forward and backward, so one chunk's logits
//!   exist at once and the final hidden states' gradient is accumulated in FP32; 8 chunks by
//!   default (`num_chunks: int = 8`), or a stated chunk length in tokens (its
//!   `docs/chunked_loss.md` measures 1,024 and 8,192 tokens);
//! * fused linear-cross-entropy kernels (Liger-Kernel's `LigerFusedLinearCrossEntropyLoss`,
//!   `src/liger_kernel/ops/fused_linear_cross_entropy.py`; Apple's cut cross-entropy): the head
//!   and the loss per chunk, the chunk sized so that its logits are about as large as the
//!   hidden states — `inc = ⌈V / h⌉`, chunk = `next_pow2(⌈T / inc⌉)` tokens.
//!
//! [`ExtendedOptions::loss_chunks`]: crate::extended::ExtendedOptions::loss_chunks
//! [`ExtendedOptions::loss_head_chunked`]: crate::extended::ExtendedOptions::loss_head_chunked

use super::words::Words;
use crate::vocab::Note;

/// Words saying the cross-entropy is computed in chunks of the output (torchtune's
/// `CEWithChunkedOutputLoss`, torchtitan's `ChunkedLossWrapper`).
pub const CHUNKED_LOSS_WORDS: [&str; 3] = ["chunked cross entropy", "chunked loss", "chunked output loss"];

/// The same said the other way round (`cross-entropy chunked to 8,192 tokens`, `loss in chunks of
/// 4096`).
const CHUNKED_AFTER_WORDS: [&str; 5] =
    ["cross entropy chunked", "loss chunked", "crossentropy chunked", "loss in chunks", "cross entropy in chunks"];

/// Words naming a fused linear-cross-entropy loss: the output head and the loss computed chunk
/// by chunk inside one kernel call (Liger-Kernel, cut cross-entropy).
pub const FUSED_HEAD_LOSS_WORDS: [&str; 4] =
    ["fused linear cross entropy", "linear cross entropy", "liger", "cut cross entropy"];

/// Chunks when a chunked loss does not say how many: torchtune's `num_output_chunks` and
/// torchtitan's `ChunkedLossWrapper.Config.num_chunks` default, both 8.
pub const DEFAULT_LOSS_CHUNKS: u64 = 8;

/// Largest chunk count a reading gives: the switch's own bound (`loss_chunks`, 1–65,536).
const MAX_LOSS_CHUNKS: u64 = 65536;

/// The fields whose words the chunking is read from, as an error names them.
const LOSS_WORDS_FIELD: &str = "framework / parallel.other / notes (chunked loss)";

/// How one micro-batch's loss is chunked, as read.
#[derive(Debug, Clone, PartialEq)]
pub struct LossChunking {
    /// Chunks of the loss (1: not chunked).
    pub chunks: u64,
    /// Whether the output head runs inside the chunks.
    pub head_inside: bool,
    /// What was read, and from which words.
    pub note: Option<Note>,
}

/// Reads how the loss is chunked from a run's words (`words`: its framework, parallel settings
/// and notes), for a micro-batch of `tokens` tokens per device, a vocabulary of `vocab` and a
/// hidden width of `hidden`:
/// 1. no chunked or fused loss affirmed: one chunk, the head outside;
/// 2. a fused linear-cross-entropy loss ([`FUSED_HEAD_LOSS_WORDS`]): the head inside, in Liger's
///    chunks unless a count or a length is stated;
/// 3. a chunked loss ([`CHUNKED_LOSS_WORDS`], or `cross-entropy chunked …`): the
///    head inside under torchtitan, outside otherwise (torchtune's chunked output loss); the
///    stated chunk length in tokens (`chunked to 8,192 tokens`, `chunk_len 1024`) or count
///    (`8 chunks`), else [`DEFAULT_LOSS_CHUNKS`].
///
/// A stated count that is not a whole number from 1 to 65,536, or a stated length that leaves
/// more than 65,536 chunks, is an error naming the words: it is never clamped or replaced by the
/// default.
pub fn read_loss_chunking(
    words: &Words,
    tokens: f64,
    vocab: Option<u64>,
    hidden: u64,
) -> Result<LossChunking, crate::Error> {
    let fused = FUSED_HEAD_LOSS_WORDS.iter().any(|w| words.affirms(w));
    let chunked = CHUNKED_LOSS_WORDS.iter().chain(&CHUNKED_AFTER_WORDS).any(|w| words.affirms(w));
    if !fused && !chunked {
        return Ok(LossChunking { chunks: 1, head_inside: false, note: None });
    }
    let head_inside = fused || words.has("torchtitan");
    let stated_len = stated_chunk_tokens(&words.text);
    let stated_count = words.number_before("chunks", 1);
    if let Some(n) = stated_count.filter(|n| !(*n >= 1.0 && n.fract() == 0.0 && *n <= MAX_LOSS_CHUNKS as f64)) {
        return Err(crate::Error::invalid(
            LOSS_WORDS_FIELD,
            format!("{n} chunks"),
            format!("a chunked loss is computed in a whole number of chunks from 1 to {MAX_LOSS_CHUNKS}"),
        ));
    }
    let (chunks, how) = match (stated_len, stated_count) {
        (Some(len), _) => {
            let n = (tokens / len).ceil().max(1.0);
            (n, format!("chunks of {len} tokens stated: {n} of the micro-batch's {tokens} tokens"))
        }
        (None, Some(n)) => (n, format!("{n} chunks stated")),
        (None, None) if fused => {
            let n = liger_chunks(tokens, vocab.unwrap_or(0), hidden);
            (n as f64, format!("Liger's chunks (logits of a chunk about the size of the hidden states): {n}"))
        }
        (None, None) => (DEFAULT_LOSS_CHUNKS as f64, format!("chunks not stated: {DEFAULT_LOSS_CHUNKS}")),
    };
    if chunks > MAX_LOSS_CHUNKS as f64 {
        return Err(crate::Error::invalid(
            LOSS_WORDS_FIELD,
            format!("{chunks} chunks ({how})"),
            format!("a chunked loss is computed in at most {MAX_LOSS_CHUNKS} chunks"),
        ));
    }
    let chunks = chunks as u64;
    let what = if head_inside {
        "the output head and the loss run chunk by chunk (one chunk's logits at a time, an FP32 accumulator of \
         the hidden states' gradient; loss_head_chunked)"
    } else {
        "the 16-bit logits made whole, the FP32 cross-entropy chunk by chunk (torchtune's chunked output loss)"
    };
    Ok(LossChunking { chunks, head_inside, note: Some(Note::reading(format!("chunked loss: {what}; {how}"))) })
}

/// Liger's chunk count for `tokens` tokens, a vocabulary of `vocab` and a hidden width of
/// `hidden`: `inc = ⌈V / h⌉`, chunk = `next_pow2(⌈T / inc⌉)` tokens, `⌈T / chunk⌉` chunks
/// (Liger-Kernel `fused_linear_cross_entropy_forward`). 1 when a size is unknown.
pub fn liger_chunks(tokens: f64, vocab: u64, hidden: u64) -> u64 {
    if vocab == 0 || hidden == 0 || !(tokens >= 1.0) {
        return 1;
    }
    let inc = vocab.div_ceil(hidden).max(1);
    let t = tokens.ceil() as u64;
    let chunk = t.div_ceil(inc).max(1).next_power_of_two();
    t.div_ceil(chunk).max(1)
}

/// A chunk length in tokens stated after the word `chunk…` (`chunked to 8,192 tokens`,
/// `chunk_len = 1024`, `chunk length 2048`, `in chunks of 4096`): the first number of the clause
/// after it (up to a `;` or 60 bytes), thousands separated by commas or not, followed by `tokens`
/// or named a length (`len`, `length`, `size`, `chunks of`).
fn stated_chunk_tokens(text: &str) -> Option<f64> {
    let lower = text.to_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find("chunk") {
        let start = from + at;
        from = start + "chunk".len();
        // The words up to the next clause (`;`, `.` followed by a space, or 60 bytes).
        let rest = &lower[from..];
        let end = rest.find(';').unwrap_or(rest.len()).min(60);
        let end = (0..=end).rev().find(|&i| rest.is_char_boundary(i)).unwrap_or(0);
        let clause = &rest[..end];
        // `chunk_len`, `chunk length`, `chunk size`: the number is a length even without `tokens`.
        let named = clause.trim_start_matches(|c: char| c.is_alphabetic()).trim_start_matches(['_', ' ', '-', '=']);
        let named_length = ["len", "length", "size", "of "].iter().any(|w| named.starts_with(w));
        if let Some((value, after)) = first_number(clause) {
            let in_tokens = after.trim_start().starts_with("token");
            let bare = !after.starts_with(|c: char| c.is_alphanumeric());
            if value >= 1.0 && (in_tokens || (named_length && bare)) {
                return Some(value);
            }
        }
    }
    None
}

/// The first number in `s` (digits with optional `,` thousands separators) and the text after it.
/// A multiplier such as `2k` is not read: for tokens it means 2,048 as often as 2,000.
fn first_number(s: &str) -> Option<(f64, &str)> {
    let start = s.find(|c: char| c.is_ascii_digit())?;
    let bytes = s.as_bytes();
    let mut end = start;
    let mut digits = String::new();
    while end < bytes.len() {
        let c = bytes[end];
        if c.is_ascii_digit() {
            digits.push(c as char);
            end += 1;
        } else if c == b','
            && bytes.len() >= end + 4
            && bytes[end + 1..end + 4].iter().all(u8::is_ascii_digit)
            && bytes.get(end + 4).is_none_or(|d| !d.is_ascii_digit())
        {
            end += 1;
        } else {
            break;
        }
    }
    Some((digits.parse().ok()?, &s[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, tokens: f64) -> (u64, bool) {
        let r = read_loss_chunking(&Words::new(text), tokens, Some(151_936), 5120).expect("a valid reading");
        (r.chunks, r.head_inside)
    }

    fn refused(text: &str, tokens: f64) -> String {
        match read_loss_chunking(&Words::new(text), tokens, Some(151_936), 5120) {
            Err(e) => e.to_string(),
            Ok(r) => panic!("read {text:?} as {} chunks", r.chunks),
        }
    }

    #[test]
    fn a_loss_not_said_chunked_is_whole() {
        assert_eq!(read("torchtitan (2026), eager model", 8192.0), (1, false));
        assert_eq!(read("Megatron-LM; no chunked loss", 8192.0), (1, false));
        assert_eq!(read("chunked prefill; bf16; loss scaling", 8192.0), (1, false));
    }

    #[test]
    fn torchtune_chunks_the_cross_entropy_only() {
        assert_eq!(read("torchtune full_finetune_distributed; chunked output loss", 8192.0), (8, false));
        assert_eq!(read("torchtune; chunked cross entropy in 16 chunks", 8192.0), (16, false));
    }

    #[test]
    fn torchtitan_chunks_the_head_with_the_loss() {
        // 327,680 tokens in chunks of 8,192: 40 chunks (torchtitan docs/chunked_loss.md's run).
        let text = "torchtitan (2026), eager model, cross-entropy chunked to 8,192 tokens; chunked cross entropy";
        assert_eq!(read(text, 327_680.0), (40, true));
        assert_eq!(read("torchtitan; chunked loss, chunk_len 1024", 327_680.0), (320, true));
        assert_eq!(read("torchtitan; chunked loss", 327_680.0), (8, true));
        assert_eq!(read("torchtitan; chunked loss (2k token chunks)", 8192.0), (8, true));
    }

    #[test]
    fn fused_linear_cross_entropy_uses_liger_chunks() {
        // Qwen3-14B: inc = ⌈151936 / 5120⌉ = 30; 8192 tokens: chunk = next_pow2(⌈8192/30⌉ = 274)
        // = 512, 16 chunks.
        assert_eq!(read("HF Trainer; use_liger_kernel: true (fused linear cross entropy)", 8192.0), (16, true));
        assert_eq!(liger_chunks(4096.0 * 4.0, 32000, 4096), 8, "Liger's own example: BT 16,384, V 32,000, H 4,096");
        assert_eq!(liger_chunks(100.0, 0, 4096), 1);
        assert_eq!(read("axolotl; liger disabled", 8192.0), (1, false));
    }

    #[test]
    fn chunk_lengths_are_read_with_their_separators() {
        assert_eq!(stated_chunk_tokens("cross-entropy chunked to 8,192 tokens"), Some(8192.0));
        assert_eq!(stated_chunk_tokens("chunk_len=1024"), Some(1024.0));
        assert_eq!(stated_chunk_tokens("chunk size 2048"), Some(2048.0));
        assert_eq!(stated_chunk_tokens("chunk size 2k"), None);
        assert_eq!(stated_chunk_tokens("8 chunks of the loss"), None);
        assert_eq!(stated_chunk_tokens("chunked loss; 8,192 tokens per sequence"), None);
        assert_eq!(stated_chunk_tokens("loss in chunks of 4096"), Some(4096.0));
        assert_eq!(stated_chunk_tokens("8 chunks of the loss"), None);
    }

    #[test]
    fn the_loss_said_in_chunks_of_a_length_is_read() {
        assert_eq!(read("torchtitan; loss in chunks of 4096", 32_768.0), (8, true));
        assert_eq!(read("torchtune; cross-entropy in chunks of 1,024 tokens", 8192.0), (8, false));
    }

    #[test]
    fn counts_outside_the_switch_are_refused_not_clamped() {
        let zero = refused("torchtune; chunked cross entropy in 0 chunks", 8192.0);
        assert!(zero.contains("0 chunks") && zero.contains("from 1 to 65536"), "{zero}");
        assert!(zero.contains("notes (chunked loss)"), "names the words' fields: {zero}");
        let many = refused("torchtune; chunked cross entropy in 100000 chunks", 8192.0);
        assert!(many.contains("100000 chunks"), "{many}");
        // A stated length that leaves more chunks than the switch holds: 1,000,000 tokens in
        // chunks of 8 tokens is 125,000 chunks.
        let short = refused("torchtitan; chunked loss, chunk_len 8", 1_000_000.0);
        assert!(short.contains("125000 chunks") && short.contains("at most 65536"), "{short}");
        assert!(refused("torchtune; chunked loss in 2.5 chunks", 8192.0).contains("2.5 chunks"));
    }
}
