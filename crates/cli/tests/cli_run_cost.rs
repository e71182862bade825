//! The cost of the whole run next to an estimate (`--tokens`, `--price-per-device-hour`): JSON
//! `cost` {gpu_hours, energy_mwh, price_per_device_hour, total}, checked by hand.

mod support;
use support::{json, usage_error};

use std::path::PathBuf;

fn toml() -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/launch/torchtitan-llama3-8b.toml");
    p.to_str().unwrap().to_string()
}

#[test]
fn cost_by_hand() {
    let j = json(&[
        "estimate",
        "--from",
        &toml(),
        "--tokens",
        "1e12",
        "--price-per-device-hour",
        "2.5",
        "--format",
        "json",
    ]);
    let c = &j["cost"];
    // 1e12 tokens at the predicted tokens/s on 8 devices.
    let hours = 1e12 / j["tokens_per_s"].as_f64().unwrap() / 3600.0 * 8.0;
    assert!((c["gpu_hours"].as_f64().unwrap() / hours - 1.0).abs() < 1e-9, "{c}");
    // The H100 SXM5's board power in the catalog: 700 W.
    assert_eq!(c["power_w_per_device"], 700.0);
    assert!(c["power_source"].as_str().unwrap().contains("nvidia_h100_sxm5_80gb"));
    assert!((c["energy_mwh"].as_f64().unwrap() / (hours * 700.0 * 1e-6) - 1.0).abs() < 1e-9);
    assert!((c["total"].as_f64().unwrap() / (hours * 2.5) - 1.0).abs() < 1e-9);
    assert_eq!(c["price_per_device_hour"], 2.5);
    assert_eq!(c["price_source"], "your price");
    // Without a price: the part's example price, labelled (AWS p5.48xlarge 98.32 USD / 8 = 12.29);
    // without a budget: no cost.
    let j = json(&["estimate", "--from", &toml(), "--tokens", "1e12", "--format", "json"]);
    let c = &j["cost"];
    assert!((c["total"].as_f64().unwrap() / (c["gpu_hours"].as_f64().unwrap() * 12.29) - 1.0).abs() < 1e-9, "{c}");
    assert_eq!(c["price_is_example"], true);
    assert!(c["price_source"].as_str().unwrap().contains("example, not a quote"));
    // The DGX H100's published 10.2 kW over its 8 GPUs: 1,275 W per device, whole system.
    assert_eq!(c["system_power_w_per_device"], 1275.0);
    assert!(
        (c["energy_system_mwh"].as_f64().unwrap() / c["energy_mwh"].as_f64().unwrap() - 1275.0 / 700.0).abs() < 1e-9
    );
    assert!(json(&["estimate", "--from", &toml(), "--format", "json"]).get("cost").is_none());
    let e = usage_error(["estimate", "--from", &toml(), "--price-per-device-hour", "2"]);
    assert!(e.contains("needs the run's budget"), "{e}");
    let e = usage_error(["estimate", "--from", &toml(), "--tokens", "lots"]);
    assert!(e.contains("--tokens lots"), "{e}");
}
