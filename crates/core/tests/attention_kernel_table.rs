//! The attention-kernel table (`data/attention-kernels.json`, prose in
//! `data/attention-kernel-benchmarks.md`; issues 31, 32): every figure sourced, the curve extended
//! mode prices with is the table's H100 rows, and what the measured rows recorded in session 33
//! say about that curve — cuDNN 9.1.0 on H200 to 64k tokens (holding the 16k rate above 16k), the
//! cuDNN frontend's Blackwell runs (GB200: cuDNN and PyTorch's flash backend; B200: PyTorch's
//! cuDNN and flash backends), recorded and not used (the data file's prose says why).

use fmperf_core::extended::efficiency::{
    H100_ATTENTION_BENCHMARK, KernelCurve, KernelPoint, attention_kernel_fraction, benchmark_rate,
};

fn doc() -> serde_json::Value {
    serde_json::from_str(include_str!("../data/attention-kernels.json")).unwrap()
}

/// The rows of `kernel` on `gpu` with the mask `causal` at head dimension 128 as points
/// (forward and backward tables zipped by sequence length).
fn points(kernel: &str, gpu: &str, causal: bool) -> Vec<KernelPoint> {
    let doc = doc();
    let table = |pass: &str| -> Vec<[f64; 2]> {
        let t = doc["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| {
                t["kernel"] == kernel
                    && t["gpu"] == gpu
                    && t["pass"] == pass
                    && t["causal"] == causal
                    && t["head_dim"] == 128
            })
            .unwrap_or_else(|| panic!("{kernel} {gpu} {pass} causal {causal}"));
        t["points"].as_array().unwrap().iter().map(|p| [p[0].as_f64().unwrap(), p[1].as_f64().unwrap()]).collect()
    };
    let (f, b) = (table("forward"), table("backward"));
    assert_eq!(f.len(), b.len());
    f.iter()
        .zip(&b)
        .map(|(f, b)| {
            assert_eq!(f[0], b[0]);
            KernelPoint { seq: f[0], fwd_tflops: f[1], bwd_tflops: b[1] }
        })
        .collect()
}

/// Forward + backward rate of a point, as extended mode combines them: `3.5/(1/f + 2.5/b)`.
fn combined(p: &KernelPoint) -> f64 {
    3.5 / (1.0 / p.fwd_tflops + 2.5 / p.bwd_tflops)
}

/// Every table names a source the file describes and a kernel it names, with sequence lengths
/// increasing and positive rates.
#[test]
fn every_table_is_sourced() {
    let doc = doc();
    let tables = doc["tables"].as_array().unwrap();
    assert!(tables.len() >= 41, "{}", tables.len());
    for t in tables {
        assert!(doc["sources"][t["source"].as_str().unwrap()].is_string(), "{t}");
        assert!(doc["kernels"][t["kernel"].as_str().unwrap()].is_string(), "{t}");
        let pts = t["points"].as_array().unwrap();
        assert!(pts.windows(2).all(|w| w[0][0].as_f64() < w[1][0].as_f64()), "{t}");
        assert!(pts.iter().all(|p| p[1].as_f64().unwrap() > 0.0), "{t}");
    }
}

/// The curve extended mode prices with ([`H100_ATTENTION_BENCHMARK`]) is the table's H100 rows:
/// cuDNN and FlashAttention-2, non-causal, head dimension 128 (the FlashAttention-3 paper).
#[test]
fn the_priced_curve_is_the_tables_h100_rows() {
    for (col, kernel) in [(1, "cudnn"), (3, "fa2")] {
        let code: Vec<KernelPoint> = H100_ATTENTION_BENCHMARK
            .iter()
            .map(|r| KernelPoint { seq: r[0], fwd_tflops: r[col], bwd_tflops: r[col + 1] })
            .collect();
        assert_eq!(code, points(kernel, "h100_sxm5", false), "{kernel}");
    }
}

