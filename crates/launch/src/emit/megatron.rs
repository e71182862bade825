//! Megatron-LM launches written back in place: a shell script's layout flags rewritten where they
//! are written (`--flag value`, `--flag=value`, a value that is a shell variable
//! `--tensor-model-parallel-size $TP` by its plain `TP=8` assignment, a flag spelled inside an
//! array or a string variable found where it is written), switches added or removed without
//! breaking `\` continuations or arrays, missing flags added next to a layout flag. Launches in
//! other flag languages go to [`super::dialects`]; fresh scripts are [`super::megatron_flags`]'s.

use super::lines::{Lines, indent, value_at};
use super::megatron_flags::{recompute_flags, sharding_flags, vpp_flag};
use super::{Plan, dialects};
use crate::Launch;
use crate::settings::{SettingOrigin, Slot};
use fmperf_core::Error;
use fmperf_core::extended::{Recompute, Sharding};
use fmperf_core::vocab::{Note, NoteList};

/// Where a flag is written on a line: the flag's byte range and its value's (if any).
pub(super) struct Found {
    pub(super) flag: (usize, usize),
    pub(super) value: Option<(usize, usize)>,
}

/// Finds `--name` as a whole word on `body` (the last occurrence: argparse keeps the last).
pub(super) fn find_flag(body: &str, flag: &str) -> Option<Found> {
    let mut best = None;
    let mut from = 0;
    while let Some(i) = body.get(from..).and_then(|r| r.find(flag)) {
        let start = from + i;
        let end = start + flag.len();
        from = end;
        let before = body[..start].chars().next_back();
        let after = body[end..].chars().next();
        let left_ok = before.is_none_or(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '('));
        let right_ok = after.is_none_or(|c| c.is_whitespace() || matches!(c, '=' | '"' | '\'' | '\\' | ')'));
        if !(left_ok && right_ok) {
            continue;
        }
        let value = if after == Some('=') { value_at(body, end + 1) } else { value_at(body, end) };
        let value = value.filter(|(s, e)| !body[*s..*e].starts_with('-'));
        best = Some(Found { flag: (start, end), value });
    }
    best
}

/// The in-place rewriter of one script.
pub(super) struct Script<'a> {
    pub(super) lines: Lines,
    pub(super) text: &'a str,
    pub(super) notes: &'a mut Vec<Note>,
    /// Flags to add next to the anchor.
    pub(super) add: Vec<String>,
}

