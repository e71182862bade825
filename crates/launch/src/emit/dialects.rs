//! Launches that the Megatron reader reads but that are not Megatron-LM's own flags, rewritten in
//! their own language: NeMo scripts of Hydra overrides (`model.tensor_model_parallel_size=8`),
//! Hugging Face Trainer launches (`--per_device_train_batch_size`), and other launchers whose
//! flags the reader knows by other names (OpenRLHF's `--train.micro_batch_size`).

use super::Plan;
use super::lines::Lines;
use super::megatron::{Script, find_flag, place};
use crate::Launch;
use crate::settings::SettingOrigin;
use fmperf_core::Error;
use fmperf_core::extended::{Recompute, Sharding};
use fmperf_core::vocab::NoteList;

/// A NeMo script of Hydra overrides (`model.tensor_model_parallel_size=8`): NeMo 1's keys, each
/// rewritten where written, the missing ones added as overrides next to them.
pub(super) fn overrides(sc: &mut Script<'_>, l: &Launch, p: &Plan) -> Result<(), Error> {
    let wanted = super::yaml::wanted(super::yaml::Family::Nemo1, p, Some(l), sc.notes);
    for (path, v, origin) in wanted {
        let line = origin.filter(|o| o.key == path).map_or(0, |o| o.line);
        let here = if line > 0 { Some(line) } else { find_anywhere(&sc.lines, &path) };
        match here {
            Some(n) => {
                sc.set(Some(&SettingOrigin::new(path.clone(), n)), &v)?;
            }
            None if v == "null"
                || (v == "false" && path.ends_with("sequence_parallel"))
                || (v == "1" && super::yaml::is_degree(&path)) => {}
            None => sc.add.push(format!("{path}={v}")),
        }
    }
    let add = std::mem::take(&mut sc.add);
    if !add.is_empty() {
        place(sc, l, &add)?;
    }
    Ok(())
}

/// The Megatron-LM (and Megatron-DeepSpeed) names of the degree and batch flags.
pub(super) const MEGATRON_LAYOUT: &[&str] =
    &["--micro-batch-size", "--global-batch-size", "--tensor-model-parallel-size", "--pipeline-model-parallel-size"];

/// A launcher whose flags the reader knows by other names (OpenRLHF's `--train.micro_batch_size`,
/// …): the values it writes are rewritten where written; a degree it does not write cannot be
/// added in its language (an error), nor can recomputation or sharding be changed (a note).
pub(super) fn other_dialect(sc: &mut Script<'_>, l: &Launch, p: &Plan) -> Result<(), Error> {
    let s = &l.settings;
    for (slot, v, name) in [(&s.tp, p.tp, "tensor"), (&s.pp, p.pp, "pipeline"), (&s.cp, p.cp, "context")] {
        if !sc.set(slot.origin.as_ref(), &v.to_string())? && v != 1 {
            return Err(Error::invalid(
                "layout",
                v,
                format!(
                    "this launch's flags ({}) have no {name}-parallel degree fmperf can write; emit it as a \
                     Megatron-LM, NeMo or torchtitan file instead",
                    s.mbs.key_or("its batch flags")
                ),
            ));
        }
    }
    sc.set(s.mbs.origin.as_ref(), &p.mbs.to_string())?;
    sc.set(s.global_batch.origin.as_ref(), &p.global.to_string())?;
    sc.set(s.grad_accumulation.origin.as_ref(), &p.accumulation().to_string())?;
    if s.recompute.copied().is_some_and(|r| r != p.recompute) {
        sc.notes.not_written(format!(
            "recompute {}: not written in this launch's own flags ({}); set it by hand",
            p.recompute.as_str(),
            s.recompute.key_or("none")
        ));
    }
    if s.sharding.copied().is_some_and(|r| r != p.sharding) {
        sc.notes.not_written(format!(
            "sharding {}: not written in this launch's own flags ({}); set it by hand",
            p.sharding.as_str(),
            s.sharding.key_or("none")
        ));
    }
    Ok(())
}

