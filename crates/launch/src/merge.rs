//! Several files read as one run (`--from launch.sh --from ds_config.json`, a torchtitan TOML with
//! the model's `config.json`, a MaxText command line with its model file): each file is read on its
//! own, then their [`Settings`] are merged field by field.
//!
//! The rule: a field one file sets and the others leave out is taken from that file; a field two
//! files set to the same value is kept (the first file's origin); a field two files set to
//! **different** values is an error naming both files, keys and lines — never a silent choice.
//! Origins of every later file carry its name, so messages say which file a value came from.

use super::settings::{Moe, SettingOrigin, Settings, Slot};
use fmperf_core::Error;

/// Calls `$m!(field)` for every slot of [`Settings`] except `moe` (see [`for_each_moe_slot`]).
macro_rules! for_each_settings_slot {
    ($m:ident) => {
        $m!(model_name);
        $m!(layers);
        $m!(hidden);
        $m!(ffn_hidden);
        $m!(heads);
        $m!(kv_heads);
        $m!(head_dim);
        $m!(gated_mlp);
        $m!(vocab);
        $m!(vocab_divisible_by);
        $m!(tied_embeddings);
        $m!(seq_len);
        $m!(window_tokens);
        $m!(window_pattern);
        $m!(tp);
        $m!(pp);
        $m!(cp);
        $m!(dp);
        $m!(dp_replicate);
        $m!(optimizer_instances);
        $m!(optimizer);
        $m!(vpp);
        $m!(layers_per_virtual_stage);
        $m!(mbs);
        $m!(local_batch);
        $m!(global_batch);
        $m!(grad_accumulation);
        $m!(recompute);
        $m!(recompute_blocks);
        $m!(sharding);
        $m!(sequence_parallel);
        $m!(cp_comm);
        $m!(attention_kernel);
        $m!(cp_ulysses);
        $m!(precision);
        $m!(optimizer_states);
        $m!(fp8_weights);
        $m!(log_num_zeros_in_grad);
        $m!(log_params_norm);
        $m!(grad_accumulation_fusion);
        $m!(rope_fusion);
        $m!(transformer_impl);
        $m!(fp8_all_gather);
        $m!(fp32_grad_accumulation);
        $m!(embedding_as_block);
        $m!(head_as_block);
        $m!(compiled);
        $m!(compiled_loss);
        $m!(loss_head_chunked);
        $m!(system);
        $m!(devices);
        $m!(devices_per_node);
        $m!(nodes);
    };
}

/// Calls `$m!(field)` for every slot of [`Moe`].
macro_rules! for_each_moe_slot {
    ($m:ident) => {
        $m!(experts);
        $m!(top_k);
        $m!(expert_ffn_hidden);
        $m!(shared_ffn_hidden);
        $m!(shared_experts);
        $m!(ep);
        $m!(etp);
        $m!(layer_pattern);
        $m!(first_dense_layers);
        $m!(capacity_factor);
        $m!(dispatcher);
        $m!(grouped_gemm);
        $m!(router);
        $m!(a2a_overlap);
        $m!(mla);
        $m!(q_lora_rank);
        $m!(kv_lora_rank);
        $m!(qk_nope_head_dim);
        $m!(qk_rope_head_dim);
        $m!(v_head_dim);
        $m!(mtp_layers);
        $m!(permute_fusion);
        $m!(router_fusion);
        $m!(balancing);
        $m!(shared_overlap);
        $m!(graph_impl);
        $m!(graph_modules);
        $m!(megatron_args);
    };
}

/// Where an origin was read, for messages: `file: key (line N)`.
fn place(o: Option<&SettingOrigin>) -> String {
    match o {
        Some(o) => {
            let file = o.file.as_deref().map(|f| format!("{f}: ")).unwrap_or_default();
            if o.line > 0 { format!("{file}{} (line {})", o.key, o.line) } else { format!("{file}{}", o.key) }
        }
        None => "(unknown)".into(),
    }
}