impl Script<'_> {
    /// The origin's line when it is a flag of this file.
    pub(super) fn line_of(&mut self, o: Option<&SettingOrigin>) -> Option<usize> {
        let o = o?;
        if o.line == 0 || !(o.key.starts_with("--") || is_override(&o.key)) {
            return None;
        }
        if let Some(f) = &o.file {
            self.notes.not_written(format!("{} is set in {f}: not rewritten here", o.key));
            return None;
        }
        Some(o.line)
    }

    /// The line and place of flag `key`: on line `line` (the reader's origin), else — a flag read
    /// from a variable or an array is placed at the line that expands it — the one line of the file
    /// that writes it (the last one, with a note, when several do).
    pub(super) fn locate(&mut self, line: usize, key: &str) -> Result<(usize, Found), Error> {
        if let Some(f) = find_flag(self.lines.get(line).unwrap_or(""), key) {
            return Ok((line, f));
        }
        let mut hits = Vec::new();
        for n in 1..=self.lines.len() {
            let body = self.lines.get(n).unwrap_or("");
            if body.trim_start().starts_with('#') {
                continue;
            }
            if let Some(f) = find_flag(body, key) {
                hits.push((n, f));
            }
        }
        let count = hits.len();
        match hits.pop() {
            Some(hit) => {
                if count > 1 {
                    self.notes.not_written(format!(
                        "{key} is written on {count} lines: the last one (line {}) is rewritten",
                        hit.0
                    ));
                }
                Ok(hit)
            }
            None => Err(Error::invalid(key, line, "fmperf read this flag but cannot find where it is written")),
        }
    }

    /// Sets the value of the flag read at `o` to `v`; `false` when the file does not write it.
    pub(super) fn set(&mut self, o: Option<&SettingOrigin>, v: &str) -> Result<bool, Error> {
        let Some(line) = self.line_of(o) else { return Ok(false) };
        let key = o.map(|o| o.key.clone()).unwrap_or_default();
        let (line, found) = self.locate(line, &key)?;
        let body = self.lines.get(line).unwrap_or("").to_string();
        let (vline, (s, e)) = match found.value {
            Some(r) => (line, r),
            None => {
                let next = self.lines.get(line + 1).unwrap_or("").to_string();
                let tail = body[found.flag.1..].trim();
                match value_at(&next, 0) {
                    Some(r) if tail.is_empty() || tail == "\\" => (line + 1, r),
                    _ => return Err(Error::invalid(&key, line, "its value is not a word fmperf can rewrite")),
                }
            }
        };
        let word = self.lines.get(vline).unwrap_or("")[s..e].to_string();
        if word == v {
            return Ok(true);
        }
        if let Some(var) = variable(&word) {
            if self.set_variable(&var, vline, v, &key) {
                return Ok(true);
            }
            self.notes.not_written(format!(
                "{key} {word} (line {vline}): the variable has no plain assignment of its own here; the flag's word is \
                 replaced by {v}"
            ));
        }
        let (qs, qe) = unquote(&word);
        self.lines.splice(vline, s + qs, s + qe, v);
        Ok(true)
    }

    /// Replaces the value of the last plain `VAR=value` assignment before line `used` (`export`
    /// allowed) when the variable is used only once; `false` otherwise.
    fn set_variable(&mut self, var: &str, used: usize, v: &str, key: &str) -> bool {
        let uses = count_uses(self.text, var);
        if uses != 1 {
            return false;
        }
        let mut at = None;
        for n in 1..=self.lines.len() {
            let body = self.lines.get(n).unwrap_or("");
            let t = body.trim_start();
            let t =
                ["export ", "declare ", "readonly ", "local "].iter().fold(t, |t, p| t.strip_prefix(p).unwrap_or(t));
            let Some(rest) = t.strip_prefix(var).and_then(|r| r.strip_prefix('=')) else { continue };
            let eq = body.len() - rest.len();
            let Some((s, e)) = value_at(body, eq) else { continue };
            if s != eq {
                continue;
            }
            let word = &body[s..e];
            let plain = word.trim_matches(|c| c == '"' || c == '\'');
            if plain.is_empty() || !plain.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')) {
                continue;
            }
            if n < used || at.is_none() {
                at = Some((n, s, e));
            }
        }
        let Some((n, s, e)) = at else { return false };
        let word = self.lines.get(n).unwrap_or("")[s..e].to_string();
        let (qs, qe) = unquote(&word);
        if &word[qs..qe] == v {
            return true;
        }
        self.lines.splice(n, s + qs, s + qe, v);
        self.notes.not_written(format!("{key} ${var}: the assignment {var}= (line {n}) now says {v}"));
        true
    }

    /// Removes the flag read at `o` (with its value when `with_value`).
    pub(super) fn remove(&mut self, o: Option<&SettingOrigin>, with_value: bool) -> Result<bool, Error> {
        let Some(line) = self.line_of(o) else { return Ok(false) };
        let key = o.map(|o| o.key.clone()).unwrap_or_default();
        let (line, found) = self.locate(line, &key)?;
        let body = self.lines.get(line).unwrap_or("").to_string();
        let end = match (with_value, found.value) {
            (true, Some((_, e))) => e,
            (true, None) => return Err(Error::invalid(&key, line, "its value is not on its line")),
            (false, _) => found.flag.1,
        };
        let start = body[..found.flag.0].trim_end_matches([' ', '\t']).len();
        let start = if start == 0 || body[..start].ends_with(['"', '\'', '(']) { found.flag.0 } else { start };
        let new = format!("{}{}", &body[..start], &body[end..]);
        let rest = new.trim();
        if rest.is_empty() && in_array(&self.lines, line) {
            self.lines.remove(line);
        } else if rest.is_empty() {
            // The flag was alone on its line: without a continuation the line stays (empty) so that
            // the command still ends there.
            self.lines.set(line, String::new());
        } else if rest == "\\" {
            self.lines.remove(line);
        } else {
            self.lines.set(line, new);
        }
        Ok(true)
    }

    /// Replaces the flag read at `o` (a switch) by `with` (flags).
    pub(super) fn replace_switch(&mut self, o: Option<&SettingOrigin>, with: &str) -> Result<bool, Error> {
        let Some(line) = self.line_of(o) else { return Ok(false) };
        let key = o.map(|o| o.key.clone()).unwrap_or_default();
        let (line, found) = self.locate(line, &key)?;
        let body = self.lines.get(line).unwrap_or("").to_string();
        let end = match found.value {
            Some((_, e)) if body[found.flag.1..].starts_with('=') => e,
            _ => found.flag.1,
        };
        self.lines.splice(line, found.flag.0, end, with);
        Ok(true)
    }

    /// A value flag: rewritten where read, else added unless `v` is the default.
    fn value(&mut self, slot: &Slot<u64>, flag: &str, v: u64, default: u64) -> Result<(), Error> {
        if !self.set(slot.origin.as_ref(), &v.to_string())? && v != default {
            self.add.push(format!("{flag} {v}"));
        }
        Ok(())
    }

    /// A switch: kept, removed or added.
    fn switch(&mut self, slot_on: bool, o: Option<&SettingOrigin>, flag: &str, want: bool) -> Result<(), Error> {
        let here = slot_on && o.is_some_and(|o| o.key == flag && o.line > 0);
        if want && !here {
            self.add.push(flag.into());
        } else if !want && here {
            self.remove(o, false)?;
        }
        Ok(())
    }
}