/// A Hugging Face Trainer launch (`--per_device_train_batch_size`): data parallelism only, its
/// micro-batch, gradient accumulation, `--gradient_checkpointing` and `--fsdp` flags, written with
/// the file's separator (`_` or `-`).
pub(super) fn trainer(sc: &mut Script<'_>, l: &Launch, p: &Plan, dash: char) -> Result<(), Error> {
    if p.tp > 1 || p.pp > 1 || p.cp > 1 {
        return Err(Error::invalid(
            "layout",
            format!("tp {} · pp {} · cp {}", p.tp, p.pp, p.cp),
            "a Hugging Face Trainer launch runs data parallelism only (tensor, pipeline and context degrees 1); \
             emit it as a Megatron-LM, NeMo or torchtitan file instead",
        ));
    }
    let s = &l.settings;
    let flag = |name: &str| format!("--{}", name.replace('-', &dash.to_string()));
    sc.set(s.mbs.origin.as_ref(), &p.mbs.to_string())?;
    let ga = p.accumulation();
    if !sc.set(s.grad_accumulation.origin.as_ref(), &ga.to_string())? && ga != 1 {
        sc.add.push(format!("{} {ga}", flag("gradient-accumulation-steps")));
    }
    let rec =
        s.recompute.origin.as_ref().filter(|o| o.line > 0 && o.key.replace('_', "-") == "--gradient-checkpointing");
    let full = match p.recompute {
        Recompute::Full => true,
        Recompute::None => false,
        r => {
            sc.notes.not_written(format!(
                "recompute {}: the Trainer's gradient checkpointing recomputes whole blocks; the nearest to this level \
                 (no extra forward work) is no checkpointing",
                r.as_str()
            ));
            false
        }
    };
    let text = if full { "True" } else { "False" };
    if !sc.set(rec, text)? && full {
        sc.add.push(format!("{} True", flag("gradient-checkpointing")));
    }
    let sh = s.sharding.origin.as_ref().filter(|o| o.line > 0 && o.file.is_none());
    let fsdp_here = sh.is_some_and(|o| o.key.replace('_', "-") == "--fsdp");
    let strategy = match p.sharding {
        Sharding::Zero3 => Some("full_shard auto_wrap"),
        Sharding::Zero2 => Some("shard_grad_op auto_wrap"),
        Sharding::Ddp => None,
        Sharding::Zero1 => {
            sc.notes.not_written(
                "sharding zero1: PyTorch FSDP has no optimizer-only sharding; it is DeepSpeed's ZeRO stage 1 \
                 (\"zero_optimization\": {\"stage\": 1} in the DeepSpeed JSON), not written here"
                    .into(),
            );
            None
        }
    };
    match (strategy, fsdp_here) {
        (Some(_), true) if s.sharding.copied() == Some(p.sharding) => {}
        (Some(st), true) => {
            // The strategy word replaced, the other words (`auto_wrap`, `offload`) kept.
            let key = sh.map(|o| o.key.clone()).unwrap_or_default();
            let (n, found) = sc.locate(sh.map_or(0, |o| o.line), &key)?;
            let old = found.value.and_then(|(a, b)| sc.lines.get(n).and_then(|t| t.get(a..b))).unwrap_or("");
            let words: Vec<&str> = old.trim_matches(|c| c == '"' || c == '\'').split_whitespace().collect();
            let strategy = st.split(' ').next().unwrap_or(st);
            let mut new: Vec<&str> = words.iter().map(|w| if w.contains("shard") { strategy } else { w }).collect();
            if !new.contains(&strategy) {
                new.insert(0, strategy);
            }
            sc.set(sh, &format!("\"{}\"", new.join(" ")))?;
        }
        (None, true) => _ = sc.remove(sh, true)?,
        (Some(st), false) => {
            if sh.is_some() || s.sharding.origin.as_ref().is_some_and(|o| o.file.is_some()) {
                sc.notes.not_written(format!(
                    "sharding {}: the file's sharding comes from its DeepSpeed configuration; set its ZeRO stage there",
                    p.sharding.as_str()
                ));
            } else {
                sc.add.push(format!("{} \"{st}\"", flag("fsdp")));
            }
        }
        (None, false) => {}
    }
    let add = std::mem::take(&mut sc.add);
    if !add.is_empty() {
        place(sc, l, &add)?;
    }
    Ok(())
}

/// The last line (outside comments) that writes `key=`.
fn find_anywhere(lines: &Lines, key: &str) -> Option<usize> {
    (1..=lines.len()).rev().find(|n| {
        let body = lines.get(*n).unwrap_or("");
        !body.trim_start().starts_with('#') && find_flag(body, key).is_some()
    })
}