/// Takes `from`'s value into `into` where `into` has none; two different values are an error.
fn merge_slot<T: PartialEq + Clone + std::fmt::Display>(into: &mut Slot<T>, from: &Slot<T>) -> Result<(), Error> {
    let Some(v) = &from.value else { return Ok(()) };
    match &into.value {
        None => {
            into.value = Some(v.clone());
            into.origin = from.origin.clone();
            Ok(())
        }
        Some(old) if old == v => Ok(()),
        Some(old) => {
            let (a, b) = (place(into.origin.as_ref()), place(from.origin.as_ref()));
            let key = from.origin.as_ref().map_or_else(|| "file".to_string(), |o| o.key.clone());
            Err(Error::invalid(
                key,
                v,
                format!(
                    "contradicts {a} = {old}: two files give different values for one setting ({b} = {v}); keep one"
                ),
            ))
        }
    }
}

/// Names every origin of `s` as read from `file`.
pub fn tag_file(s: &mut Settings, file: &str) {
    macro_rules! tag {
        ($f:ident) => {
            if let Some(o) = s.$f.origin.as_mut() {
                o.file = Some(file.to_string());
            }
        };
    }
    macro_rules! tag_moe {
        ($f:ident) => {
            if let Some(o) = s.moe.$f.origin.as_mut() {
                o.file = Some(file.to_string());
            }
        };
    }
    for_each_settings_slot!(tag);
    for_each_moe_slot!(tag_moe);
}

/// Merges `from` into `into` (see the module's rule).
pub fn merge(into: &mut Settings, from: &Settings) -> Result<(), Error> {
    macro_rules! one {
        ($f:ident) => {
            merge_slot(&mut into.$f, &from.$f)?;
        };
    }
    macro_rules! one_moe {
        ($f:ident) => {
            merge_slot(&mut into.moe.$f, &from.moe.$f)?;
        };
    }
    for_each_settings_slot!(one);
    for_each_moe_slot!(one_moe);
    Ok(())
}

/// Whether `s` sets any field of the parallel layout or the batch (a launch rather than a model
/// file).
pub fn has_layout(s: &Settings) -> bool {
    s.tp.value.is_some()
        || s.pp.value.is_some()
        || s.dp.value.is_some()
        || s.mbs.value.is_some()
        || s.global_batch.value.is_some()
        || s.local_batch.value.is_some()
        || s.devices.value.is_some()
        || s.nodes.value.is_some()
}

/// Whether `m` sets no field (for tests).
pub fn moe_is_empty(m: &Moe) -> bool {
    *m == Moe::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_takes_missing_fields_and_refuses_contradictions() {
        let mut a = Settings::default();
        a.tp.put(8, &SettingOrigin::new("--tensor-model-parallel-size", 3));
        a.mbs.put(1, &SettingOrigin::new("--micro-batch-size", 4));
        let mut b = Settings::default();
        b.mbs.put(1, &SettingOrigin::new("train_micro_batch_size_per_gpu", 2));
        b.global_batch.put(1024, &SettingOrigin::new("train_batch_size", 3));
        tag_file(&mut b, "ds_config.json");
        merge(&mut a, &b).unwrap();
        assert_eq!(a.global_batch.copied(), Some(1024));
        assert_eq!(a.global_batch.origin.as_ref().unwrap().file.as_deref(), Some("ds_config.json"));
        // The same value twice keeps the first origin.
        assert_eq!(a.mbs.origin.as_ref().unwrap().key, "--micro-batch-size");
        let mut c = Settings::default();
        c.mbs.put(2, &SettingOrigin::new("train_micro_batch_size_per_gpu", 2));
        tag_file(&mut c, "ds.json");
        let e = merge(&mut a, &c).unwrap_err().to_string();
        assert!(
            e.contains("--micro-batch-size (line 4) = 1") && e.contains("ds.json: train_micro_batch_size_per_gpu"),
            "{e}"
        );
        assert!(has_layout(&a) && !has_layout(&Settings::default()));
        assert!(moe_is_empty(&a.moe));
    }
}