fn unquote(word: &str) -> (usize, usize) {
    let q = word.starts_with(['"', '\'']) && word.len() >= 2;
    if q { (1, word.len() - 1) } else { (0, word.len()) }
}

/// `NAME` of `$NAME`, `${NAME}`, `${NAME:-8}`.
fn variable(word: &str) -> Option<String> {
    let w = word.trim_matches('"');
    let rest = w.strip_prefix('$')?;
    let name: String =
        rest.trim_start_matches('{').chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    (!name.is_empty()).then_some(name)
}

/// Uses of `$var` / `${var…}` in `text`.
fn count_uses(text: &str, var: &str) -> usize {
    let mut n = 0;
    for pat in [format!("${var}"), format!("${{{var}")] {
        let mut from = 0;
        while let Some(i) = text.get(from..).and_then(|r| r.find(&pat)) {
            let end = from + i + pat.len();
            let next = text[end..].chars().next();
            if next.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_')) {
                n += 1;
            }
            from = end;
        }
    }
    n
}

/// Whether a key is a Hydra override of a NeMo script (`model.tensor_model_parallel_size=8`).
pub(super) fn is_override(key: &str) -> bool {
    !key.starts_with('-') && !key.starts_with('#') && key.contains('.')
}

/// Rewrites a Megatron-LM script's layout flags in place.
pub(super) fn rewrite(text: &str, l: &Launch, p: &Plan, notes: &mut Vec<Note>) -> Result<String, Error> {
    let s = &l.settings;
    let mut sc = Script { lines: Lines::new(text), text, notes, add: Vec::new() };
    let layout_origins = [&s.tp.origin, &s.pp.origin, &s.mbs.origin, &s.global_batch.origin];
    if layout_origins.iter().any(|o| o.as_ref().is_some_and(|o| o.line > 0 && is_override(&o.key))) {
        dialects::overrides(&mut sc, l, p)?;
        return Ok(sc.lines.finish());
    }
    let trainer_key = s.mbs.origin.as_ref().filter(|o| o.key.replace('_', "-").starts_with("--per-device-train"));
    if let Some(k) = trainer_key {
        let dash = if k.key.contains('_') { '_' } else { '-' };
        dialects::trainer(&mut sc, l, p, dash)?;
        return Ok(sc.lines.finish());
    }
    let megatron_names = [&s.mbs.origin, &s.tp.origin, &s.global_batch.origin]
        .into_iter()
        .flatten()
        .filter(|o| o.line > 0 && o.key.starts_with("--"))
        .all(|o| dialects::MEGATRON_LAYOUT.contains(&o.key.as_str()));
    if !megatron_names {
        dialects::other_dialect(&mut sc, l, p)?;
        return Ok(sc.lines.finish());
    }
    sc.value(&s.tp, "--tensor-model-parallel-size", p.tp, 1)?;
    sc.value(&s.pp, "--pipeline-model-parallel-size", p.pp, 1)?;
    sc.value(&s.cp, "--context-parallel-size", p.cp, 1)?;
    if p.moe {
        sc.value(&s.moe.ep, "--expert-model-parallel-size", p.ep, 1)?;
        sc.value(&s.moe.etp, "--expert-tensor-parallel-size", p.etp, p.tp)?;
    }
    sc.value(&s.mbs, "--micro-batch-size", p.mbs, 0)?;
    sc.value(&s.global_batch, "--global-batch-size", p.global, 0)?;
    if s.grad_accumulation.origin.is_some() {
        sc.set(s.grad_accumulation.origin.as_ref(), &p.accumulation().to_string())?;
    }
    // Virtual pipeline stages.
    let lpvs = s.layers_per_virtual_stage.origin.as_ref();
    let vpp = s.vpp.origin.as_ref();
    if p.vpp <= 1 {
        sc.remove(lpvs, true)?;
        sc.remove(vpp, true)?;
    } else if sc.line_of(lpvs).is_some() {
        match p.layers_per_virtual_stage() {
            Some(n) => _ = sc.set(lpvs, &n.to_string())?,
            None => {
                sc.remove(lpvs, true)?;
                sc.add.push(vpp_flag(p));
            }
        }
    } else if !sc.set(vpp, &p.vpp.to_string())? {
        sc.add.push(vpp_flag(p));
    }
    recompute(&mut sc, l, p)?;
    sharding(&mut sc, l, p)?;
    let sp_on = s.sequence_parallel.copied() == Some(true);
    sc.switch(sp_on, s.sequence_parallel.origin.as_ref(), "--sequence-parallel", p.sequence_parallel)?;
    if p.shard_group.is_some() && p.sharding == Sharding::Zero3 {
        sc.notes.not_written("sharding inside groups (HSDP) has no Megatron-LM flag: full sharding is written".into());
    }
    let add = std::mem::take(&mut sc.add);
    if !add.is_empty() {
        place(&mut sc, l, &add)?;
    }
    Ok(sc.lines.finish())
}