/// Holding the H100 curve's 16k rate above 16k against cuDNN 9.1.0 on an H200 to 64k tokens
/// (`cudnn_frontend_h200`, non-causal): forward + backward at 16k `3.5/(1/641.9 + 2.5/538.5)` =
/// 3.5/0.00620046 = 564.47 TFLOP/s, at 64k `3.5/(1/602.2 + 2.5/535.4)` = 3.5/0.00632995 = 552.93:
/// 0.980 of 16k's, so the held rate is at most 2 % fast there; causal, 64k runs at 1.000 of 16k's.
#[test]
fn holding_16k_above_it_against_cudnn_on_h200_to_64k() {
    let at = |causal: bool, s: f64| combined(points("cudnn", "h200_sxm", causal).iter().find(|p| p.seq == s).unwrap());
    assert!((at(false, 16384.0) - 564.47).abs() < 0.01, "{}", at(false, 16384.0));
    assert!((at(false, 65536.0) / at(false, 16384.0) - 0.980).abs() < 5e-4);
    assert!((at(true, 65536.0) / at(true, 16384.0) - 1.000).abs() < 5e-4, "{}", at(true, 65536.0) / at(true, 16384.0));
}

/// What the Blackwell runs say about the carried curve (recorded, not priced). The FLOP count
/// is the FlashAttention papers': the GB200 file's cuDNN forward at 16k took 5.273 ms for
/// `4·128·16384²·128/2` = 1.7592e13 FLOPs, 3,336 TFLOP/s un-halved, 1,668 halved as printed.
/// As fractions of the catalog's MAMF (GB200 1,822, B200 1,745 TFLOP/s) at 16k keys, causal:
/// cuDNN on GB200 `3.5/(1/1668 + 2.5/1304)` = 1,390.7 → 0.7633 against the carried H100 curve's
/// `3.5/(1/595 + 2.5/516)/794.5 · 16384/16512` = 0.6698; FlashAttention-2 (PyTorch's flash
/// backend) on GB200 `3.5/(1/430 + 2.5/352)` = 371.2 → 0.2037 and on B200 `3.5/(1/394.5 +
/// 2.5/320)` = 338.3 → 0.1938, against the carried 0.4176 (it does not use Blackwell's
/// `tcgen05`); PyTorch's cuDNN backend on B200 `3.5/(1/1332.4 + 2.5/1074.8)` = 1,137.6 → 0.6519,
/// and at 4k 0.4237 against GB200's `cudnn_fe` 0.6210.
#[test]
fn blackwell_runs_against_the_carried_curve() {
    let flops = 4.0 * 128.0 * 16384f64.powi(2) * 128.0 / 2.0;
    assert!((flops / 5.273e-3 * 1e-12 - 1668.0).abs() < 1.0);
    let frac = |kernel: &str, gpu: &str, s: f64, ceiling: f64| benchmark_rate(&points(kernel, gpu, true), s) / ceiling;
    let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-4, "{a} {b}");
    close(frac("cudnn", "gb200_nvl72", 16384.0, 1822.0), 0.7633);
    close(attention_kernel_fraction(KernelCurve::Native, 16384.0, true), 0.6698);
    close(frac("fa2", "gb200_nvl72", 16384.0, 1822.0), 0.2037);
    close(frac("fa2", "b200_hgx", 16384.0, 1745.0), 0.1938);
    close(attention_kernel_fraction(KernelCurve::Fa2OnAsyncMma, 16384.0, true), 0.4176);
    close(frac("cudnn", "b200_hgx", 16384.0, 1745.0), 0.6519);
    close(frac("cudnn", "b200_hgx", 4096.0, 1745.0), 0.4237);
    close(frac("cudnn", "gb200_nvl72", 4096.0, 1822.0), 0.6210);
    // The ceilings are the catalog's.
    for (id, mamf) in [("nvidia_gb200_nvl72", 1822.0), ("nvidia_b200_hgx", 1745.0)] {
        let sys = fmperf_core::catalog::find_system(id).unwrap();
        assert_eq!(sys.measured_matmul_tflops.as_ref().and_then(|m| m.bf16), Some(mamf), "{id}");
    }
}
