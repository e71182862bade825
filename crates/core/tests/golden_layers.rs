//! Every field of every layer row, both pseudo-layers and the totals of the golden `layers[]`
//! configurations, against the reference's outputs.

mod golden_support;

use fmperf_core::reference::{Collective, LayerRow, evaluate};
use golden_support::*;
use serde_json::Value;

/// The golden row's collectives of one pass: `none`, a scalar, or lists (SUMMA/seqp).
fn check_collectives(ck: &mut Checker, what: &str, ours: &[Collective], row: &Value, pass: &str) {
    let kind = &row[format!("comm_{pass}_type")];
    let vol = &row[format!("comm_{pass}")];
    let size = &row[format!("comm_{pass}_size")];
    let topo = &row[format!("comm_{pass}_topology")];
    match kind {
        Value::String(k) if k == "none" => {
            ck.same(format!("{what} {pass} collectives"), ours.len(), 0);
            ck.num(format!("{what} comm_{pass}"), 0.0, vol);
            ck.same(format!("{what} comm_{pass}_size"), 0, u(size));
        }
        Value::String(k) => {
            ck.same(format!("{what} {pass} collectives"), ours.len(), 1);
            if let Some(c) = ours.first() {
                ck.same(format!("{what} comm_{pass}_type"), c.kind.as_str(), k.as_str());
                ck.num(format!("{what} comm_{pass}"), c.volume_gb, vol);
                ck.same(format!("{what} comm_{pass}_size"), c.group_size, u(size));
                ck.same(format!("{what} comm_{pass}_topology"), c.fast_share, u(topo));
            }
        }
        Value::Array(kinds) => {
            ck.same(format!("{what} {pass} collectives"), ours.len(), kinds.len());
            for (i, c) in ours.iter().enumerate().take(kinds.len()) {
                ck.same(format!("{what} comm_{pass}_type[{i}]"), c.kind.as_str(), kinds[i].as_str().unwrap());
                ck.num(format!("{what} comm_{pass}[{i}]"), c.volume_gb, &vol[i]);
                ck.same(format!("{what} comm_{pass}_size[{i}]"), c.group_size, u(&size[i]));
                ck.same(format!("{what} comm_{pass}_topology[{i}]"), c.fast_share, u(&topo[i]));
            }
        }
        other => panic!("unexpected comm type {other}"),
    }
}

fn check_row(ck: &mut Checker, what: &str, ours: &LayerRow, row: &Value) {
    ck.same(format!("{what} name"), ours.name, row["name"].as_str().unwrap());
    let pairs = [
        ("weights_mem", ours.weights_gb),
        ("weights_grad_mem", ours.weight_grads_gb),
        ("activation_buffer", ours.activations_gb),
        ("flops_fwd", ours.flops_fwd_tflop),
        ("flops_bwd", ours.flops_bwd_tflop),
        ("mem_fwd", ours.mem_fwd_gb),
        ("mem_bwd", ours.mem_bwd_gb),
        ("t_fwd", ours.t_fwd_s),
        ("t_fwd_comm", ours.t_fwd_comm_s),
        ("t_fwd_comp", ours.t_fwd_comp_s),
        ("t_fwd_mem", ours.t_fwd_mem_s),
        ("intensity_fwd", ours.intensity_fwd),
        ("t_bwd", ours.t_bwd_s),
        ("t_bwd_comm", ours.t_bwd_comm_s),
        ("t_bwd_comp", ours.t_bwd_comp_s),
        ("t_bwd_mem", ours.t_bwd_mem_s),
        ("intensity_bwd", ours.intensity_bwd),
        ("t", ours.t_s),
    ];
    for (key, v) in pairs {
        ck.num(format!("{what} {key}"), v, &row[key]);
    }
    ck.same(format!("{what} use_tensor_cores"), ours.tensor_cores, row["use_tensor_cores"].as_bool().unwrap());
    check_collectives(ck, what, &ours.collectives_fwd, row, "fwd");
    check_collectives(ck, what, &ours.collectives_bwd, row, "bwd");
}