fn recompute(sc: &mut Script<'_>, l: &Launch, p: &Plan) -> Result<(), Error> {
    let s = &l.settings;
    let o = s.recompute.origin.as_ref().filter(|o| o.line > 0);
    let key = o.map(|o| o.key.as_str()).unwrap_or("");
    let want = match p.recompute {
        Recompute::Op => {
            sc.notes.not_written(
                "recompute op (torchtitan's operator-level checkpointing) has no Megatron flag: Megatron's selective \
                 recomputation is written"
                    .into(),
            );
            Recompute::Selective
        }
        // A partial level in a file that states another policy: the nearer whole one in place.
        Recompute::Partial(s) if o.is_some() => {
            let r = if s.fraction() >= 0.5 { Recompute::Full } else { Recompute::None };
            sc.notes.not_written(format!(
                "recompute {}: written as {} in place of the file's policy (the block method's count is not edited in place)",
                s.fraction(),
                r.as_str()
            ));
            r
        }
        r => r,
    };
    if s.recompute.copied() == Some(want) && o.is_some() {
        return Ok(());
    }
    match (want, key) {
        (Recompute::None, "--recompute-granularity") => _ = sc.remove(o, true)?,
        (Recompute::None, "--recompute-activations" | "--checkpoint-activations") => _ = sc.remove(o, false)?,
        (Recompute::Selective, "--recompute-granularity") => _ = sc.set(o, "selective")?,
        (Recompute::Selective, "--checkpoint-activations") => {
            sc.replace_switch(o, "--recompute-granularity selective")?;
            sc.notes.not_written(
                "--checkpoint-activations (full recomputation) replaced by --recompute-granularity selective; an older \
                 Megatron (or Megatron-DeepSpeed) without that flag has no selective recomputation"
                    .into(),
            );
        }
        (Recompute::Full, "--recompute-granularity") => {
            sc.set(o, "full")?;
            // A method or count the file writes (ignored without `full`) is set, else added.
            for (flag, v) in [("--recompute-method", "uniform"), ("--recompute-num-layers", "1")] {
                let here = sc.locate(0, flag).ok().map(|(n, _)| SettingOrigin::new(flag, n));
                if !sc.set(here.as_ref(), v)? {
                    sc.add.push(format!("{flag} {v}"));
                }
            }
        }
        (Recompute::Full, "--recompute-activations") => {
            _ = sc
                .replace_switch(o, "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1")?
        }
        (r, _) => {
            let mut n = Vec::new();
            sc.add.extend(recompute_flags(r, p, &mut n));
            sc.notes.extend(n);
        }
    }
    Ok(())
}

fn sharding(sc: &mut Script<'_>, l: &Launch, p: &Plan) -> Result<(), Error> {
    let s = &l.settings;
    let o = s.sharding.origin.as_ref().filter(|o| o.line > 0);
    let key = o.map(|o| o.key.as_str()).unwrap_or("");
    if key == "--zero-stage" {
        let bf16_optimizer = s.fp32_grad_accumulation.copied() == Some(true);
        let stage = match p.sharding {
            Sharding::Ddp => {
                if bf16_optimizer {
                    sc.notes.not_written(
                        "no sharding: DeepSpeed's BF16 optimizer always shards its states (as ZeRO-1); stage 0 kept"
                            .into(),
                    );
                }
                0
            }
            Sharding::Zero1 if bf16_optimizer => 0,
            Sharding::Zero1 => 1,
            Sharding::Zero2 => 2,
            Sharding::Zero3 => 3,
        };
        sc.set(o, &stage.to_string())?;
        return Ok(());
    }
    if s.sharding.copied() == Some(p.sharding) && o.is_some() {
        return Ok(());
    }
    let mut n = Vec::new();
    let wanted: Vec<String> = sharding_flags(p, &mut n).into_iter().map(str::to_string).collect();
    match key {
        "--use-distributed-optimizer" if wanted.is_empty() => _ = sc.remove(o, false)?,
        "--use-distributed-optimizer" | "--use-torch-fsdp2" | "--use-megatron-fsdp" => {
            _ = sc.replace_switch(o, &wanted.join(" "))?
        }
        "--data-parallel-sharding-strategy" => {
            let v = match p.sharding {
                Sharding::Ddp => "no_shard",
                Sharding::Zero1 => "optim",
                Sharding::Zero2 => "optim_grads",
                Sharding::Zero3 => "optim_grads_params",
            };
            sc.set(o, v)?;
        }
        _ => sc.add.extend(wanted),
    }
    Ok(())
}

/// Adds `flags` next to a layout flag the file writes: one per new line after it when its line is
/// continued (`\`) or in an array, else after its value on the same line.
pub(super) fn place(sc: &mut Script<'_>, l: &Launch, flags: &[String]) -> Result<(), Error> {
    let s = &l.settings;
    let anchors = [
        &s.tp.origin,
        &s.pp.origin,
        &s.mbs.origin,
        &s.global_batch.origin,
        &s.layers.origin,
        &s.seq_len.origin,
        &s.hidden.origin,
    ];
    let anchor = anchors
        .into_iter()
        .flatten()
        .find(|o| o.line > 0 && o.file.is_none() && (o.key.starts_with("--") || is_override(&o.key)));
    let Some(a) = anchor else {
        return Err(Error::invalid(
            "--emit",
            "megatron",
            "the script writes none of the layout or model flags next to which the new flags would go",
        ));
    };
    let (line, found) = sc.locate(a.line, &a.key)?;
    let body = sc.lines.get(line).unwrap_or("").to_string();
    let continued = body.trim_end().ends_with('\\');
    let first = body.trim_start();
    let words = first.trim_end_matches(['\\', ' ', '\t']).split_whitespace().count();
    let single = (first.starts_with("--") && words <= 2) || (is_override(first) && words == 1);
    if continued && single {
        let ind = indent(&body).to_string();
        for f in flags {
            sc.lines.insert_after(line, format!("{ind}{f} \\"));
        }
    } else if single && in_array(&sc.lines, line) {
        let ind = indent(&body).to_string();
        for f in flags {
            sc.lines.insert_after(line, format!("{ind}{f}"));
        }
    } else {
        let at = found.value.map_or(found.flag.1, |(_, e)| e);
        let extra: String = flags.iter().map(|f| format!(" {f}")).collect();
        sc.lines.splice(line, at, at, &extra);
    }
    sc.notes.not_written(format!("added next to {} (line {line}): {}", a.key, flags.join(" ")));
    Ok(())
}