#[test]
fn every_layer_row_pseudo_layer_and_total() {
    let mut ck = Checker::default();
    let entries = section("layers");
    assert!(!entries.is_empty());
    for (i, entry) in entries.iter().enumerate() {
        let strategy = strategy(&entry["strategy"]);
        let (model, system) = (model(entry), system(entry));
        let c = candidate(strategy, &entry["candidate"]);
        let g = u(&entry["global_batch_size"]);
        let ev = evaluate(&model, &system, g, &c).unwrap_or_else(|e| panic!("layers[{i}]: {e}"));
        ck.same(format!("layers[{i}] n_gpus"), c.n_gpus(), u(&entry["n_gpus"]));
        ck.same(format!("layers[{i}] n_microbatches"), ev.microbatches, u(&entry["n_microbatches"]));
        for (module, ours, key) in [("mlp", &ev.mlp, "mlp_layers"), ("sa", &ev.attention, "sa_layers")] {
            let rows = entry[key].as_array().unwrap();
            ck.same(format!("layers[{i}] {module} rows"), ours.len(), rows.len());
            for (r, row) in ours.iter().zip(rows) {
                check_row(&mut ck, &format!("layers[{i}] {module} {}", r.name), r, row);
            }
        }
        // DP pseudo-layer.
        let dp = &entry["dp_pseudo_layer"][0];
        let w = format!("layers[{i}] dp");
        ck.num(format!("{w} comm_fwd"), ev.dp.volume_gb, &dp["comm_fwd"]);
        ck.num(format!("{w} comm_bwd"), ev.dp.volume_gb, &dp["comm_bwd"]);
        ck.same(format!("{w} size"), ev.dp.group, u(&dp["comm_fwd_size"]));
        ck.same(format!("{w} topology"), ev.dp.fast_share, u(&dp["comm_fwd_topology"]));
        ck.num(format!("{w} t_fwd"), ev.dp.t_fwd_s, &dp["t_fwd"]);
        ck.num(format!("{w} t_bwd"), ev.dp.t_bwd_s, &dp["t_bwd"]);
        ck.num(format!("{w} t"), ev.dp.t_s, &dp["t"]);
        // PP pseudo-layer.
        let pp = &entry["pp_pseudo_layer"][0];
        let w = format!("layers[{i}] pp");
        ck.num(format!("{w} comm_fwd"), ev.pp.volume_gb, &pp["comm_fwd"]);
        ck.num(format!("{w} p2p_comm_vol_GB"), ev.pp.volume_gb, &entry["p2p_comm_vol_GB"]);
        ck.same(format!("{w} topology"), ev.pp.fast_share, u(&pp["comm_fwd_topology"]));
        ck.num(format!("{w} t_fwd"), ev.pp.t_fwd_s, &pp["t_fwd"]);
        ck.num(format!("{w} t_bwd"), ev.pp.t_bwd_s, &pp["t_bwd"]);
        ck.num(format!("{w} t"), ev.pp.t_s, &pp["t"]);
        // Totals.
        check_totals(&mut ck, &format!("layers[{i}]"), &ev, &entry["totals_stats"]);
        ck.num(format!("layers[{i}] throughput"), ev.throughput_samples_per_s, &entry["throughput_samples_per_s"]);
        ck.num(format!("layers[{i}] mem_GB"), ev.mem_gb, &entry["mem_GB"]);
        ck.same(format!("layers[{i}] feasible"), ev.feasible, entry["feasible"].as_bool().unwrap());
    }
    ck.finish("golden layers");
}

/// Every key of a reference stats dict against an evaluation.
pub fn check_totals(ck: &mut Checker, what: &str, ev: &fmperf_core::reference::Evaluation, stats: &Value) {
    let ours = serde_json::to_value(ev.totals).unwrap();
    let c = &ev.candidate;
    for (key, golden) in stats.as_object().unwrap() {
        let nv = match key.as_str() {
            "nv_tp" | "nv_tp1" => Some(c.nv_tp1),
            "nv_tp2" => Some(c.nv_tp2),
            "nv_dp" => Some(c.nv_dp),
            "nv_pp" => Some(c.nv_pp),
            _ => None,
        };
        match nv {
            Some(v) => ck.same(format!("{what} stats {key}"), v, u(golden)),
            None => {
                let v = ours.get(key).and_then(Value::as_f64).unwrap_or_else(|| panic!("Totals has no `{key}`"));
                ck.num(format!("{what} stats {key}"), v, golden);
            }
        }
    }
}