/// Whether line `n` is inside a bash array `NAME=(` … `)` of one flag per line.
fn in_array(lines: &Lines, n: usize) -> bool {
    let mut i = n;
    while i > 1 {
        i -= 1;
        let t = lines.get(i).unwrap_or("").trim();
        if t.ends_with('(') {
            return true;
        }
        if !(t.is_empty() || t.starts_with('#') || t.starts_with('-') || t.starts_with('$')) || t.ends_with(')') {
            return false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use fmperf_core::extended::ExtendedOptions;

    #[test]
    fn hydra_overrides_are_rewritten_as_overrides() {
        let text = "# fmperf: system=nvidia_h100_sxm5_80gb\npython megatron_gpt_pretraining.py \\\n  trainer.devices=8 \\\n  \
                    trainer.num_nodes=2 \\\n  model.micro_batch_size=1 \\\n  model.global_batch_size=64 \\\n  \
                    model.tensor_model_parallel_size=4 \\\n  model.num_layers=32 model.hidden_size=4096 \\\n  \
                    model.num_attention_heads=32 model.encoder_seq_length=4096 \\\n  model.tokenizer.type=gpt2 \\\n  \
                    model.optim.name=fused_adam\n";
        let l = crate::parse_as(crate::Format::Megatron, text).unwrap();
        let sc = crate::LaunchScenario::from_launch(&l, &crate::Overrides::default()).unwrap();
        let y = fmperf_core::extended::Layout::placed(2, 1, 2, 4, 2, 64, 1);
        let o = ExtendedOptions { recompute: Recompute::Full, sharding: Sharding::Zero1, ..sc.options };
        let out = super::super::emit(
            super::super::Target::Megatron,
            Some(super::super::Input { text, launch: &l, name: None }),
            &sc,
            &y,
            &o,
        )
        .unwrap();
        assert!(out.text.contains("  model.tensor_model_parallel_size=2 \\\n"), "{}", out.text);
        assert!(out.text.contains("model.pipeline_model_parallel_size=2"), "{}", out.text);
        // ZeRO-1 in a NeMo 1 file is Megatron-Core's distributed optimizer (Apex's
        // `distributed_fused_adam` shards the gradients too: ZeRO-2).
        assert!(out.text.contains("model.optim.name=mcore_distributed_optim\n"), "{}", out.text);
        assert!(!out.text.contains("--"), "{}", out.text);
        let back = crate::parse_as(crate::Format::Megatron, &out.text).unwrap();
        let b = crate::LaunchScenario::from_launch(&back, &crate::Overrides::default()).unwrap();
        assert_eq!((b.layout.tp, b.layout.pp, b.layout.dp, b.layout.mbs), (2, 2, 4, 2));
        assert_eq!((b.options.recompute, b.options.sharding), (Recompute::Full, Sharding::Zero1));
    }

    #[test]
    fn one_line_commands_and_recompute_flags() {
        let text = "# fmperf: system=nvidia_h100_sxm5_80gb gpus=8\ntorchrun pretrain_gpt.py --num-layers 32 \
                    --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --vocab-size 32000 --bf16 \
                    --micro-batch-size=1 --global-batch-size 64 --recompute-granularity selective \
                    --recompute-method block --recompute-num-layers 4 --tensor-model-parallel-size 2 --lr 1e-4\n";
        let l = crate::parse(text, None).unwrap();
        let sc = crate::LaunchScenario::from_launch(&l, &crate::Overrides::default()).unwrap();
        let y = fmperf_core::extended::Layout::placed(1, 1, 2, 4, 2, 64, 1);
        let o = ExtendedOptions { recompute: Recompute::Full, interleave: 2, ..sc.options };
        let out = super::super::emit(
            super::super::Target::Megatron,
            Some(super::super::Input { text, launch: &l, name: None }),
            &sc,
            &y,
            &o,
        )
        .unwrap();
        let t = &out.text;
        assert!(t.contains("--micro-batch-size=2 --global-batch-size 64 --recompute-granularity full"), "{t}");
        assert!(
            t.contains("--recompute-method uniform --recompute-num-layers 1 --tensor-model-parallel-size 1"),
            "{t}"
        );
        assert!(t.contains("--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 8 --lr"), "{t}");
        assert_eq!(t.lines().count(), 2, "{t}");
        let b =
            crate::LaunchScenario::from_launch(&crate::parse(t, None).unwrap(), &crate::Overrides::default()).unwrap();
        assert_eq!((b.layout.tp, b.layout.pp, b.layout.mbs, b.options.interleave), (1, 2, 2, 2));
        assert_eq!(b.options.recompute, Recompute::Full);
    }

    #[test]
    fn flags_and_variables_are_found() {
        let f = find_flag("  --tp 8 --tensor-model-parallel-size=$TP \\", "--tensor-model-parallel-size").unwrap();
        assert_eq!(f.value, Some((38, 41)));
        assert!(find_flag("--tensor-model-parallel-size-x 2", "--tensor-model-parallel-size").is_none());
        assert_eq!(variable("${TP:-8}").as_deref(), Some("TP"));
        assert_eq!(variable("8"), None);
        assert_eq!(count_uses("TP=8\n--tp $TP ${TP} $TPX", "TP"), 2);
    }
}
